/* relay.c: see relay.h. The relaying itself is the gateway's own (conn.c:
 * splice through a pipe per direction, the pipe pool, spilling a stalled
 * direction to the heap, half-closes passed on, fairness between busy
 * relays, the idle deadline), driven from here on connections that start
 * in its relay state: this file only accepts, connects each client to the
 * channel and runs the turns the gateway's loop would. That is why it is
 * the gateway's file (its users, cinit and a native sandbox whose gateway
 * is elsewhere, take relay.h only); a second copy of the relay would be
 * the worse coupling. */
#include "gateway/relay.h"
#include "gateway/internal.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define IDLE_MS 600000		/* 10 min, as the gateway's own default */
#define SWEEP_MS 1000			/* idle deadlines are checked this often */
#define STARVED_MS 50			/* accept retried after running out of fds */

struct relay {
	struct gateway gw;		/* the relay state conn.c works on */
	struct loop *loop;		/* the caller's */
	struct loop_hook after;		/* each round's end */
	struct loop_timer wake;		/* the next deadline the hook must see */
	struct endpoint listeners[2];
	struct sockaddr_un channel;
	unsigned int max_conns;
	bool starved;			/* accept failed for want of fds: retry */
	int64_t last_sweep_ms;
};

static int listen_on(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0), one = 1;

	if (fd < 0)
		return -1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 1024) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	return fd;
}

/* The cap, within the open-file limit: a relay holds two sockets and,
 * while bytes move, up to two pipes; the pipe pool and pid 1's own few
 * need the rest. The limit is left as it is: the command inherits it. */
static unsigned int conns_cap(void)
{
	struct rlimit rl;
	const rlim_t reserved = 2 * (rlim_t)GW_PIPE_POOL + 32; /* the pool, pid 1's own */
	rlim_t fit;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return 16;
	if (rl.rlim_cur == RLIM_INFINITY)
		return RELAY_MAX_CONNS;
	fit = rl.rlim_cur > reserved + 96 ? (rl.rlim_cur - reserved) / 6 : 16;
	return fit < RELAY_MAX_CONNS ? (unsigned int)fit : RELAY_MAX_CONNS;
}

static void on_event(struct loop *l, struct loop_fd *s, uint32_t events);
static void after_round(struct loop *l, struct loop_hook *h);

int relay_new(struct loop *loop, const char *channel, struct relay **out, struct err **e)
{
	static const uint16_t ports[2] = { RELAY_HTTP_PORT, RELAY_SOCKS_PORT };
	int fds[2] = { -1, -1 };

	for (int i = 0; i < 2; i++) {
		if ((fds[i] = listen_on(ports[i])) < 0) {
			int saved = errno;

			if (i == 1)
				close(fds[0]);
			return err_set(e, ERR_UNAVAILABLE, saved, "listen on 127.0.0.1:%u",
				       (unsigned)ports[i]);
		}
	}
	return relay_new_on(loop, channel, fds, out, e);
}

int relay_new_on(struct loop *loop, const char *channel, int fds[2], struct relay **out,
		 struct err **e)
{
	struct relay *r = NULL;
	size_t len = strlen(channel);
	int err = 0;

	if (len == 0 || len >= sizeof(r->channel.sun_path)) {
		close(fds[0]);
		close(fds[1]);
		return err_set(e, ERR_CONFIG, 0, "--channel `%s`: not a unix socket path", channel);
	}
	if (!(r = calloc(1, sizeof(*r)))) {
		close(fds[0]);
		close(fds[1]);
		return err_set(e, ERR_INTERNAL, ENOMEM, "relay");
	}
	r->channel.sun_family = AF_UNIX;
	memcpy(r->channel.sun_path, channel, len + 1);
	r->loop = loop;
	r->gw.cfg.audit_fd = -1;	/* the gateway behind audits */
	r->gw.cfg.idle_timeout_ms = IDLE_MS;
	r->max_conns = conns_cap();
	r->last_sweep_ms = gw_now_ms();
	for (int i = 0; i < 2; i++)
		r->listeners[i] = (struct endpoint){ .kind = EP_LISTENER, .fd = fds[i] };
	for (int i = 0; i < 2 && !err; i++) {
		int fl = fcntl(fds[i], F_GETFL);

		if (fl < 0 || fcntl(fds[i], F_SETFL, fl | O_NONBLOCK) < 0 ||
		    loop_fd_add(loop, &r->listeners[i].src, fds[i], EPOLLIN | EPOLLET, on_event, r,
				NULL) < 0)
			err = errno;
	}
	if (err) {
		for (int i = 0; i < 2; i++)
			loop_fd_del(loop, &r->listeners[i].src);
		close(fds[0]);
		close(fds[1]);
		free(r);
		return err_set(e, ERR_UNAVAILABLE, err, "relay: watch the listeners");
	}
	loop_hook_add(loop, &r->after, after_round, r);
	*out = r;
	return 0;
}

/* Closed connections are freed: none of the round's events may name
 * them (outside a round, there are none). */
