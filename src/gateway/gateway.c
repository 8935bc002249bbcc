/* gateway.c: the gateway's part of its caller's loop: listeners,
 * accepting, the resolver's sockets, deadlines, fairness between relays,
 * and the audit log. What happens on one connection is conn.c's. */
#include "gateway/http.h"
#include "gateway/internal.h"
#include "lib/cleanup.h"
#include "lib/sha256.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <netinet/in.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define SWEEP_MS 250

int64_t gw_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void accept_all(struct gateway *gw, struct endpoint *l);
static void after_round(struct loop *l, struct loop_hook *h);
static void reap(struct gateway *gw, bool all);

static struct endpoint *endpoint_of(struct loop_fd *s)
{
	return (struct endpoint *)((char *)s - offsetof(struct endpoint, src));
}

/* Everything the loop reports on the gateway's fds. */
static void on_event(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct gateway *gw = s->data;
	struct endpoint *ep = endpoint_of(s);

	(void)l;
	if (ep->kind == EP_LISTENER)
		accept_all(gw, ep);
	else if (ep->kind == EP_WAITING)
		gw_cap_event(gw, ep);
	else if (ep->kind == EP_RESOLVER)
		resolver_process(gw->res, ep->fd, events & (EPOLLIN | EPOLLERR | EPOLLHUP),
				 events & EPOLLOUT);
	else if (!ep->c->dead)
		gw_conn_event(ep->c, ep, events);
}

int gw_watch(struct gateway *gw, struct endpoint *ep, int fd, uint32_t events)
{
	return loop_fd_add(gw->loop, &ep->src, fd, events, on_event, gw, NULL);
}

/* c-ares tells which of its sockets to watch. */
static void resolver_watch(void *arg, int fd, bool readable, bool writable)
{
	struct gateway *gw = arg;
	struct endpoint *ep = NULL;
	uint32_t events;

	for (int i = 0; i < 16; i++) {
		if (gw->resolver_eps[i].fd == fd) {
			ep = &gw->resolver_eps[i];
			break;
		}
	}
	if (!readable && !writable) {
		if (ep) {
			loop_fd_del(gw->loop, &ep->src);
			ep->fd = -1;
		}
		return;
	}
	if (!ep) {
		for (int i = 0; i < 16 && !ep; i++)
			if (gw->resolver_eps[i].fd < 0)
				ep = &gw->resolver_eps[i];
		if (!ep)
			return; /* c-ares keeps few sockets; its timeout still runs */
		ep->fd = fd;
		ep->kind = EP_RESOLVER;
	}
	events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
	if (!ep->src.on || loop_fd_mod(gw->loop, &ep->src, events, NULL) < 0)
		gw_watch(gw, ep, fd, events);
}

/* A default that fits the open-file limit: two fds a tunnel and room for
 * the pipes of the busy ones. */
static unsigned int default_max_conns(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
		return 10000;
	return rl.rlim_cur > 512 ? (unsigned int)((rl.rlim_cur - 256) / 2) : 64;
}

int gateway_new(struct loop *loop, const struct gw_config *cfg, struct gateway **out,
		struct err **e)
{
	struct gateway *gw = calloc(1, sizeof(*gw));

