/* conn.c: one gateway connection, from the first byte to the close:
 * read the request head (HTTP or SOCKS5), decide (deny list, allow list),
 * resolve and check every address, dial the checked addresses in turn,
 * answer the client, then relay both ways with splice until both sides
 * have closed. Every refusal is answered (403 or the SOCKS code) with its
 * reason and audited. Absolute-form http:// requests, served one per
 * connection, have their framing in served.c. */
#include "gateway/http.h"
#include "gateway/internal.h"
#include "gateway/socks5.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <openssl/crypto.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#define RELAY_CHUNK ((size_t)1 << 20)	/* a splice's most; pipes grow to it */
#define RELAY_TURN ((size_t)4 << 20)	/* bytes a relay moves before yielding */

static void conn_unlink(struct conn *c)
{
	struct gateway *gw = c->gw;

	if (c->prev)
		c->prev->next = c->next;
	else
		gw->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	c->prev = c->next = NULL;
	gw->n_conns--;
}

/* The request head goes; with a token it held credentials, so it is
 * wiped first. */
static void free_in(struct conn *c)
{
	if (c->in && c->gw->has_token)
		OPENSSL_cleanse(c->in, c->in_len);
	free(c->in);
	c->in = NULL;
	c->in_len = 0;
}

void gw_conn_close(struct conn *c)
{
	if (c->dead)
		return;
	gw_audit(c);
	if (c->extra_len)
		gw_audit_extra(c);
	if (c->cli.fd >= 0)
		close(c->cli.fd);
	if (c->up.fd >= 0)
		close(c->up.fd);
	c->cli.fd = c->up.fd = -1;
	for (int d = 0; d < 2; d++) {
		gw_pipe_release(c->gw, &c->p[d]);
		free(c->p[d].spill);
		c->p[d].spill = NULL;
	}
	free_in(c);
	if (c->extra && c->gw->has_token)
		OPENSSL_cleanse(c->extra, c->extra_len); /* a pipelined head's credentials */
	free(c->extra);
	free(c->resp);
	c->extra = c->resp = NULL;
	free(c->out);
	free(c->upout);
	c->out = c->upout = NULL;
	conn_unlink(c);
	c->dead = true;
	/* Freed after this turn of the loop: an event for its other side may
	 * be next in the same batch, and the resolver may still hold it. */
	c->grave_next = c->gw->graveyard;
	c->gw->graveyard = c;
}

/* Write what is pending for one side; 1 when all is out, 0 when the
 * socket is full, -1 on error. */
