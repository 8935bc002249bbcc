/* tty.c: `cordon job attach`'s terminal (docker_terminal). The
 * daemon made an attach container (a TTY, stdin open once, labelled
 * dev.cordon.role=attach) and pinned it; this runs it on this process's
 * terminal: attached before it starts, so that nothing it writes is
 * lost, the terminal raw while it runs and restored on every way out,
 * its size told at the start and at each SIGWINCH, this stdin in (its
 * end told as a terminal tells it) and its output out (a TTY's stream
 * is raw: no frames). HUP and TERM (the terminal went away, or the
 * operator's word) kill it; an INT that comes as a signal (no terminal:
 * in raw mode ^C is a byte) is passed on. Whatever happened, what the
 * pin names is removed at the end. */
#include "client/tty.h"
#include "container/docker/docker.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/loop.h"
#include "lib/sigfwd.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

/* How long a container is given to end once its stream has, or once it
 * was killed, before the daemon's word is given up on. */
#define TTY_END_WAIT 30L

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* Tell the container the terminal's size (fd 0's, else fd 1's). A size
 * that cannot be had or told leaves the old one: that costs the layout
 * of the screen, never the session, so it is not an error. */
static void tell_size(struct engine *g, const char *id)
{
	struct winsize ws = { 0 };
	struct err *re = NULL;

	if ((ioctl(0, TIOCGWINSZ, &ws) < 0 && ioctl(1, TIOCGWINSZ, &ws) < 0) || ws.ws_row == 0 ||
	    ws.ws_col == 0)
		return;
	if (engine_container_resize(g, id, ws.ws_row, ws.ws_col, &re) < 0)
		err_free(re);
}

/* What ended the relay. */
enum relay_end {
	RELAY_STREAM, /* the container's stream ended */
	RELAY_KILLED, /* HUP or TERM: the container was killed */
};

/* This stdin on its way to the container: what was read and is not yet
 * sent. The attach socket is written without blocking, so a container
 * that does not read its input never stops its output from coming. */
struct inbound {
	char buf[16384];
	size_t off, len;
	bool open;	 /* fd 0 may still give more */
	bool line_start; /* what was sent so far ends a line (or is none) */
};

static void in_send(struct inbound *in, int afd)
{
	while (in->off < in->len) {
		ssize_t w = send(afd, in->buf + in->off, in->len - in->off,
				 MSG_DONTWAIT | MSG_NOSIGNAL);

		if (w > 0) {
			in->off += (size_t)w;
		} else if (w < 0 && errno == EINTR) {
			continue;
		} else {
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				return;
			/* the container's side takes no more input */
			in->open = false;
			break;
		}
	}
	in->off = in->len = 0;
}

/* This stdin ended. The container's is not: with a TTY, the daemon ends
 * the attach's output as soon as its input ends, and what the container
 * still writes would be lost. What a terminal sends instead is told: its
 * end-of-file character (^D), twice when a line is open (the first only
 * hands that line over). */
static void in_eof(struct inbound *in, int afd)
{
	in->open = false;
	in->off = 0;
	in->buf[0] = in->buf[1] = 0x04;
	in->len = in->line_start ? 1 : 2;
	in_send(in, afd);
}

/* The relay, as the loop sees it. */
struct tty_relay {
	struct engine *g;
	const char *id;
	int afd;
	struct inbound in;
	bool out_ok, killed;
	/* stdin cannot be watched (a file, /dev/null, closed): it is always
	 * ready, and read in the round's hook instead */
	bool in_always;
	struct loop_fd sig, stdin_src, stream;
	struct loop_hook interest;
	char buf[65536];
};

/* A signal: HUP and TERM kill the container and end the relay, INT is
 * passed on, WINCH resizes. */
static void on_signal(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct tty_relay *t = s->data;
	struct signalfd_siginfo si;
	struct err *se = NULL;

	(void)events;
	if (read(s->fd, &si, sizeof(si)) != (ssize_t)sizeof(si))
		return;
	switch (si.ssi_signo) {
	case SIGWINCH:
		tell_size(t->g, t->id);
		return;
	case SIGINT:
		if (engine_container_kill(t->g, t->id, SIGINT, &se) < 0)
			err_print(stderr, se);
		break;
	default:
		/* the terminal is gone, or the operator said stop: the
		 * session cannot go on without its terminal */
		if (engine_container_kill(t->g, t->id, SIGKILL, &se) < 0)
			err_print(stderr, se);
		t->killed = true;
		loop_stop(l);
		break;
	}
	err_free(se);
}