	if (!gw)
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway");
	gw->loop = loop;
	gw->cfg = *cfg;
	gw->cfg.token = NULL; /* not kept: its digest is */
	gw->cfg.allow_ranges = NULL;
	gw->cfg.n_allow_ranges = 0;
	gw->cfg.toolbelt_socket = NULL;
	if (cfg->toolbelt_socket && !(gw->toolbelt = strdup(cfg->toolbelt_socket))) {
		free(gw);
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway");
	}
	gw->cfg.toolbelt_socket = gw->toolbelt;
	if (cfg->token) {
		size_t n = strlen(cfg->token);

		if (n == 0 || n > 255 || sha256_raw(cfg->token, n, gw->token_digest) < 0) {
			free(gw->toolbelt);
			free(gw);
			return err_set(e, ERR_CONFIG, 0,
				       "gateway: the proxy token must be 1 to 255 bytes");
		}
		gw->has_token = true;
	}
	gw->cap_reply_len = http_format_refusal(gw->cap_reply, sizeof(gw->cap_reply), 503,
						"connection cap reached");
	for (int i = 0; i < GW_WAITING_MAX; i++)
		gw->waiting[i].ep.fd = -1;
	if (!gw->cfg.max_conns)
		gw->cfg.max_conns = default_max_conns();
	if (!gw->cfg.head_timeout_ms)
		gw->cfg.head_timeout_ms = 10000;
	if (!gw->cfg.connect_timeout_ms)
		gw->cfg.connect_timeout_ms = 10000;
	if (!gw->cfg.idle_timeout_ms)
		gw->cfg.idle_timeout_ms = 600000;
	for (int i = 0; i < 16; i++)
		gw->resolver_eps[i].fd = -1;
	if (addrguard_load_own(&gw->own) < 0 ||
	    addrguard_add_own(&gw->own, cfg->host_addrs, cfg->n_host_addrs) < 0) {
		addrguard_free_own(&gw->own);
		free(gw->toolbelt);
		free(gw);
		return err_set(e, ERR_UNAVAILABLE, errno, "gateway: this host's addresses");
	}
	if (resolver_new(cfg->dns_servers, resolver_watch, gw, &gw->res, e) < 0) {
		addrguard_free_own(&gw->own);
		for (int i = 0; i < 16; i++)
			if (gw->resolver_eps[i].fd >= 0)
				loop_fd_del(loop, &gw->resolver_eps[i].src);
		free(gw->toolbelt);
		free(gw);
		return err_wrap(e, "gateway");
	}
	/* the caller's ranges may not outlive it: the gateway keeps a copy */
	if (cfg->n_allow_ranges) {
		gw->ranges = calloc(cfg->n_allow_ranges, sizeof(*gw->ranges));
		if (!gw->ranges) {
			gw->cfg.audit_fd = -1; /* still the caller's on failure */
			gateway_free(gw);
			return err_set(e, ERR_INTERNAL, ENOMEM, "gateway");
		}
		memcpy(gw->ranges, cfg->allow_ranges, cfg->n_allow_ranges * sizeof(*gw->ranges));
		gw->cfg.allow_ranges = gw->ranges;
		gw->cfg.n_allow_ranges = cfg->n_allow_ranges;
	}
	gw->last_sweep_ms = gw_now_ms();
	loop_hook_add(loop, &gw->after, after_round, gw);
	*out = gw;
	return 0;
}

void gateway_free(struct gateway *gw)
{
	if (!gw)
		return;
	loop_hook_del(gw->loop, &gw->after);
	loop_timer_stop(gw->loop, &gw->wake);
	gw_cap_free(gw);
	for (int i = 0; i < GW_WAITING_MAX; i++)
		loop_fd_closed(gw->loop, &gw->waiting[i].ep.src);
	free(gw->toolbelt);
	while (gw->conns)
		gw_conn_close(gw->conns);
	gw->ready = NULL; /* every conn in it is in the graveyard now */
	/* the resolver's sockets leave the loop while they are still open */
	for (int i = 0; i < 16; i++)
		if (gw->resolver_eps[i].fd >= 0)
			loop_fd_del(gw->loop, &gw->resolver_eps[i].src);
	resolver_free(gw->res); /* pending lookups end: their conns are dead */
	reap(gw, true);
	for (int i = 0; i < gw->n_listeners; i++) {
		loop_fd_del(gw->loop, &gw->listeners[i]->src);
		close(gw->listeners[i]->fd);
		free(gw->listeners[i]);
	}
	for (int i = 0; i < gw->n_pool; i++) {
		close(gw->pool[i][0]);
		close(gw->pool[i][1]);
	}
	addrguard_free_own(&gw->own);
	if (gw->cfg.audit_fd >= 0)
		close(gw->cfg.audit_fd);
	free(gw->ranges);
	free(gw);
}