static int flush(int fd, char *buf, size_t len, size_t *off)
{
	while (*off < len) {
		ssize_t w = send(fd, buf + *off, len - *off, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		*off += (size_t)w;
	}
	return 1;
}

/* Answer the client with bytes (a refusal), then close. */
static void answer_and_close(struct conn *c, const void *bytes, size_t n)
{
	free(c->out);
	c->out_off = 0;
	c->out = malloc(n);
	if (c->out) {
		memcpy(c->out, bytes, n);
		c->out_len = n;
	}
	c->st = CS_REFUSING;
	c->deadline_ms = gw_now_ms() + 5000;
	if (!c->out || flush(c->cli.fd, c->out, c->out_len, &c->out_off) != 0)
		gw_conn_close(c);
}

static void refuse(struct conn *c, int http_status, enum socks_reply code,
		   const char *verdict, const char *reason)
{
	char buf[1024];
	size_t n;

	c->verdict = verdict;
	c->reason = reason;
	if (strcmp(verdict, "deny") == 0)
		gw_note_refused(c->gw, c->host, c->port, reason);
	if (c->proto == GW_PROTO_SOCKS5) {
		uint8_t r[10];
		n = socks5_format_reply(r, code);
		memcpy(buf, r, n);
	} else {
		n = http_format_refusal(buf, sizeof(buf), http_status, reason);
	}
	answer_and_close(c, buf, n);
}

void gw_refuse_http(struct conn *c, int http_status, const char *verdict, const char *reason)
{
	refuse(c, http_status, SOCKS_GENERAL_FAILURE, verdict, reason);
}

static void dial_next(struct conn *c);

/* A range that let an address through, once each, for the audit. */
static void note_range(struct conn *c, size_t range)
{
	for (size_t i = 0; i < c->n_ranges_used; i++)
		if (c->ranges_used[i] == range)
			return;
	if (c->n_ranges_used < GW_MAX_ADDRS)
		c->ranges_used[c->n_ranges_used++] = range;
}

static void resolved(void *arg, int status, const struct sockaddr_storage *addrs, size_t n)
{
	struct conn *c = arg;

	c->lookup_pending = false;
	if (c->dead)
		return;
	if (status != 0 || n == 0) {
		refuse(c, 502, SOCKS_HOST_UNREACHABLE, "fail",
		       status == ETIMEDOUT ? "name lookup timed out" : "name does not resolve");
		return;
	}
	c->n_addrs = n < GW_MAX_ADDRS ? n : GW_MAX_ADDRS;
	for (size_t i = 0; i < c->n_addrs; i++)
		memcpy(&c->addrs[i], &addrs[i], addrs[i].ss_family == AF_INET
							? sizeof(struct sockaddr_in)
							: sizeof(struct sockaddr_in6));
	/* Any refused address refuses the name, every one of them checked
	 * (not only those kept for dialling): a rebinding answer or a
	 * wildcard covering names someone else controls leads nowhere. */
	for (size_t i = 0; i < n; i++) {
		const struct sockaddr *sa = (const struct sockaddr *)&addrs[i];
		struct addr_judgement jd;

		addrguard_judge(sa, &c->gw->own, c->gw->cfg.allow_ranges,
				c->gw->cfg.n_allow_ranges, &jd);
		/* an address this host answers to by a route, not an
		 * interface; loopback a range opened is this host's anyway */
		if (jd.cls == ADDR_PUBLIC && jd.opened != ADDR_LOOPBACK &&
		    addrguard_is_local(sa))
			jd.cls = ADDR_HOST_OWN;
		if (jd.cls != ADDR_PUBLIC) {
			snprintf(c->reason_buf, sizeof(c->reason_buf),
				 "name resolves to a %s", addrguard_reason(jd.cls));
			refuse(c, 403, SOCKS_NOT_ALLOWED, "deny", c->reason_buf);
			return;
		}
		if (jd.range >= 0)
			note_range(c, (size_t)jd.range);
	}
	if (c->n_ranges_used)
		c->reason = "address in network.allow_ranges";
	c->st = CS_CONNECTING;
	c->deadline_ms = gw_now_ms() + c->gw->cfg.connect_timeout_ms;
	dial_next(c);
}

/* Dial the next checked address; the name is never looked up again. */
static void dial_next(struct conn *c)
{
	while (c->next_addr < c->n_addrs) {
		union gw_addr *ss = &c->addrs[c->next_addr++];
		socklen_t len = ss->sa.sa_family == AF_INET ? sizeof(struct sockaddr_in)
							    : sizeof(struct sockaddr_in6);
		int fd = socket(ss->sa.sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		int one = 1;

		if (c->up.fd >= 0) {
			close(c->up.fd);
			c->up.fd = -1;
		}
		if (fd < 0)
			continue;
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
		if (connect(fd, &ss->sa, len) < 0 && errno != EINPROGRESS) {
			close(fd);
			continue;
		}
		if (gw_watch(c->gw, &c->up, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET) < 0) {
			close(fd);
			continue;
		}
		c->up.fd = fd;
		return;
	}
	refuse(c, 502, SOCKS_CONN_REFUSED, "fail", "cannot connect to the host");
}

/* The toolbelt's unix socket, in place of an address. */
static void dial_toolbelt(struct conn *c)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = c->gw->cfg.toolbelt_socket;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	c->st = CS_CONNECTING;
	c->deadline_ms = gw_now_ms() + c->gw->cfg.connect_timeout_ms;
	c->n_addrs = c->next_addr = 0; /* nothing else to try */
	if (fd < 0 || strlen(path) >= sizeof(sa.sun_path)) {
		if (fd >= 0)
			close(fd);
		refuse(c, 502, SOCKS_CONN_REFUSED, "fail", "cannot reach the toolbelt");
		return;
	}
	memcpy(sa.sun_path, path, strlen(path) + 1);
	if ((connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS &&
	     errno != EAGAIN) ||
	    gw_watch(c->gw, &c->up, fd, EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET) < 0) {
		close(fd);
		refuse(c, 502, SOCKS_CONN_REFUSED, "fail", "cannot reach the toolbelt");
		return;
	}
	c->up.fd = fd;
}

static bool literal_addr(const char *host, uint16_t port, union gw_addr *ss)
{
	struct sockaddr_in *s4 = &ss->in4;
	struct sockaddr_in6 *s6 = &ss->in6;

	memset(ss, 0, sizeof(*ss));
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons(port);
		return true;
	}
	if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons(port);
		return true;
	}
	return false;
}

