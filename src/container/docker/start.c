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

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
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

/* Copy until the container's side ends: its output out, this stdin in,
 * the signals on. */
static int relay(struct engine *g, const char *id, const struct plan_paths *paths, int afd,
		 int sfd, struct err **e)
{
	struct engine_demux dm = { 0 };
	struct out_ctx o = { 0 };
	bool in_open = true;
	char buf[65536];

	for (;;) {
		struct pollfd fds[3] = { { afd, POLLIN, 0 }, { sfd, POLLIN, 0 },
					 { in_open ? 0 : -1, POLLIN, 0 } };

		if (poll(fds, 3, -1) < 0) {
			if (errno == EINTR)
				continue;
			return err_set(e, ERR_UNAVAILABLE, errno, "start helper: poll");
		}
		if (fds[1].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
				struct err *se = NULL;
				/* QUIT is the host's word that a stop's grace is
				 * over: the container is killed */
				int sig = si.ssi_signo == SIGQUIT ? SIGKILL : (int)si.ssi_signo;

				/* recorded first: a signal the host sends is never
				 * mistaken for one it did not */
				if (container_record_signal(paths, sig, &se) < 0 ||
				    engine_container_kill(g, id, sig, &se) < 0)
					err_print(stderr, se);
				err_free(se);
			}
		}
		if (fds[2].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(0, buf, sizeof(buf));

			if (n > 0) {
				if (fs_write_exact(afd, buf, (size_t)n) < 0)
					in_open = false;
			} else if (n == 0 || errno != EINTR) {
				in_open = false;
			}
			/* the container's stdin ends with this process's */
			if (!in_open)
				(void)shutdown(afd, SHUT_WR);
		}
		if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
			ssize_t n = read(afd, buf, sizeof(buf));

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return 0;
			if (engine_demux_feed(&dm, buf, (size_t)n, to_output, &o) < 0)
				return err_set(e, ERR_UNAVAILABLE, 0,
					       "start helper: the container's output stream is "
					       "malformed");
		}
	}
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