static void reap(struct relay *r)
{
	struct conn *c;

	while ((c = r->gw.graveyard)) {
		r->gw.graveyard = c->grave_next;
		loop_fd_closed(r->loop, &c->cli.src);
		loop_fd_closed(r->loop, &c->up.src);
		free(c);
	}
}

void relay_free(struct relay *r)
{
	if (!r)
		return;
	loop_hook_del(r->loop, &r->after);
	loop_timer_stop(r->loop, &r->wake);
	while (r->gw.conns)
		gw_conn_close(r->gw.conns);
	reap(r);
	for (int i = 0; i < r->gw.n_pool; i++) {
		close(r->gw.pool[i][0]);
		close(r->gw.pool[i][1]);
	}
	for (int i = 0; i < 2; i++) {
		loop_fd_del(r->loop, &r->listeners[i].src);
		close(r->listeners[i].fd);
	}
	free(r);
}

/* A new connection to the gateway's channel, or -1. A unix stream
 * socket connects at once or not at all (a full backlog is EAGAIN):
 * nothing is left pending. */
static int dial(const struct relay *r)
{
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (connect(fd, (const struct sockaddr *)&r->channel, sizeof(r->channel)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Watch both sides and hand the pair to conn.c, in its relay state. */
static void start(struct relay *r, int cli, int up)
{
	struct conn *c = calloc(1, sizeof(*c));
	const uint32_t ev = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;

	if (!c) {
		close(cli);
		close(up);
		return;
	}
	c->gw = &r->gw;
	c->cli = (struct endpoint){ .kind = EP_CLIENT, .fd = cli, .c = c };
	c->up = (struct endpoint){ .kind = EP_UPSTREAM, .fd = up, .c = c };
	c->p[0] = c->p[1] = (struct pipebuf){ .r = -1, .w = -1 };
	c->st = CS_RELAY;
	c->started_ms = gw_now_ms();
	c->deadline_ms = c->started_ms + IDLE_MS;
	if (loop_fd_add(r->loop, &c->cli.src, cli, ev, on_event, r, NULL) < 0) {
		close(cli);
		close(up);
		free(c);
		return;
	}
	if (loop_fd_add(r->loop, &c->up.src, up, ev, on_event, r, NULL) < 0) {
		loop_fd_del(r->loop, &c->cli.src);
		close(cli);
		close(up);
		free(c);
		return;
	}
	c->next = r->gw.conns;
	if (r->gw.conns)
		r->gw.conns->prev = c;
	r->gw.conns = c;
	r->gw.n_conns++;
}

static void accept_all(struct relay *r, const struct endpoint *l)
{
	for (;;) {
		int fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC), up;

		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			/* edge-triggered: a queue left for want of fds is
			 * retried on a timer, not on the next client */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				r->starved = true;
			return;
		}
		/* Over the cap, or the gateway cannot be reached: the client
		 * is closed, and sees the proxy refuse it. */
		if (r->gw.n_conns >= r->max_conns || (up = dial(r)) < 0) {
			close(fd);
			continue;
		}
		start(r, fd, up);
	}
}

static void on_event(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct relay *r = s->data;
	struct endpoint *ep = (struct endpoint *)((char *)s - offsetof(struct endpoint, src));

	(void)l;
	if (ep->kind == EP_LISTENER)
		accept_all(r, ep);
	else if (!ep->c->dead)
		gw_conn_event(ep->c, ep, events);
}

static int timeout_ms(const struct relay *r);

/* After each round: relays that yielded for fairness get their turn,
 * idle connections end, closed ones are freed; then the next deadline. */
static void after_round(struct loop *l, struct loop_hook *h)
{
	struct relay *r = h->data;
	struct conn *c, *next;
	int64_t now;

	if (r->starved) {
		r->starved = false;
		for (int i = 0; i < 2; i++)
			accept_all(r, &r->listeners[i]);
	}
	/* relays that stopped for fairness with more to move */
	c = r->gw.ready;
	r->gw.ready = NULL;
	for (; c; c = next) {
		next = c->ready_next;
		c->ready_queued = false;
		c->ready_next = NULL;
		if (!c->dead && c->st == CS_RELAY)
			gw_conn_event(c, &c->cli, EPOLLIN | EPOLLOUT);
	}
	now = gw_now_ms();
	if (now - r->last_sweep_ms >= SWEEP_MS) {
		r->last_sweep_ms = now;
		for (c = r->gw.conns; c; c = next) {
			next = c->next;
			if (c->deadline_ms && now >= c->deadline_ms)
				gw_conn_timeout(c);
		}
	}
	/* closed this turn: no lookup ever holds one here */
	reap(r);
	loop_wake_in(l, &r->wake, timeout_ms(r));
}

/* How long the loop may sleep before the hook is due regardless (-1:
 * no deadline). */
static int timeout_ms(const struct relay *r)
{
	if (r->gw.ready)
		return 0;
	if (r->starved)
		return STARVED_MS;
	return r->gw.conns ? SWEEP_MS : -1;
}