/* The policy's word on host:port: the deny list first, then the allow
 * list. A literal is allowed only by an IP entry, and is then dialled as
 * it is, private or not. */
static void decide(struct conn *c)
{
	const struct gw_config *cfg = &c->gw->cfg;
	union gw_addr ss;

	c->literal = literal_addr(c->host, c->port, &ss);
	if (!c->literal && host_normalise_name(c->host) < 0) {
		refuse(c, 403, SOCKS_NOT_ALLOWED, "deny", "not a valid host name");
		return;
	}
	/* the host's toolbelt, when this gateway serves one: never looked
	 * up, never dialled over the network */
	if (cfg->toolbelt_socket && !c->literal && strcmp(c->host, GW_TOOLBELT_NAME) == 0) {
		if (c->port != GW_TOOLBELT_PORT) {
			refuse(c, 403, SOCKS_NOT_ALLOWED, "deny", "the toolbelt is on port 80 only");
			return;
		}
		c->verdict = "allow";
		c->reason = "toolbelt";
		dial_toolbelt(c);
		return;
	}
	for (size_t i = 0; i < cfg->n_deny; i++) {
		if (host_match(&cfg->deny[i], c->host, c->port)) {
			refuse(c, 403, SOCKS_NOT_ALLOWED, "deny", "host in network.deny");
			return;
		}
	}
	bool allowed = false;
	for (size_t i = 0; !allowed && i < cfg->n_allow; i++)
		allowed = host_match(&cfg->allow[i], c->host, c->port);
	if (!allowed) {
		refuse(c, 403, SOCKS_NOT_ALLOWED, "deny", "host not in network.allow");
		return;
	}
	c->verdict = "allow";
	c->reason = "";
	if (c->literal) {
		c->addrs[0] = ss;
		c->n_addrs = 1;
		c->st = CS_CONNECTING;
		c->deadline_ms = gw_now_ms() + cfg->connect_timeout_ms;
		dial_next(c);
		return;
	}
	c->st = CS_RESOLVING;
	c->deadline_ms = gw_now_ms() + cfg->connect_timeout_ms;
	c->lookup_pending = true;
	resolver_lookup(c->gw->res, c->host, c->port, resolved, c);
}

/* Keep the bytes after the head: they go to the origin once connected. */
static int keep_early(struct conn *c, size_t used, const char *prefix, size_t plen)
{
	size_t rest = c->in_len - used;

	c->upout = malloc(plen + rest + 1);
	if (!c->upout)
		return -1;
	memcpy(c->upout, prefix, plen);
	memcpy(c->upout + plen, c->in + used, rest);
	c->upout_len = plen + rest;
	c->upout_off = 0;
	return 0;
}

/* NULL when the request carries the proxy token as a Basic password,
 * else the reason it does not. The decoded credentials are wiped. */
static const char *http_auth_refusal(const struct gateway *gw, const struct http_request *req)
{
	unsigned char scratch[HTTP_AUTH_DECODED_MAX];
	const unsigned char *pw;
	size_t pw_len;
	bool good;

	if (req->proxy_auth_count == 0)
		return "proxy authentication required";
	if (req->proxy_auth_count > 1)
		return "proxy authentication failed";
	good = http_basic_password(req->proxy_auth, req->proxy_auth_len, scratch, &pw,
				   &pw_len) == 0 &&
	       gw_token_ok(gw, pw, pw_len);
	OPENSSL_cleanse(scratch, sizeof(scratch));
	return good ? NULL : "proxy authentication failed";
}

