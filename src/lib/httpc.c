/* httpc.c: a minimal, strict HTTP/1.1 client (see httpc.h): the proxy
 * URL, the answer's parsers (pure) and the exchange itself (non-blocking
 * sockets and poll, against one deadline). */
#include "lib/httpc.h"

#include "lib/cleanup.h"
#include "lib/httphead.h"
#include "lib/num.h"

#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

/* connecting to one address takes at most this of the deadline */
#define HTTPC_CONNECT_MS 10000

/* --- the proxy URL ------------------------------------------------------- */

static void put_v4(struct httpc_proxy *p, const struct in_addr *a, uint16_t port)
{
	struct sockaddr_in *s = (struct sockaddr_in *)&p->addr[p->n];

	s->sin_family = AF_INET;
	s->sin_port = htons(port);
	s->sin_addr = *a;
	p->len[p->n++] = sizeof(*s);
}

static void put_v6(struct httpc_proxy *p, const struct in6_addr *a, uint16_t port)
{
	struct sockaddr_in6 *s = (struct sockaddr_in6 *)&p->addr[p->n];

	s->sin6_family = AF_INET6;
	s->sin6_port = htons(port);
	s->sin6_addr = *a;
	p->len[p->n++] = sizeof(*s);
}

int httpc_proxy_parse(const char *url, struct httpc_proxy *p)
{
	char host[INET6_ADDRSTRLEN + 1], digits[6];
	const char *h, *he, *port, *pe;
	struct in6_addr a6;
	struct in_addr a4;
	unsigned long n;
	bool v6;

	memset(p, 0, sizeof(*p));
	if (!url || strncasecmp(url, "http://", 7) != 0)
		return -1;
	h = url + 7;
	v6 = h[0] == '[';
	if (v6) {
		h++;
		he = strchr(h, ']');
		if (!he || he[1] != ':')
			return -1;
		port = he + 2;
	} else {
		he = strchr(h, ':');
		if (!he)
			return -1;
		port = he + 1;
	}
	if (he == h || (size_t)(he - h) >= sizeof(host))
		return -1;
	memcpy(host, h, (size_t)(he - h));
	host[he - h] = '\0';
	pe = port + strspn(port, "0123456789");
	if (pe == port || (size_t)(pe - port) >= sizeof(digits) ||
	    (strcmp(pe, "") != 0 && strcmp(pe, "/") != 0))
		return -1;
	memcpy(digits, port, (size_t)(pe - port));
	digits[pe - port] = '\0';
	if (num_parse_ulong(digits, 65535, &n) < 0 || n == 0)
		return -1;
	if (v6) {
		if (inet_pton(AF_INET6, host, &a6) != 1)
			return -1;
		put_v6(p, &a6, (uint16_t)n);
	} else if (strcasecmp(host, "localhost") == 0) {
		a4.s_addr = htonl(INADDR_LOOPBACK);
		put_v4(p, &a4, (uint16_t)n);
		put_v6(p, &in6addr_loopback, (uint16_t)n);
	} else {
		/* inet_pton takes dotted quads only (no "1", no "0x7f.1") */
		if (inet_pton(AF_INET, host, &a4) != 1)
			return -1;
		put_v4(p, &a4, (uint16_t)n);
	}
	return 0;
}

/* --- the parsers --------------------------------------------------------- */

/* One header field (lib/httphead): a Content-Length noted, a
 * Transfer-Encoding refused. */
static bool header_line(struct httphead_span line, struct httpc_head *h)
{
	struct httphead_span name, v;

	if (httphead_field(line, &name, &v) != HTTPHEAD_OK ||
	    httphead_ieq(name, "transfer-encoding"))
		return false;
	if (httphead_ieq(name, "content-length")) {
		uint64_t len = 0;

		if (h->has_length || v.n == 0 || v.n > 15)
			return false;
		for (size_t i = 0; i < v.n; i++) {
			if (v.p[i] < '0' || v.p[i] > '9')
				return false;
			len = len * 10 + (uint64_t)(v.p[i] - '0');
		}
		h->has_length = true;
		h->length = len;
	}
	return true;
}

