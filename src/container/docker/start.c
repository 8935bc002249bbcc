/* start.c: the start helper (contract.h's start), run by the
 * segment's wrapper on the host's word. It attaches to the created
 * workload before starting it, so that nothing of its output is lost,
 * copies this process's stdin in and the container's output out, turns
 * TERM, INT and HUP into a kill of the container with the same signal
 * after recording each in the job's container records as the host's
 * (and QUIT, the daemon's word once a stop's grace is over, into KILL),
 * and returns the container's status. Once the status is known, what the
 * segment made is removed. */
#include "container/docker/docker.h"
#include "container/docker/internal.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* The runtime's TERM marker in the run dir, taken away (the next segment
 * starts without one): was it there? */
static bool take_term_marker(const char *run_dir)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, run_dir, O_PATH | O_DIRECTORY, 0);
	struct stat st;

	if (dfd < 0 || fstatat(dfd, CONTAINER_TERM_MARKER, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return false;
	(void)unlinkat(dfd, CONTAINER_TERM_MARKER, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0);
	return true;
}

struct out_ctx {
	bool failed;
};

static void to_output(void *ctx, int stream, const void *p, size_t n)
{
	struct out_ctx *o = ctx;

	/* stdin (0) never comes back; stdout to 1, stderr to 2 */
	if (stream != 1 && stream != 2)
		return;
	if (fs_write_exact(stream, p, n) < 0)
		o->failed = true;
}

/* The copy, as the loop sees it. */
struct copy {
	struct engine *g;
	const char *id;
	const struct plan_paths *paths;
	int afd;
	struct engine_demux dm;
	struct out_ctx o;
	bool in_open;
	bool malformed;		/* the container's output stream */
	struct loop_fd sig, in, out;
	/* stdin a file (or /dev/null): epoll cannot watch it (EPERM), and it
	 * is always ready, so a chunk is read each round instead */
	struct loop_hook in_turn;
	char buf[65536];
};

static void on_signal(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct copy *c = s->data;
	struct signalfd_siginfo si;

	(void)l;
	(void)events;
	if (read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		struct err *se = NULL;
		/* QUIT is the host's word that a stop's grace is over: the
		 * container is killed */
		int sig = si.ssi_signo == SIGQUIT ? SIGKILL : (int)si.ssi_signo;

		/* recorded first: a signal the host sends is never mistaken
		 * for one it did not */
		if (container_record_signal(c->paths, sig, &se) < 0 ||
		    engine_container_kill(c->g, c->id, sig, &se) < 0)
			err_print(stderr, se);
		err_free(se);
	}
}

/* A chunk of this stdin to the container's. */
static void copy_in(struct loop *l, struct copy *c)
{
	ssize_t n = read(0, c->buf, sizeof(c->buf));

	if (n > 0) {
		if (fs_write_exact(c->afd, c->buf, (size_t)n) < 0)
			c->in_open = false;
	} else if (n == 0 || errno != EINTR) {
		c->in_open = false;
	}
	/* the container's stdin ends with this process's */
	if (!c->in_open) {
		(void)shutdown(c->afd, SHUT_WR);
		loop_fd_del(l, &c->in);
		loop_hook_del(l, &c->in_turn);
	}
}

static void on_stdin(struct loop *l, struct loop_fd *s, uint32_t events)
{
	(void)events;
	copy_in(l, s->data);
}

static void stdin_turn(struct loop *l, struct loop_hook *h)
{
	struct copy *c = h->data;

	copy_in(l, c);
	if (c->in_open)
		loop_dont_wait(l);
}

static void on_output(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct copy *c = s->data;
	ssize_t n = read(c->afd, c->buf, sizeof(c->buf));

	(void)events;
	if (n < 0 && errno == EINTR)
		return;
	if (n <= 0) {
		loop_stop(l); /* the container's side ended */
		return;
	}
	if (engine_demux_feed(&c->dm, c->buf, (size_t)n, to_output, &c->o) < 0) {
		c->malformed = true;
		loop_stop(l);
	}
}

/* Copy until the container's side ends: its output out, this stdin in,
 * the signals on. */
static int relay(struct engine *g, const char *id, const struct plan_paths *paths, int afd,
		 int sfd, struct err **e)
{
	struct copy *c = calloc(1, sizeof(*c));
	struct loop *loop = NULL;
	struct err *le = NULL;
	int r = 0;

	if (!c)
		return err_set(e, ERR_INTERNAL, ENOMEM, "start helper");
	*c = (struct copy){ .g = g, .id = id, .paths = paths, .afd = afd, .in_open = true };
	if (loop_new(&loop, e) < 0 ||
	    loop_fd_add(loop, &c->sig, sfd, EPOLLIN, on_signal, c, e) < 0 ||
	    loop_fd_add(loop, &c->out, afd, EPOLLIN, on_output, c, e) < 0) {
		r = err_wrap(e, "start helper");
	} else {
		if (loop_fd_add(loop, &c->in, 0, EPOLLIN, on_stdin, c, NULL) < 0 && errno == EPERM)
			loop_hook_add(loop, &c->in_turn, stdin_turn, c);
		if (loop_run(loop, &le) < 0)
			r = err_set(e, ERR_UNAVAILABLE, le->errnum, "start helper: poll");
		else if (c->malformed)
			r = err_set(e, ERR_UNAVAILABLE, 0,
				    "start helper: the container's output stream is malformed");
		err_free(le);
	}
	loop_free(loop);
	free(c);
	return r;
}

int docker_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		 bool *interrupted, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_close_ int afd = -1, sfd = -1;
	const char *id = str(pin, "container");
	struct docker_made m = { (char *)id, (char *)str(pin, "gateway"),
				 (char *)str(pin, "network"), (char *)str(pin, "volume") };
	int code = -1;

	(void)p;
	*interrupted = false;
	if (!id)
		return err_set(e, ERR_INTERNAL, 0, "the pin names no container");
	json_t *ep = json_pack("{s:s}", "endpoint", str(pin, "endpoint"));
	int r = ep ? docker_open(ep, &g, NULL, e) : err_set(e, ERR_INTERNAL, ENOMEM, "endpoint");
	json_decref(ep);
	if (r < 0)
		return -1;
	if ((sfd = container_helper_signals(e)) < 0)
		goto remove;
	/* attached first: the output from the very start is kept */
	if (engine_container_attach(g, id, true, &afd, e) < 0 ||
	    engine_container_start(g, id, e) < 0)
		goto remove;
	if (relay(g, id, paths, afd, sfd, e) < 0)
		goto remove;
	/* the stream ended: the container's status, from the daemon */
	engine_set_timeout(g, 0);
	if (engine_container_wait(g, id, "not-running", 0, &code, e) < 0) {
		code = -1;
		goto remove;
	}
	*interrupted = take_term_marker(paths->run_dir) && !container_host_sent_term(paths);
remove:
	/* (the runtime removed it as it started; a container that never
	 * started did not) */
	docker_drop_secrets(paths->run_dir);
	{
		struct err *re = NULL;

		engine_set_timeout(g, ENGINE_TIMEOUT_DEFAULT);
		if (docker_remove_made(g, &m, &re) < 0) {
			err_wrap(&re, "remove the segment's containers");
			err_print(stderr, re);
		}
		err_free(re);
	}
	return code;
}