static void parse_http(struct conn *c)
{
	struct http_request req = { 0 };
	enum http_result r = http_parse_request(c->in, c->in_len, &req);

	if (r == HTTP_NEED_MORE)
		return;
	c->proto_name = req.connect ? "http-connect" : "http";
	if (r == HTTP_BAD) {
		refuse(c, req.status ? req.status : 400, SOCKS_GENERAL_FAILURE, "fail",
		       req.reason ? req.reason : "malformed request");
		return;
	}
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	/* With a token, nothing of the request is judged before the client
	 * has shown it: an unauthenticated client learns no policy. */
	if (c->gw->has_token) {
		const char *why = http_auth_refusal(c->gw, &req);
		if (why) {
			http_request_clear(&req);
			refuse(c, 407, SOCKS_GENERAL_FAILURE, "refused", why);
			return;
		}
	}
	int kept = req.connect ? keep_early(c, req.head_len, "", 0) : gw_served_keep(c, &req);
	if (kept != 0) {
		http_request_clear(&req);
		if (kept > 0)
			refuse(c, 400, SOCKS_GENERAL_FAILURE, "fail", "malformed chunked body");
		else
			gw_conn_close(c);
		return;
	}
	bool tunnel = req.connect;
	http_request_clear(&req);
	if (tunnel) {
		static const char ok[] = "HTTP/1.1 200 Connection established\r\n\r\n";
		c->out = malloc(sizeof(ok) - 1);
		if (!c->out) {
			gw_conn_close(c);
			return;
		}
		memcpy(c->out, ok, sizeof(ok) - 1);
		c->out_len = sizeof(ok) - 1;
	}
	decide(c);
}

/* SOCKS5's phases: the greeting, the username/password sub-negotiation
 * (only with a token), then the request. */
enum { SOCKS_PHASE_GREETING, SOCKS_PHASE_AUTH, SOCKS_PHASE_REQUEST };

static void consume(struct conn *c, size_t used)
{
	memmove(c->in, c->in + used, c->in_len - used);
	c->in_len -= used;
}

/* 1: the greeting is answered and consumed; 0: wait; -1: c is closed. */
static int socks_greeting(struct conn *c)
{
	const char *why = NULL;
	size_t used = 0, off = 0;
	uint8_t method = c->gw->has_token ? SOCKS_METHOD_USERPASS : SOCKS_METHOD_NONE;
	enum socks_result r = socks5_parse_greeting((uint8_t *)c->in, c->in_len, method, &used,
						    &why);
	const uint8_t yes[2] = { 5, method }, no[2] = { 5, SOCKS_METHOD_REFUSED };

	if (r == SOCKS_NEED_MORE)
		return 0;
	if (r == SOCKS_BAD) {
		bool v5 = c->in_len > 0 && c->in[0] == 5;
		/* Offering methods, just not the token's: turned away as
		 * unauthenticated. Anything else is malformed. */
		bool unauthenticated = c->gw->has_token && v5 && c->in_len > 1 && c->in[1] > 0;

		c->verdict = unauthenticated ? "refused" : "fail";
		c->reason = unauthenticated ? "proxy authentication required"
					    : why ? why : "not a SOCKS5 greeting";
		if (v5)
			answer_and_close(c, no, sizeof(no));
		else
			gw_conn_close(c);
		return -1;
	}
	if (flush(c->cli.fd, (char *)yes, 2, &off) != 1) {
		gw_conn_close(c);
		return -1;
	}
	consume(c, used);
	c->socks_phase = c->gw->has_token ? SOCKS_PHASE_AUTH : SOCKS_PHASE_REQUEST;
	return 1;
}

/* RFC 1929: any user name, the token as the password. */
static int socks_auth(struct conn *c)
{
	struct socks_auth a;
	enum socks_result r = socks5_parse_auth((uint8_t *)c->in, c->in_len, &a);
	uint8_t reply[2];
	size_t off = 0;
	bool good;

	if (r == SOCKS_NEED_MORE)
		return 0;
	good = r == SOCKS_OK && gw_token_ok(c->gw, a.password, a.password_len);
	socks5_format_auth_reply(reply, good);
	if (!good) {
		c->verdict = "refused";
		c->reason = r == SOCKS_OK ? "proxy authentication failed"
					  : "malformed SOCKS5 username/password message";
		OPENSSL_cleanse(c->in, c->in_len);
		answer_and_close(c, reply, sizeof(reply));
		return -1;
	}
	/* the credentials leave the buffer as they are consumed */
	OPENSSL_cleanse(c->in, a.used);
	consume(c, a.used);
	if (flush(c->cli.fd, (char *)reply, 2, &off) != 1) {
		gw_conn_close(c);
		return -1;
	}
	c->socks_phase = SOCKS_PHASE_REQUEST;
	return 1;
}