enum httpc_result httpc_parse_head(const char *buf, size_t n, struct httpc_head *h)
{
	static const struct httphead_limits lim = { .head_max = HTTPC_HEAD_MAX };
	size_t max = n < HTTPC_HEAD_MAX ? n : HTTPC_HEAD_MAX;
	const char *end = memmem(buf, max, "\r\n\r\n", 4);
	struct httphead_reader r;
	struct httphead_span line, reason;
	int code = 0, minor = 0;

	memset(h, 0, sizeof(*h));
	if (!end)
		return n >= HTTPC_HEAD_MAX ? HTTPC_BAD : HTTPC_MORE;
	/* the head, up to its first empty line, read whole: CRLF throughout
	 * (a bare CR or LF within a line, or a folded line, is bad) */
	httphead_reader_init(&r, buf, (size_t)(end + 4 - buf), HTTPHEAD_EOL_CRLF, &lim);
	if (httphead_next_line(&r, &line) != HTTPHEAD_OK ||
	    httphead_status_line(line, &code, &minor, &reason) != HTTPHEAD_OK ||
	    code < 200)
		return HTTPC_BAD;
	h->status = (unsigned int)code;
	for (;;) {
		if (httphead_next_line(&r, &line) != HTTPHEAD_OK)
			return HTTPC_BAD;
		if (r.done)
			break;
		if (!header_line(line, h))
			return HTTPC_BAD;
	}
	h->len = r.off;
	return HTTPC_OK;
}

int httpc_parse_answer(const char *buf, size_t n, size_t body_max, struct httpc_head *h,
		       size_t *body_len)
{
	size_t rest;

	*body_len = 0;
	if (httpc_parse_head(buf, n, h) != HTTPC_OK)
		return -1;
	rest = n - h->len;
	if (h->status == 204 || h->status == 304)
		return rest == 0 ? 0 : -1;
	if (h->has_length && (h->length > body_max || rest != h->length))
		return -1;
	if (rest > body_max)
		return -1;
	*body_len = rest;
	return 0;
}

/* --- the exchange -------------------------------------------------------- */

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait until fd has one of events, or until deadline (errno ETIMEDOUT). */
static int wait_fd(int fd, short events, int64_t deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		int64_t left = deadline - now_ms();
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, left > INT_MAX ? INT_MAX : (int)left);
		if (r > 0)
			return 0; /* readable, writable or an error the next call says */
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

static int dial(const struct sockaddr *sa, socklen_t len, int64_t deadline, struct err **e)
{
	_cleanup_close_ int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	int soerr = 0;
	socklen_t sl = sizeof(soerr);

	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "socket");
	if (connect(fd, sa, len) == 0)
		return steal_fd(&fd);
	if (errno != EINPROGRESS && errno != EINTR)
		return err_set(e, ERR_UNAVAILABLE, errno, "connect");
	if (wait_fd(fd, POLLOUT, deadline) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "connect");
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0 || soerr)
		return err_set(e, ERR_UNAVAILABLE, soerr ? soerr : errno, "connect");
	return steal_fd(&fd);
}

/* A connected socket: to the proxy (its addresses in turn) or to the
 * unix socket. */
