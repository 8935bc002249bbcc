/* httpc.h: a minimal, strict HTTP/1.1 client: one request a connection
 * (Connection: close), over a unix socket or through an HTTP proxy's
 * CONNECT tunnel, the answer read to its end within a size bound and the
 * whole exchange within a deadline. It exists because the static cordon
 * (copied into containers) cannot link libcurl; it speaks only what it
 * needs (no chunked answers, no redirects, no proxy authentication). */
#ifndef CORDON_LIB_HTTPC_H
#define CORDON_LIB_HTTPC_H

#include "lib/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* An answer's head (its status line and header lines) is at most this. */
#define HTTPC_HEAD_MAX ((size_t)16384)

/* A proxy, http://HOST:PORT (HOST an IPv4 address, a bracketed IPv6
 * address or localhost, which is tried as 127.0.0.1 then ::1). */
struct httpc_proxy {
	struct sockaddr_storage addr[2];
	socklen_t len[2];
	size_t n;
};

/* 0 and *p when url is such a proxy URL (an optional "/" after the port;
 * no user, no other path), else -1. */
int httpc_proxy_parse(const char *url, struct httpc_proxy *p);

struct httpc_request {
	const char *method;	/* "GET", "POST" */
	const char *host;	/* the Host header, and the CONNECT target's name */
	uint16_t port;		/* the CONNECT target's port */
	const char *path;
	const char *auth;	/* the Authorization header's value, or NULL */
	const char *body;	/* sent as application/json, or NULL for none */
	const struct httpc_proxy *proxy; /* through its CONNECT tunnel, or NULL: */
	const char *socket;	/* the unix socket, when there is no proxy */
	int timeout_ms;		/* the whole exchange, connecting included */
	size_t body_max;	/* the answer's body at most */
};

/* What the server answered: its status and its body (NUL-terminated; the
 * caller frees it). */
struct httpc_answer {
	unsigned int status;
	char *body;
	size_t len;
};

/* Send r and read its answer to the end: 0 and *a, or -1 and *e (could
 * not connect, the proxy refused the tunnel, the deadline passed, the
 * answer is malformed or too big). The request's head, which carries
 * auth, is wiped before it is freed. */
int httpc_exchange(const struct httpc_request *r, struct httpc_answer *a, struct err **e);

/* --- the parsers (pure, for the tests) ----------------------------------- */

struct httpc_head {
	size_t len;		/* bytes the head took, its empty line included */
	unsigned int status;
	bool has_length;
	uint64_t length;	/* Content-Length, when has_length */
};

enum httpc_result {
	HTTPC_MORE,	/* no complete head in buf yet (and within the bound) */
	HTTPC_OK,
	HTTPC_BAD,
};

/* The head at the start of buf[0..n): "HTTP/1.0" or "HTTP/1.1", a space,
 * a three-digit status (200 to 599: the client never asks for an interim
 * one) and an optional reason; header fields "name: value" (a token, no
 * space before the colon, no control bytes but tabs in the value, no
 * folded lines); every line ending in CRLF; an empty line. Bad: anything
 * else, a Transfer-Encoding (this client reads no chunked body), a
 * Content-Length that is not decimal digits or comes twice, a head over
 * HTTPC_HEAD_MAX. */
enum httpc_result httpc_parse_head(const char *buf, size_t n, struct httpc_head *h);

/* A whole answer, buf[0..n) being everything the server sent before it
 * closed: 0 with *h and the body at buf + h->len, *body_len long (its
 * Content-Length exactly when it has one, else the rest), or -1 (a bad
 * or unfinished head, a body shorter or longer than its Content-Length,
 * a body over body_max). */
int httpc_parse_answer(const char *buf, size_t n, size_t body_max, struct httpc_head *h,
		       size_t *body_len);

#endif