static void parse_socks(struct conn *c)
{
	c->proto_name = "socks5";
	if (c->socks_phase == SOCKS_PHASE_GREETING && socks_greeting(c) <= 0)
		return;
	if (c->socks_phase == SOCKS_PHASE_AUTH && socks_auth(c) <= 0)
		return;
	struct socks_request req = { 0 };
	enum socks_result r = socks5_parse_request((uint8_t *)c->in, c->in_len, &req);
	if (r == SOCKS_NEED_MORE)
		return;
	if (r == SOCKS_BAD) {
		refuse(c, 400, req.reply, "fail", req.reason ? req.reason : "malformed request");
		return;
	}
	snprintf(c->host, sizeof(c->host), "%s", req.host);
	c->port = req.port;
	if (keep_early(c, req.used, "", 0) < 0) {
		gw_conn_close(c);
		return;
	}
	uint8_t ok[10];
	size_t n = socks5_format_reply(ok, SOCKS_SUCCEEDED);
	c->out = malloc(n);
	if (!c->out) {
		gw_conn_close(c);
		return;
	}
	memcpy(c->out, ok, n);
	c->out_len = n;
	decide(c);
}

static void read_head(struct conn *c)
{
	if (!c->in && !(c->in = malloc(HTTP_HEAD_MAX + 1))) {
		gw_conn_close(c);
		return;
	}
	while (c->st == CS_HEAD && c->in_len < HTTP_HEAD_MAX + 1) {
		ssize_t n = recv(c->cli.fd, c->in + c->in_len, HTTP_HEAD_MAX + 1 - c->in_len, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			gw_conn_close(c); /* gone before a whole request */
			return;
		}
		c->in_len += (size_t)n;
		if (c->proto == GW_PROTO_ANY)
			c->proto = c->in[0] == 5 ? GW_PROTO_SOCKS5 : GW_PROTO_HTTP;
		if (c->proto == GW_PROTO_SOCKS5)
			parse_socks(c);
		else if (memchr(c->in + c->in_len - (size_t)n, '\n', (size_t)n) ||
			 c->in_len > HTTP_HEAD_MAX || c->in[0] < 'A' || c->in[0] > 'Z')
			/* a head ends with a line: a client trickling bytes costs
			 * one parse a line, not one a byte; what cannot start a
			 * method is refused at once */
			parse_http(c);
		if (c->dead)
			return;
	}
	if (c->st == CS_HEAD) /* full buffer, still no request */
		refuse(c, 431, SOCKS_GENERAL_FAILURE, "fail", "request head too large");
}

static void start_relay(struct conn *c)
{
	int r;

	free_in(c);
	c->st = CS_RELAY;
	c->deadline_ms = gw_now_ms() + c->gw->cfg.idle_timeout_ms;
	r = c->out ? flush(c->cli.fd, c->out, c->out_len, &c->out_off) : 1;
	if (r == 1 && c->upout) {
		r = flush(c->up.fd, c->upout, c->upout_len, &c->upout_off);
		c->bytes[0] += c->upout_off; /* the forwarded head and early bytes */
	}
	if (r < 0)
		gw_conn_close(c);
	else
		gw_conn_event(c, &c->cli, EPOLLIN | EPOLLOUT);
}