static int open_conn(const struct httpc_request *r, int64_t deadline, struct err **e)
{
	if (r->proxy) {
		for (size_t i = 0; i < r->proxy->n; i++) {
			int64_t until = now_ms() + HTTPC_CONNECT_MS;
			int fd;

			err_free(*e);
			*e = NULL;
			fd = dial((const struct sockaddr *)&r->proxy->addr[i], r->proxy->len[i],
				  until < deadline ? until : deadline, e);
			if (fd >= 0)
				return fd;
		}
		return *e ? err_wrap(e, "the proxy") : err_set(e, ERR_UNAVAILABLE, 0, "no proxy");
	}
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int64_t until = now_ms() + HTTPC_CONNECT_MS;

	if (!r->socket || strlen(r->socket) >= sizeof(sun.sun_path))
		return err_set(e, ERR_UNAVAILABLE, 0, "the socket's path is too long");
	memcpy(sun.sun_path, r->socket, strlen(r->socket) + 1);
	int fd = dial((const struct sockaddr *)&sun, sizeof(sun), until < deadline ? until : deadline, e);

	return fd < 0 ? err_wrap(e, "%s", r->socket) : fd;
}

static int send_all(int fd, const char *p, size_t n, int64_t deadline, struct err **e)
{
	while (n > 0) {
		ssize_t k = send(fd, p, n, MSG_NOSIGNAL);

		if (k > 0) {
			p += k;
			n -= (size_t)k;
		} else if (k < 0 && errno == EINTR) {
			continue;
		} else if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (wait_fd(fd, POLLOUT, deadline) < 0)
				return err_set(e, ERR_UNAVAILABLE, errno, "send");
		} else {
			return err_set(e, ERR_UNAVAILABLE, k < 0 ? errno : EPIPE, "send");
		}
	}
	return 0;
}

/* What has been read: at most max bytes, then the reader stops. */
struct rbuf {
	char *p;
	size_t n, cap, max;
};

static void rbuf_free(struct rbuf *b)
{
	if (b->p)
		explicit_bzero(b->p, b->cap); /* an answer may carry a secret */
	free(b->p);
	b->p = NULL;
	b->n = b->cap = 0;
}

/* Read once into b (waiting up to deadline): the bytes read, 0 at the
 * end, -1 on an error, on the deadline, or when b would pass its max. */
static ssize_t rbuf_read(int fd, struct rbuf *b, int64_t deadline, struct err **e)
{
	for (;;) {
		ssize_t k;

		if (b->n == b->max)
			return err_set(e, ERR_UNAVAILABLE, 0, "the answer is too big");
		if (b->n + 1 >= b->cap) {
			size_t cap = b->cap * 2;
			char *np;

			if (cap > b->max + 1)
				cap = b->max + 1;
			np = calloc(1, cap);
			if (!np)
				return err_set(e, ERR_INTERNAL, ENOMEM, "read");
			if (b->n)
				memcpy(np, b->p, b->n);
			rbuf_free(&(struct rbuf){ .p = b->p, .cap = b->cap });
			b->p = np;
			b->cap = cap;
		}
		k = recv(fd, b->p + b->n, b->cap - 1 - b->n, 0);
		if (k >= 0) {
			b->n += (size_t)k;
			b->p[b->n] = '\0';
			return k;
		}
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return err_set(e, ERR_UNAVAILABLE, errno, "read");
		if (wait_fd(fd, POLLIN, deadline) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "read");
	}
}

/* A value that goes into a request's head: no control bytes, and no
 * spaces where space ends it. */
static bool head_ok(const char *s, bool spaces)
{
	for (; *s; s++)
		if ((unsigned char)*s < ' ' || *s == 0x7f || (!spaces && *s == ' '))
			return false;
	return true;
}

/* Through the proxy: CONNECT host:port, and its 200. Whatever came after
 * the proxy's head is the tunnel's first bytes, left in b. */
static int tunnel(int fd, const struct httpc_request *r, struct rbuf *b, int64_t deadline,
		  struct err **e)
{
	_cleanup_free_ char *req = NULL;
	struct httpc_head h;

