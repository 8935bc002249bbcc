/* http.h: the gateway's HTTP/1.1 proxy request head parser. Two forms are
 * served: `CONNECT host:port` (a tunnel) and absolute-form requests to
 * `http://host[:port]/path`, which are forwarded in origin-form. The
 * request target alone decides where a request goes: a Host header never
 * does. Pure functions over a buffer: no I/O, no allocation but the
 * forwarded head. */
#ifndef CORDON_GATEWAY_HTTP_H
#define CORDON_GATEWAY_HTTP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define HTTP_HEAD_MAX 16384	/* bytes of request line and headers */
#define HTTP_HOST_MAX 255

enum http_result {
	HTTP_NEED_MORE,	/* no complete head yet (and under the limit) */
	HTTP_OK,
	HTTP_BAD,	/* answer status with reason, then close */
};

struct http_request {
	bool connect;			/* CONNECT; otherwise absolute-form */
	char host[HTTP_HOST_MAX + 1];	/* name or IP literal, brackets removed */
	uint16_t port;			/* explicit, or 80 for http:// */
	size_t head_len;		/* bytes of input the head took */
	/* Absolute-form only: the head to send to the origin (malloc'd,
	 * NUL-terminated, CRLF line ends): request line in origin-form,
	 * Host generated from the target (a client's Host is replaced,
	 * RFC 9112 section 3.2.2, so it cannot steer a shared front end to
	 * another site), hop-by-hop and Proxy-* headers and those named in
	 * Connection removed, one normalised Content-Length,
	 * "Connection: close" set. */
	char *forward;
	size_t forward_len;
	/* Absolute-form only: how the request body ends (RFC 9112 section
	 * 6.3: neither header means no body), so that nothing after it is
	 * sent to the origin. */
	enum { HTTP_BODY_NONE, HTTP_BODY_LENGTH, HTTP_BODY_CHUNKED } body;
	unsigned long long body_len;	/* HTTP_BODY_LENGTH */
	bool head_method;		/* HEAD: its response has no body */
	/* The value of the Proxy-Authorization header, trimmed, pointing
	 * into the parsed buffer (NULL when there is none), and how many
	 * such headers there were: the gateway takes exactly one. */
	const char *proxy_auth;
	size_t proxy_auth_len;
	unsigned proxy_auth_count;
	int status;			/* HTTP_BAD: 400, 414, 431, 500, 501, 505 */
	const char *reason;		/* HTTP_BAD: fixed text, never the input */
};

/* Parse the head at the start of buf[0..len). req is overwritten (clear a
 * previous result first). On HTTP_OK the caller owns req->forward
 * (http_request_clear). Line ends: the request line's decides. If it
 * ends in CRLF, every line must and the head ends at CRLF CRLF; if in a
 * bare LF, every line must, no CR may appear and the head ends at LF LF;
 * a mix is refused. Refused: NUL bytes, bare CR, obs-fold, userinfo in
 * the target, schemes other than http (https:// too: TLS goes through
 * CONNECT), fragments, missing or zero ports on CONNECT, methods other
 * than CONNECT for non-absolute targets, HTTP versions other than 1.0
 * and 1.1 (505 for a well-formed other version), heads over
 * HTTP_HEAD_MAX even before their end (431), request lines over 8 KiB
 * (414), Content-Length with Transfer-Encoding (request smuggling),
 * several Content-Length values that differ, transfer codings other than
 * "chunked" (501). Every prefix of a valid head is HTTP_NEED_MORE. */
enum http_result http_parse_request(const char *buf, size_t len,
				    struct http_request *req);
void http_request_clear(struct http_request *req);

/* The longest Proxy-Authorization value http_basic_password() decodes:
 * room for a user name and a password of 255 bytes each, with margin. */
#define HTTP_AUTH_VALUE_MAX 1024
#define HTTP_AUTH_DECODED_MAX (HTTP_AUTH_VALUE_MAX / 4 * 3)

/* The password of a Proxy-Authorization value "Basic <base64 of
 * user:password>" (RFC 7617): the scheme case-insensitive, then spaces,
 * then strict base64 (padded, no whitespace inside, at most
 * HTTP_AUTH_VALUE_MAX bytes in all). The decoded credentials go into
 * scratch (HTTP_AUTH_DECODED_MAX bytes; the caller wipes it after use);
 * *password points at what follows the first colon there, *password_len
 * its length (0 to HTTP_AUTH_DECODED_MAX - 1). 0 on success; -1 for any
 * other scheme, bad base64, a value too long, or no colon. */
int http_basic_password(const char *value, size_t len,
			unsigned char scratch[HTTP_AUTH_DECODED_MAX],
			const unsigned char **password, size_t *password_len);

/* A complete response for a refusal: status line, Content-Type,
 * X-Cordon-Refused: <reason>, Content-Length, Connection: close, and the
 * reason as the body; a 407 also carries
 * `Proxy-Authenticate: Basic realm="cordon"`. Bytes of reason outside printable ASCII are
 * dropped; a status without a known text becomes 500. Returns bytes
 * written into out, NUL-terminated and truncated to size (size - 1 when
 * it did not fit). The reason is cut at 400 bytes, so 1 KiB always
 * suffices. */
size_t http_format_refusal(char *out, size_t size, int status, const char *reason);

#endif