static void check_connected(struct conn *c)
{
	int err = 0;
	socklen_t len = sizeof(err);

	if (getsockopt(c->up.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0 || err != 0) {
		dial_next(c);
		return;
	}
	start_relay(c);
}

/* Pending replies go out before any relayed byte. */
static bool flush_pending(struct conn *c)
{
	int r = 1;

	if (c->out && c->out_off < c->out_len)
		r = flush(c->cli.fd, c->out, c->out_len, &c->out_off);
	if (r == 1 && c->upout && c->upout_off < c->upout_len) {
		size_t before = c->upout_off;
		r = flush(c->up.fd, c->upout, c->upout_len, &c->upout_off);
		c->bytes[0] += c->upout_off - before;
	}
	if (r < 0) {
		gw_conn_close(c);
		return false;
	}
	return r == 1;
}

static void queue_ready(struct conn *c)
{
	if (c->ready_queued)
		return;
	c->ready_queued = true;
	c->ready_next = c->gw->ready;
	c->gw->ready = c;
}

void gw_conn_event(struct conn *c, struct endpoint *ep, uint32_t events)
{
	switch (c->st) {
	case CS_HEAD:
		if (ep->kind == EP_CLIENT && (events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)))
			read_head(c);
		return;
	case CS_RESOLVING:
		return;
	case CS_CONNECTING:
		if (ep->kind == EP_UPSTREAM && (events & (EPOLLOUT | EPOLLERR | EPOLLHUP)))
			check_connected(c);
		return;
	case CS_REFUSING:
		if (flush(c->cli.fd, c->out, c->out_len, &c->out_off) != 0)
			gw_conn_close(c);
		return;
	case CS_RELAY:
		break;
	}
	if (!flush_pending(c))
		return;
	int r0 = gw_relay(c, 0), r1 = c->dead ? -1 : gw_relay(c, 1);
	if (c->dead || c->st != CS_RELAY)
		return;	/* closed, or a refusal under way */
	if (r0 < 0 || r1 < 0) {
		/* allowed, then ended by an error: the audit says so */
		c->reason = "relay ended by an error";
		gw_conn_close(c);
		return;
	}
	if (r0 == 2 || r1 == 2)
		queue_ready(c);
	/* One request served and its answer out: the client has a few
	 * seconds to close its end (closing first could reset the answer). */
	if (c->one_request && c->shut[1]) {
		if (!c->linger_ms)
			c->linger_ms = gw_now_ms() + 5000;
		c->deadline_ms = c->linger_ms;
	} else {
		c->deadline_ms = gw_now_ms() + c->gw->cfg.idle_timeout_ms;
	}
	if (c->eof[0] && c->eof[1] && c->p[0].n == 0 && c->p[1].n == 0 && !c->p[0].spill &&
	    !c->p[1].spill)
		gw_conn_close(c);
}

void gw_conn_timeout(struct conn *c)
{
	switch (c->st) {
	case CS_RESOLVING:
	case CS_CONNECTING:
		refuse(c, 504, SOCKS_TTL_EXPIRED, "fail", "timed out reaching the host");
		return;
	case CS_HEAD:
		c->verdict = c->in_len ? "fail" : NULL;
		c->reason = "request head not received in time";
		gw_conn_close(c);
		return;
	case CS_RELAY:
		if (!c->linger_ms)
			c->reason = "idle";
		gw_conn_close(c);
		return;
	case CS_REFUSING:
		gw_conn_close(c);
		return;
	}
}

static bool pipe_acquire(struct gateway *gw, struct pipebuf *p)
{
	int fds[2];

	if (p->r >= 0)
		return true;
	if (gw->n_pool > 0) {
		gw->n_pool--;
		p->r = gw->pool[gw->n_pool][0];
		p->w = gw->pool[gw->n_pool][1];
		gw->pipes_held++;
		return true;
	}
	if (pipe2(fds, O_NONBLOCK | O_CLOEXEC) < 0)
		return false;
	/* bigger pipes, fewer splices; where the per-user pipe budget says
	 * no, the default size serves */
	fcntl(fds[1], F_SETPIPE_SZ, (int)RELAY_CHUNK);
	p->r = fds[0];
	p->w = fds[1];
	gw->pipes_held++;
	return true;
}

/* An empty pipe goes back to the pool: idle tunnels hold none. */
void gw_pipe_release(struct gateway *gw, struct pipebuf *p)
{
	if (p->r < 0)
		return;
	gw->pipes_held--;
	if (p->n == 0 && gw->n_pool < GW_PIPE_POOL) {
		gw->pool[gw->n_pool][0] = p->r;
		gw->pool[gw->n_pool][1] = p->w;
		gw->n_pool++;
	} else {
		close(p->r);
		close(p->w);
	}
	p->r = p->w = -1;
	p->n = 0;
}

/* The other side is full: what is left in the pipe moves to the heap and
 * the pipe goes back, so a reader that stopped costs no fds. */