static void read_stdin(struct tty_relay *t)
{
	struct inbound *in = &t->in;
	ssize_t n = read(0, in->buf, sizeof(in->buf));

	if (n > 0) {
		in->len = (size_t)n;
		in->off = 0;
		in->line_start = in->buf[n - 1] == '\n' || in->buf[n - 1] == '\r';
		in_send(in, t->afd);
	} else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
		/* its end (or a terminal that hung up) */
		in_eof(in, t->afd);
	}
}

static void on_stdin(struct loop *l, struct loop_fd *s, uint32_t events)
{
	(void)l;
	(void)events;
	read_stdin(s->data);
}

/* The container's side: input it takes again, output it sends. */
static void on_stream(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct tty_relay *t = s->data;
	ssize_t n;

	if (events & EPOLLOUT)
		in_send(&t->in, t->afd);
	if (!(events & (EPOLLIN | EPOLLHUP | EPOLLERR)))
		return;
	n = read(t->afd, t->buf, sizeof(t->buf));
	if (n < 0 && (errno == EINTR || errno == EAGAIN))
		return;
	if (n <= 0) {
		loop_stop(l);
		return;
	}
	/* with a TTY the stream is the terminal's bytes as they are; a
	 * terminal that is gone takes no more, and the rest is read and
	 * dropped until the container ends */
	if (t->out_ok && fs_write_exact(1, t->buf, (size_t)n) < 0)
		t->out_ok = false;
}

/* Before each wait, what is watched follows what is pending: input not
 * yet sent waits for the container's side to take it, and until then no
 * more of this stdin is read. */
static void interest(struct loop *l, struct loop_hook *h)
{
	struct tty_relay *t = h->data;
	bool pending = t->in.off < t->in.len;
	uint32_t want = EPOLLIN | (pending ? EPOLLOUT : 0);
	bool read_in = t->in.open && !pending;

	if (t->stream.events != want && loop_fd_mod(l, &t->stream, want, NULL) < 0) {
		struct err *fe = NULL;

		err_set(&fe, ERR_UNAVAILABLE, errno, "attach: poll");
		loop_fail(l, fe);
		return;
	}
	if (t->in_always) {
		if (read_in) {
			read_stdin(t);
			loop_dont_wait(l);
		}
		return;
	}
	if (read_in && !t->stdin_src.on &&
	    loop_fd_add(l, &t->stdin_src, 0, EPOLLIN, on_stdin, t, NULL) < 0) {
		t->in_always = true;
		read_stdin(t);
		loop_dont_wait(l);
	} else if (!read_in && t->stdin_src.on) {
		loop_fd_del(l, &t->stdin_src);
	}
}

/* Copy until the container's stream ends (or a HUP or TERM killed it):
 * its output out, this stdin in, the signals on. */
static int relay(struct engine *g, const char *id, int afd, int sfd, enum relay_end *end,
		 struct err **e)
{
	struct tty_relay *t = calloc(1, sizeof(*t));
	struct loop *loop = NULL;
	struct err *le = NULL;
	int r = 0;

	*end = RELAY_STREAM;
	if (!t)
		return err_set(e, ERR_INTERNAL, ENOMEM, "attach");
	t->g = g;
	t->id = id;
	t->afd = afd;
	t->in = (struct inbound){ .open = true, .line_start = true };
	t->out_ok = true;
	if (loop_new(&loop, &le) < 0 ||
	    loop_fd_add(loop, &t->sig, sfd, EPOLLIN, on_signal, t, &le) < 0 ||
	    loop_fd_add(loop, &t->stream, afd, EPOLLIN, on_stream, t, &le) < 0) {
		r = err_set(e, ERR_UNAVAILABLE, le ? le->errnum : 0, "attach: poll");
	} else {
		loop_hook_add(loop, &t->interest, interest, t);
		if (loop_run(loop, &le) < 0)
			r = err_set(e, ERR_UNAVAILABLE, le ? le->errnum : 0, "attach: poll");
		else if (t->killed)
			*end = RELAY_KILLED;
	}
	err_free(le);
	loop_free(loop);
	free(t);
	return r;
}

/* The container's status once it is not running: 0-255, or -1 with *e.
 * A container still running after TTY_END_WAIT is killed and waited for
 * again. */