int gateway_add_listener(struct gateway *gw, int fd, enum gw_proto proto, struct err **e)
{
	struct endpoint *ep;

	if (gw->n_listeners >= 8)
		return err_set(e, ERR_INTERNAL, ENOSPC, "gateway: too many listeners");
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    fcntl(fd, F_SETFD, FD_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "gateway: listener");
	ep = calloc(1, sizeof(*ep));
	if (!ep)
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway");
	*ep = (struct endpoint){ .kind = EP_LISTENER, .fd = fd, .proto = proto };
	if (gw_watch(gw, ep, fd, EPOLLIN | EPOLLET) < 0) {
		free(ep);
		return err_set(e, ERR_UNAVAILABLE, errno, "gateway: watch the listener");
	}
	gw->listeners[gw->n_listeners++] = ep;
	return 0;
}

/* How long the loop may sleep before the round's-end work is due
 * regardless (-1: no deadline). */
static int timeout_ms(const struct gateway *gw)
{
	int t = resolver_timeout_ms(gw->res);

	if (gw->ready)
		return 0;
	if (gw->accept_starved && (t < 0 || t > 50))
		t = 50;
	if ((gw->conns || gw->n_waiting || gw->cap_unlogged) && (t < 0 || t > SWEEP_MS))
		t = SWEEP_MS;
	return t;
}

static void describe_peer(const struct sockaddr_storage *ss, socklen_t len, char *out,
			  size_t size)
{
	char ip[INET6_ADDRSTRLEN] = "";

	if (ss->ss_family == AF_INET) {
		const struct sockaddr_in *s4 = (const struct sockaddr_in *)ss;
		inet_ntop(AF_INET, &s4->sin_addr, ip, sizeof(ip));
		snprintf(out, size, "%s:%u", ip, ntohs(s4->sin_port));
	} else if (ss->ss_family == AF_INET6) {
		const struct sockaddr_in6 *s6 = (const struct sockaddr_in6 *)ss;
		inet_ntop(AF_INET6, &s6->sin6_addr, ip, sizeof(ip));
		snprintf(out, size, "[%s]:%u", ip, ntohs(s6->sin6_port));
	} else {
		(void)len;
		snprintf(out, size, "unix");
	}
}