static int spill(struct gateway *gw, struct pipebuf *p)
{
	char *buf = malloc(p->n);
	ssize_t r;

	if (!buf)
		return -1;
	r = read(p->r, buf, p->n);
	if (r != (ssize_t)p->n) {
		free(buf);
		return -1;
	}
	p->spill = buf;
	p->spill_len = p->n;
	p->spill_off = 0;
	p->n = 0;
	gw_pipe_release(gw, p);
	return 0;
}

/* How much to read in one go: what the other side's send buffer can still
 * take, between 4 KiB and a chunk, so that a stall leaves little behind. */
static size_t chunk_for(int out)
{
	int queued = 0, sndbuf = 0;
	socklen_t len = sizeof(sndbuf);
	long room;

	if (ioctl(out, SIOCOUTQ, &queued) < 0 ||
	    getsockopt(out, SOL_SOCKET, SO_SNDBUF, &sndbuf, &len) < 0)
		return RELAY_CHUNK;
	room = (long)sndbuf / 2 - queued;
	if (room < 4096)
		return 4096;
	return (size_t)room < RELAY_CHUNK ? (size_t)room : RELAY_CHUNK;
}

/* Move bytes one way: 0 when it has to wait, 2 when it stopped for
 * fairness with more to move, -1 on an error that ends the connection. */
int gw_relay(struct conn *c, int dir)
{
	int in = dir == 0 ? c->cli.fd : c->up.fd, out = dir == 0 ? c->up.fd : c->cli.fd;
	struct pipebuf *p = &c->p[dir];
	size_t moved = 0;

	for (;;) {
		while (p->spill) {
			ssize_t w = send(out, p->spill + p->spill_off, p->spill_len - p->spill_off,
					 MSG_NOSIGNAL);
			if (w > 0) {
				p->spill_off += (size_t)w;
				c->bytes[dir] += (uint64_t)w;
				if (p->spill_off == p->spill_len) {
					free(p->spill);
					p->spill = NULL;
				}
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			if (w < 0 && errno == EAGAIN)
				return 0; /* its EPOLLOUT resumes */
			return -1;
		}
		while (p->n > 0) {
			ssize_t w = splice(p->r, NULL, out, NULL, p->n, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (w > 0) {
				p->n -= (size_t)w;
				c->bytes[dir] += (uint64_t)w;
				continue;
			}
			if (w < 0 && errno == EINTR)
				continue;
			/* The other side is full: a few stalled relays keep
			 * their pipe (bulk transfers stall all the time, and
			 * the heap would cost two copies); past that the
			 * bytes move to the heap, so stalled readers cost
			 * no fds. Its EPOLLOUT resumes either way. */
			if (w < 0 && errno == EAGAIN)
				return c->gw->pipes_held <= GW_PIPES_KEPT ? 0 : spill(c->gw, p) < 0 ? -1 : 0;
			return -1;
		}
		if (c->eof[dir]) {
			/* half-close passed through */
			if (!c->shut[dir]) {
				shutdown(out, SHUT_WR);
				c->shut[dir] = true;
			}
			gw_pipe_release(c->gw, p);
			return 0;
		}
		if (moved >= RELAY_TURN)
			return 2;
		/* a served request's parts the pipe cannot move (served.c) */
		if (c->one_request) {
			int r = gw_served_read(c, dir, &moved);

			if (r == 1)
				continue;
			if (r <= 0)
				return r;
		}
		if (!pipe_acquire(c->gw, p))
			return -1;
		/* A relay that may keep its pipe reads what the pipe holds;
		 * one that would spill reads only what the other side can
		 * take, so that a stall leaves little to copy. */
		size_t chunk = c->gw->pipes_held <= GW_PIPES_KEPT ? RELAY_CHUNK : chunk_for(out);
		if (c->one_request)
			chunk = gw_served_limit(c, dir, chunk); /* not a byte past the body */
		ssize_t r = splice(in, NULL, p->w, NULL, chunk, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if (r > 0) {
			p->n += (size_t)r;
			moved += (size_t)r;
			if (c->one_request)
				gw_served_moved(c, dir, (size_t)r);
		} else if (r == 0) {
			c->eof[dir] = true;
		} else if (errno == EINTR) {
			continue;
		} else if (errno == EAGAIN) {
			gw_pipe_release(c->gw, p);
			return 0;
		} else {
			return -1;
		}
	}
}