static int status_of(struct engine *g, const char *id, bool killed, struct err **e)
{
	int code = -1;

	for (int round = 0; round < 2; round++) {
		int r = engine_container_wait(g, id, "not-running", TTY_END_WAIT, &code, e);

		if (r < 0)
			return err_wrap(e, "attach: the container's status");
		if (r == ENGINE_WAIT_GONE)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "attach: the container went before its status was read");
		if (r == ENGINE_WAIT_EXITED)
			return code < 0 || code > 255 ? 255 : code;
		if (killed || engine_container_kill(g, id, SIGKILL, e) < 0)
			break;
		killed = true;
	}
	return *e ? -1 : err_set(e, ERR_UNAVAILABLE, 0, "attach: the container does not end");
}

/* Is the pinned container an attach container not yet running? Running
 * already, it is another terminal's: *ours is false and nothing of it
 * is touched. */
static int check_container(struct engine *g, const char *id, bool *ours, struct err **e)
{
	struct engine_container c = { 0 };
	int r = engine_container_inspect(g, id, &c, e);
	const char *role = r == ENGINE_FOUND
				   ? json_string_value(json_object_get(c.labels, CONTAINER_LABEL_ROLE))
				   : NULL;

	*ours = true;
	if (r < 0)
		return err_wrap(e, "attach: inspect the container");
	if (r == ENGINE_GONE)
		return err_set(e, ERR_UNAVAILABLE, 0, "attach: the container is gone");
	if (!role || strcmp(role, "attach") != 0 || c.running) {
		*ours = false;
		err_set(e, role && strcmp(role, "attach") == 0 ? ERR_UNAVAILABLE : ERR_DENIED, 0,
			"attach: %s",
			c.running ? "the container runs already (another terminal has it)"
				  : "the pinned container is not an attach container");
		engine_container_clear(&c);
		return -1;
	}
	engine_container_clear(&c);
	return 0;
}

int docker_terminal(const json_t *pin, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_close_ int afd = -1, sfd = -1;
	const char *id = str(pin, "container");
	struct sigaction pipe_ign = { .sa_handler = SIG_IGN }, pipe_old;
	struct termios saved;
	enum relay_end end = RELAY_STREAM;
	sigset_t set, old;
	bool raw = false, ours = true, masked = false;
	int code = -1, r;

	/* a write to a terminal or pipe that went fails; it never kills
	 * this process with the terminal still raw */
	sigaction(SIGPIPE, &pipe_ign, &pipe_old);
	sigemptyset(&set);
	sigfwd_add(&set, SIGFWD_TERMINAL);
	masked = sigprocmask(SIG_BLOCK, &set, &old) == 0;
	if (!masked || (sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0) {
		err_set(e, ERR_UNAVAILABLE, errno, "attach: signals");
		goto remove;
	}
	if (!id) {
		err_set(e, ERR_INTERNAL, 0, "the pin names no container");
		goto remove;
	}
	if (docker_open_pinned(pin, &g, e) < 0 || check_container(g, id, &ours, e) < 0)
		goto remove;
	/* attached first: the output from the very start is kept */
	r = engine_container_attach(g, id, true, &afd, e);
	if (r != 0) {
		if (r > 0)
			err_set(e, ERR_UNAVAILABLE, 0, "attach: the container is gone");
		goto remove;
	}
	if (isatty(0) && tcgetattr(0, &saved) == 0) {
		struct termios t = saved;

		cfmakeraw(&t);
		raw = tcsetattr(0, TCSANOW, &t) == 0;
	}
	r = engine_container_start(g, id, e);
	if (r != 0) {
		/* started by another in between: it is that one's */
		if (r > 0) {
			ours = false;
			err_set(e, ERR_UNAVAILABLE, 0,
				"attach: the container runs already (another terminal has it)");
		}
		goto restore;
	}
	tell_size(g, id);
	if (relay(g, id, afd, sfd, &end, e) < 0) {
		struct err *ke = NULL;

		/* it cannot be watched: it does not run on unseen */
		if (engine_container_kill(g, id, SIGKILL, &ke) < 0)
			err_free(ke);
		goto restore;
	}
	code = status_of(g, id, end == RELAY_KILLED, e);
restore:
	/* now, not once it drained: a terminal that went never drains */
	if (raw)
		(void)tcsetattr(0, TCSANOW, &saved);
remove:
	if (ours) {
		struct err *re = NULL;

		if (docker_remove(pin, &re) < 0) {
			err_wrap(&re, "remove the attach container");
			err_print(stderr, re);
		}
		err_free(re);
	}
	/* a HUP, TERM or INT that came during the removal takes its course
	 * now, with the terminal as it was */
	if (masked)
		sigprocmask(SIG_SETMASK, &old, NULL);
	sigaction(SIGPIPE, &pipe_old, NULL);
	return code;
}