static void accept_all(struct gateway *gw, struct endpoint *l)
{
	for (;;) {
		struct sockaddr_storage ss = { 0 };
		socklen_t len = sizeof(ss);
		int fd = accept4(l->fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct conn *c;

		if (fd < 0) {
			/* The listener is edge-triggered: a queue left behind for
			 * want of fds is retried on a timer, not on the next client. */
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
				gw->accept_starved = true;
			return;
		}
		if (gw->n_conns >= gw->cfg.max_conns) {
			char client[64];

			describe_peer(&ss, len, client, sizeof(client));
			gw_over_cap(gw, fd, l->proto, client);
			continue;
		}
		if (!(c = calloc(1, sizeof(*c)))) {
			close(fd);
			continue;
		}
		c->gw = gw;
		c->cli = (struct endpoint){ .kind = EP_CLIENT, .fd = fd, .c = c };
		c->up = (struct endpoint){ .kind = EP_UPSTREAM, .fd = -1, .c = c };
		c->p[0] = c->p[1] = (struct pipebuf){ .r = -1, .w = -1 };
		c->proto = l->proto;
		c->st = CS_HEAD;
		c->started_ms = gw_now_ms();
		c->deadline_ms = c->started_ms + gw->cfg.head_timeout_ms;
		describe_peer(&ss, len, c->client, sizeof(c->client));
		if (gw_watch(gw, &c->cli, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET) < 0) {
			close(fd);
			free(c);
			continue;
		}
		c->next = gw->conns;
		if (gw->conns)
			gw->conns->prev = c;
		gw->conns = c;
		gw->n_conns++;
	}
}

static void sweep(struct gateway *gw, int64_t now)
{
	struct conn *c = gw->conns, *next;

	for (; c; c = next) {
		next = c->next;
		if (c->deadline_ms && now >= c->deadline_ms)
			gw_conn_timeout(c);
	}
}

/* Free what was closed, unless a lookup still holds it (all, at the end). */
static void reap(struct gateway *gw, bool all)
{
	struct conn **pp = &gw->graveyard;

	while (*pp) {
		struct conn *c = *pp;
		if (c->lookup_pending && !all) {
			pp = &c->grave_next;
			continue;
		}
		*pp = c->grave_next;
		/* gateway_free may run inside a round: none of its events
		 * may name c (outside one, this is nothing to do) */
		loop_fd_closed(gw->loop, &c->cli.src);
		loop_fd_closed(gw->loop, &c->up.src);
		free(c);
	}
}

/* After each round of the loop, before it sleeps: what the round's events
 * left to do, then the deadline of the next. */
static void after_round(struct loop *l, struct loop_hook *h)
{
	struct gateway *gw = h->data;
	int64_t now;

	if (gw->accept_starved) {
		gw->accept_starved = false;
		for (int i = 0; i < gw->n_listeners; i++)
			accept_all(gw, gw->listeners[i]);
	}
	/* Relays that yielded for fairness get their next turn. */
	struct conn *r = gw->ready;
	gw->ready = NULL;
	while (r) {
		struct conn *nx = r->ready_next;
		r->ready_queued = false;
		r->ready_next = NULL;
		if (!r->dead && r->st == CS_RELAY)
			gw_conn_event(r, &r->cli, EPOLLIN | EPOLLOUT);
		r = nx;
	}
	now = gw_now_ms();
	if (now - gw->last_sweep_ms >= SWEEP_MS) {
		gw->last_sweep_ms = now;
		resolver_process(gw->res, -1, false, false);
		sweep(gw, now);
		gw_cap_sweep(gw, now);
	}
	reap(gw, false);
	loop_wake_in(l, &gw->wake, timeout_ms(gw));
}

size_t gateway_refused(const struct gateway *gw, char lines[][320], size_t max)
{
	size_t n = gw->n_refused < max ? gw->n_refused : max;

	for (size_t i = 0; i < n; i++)
		memcpy(lines[i], gw->refused[i], sizeof(gw->refused[i]));
	return n;
}

/* The password against the token, in constant time: both are hashed
 * first, so the comparison is of equal lengths whatever was sent. */
bool gw_token_ok(const struct gateway *gw, const void *password, size_t len)
{
	unsigned char d[32];
	bool good;

	if (!gw->has_token || sha256_raw(password, len, d) < 0)
		return false;
	good = CRYPTO_memcmp(d, gw->token_digest, sizeof(d)) == 0;
	OPENSSL_cleanse(d, sizeof(d));
	return good;
}

void gw_note_refused(struct gateway *gw, const char *host, uint16_t port, const char *reason)
{
	char line[320];

	/* name the policy entry that would allow it, where one would */
	if (strcmp(reason, "host not in network.allow") == 0)
		snprintf(line, sizeof(line), "%s:%u (%s; to allow it, add \"%s:%u\" or \"%s\")",
			 host, port, reason, host, port, host);
	else
		snprintf(line, sizeof(line), "%s:%u (%s)", host, port, reason);
	for (size_t i = 0; i < gw->n_refused; i++)
		if (strcmp(gw->refused[i], line) == 0)
			return;
	if (gw->n_refused < GW_REFUSED_MAX)
		memcpy(gw->refused[gw->n_refused++], line, sizeof(line));
}

static json_t *addrs_json(const struct conn *c)
{
	json_t *a = json_array();

	for (size_t i = 0; a && i < c->n_addrs; i++) {
		char ip[INET6_ADDRSTRLEN] = "";
		const union gw_addr *ss = &c->addrs[i];
		if (ss->sa.sa_family == AF_INET)
			inet_ntop(AF_INET, &ss->in4.sin_addr, ip, sizeof(ip));
		else
			inet_ntop(AF_INET6, &ss->in6.sin6_addr, ip, sizeof(ip));
		json_array_append_new(a, json_string(ip));
	}
	return a;
}

/* What one audit line says. */
struct audit_line {
	const char *protocol, *host;
	uint16_t port;
	bool addresses;		/* the connection's checked addresses */
	const char *verdict, *reason;
	uint64_t up, down;
};

static void audit_write(struct conn *c, const struct audit_line *a)
{
	char when[40];
	struct timespec ts;
	struct tm tm;
	_cleanup_free_ char *line = NULL;
	json_t *j;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(when + strlen(when), sizeof(when) - strlen(when), ".%03ldZ", ts.tv_nsec / 1000000);
	j = json_pack("{s:s, s:s, s:s, s:s%, s:i, s:o, s:s, s:s, s:I, s:I, s:I}", "time", when,
		      "client", c->client, "protocol", a->protocol,
		      "host", a->host, strnlen(a->host, HTTP_HOST_MAX + 1), "port", a->port,
		      "addresses", a->addresses ? addrs_json(c) : json_array(), "verdict", a->verdict,
		      "reason", a->reason, "bytes_up", (json_int_t)a->up,
		      "bytes_down", (json_int_t)a->down, "duration_ms",
		      (json_int_t)(gw_now_ms() - c->started_ms));
	if (!j)
		return;
	/* which of network.allow_ranges let the addresses through, if any */
	if (a->addresses && c->n_ranges_used) {
		json_t *r = json_array();

		for (size_t i = 0; r && i < c->n_ranges_used; i++) {
			char text[RANGE_TEXT_MAX];

			range_format(&c->gw->cfg.allow_ranges[c->ranges_used[i]], text);
			json_array_append_new(r, json_string(text));
		}
		if (!r || json_object_set_new(j, "allow_ranges", r) < 0) {
			json_decref(j);
			return;
		}
	}
	line = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	json_decref(j);
	if (line) {
		size_t n = strlen(line);
		line[n] = '\n';
		/* one write: lines from concurrent connections never interleave */
		if (write(c->gw->cfg.audit_fd, line, n + 1) < 0)
			return;
	}
}

/* One JSON line per decision, written when the connection ends. */
void gw_audit(struct conn *c)
{
	struct audit_line a = { c->proto_name ? c->proto_name : "unknown", c->host, c->port, true,
				c->verdict, c->reason ? c->reason : "", c->bytes[0], c->bytes[1] };

	if (c->gw->cfg.audit_fd < 0 || !c->verdict)
		return;
	audit_write(c, &a);
}

/* What the client sent after the request it was served: a line of its
 * own, naming the host of the request it holds where it holds a whole
 * head. Never sent anywhere, so refused, whatever the host. */
void gw_audit_extra(struct conn *c)
{
	struct http_request req;
	enum http_result r;
	struct audit_line a = { "http", "", 0, false, "deny",
				"a further request on a connection: the gateway serves one request "
				"per connection, and sent it nowhere", (uint64_t)c->extra_len, 0 };

	if (c->gw->cfg.audit_fd < 0)
		return;
	r = http_parse_request(c->extra, c->extra_len, &req);
	if (r == HTTP_OK) {
		a.protocol = req.connect ? "http-connect" : "http";
		a.host = req.host;
		a.port = req.port;
	} else {
		a.verdict = "fail";
		a.reason = "bytes after the request: the gateway serves one request per connection, "
			   "and sent them nowhere";
	}
	audit_write(c, &a);
	http_request_clear(&req);
}