	if (asprintf(&req, "CONNECT %s:%u HTTP/1.1\r\nHost: %s:%u\r\n\r\n", r->host,
		     (unsigned int)r->port, r->host, (unsigned int)r->port) < 0) {
		req = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "CONNECT");
	}
	if (send_all(fd, req, strlen(req), deadline, e) < 0)
		return err_wrap(e, "the proxy");
	for (;;) {
		ssize_t k = rbuf_read(fd, b, deadline, e);
		enum httpc_result res;

		if (k < 0)
			return err_wrap(e, "the proxy");
		res = httpc_parse_head(b->p, b->n, &h);
		if (res == HTTPC_OK)
			break;
		if (res == HTTPC_BAD || k == 0)
			return err_set(e, ERR_UNAVAILABLE, 0, "the proxy's answer to CONNECT is %s",
				       k == 0 ? "cut short" : "malformed");
	}
	if (h.status != 200)
		return err_set(e, ERR_UNAVAILABLE, 0, "the proxy refused the tunnel (%u)", h.status);
	memmove(b->p, b->p + h.len, b->n - h.len);
	b->n -= h.len;
	return 0;
}

/* The request's head (wiped once sent: it carries auth), then its body. */
static int send_request(int fd, const struct httpc_request *r, int64_t deadline, struct err **e)
{
	size_t blen = r->body ? strlen(r->body) : 0;
	char framing[96] = "";
	char *req = NULL;
	int rc;

	if (r->body)
		snprintf(framing, sizeof(framing),
			 "Content-Type: application/json\r\nContent-Length: %zu\r\n", blen);
	if (asprintf(&req, "%s %s HTTP/1.1\r\nHost: %s\r\n%s%s%s%sConnection: close\r\n\r\n",
		     r->method, r->path, r->host, r->auth ? "Authorization: " : "",
		     r->auth ? r->auth : "", r->auth ? "\r\n" : "", framing) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "request");
	rc = send_all(fd, req, strlen(req), deadline, e);
	explicit_bzero(req, strlen(req));
	free(req);
	if (rc < 0 || blen == 0)
		return rc;
	return send_all(fd, r->body, blen, deadline, e);
}

int httpc_exchange(const struct httpc_request *r, struct httpc_answer *a, struct err **e)
{
	int64_t deadline = now_ms() + r->timeout_ms;
	struct rbuf b = { .max = HTTPC_HEAD_MAX + r->body_max };
	struct httpc_head h;
	int fd, rc;

	memset(a, 0, sizeof(*a));
	if (!head_ok(r->method, false) || !head_ok(r->host, false) || !head_ok(r->path, false) ||
	    (r->auth && !head_ok(r->auth, true)))
		return err_set(e, ERR_INTERNAL, 0, "a request with control bytes in its head");
	/* zeroed, here and as it grows: the analyzer cannot see what recv
	 * writes, and the cost is nothing beside the exchange */
	b.cap = 4096;
	b.p = calloc(1, b.cap);
	if (!b.p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "answer");
	b.p[0] = '\0';
	fd = open_conn(r, deadline, e);
	rc = fd < 0 ? -1 : 0;
	if (rc == 0 && r->proxy)
		rc = tunnel(fd, r, &b, deadline, e);
	if (rc == 0)
		rc = send_request(fd, r, deadline, e);
	/* the answer, to the end (Connection: close) */
	while (rc == 0) {
		ssize_t k = rbuf_read(fd, &b, deadline, e);

		if (k < 0)
			rc = -1;
		else if (k == 0)
			break;
	}
	if (fd >= 0)
		close(fd);
	if (rc == 0 && httpc_parse_answer(b.p, b.n, r->body_max, &h, &a->len) < 0)
		rc = err_set(e, ERR_UNAVAILABLE, 0, "the answer is malformed or too big");
	if (rc == 0) {
		a->body = malloc(a->len + 1);
		if (!a->body) {
			rc = err_set(e, ERR_INTERNAL, ENOMEM, "answer");
		} else {
			memcpy(a->body, b.p + h.len, a->len);
			a->body[a->len] = '\0';
			a->status = h.status;
		}
	}
	rbuf_free(&b);
	if (rc < 0)
		memset(a, 0, sizeof(*a));
	return rc;
}
