/* http.c: the gateway's HTTP proxy request head parser (see http.h).
 *
 * Line ends: the request line decides. If it ends in CRLF, every line of
 * the head must end in CRLF and the head ends at the first empty line
 * (CRLF CRLF). If it ends in a bare LF, every line must end in a bare LF
 * (LF LF) and no CR may appear anywhere in the head. A head that mixes
 * the two, or holds a CR that does not end a line, is refused: a client,
 * this proxy and an origin that split lines differently could each see a
 * different request. The forwarded head is rebuilt with CRLF throughout,
 * so the origin never sees the client's choice.
 *
 * Complete lines are checked as they arrive, so a broken head is refused
 * without waiting for its end, yet every prefix of a valid head is
 * HTTP_NEED_MORE. Checks that need every header (framing) run once the
 * head is complete. Reasons are fixed strings: nothing of the input is
 * ever copied into one. */
#include "gateway/http.h"
#include "lib/httphead.h"

#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HTTP_LINE_MAX 8192	/* bytes of request line, without its end */
#define CONN_OPTIONS_MAX 32	/* names a Connection header may list */
#define PORT_DIGITS_MAX 5

/* What the first pass learns about a head; the second builds from it. */
struct head {
	bool v10;		/* HTTP/1.0 */
	bool ipv6;		/* req->host is an IPv6 literal */
	struct httphead_span method;
	struct httphead_span path;	/* absolute-form: what follows the authority */
	bool has_cl;
	unsigned long long cl;
	unsigned te_count;
	bool te_other;		/* a transfer coding other than "chunked" */
	size_t nconn;
	struct httphead_span conn[CONN_OPTIONS_MAX];
	struct httphead_span proxy_auth;	/* the first Proxy-Authorization value */
	unsigned proxy_auth_count;
};

/* Headers never forwarded to the origin (RFC 9110 section 7.6.1), Host
 * (regenerated from the target) and Content-Length (normalised). */
static const char *const hop_by_hop[] = {
	"connection", "proxy-connection", "keep-alive", "proxy-authorization",
	"proxy-authenticate", "te", "trailer", "upgrade",
};

static char ascii_lower(char c)
{
	return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool is_host_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '-' || c == '.' || c == '_';
}

static bool span_iprefix(struct httphead_span s, const char *lit)
{
	size_t n = strlen(lit);

	return s.n >= n && httphead_ieq((struct httphead_span){ s.p, n }, lit);
}

static bool span_eq_span_i(struct httphead_span a, struct httphead_span b)
{
	if (a.n != b.n)
		return false;
	for (size_t i = 0; i < a.n; i++)
		if (ascii_lower(a.p[i]) != ascii_lower(b.p[i]))
			return false;
	return true;
}

/* Splits the next comma-separated element off *rest (RFC 9110 section
 * 5.6.1 lists), trimmed of optional whitespace. False when none is left. */
static bool list_next(struct httphead_span *rest, struct httphead_span *elem)
{
	const char *comma;

	if (rest->p == NULL)
		return false;
	comma = memchr(rest->p, ',', rest->n);
	if (comma) {
		*elem = (struct httphead_span){ rest->p, (size_t)(comma - rest->p) };
		rest->n -= elem->n + 1;
		rest->p = comma + 1;
	} else {
		*elem = *rest;
		*rest = (struct httphead_span){ NULL, 0 };
	}
	*elem = httphead_trim(*elem);
	return true;
}

static enum http_result bad(struct http_request *req, int status,
			    const char *reason)
{
	req->status = status;
	req->reason = reason;
	return HTTP_BAD;
}

/* 1 to 65535 in decimal, without a leading zero (as the policy's). */
static bool parse_port(struct httphead_span s, uint16_t *port)
{
	unsigned long v = 0;

	if (s.n == 0 || s.n > PORT_DIGITS_MAX || s.p[0] == '0')
		return false;
	for (size_t i = 0; i < s.n; i++) {
		if (s.p[i] < '0' || s.p[i] > '9')
			return false;
		v = v * 10 + (unsigned long)(s.p[i] - '0');
	}
	if (v > 65535)
		return false;
	*port = (uint16_t)v;
	return true;
}

/* host[:port] or [v6][:port]. The host is copied lower-cased, without
 * brackets and without one trailing dot; names are letters, digits, '-',
 * '.' and '_' (the allowlist judges them further). */
static const char *parse_authority(struct httphead_span a, bool need_port,
				   struct head *h, struct http_request *req)
{
	struct httphead_span host, port = { NULL, 0 };
	bool has_port;

	if (memchr(a.p, '@', a.n))
		return "userinfo in the target";
	if (a.n == 0)
		return "empty host in the target";
	if (a.p[0] == '[') {
		const char *close = memchr(a.p, ']', a.n);
		char text[INET6_ADDRSTRLEN];
		struct in6_addr addr;

		if (!close)
			return "bad IPv6 literal in the target";
		host = (struct httphead_span){ a.p + 1, (size_t)(close - a.p) - 1 };
		if (host.n == 0 || host.n >= sizeof(text))
			return "bad IPv6 literal in the target";
		for (size_t i = 0; i < host.n; i++)
			text[i] = ascii_lower(host.p[i]);
		text[host.n] = '\0';
		if (inet_pton(AF_INET6, text, &addr) != 1)
			return "bad IPv6 literal in the target";
		memcpy(req->host, text, host.n + 1);
		h->ipv6 = true;
		has_port = close + 1 < a.p + a.n;
		if (has_port && close[1] != ':')
			return "bad character after the IPv6 literal";
		if (has_port)
			port = (struct httphead_span){ close + 2,
					      (size_t)(a.p + a.n - close) - 2 };
	} else {
		const char *colon = memchr(a.p, ':', a.n);

		host = (struct httphead_span){ a.p, colon ? (size_t)(colon - a.p) : a.n };
		has_port = colon != NULL;
		if (colon)
			port = (struct httphead_span){ colon + 1, a.n - host.n - 1 };
		for (size_t i = 0; i < host.n; i++)
			if (!is_host_char(host.p[i]))
				return "bad character in the host name";
		if (host.n > 0 && host.p[host.n - 1] == '.')
			host.n--;
		if (host.n == 0)
			return "empty host in the target";
		if (host.n > HTTP_HOST_MAX)
			return "host name too long";
		for (size_t i = 0; i < host.n; i++)
			req->host[i] = ascii_lower(host.p[i]);
		req->host[host.n] = '\0';
	}
	if (has_port) {
		if (!parse_port(port, &req->port))
			return "bad port in the target";
	} else if (need_port) {
		return "missing port in the CONNECT target";
	} else {
		req->port = 80;
	}
	return NULL;
}

static const char *parse_target(struct httphead_span t, struct head *h,
				struct http_request *req)
{
	struct httphead_span rest, authority;
	size_t an = 0;

	for (size_t i = 0; i < t.n; i++)
		if ((unsigned char)t.p[i] <= 0x20 || (unsigned char)t.p[i] >= 0x7f)
			return "bad character in the request target";
	if (memchr(t.p, '#', t.n))
		return "fragment in the request target";
	if (req->connect) {
		if (memchr(t.p, '@', t.n))
			return "userinfo in the target";
		if (memchr(t.p, '/', t.n) || memchr(t.p, '?', t.n))
			return "CONNECT target is not host:port";
		return parse_authority(t, true, h, req);
	}
	if (t.p[0] == '/' || (t.n == 1 && t.p[0] == '*'))
		return "not a proxy request";
	if (span_iprefix(t, "https://"))
		return "https:// target: use CONNECT for TLS";
	if (!span_iprefix(t, "http://"))
		return "target is not an http:// URL";
	rest = (struct httphead_span){ t.p + 7, t.n - 7 };
	while (an < rest.n && rest.p[an] != '/' && rest.p[an] != '?')
		an++;
	authority = (struct httphead_span){ rest.p, an };
	h->path = (struct httphead_span){ rest.p + an, rest.n - an };
	return parse_authority(authority, false, h, req);
}

/* METHOD SP TARGET SP HTTP/1.x, single spaces (lib/httphead). */
static enum http_result parse_request_line(struct httphead_span line, struct head *h,
					   struct http_request *req)
{
	struct httphead_span target;
	const char *why;
	int minor = 1;

	switch (httphead_request_line(line, &h->method, &target, &minor)) {
	case HTTPHEAD_OK:
		break;
	case HTTPHEAD_BAD_VERSION:
		return bad(req, 505, "HTTP version not supported");
	default:
		return bad(req, 400, "malformed request line");
	}
	h->v10 = minor == 0;
	req->connect = h->method.n == 7 && memcmp(h->method.p, "CONNECT", 7) == 0;
	why = parse_target(target, h, req);
	return why ? bad(req, 400, why) : HTTP_OK;
}

/* Content-Length: a list of decimal numbers that must all be equal,
 * across every Content-Length header. */
static const char *parse_content_length(struct httphead_span value, struct head *h)
{
	struct httphead_span elem;
	bool any = false;

	while (list_next(&value, &elem)) {
		unsigned long long v = 0;

		if (elem.n == 0)
			return "bad Content-Length";
		for (size_t i = 0; i < elem.n; i++) {
			unsigned d;

			if (elem.p[i] < '0' || elem.p[i] > '9')
				return "bad Content-Length";
			d = (unsigned)(elem.p[i] - '0');
			if (v > (ULLONG_MAX - d) / 10)
				return "bad Content-Length";
			v = v * 10 + d;
		}
		if (h->has_cl && v != h->cl)
			return "Content-Length values differ";
		h->has_cl = true;
		h->cl = v;
		any = true;
	}
	return any ? NULL : "bad Content-Length";
}

static const char *parse_connection(struct httphead_span value, struct head *h)
{
	struct httphead_span elem;

	while (list_next(&value, &elem)) {
		if (elem.n == 0)
			continue;
		if (!httphead_is_token(elem))
			return "bad Connection header";
		if (h->nconn == CONN_OPTIONS_MAX)
			return "too many Connection options";
		h->conn[h->nconn++] = elem;
	}
	return NULL;
}

/* name ":" value; names are tokens, values visible bytes, SP and HT
 * (lib/httphead). */
static const char *parse_header(struct httphead_span line, struct head *h)
{
	struct httphead_span name, value;

	switch (httphead_field(line, &name, &value)) {
	case HTTPHEAD_OK:
		break;
	case HTTPHEAD_OBS_FOLD:
		return "obs-fold (line folding) in the request head";
	case HTTPHEAD_NO_COLON:
		return "header line without a colon";
	case HTTPHEAD_BAD_NAME:
		return "bad header name";
	default:
		return "control character in a header value";
	}
	if (httphead_ieq(name, "content-length"))
		return parse_content_length(value, h);
	if (httphead_ieq(name, "transfer-encoding")) {
		h->te_count++;
		if (!httphead_ieq(value, "chunked"))
			h->te_other = true;
		return NULL;
	}
	if (httphead_ieq(name, "connection"))
		return parse_connection(value, h);
	if (httphead_ieq(name, "proxy-authorization")) {
		if (h->proxy_auth_count++ == 0)
			h->proxy_auth = value;
		return NULL;
	}
	return NULL;
}

/* The message framing, once every header is known (RFC 9112 section 6). */
static enum http_result check_framing(const struct head *h,
				      struct http_request *req)
{
	if (h->te_count > 0 && h->has_cl)
		return bad(req, 400, "Transfer-Encoding with Content-Length");
	if (h->te_count > 1)
		return bad(req, 400, "several Transfer-Encoding headers");
	if (h->te_count > 0 && h->v10)
		return bad(req, 400, "Transfer-Encoding in an HTTP/1.0 request");
	if (h->te_other)
		return bad(req, 501, "transfer coding not supported");
	return HTTP_OK;
}

/* A bounded writer: the buffer is sized before any write, so overflow
 * is a bug; it is caught, never written past. */
struct out {
	char *p;
	size_t n, cap;
	bool overflow;
};

static void out_put(struct out *o, const char *s, size_t n)
{
	if (o->overflow || n > o->cap - o->n) {
		o->overflow = true;
		return;
	}
	memcpy(o->p + o->n, s, n);
	o->n += n;
}

static void out_str(struct out *o, const char *s)
{
	out_put(o, s, strlen(s));
}

/* Whether a header goes to the origin as the client sent it. */
static bool header_kept(struct httphead_span name, const struct head *h)
{
	for (size_t i = 0; i < sizeof(hop_by_hop) / sizeof(hop_by_hop[0]); i++)
		if (httphead_ieq(name, hop_by_hop[i]))
			return false;
	if (httphead_ieq(name, "host") || httphead_ieq(name, "content-length"))
		return false;
	/* Framing stays whatever Connection says: dropping it would let the
	 * body be read as another request. */
	if (httphead_ieq(name, "transfer-encoding"))
		return true;
	for (size_t i = 0; i < h->nconn; i++)
		if (span_eq_span_i(name, h->conn[i]))
			return false;
	return true;
}

/* The request head's bounds and line ends (see http.h). */
static void head_reader(struct httphead_reader *r, const char *buf, size_t len)
{
	static const struct httphead_limits lim = { .head_max = HTTP_HEAD_MAX,
						    .start_max = HTTP_LINE_MAX };

	httphead_reader_init(r, buf, len, HTTPHEAD_EOL_FIRST, &lim);
}

/* The origin-form head: request line, Host from the target (RFC 9112
 * section 3.2.2: a proxy replaces the client's Host), the end-to-end
 * headers in order, one normalised Content-Length, Connection: close. */
static enum http_result build_forward(const char *buf, size_t head_len,
				      const struct head *h,
				      struct http_request *req)
{
	struct out o = { NULL, 0, 0, false };
	struct httphead_reader rd;
	struct httphead_span line;
	char num[32];
	bool cl_done = false;

	/* Every kept line grows by at most one byte (LF to CRLF); the
	 * request line, Host, Content-Length and the end fit in 1 KiB. */
	o.cap = 2 * head_len + 1024;
	o.p = malloc(o.cap + 1);
	if (!o.p)
		return bad(req, 500, "out of memory");
	out_put(&o, h->method.p, h->method.n);
	out_str(&o, " ");
	if (h->path.n == 0 || h->path.p[0] != '/')
		out_str(&o, "/");
	out_put(&o, h->path.p, h->path.n);
	out_str(&o, " HTTP/1.1\r\nHost: ");
	if (h->ipv6)
		out_str(&o, "[");
	out_str(&o, req->host);
	if (h->ipv6)
		out_str(&o, "]");
	if (req->port != 80) {
		snprintf(num, sizeof(num), ":%u", (unsigned)req->port);
		out_str(&o, num);
	}
	out_str(&o, "\r\n");
	/* the head read again, its start line skipped: it was read whole */
	head_reader(&rd, buf, head_len);
	(void)httphead_next_line(&rd, &line);
	while (httphead_next_line(&rd, &line) == HTTPHEAD_OK && !rd.done) {
		struct httphead_span name;
		const char *colon;

		colon = memchr(line.p, ':', line.n);
		name = (struct httphead_span){ line.p, colon ? (size_t)(colon - line.p) : 0 };
		if (httphead_ieq(name, "content-length") && !cl_done) {
			snprintf(num, sizeof(num), "%llu", h->cl);
			out_str(&o, "Content-Length: ");
			out_str(&o, num);
			out_str(&o, "\r\n");
			cl_done = true;
		}
		if (!header_kept(name, h))
			continue;
		out_put(&o, line.p, line.n);
		out_str(&o, "\r\n");
	}
	out_str(&o, "Connection: close\r\n\r\n");
	if (o.overflow) {
		free(o.p);
		return bad(req, 500, "internal error building the forwarded head");
	}
	o.p[o.n] = '\0';
	req->forward = o.p;
	req->forward_len = o.n;
	return HTTP_OK;
}

/* A line the tokenizer refused: the status and the fixed reason. */
static enum http_result bad_line(struct http_request *req, enum httphead_err err)
{
	switch (err) {
	case HTTPHEAD_NUL:
		return bad(req, 400, "NUL byte in the request head");
	case HTTPHEAD_MIXED_EOL:
		return bad(req, 400, "mixed line ends in the request head");
	case HTTPHEAD_START_LONG:
		return bad(req, 414, "request line too long");
	case HTTPHEAD_HEAD_BIG:
		return bad(req, 431, "request head too large");
	case HTTPHEAD_BARE_CR:
	default:
		return bad(req, 400, "bare CR in the request head");
	}
}

enum http_result http_parse_request(const char *buf, size_t len,
				    struct http_request *req)
{
	struct httphead_reader rd;
	struct head h;
	enum http_result r;
	bool first = true;

	memset(req, 0, sizeof(*req));
	memset(&h, 0, sizeof(h));
	head_reader(&rd, buf, len);
	for (;;) {
		enum httphead_err err;
		struct httphead_span line;
		const char *why;

		err = httphead_next_line(&rd, &line);
		if (err == HTTPHEAD_MORE)
			return HTTP_NEED_MORE;
		if (err != HTTPHEAD_OK)
			return bad_line(req, err);
		if (first) {
			r = parse_request_line(line, &h, req);
			if (r != HTTP_OK)
				return r;
			first = false;
			continue;
		}
		if (rd.done)
			break;
		why = parse_header(line, &h);
		if (why)
			return bad(req, 400, why);
	}
	r = check_framing(&h, req);
	if (r != HTTP_OK)
		return r;
	req->head_len = rd.off;
	req->proxy_auth_count = h.proxy_auth_count;
	if (h.proxy_auth_count > 0) {
		req->proxy_auth = h.proxy_auth.p;
		req->proxy_auth_len = h.proxy_auth.n;
	}
	if (req->connect)
		return HTTP_OK;
	if (h.te_count)
		req->body = HTTP_BODY_CHUNKED;
	else if (h.has_cl && h.cl)
		req->body = HTTP_BODY_LENGTH;
	req->body_len = h.has_cl ? h.cl : 0;
	req->head_method = h.method.n == 4 && memcmp(h.method.p, "HEAD", 4) == 0;
	return build_forward(buf, rd.off, &h, req);
}

void http_request_clear(struct http_request *req)
{
	free(req->forward);
	memset(req, 0, sizeof(*req));
}

static bool is_base64_char(char c)
{
	return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
	       (c >= '0' && c <= '9') || c == '+' || c == '/';
}

int http_basic_password(const char *value, size_t len,
			unsigned char scratch[HTTP_AUTH_DECODED_MAX],
			const unsigned char **password, size_t *password_len)
{
	struct httphead_span v = { value, len }, b64;
	size_t pad = 0, n;
	int got;
	const unsigned char *colon;

	*password = NULL;
	*password_len = 0;
	if (!value || len > HTTP_AUTH_VALUE_MAX || !span_iprefix(v, "basic") ||
	    len < 6 || value[5] != ' ')
		return -1;
	b64 = httphead_trim((struct httphead_span){ value + 6, len - 6 });
	/* Strict: a multiple of 4, the alphabet only, '=' only as 1 or 2
	 * bytes of padding at the end. EVP_DecodeBlock would pass some
	 * whitespace and never tells how much padding it decoded. */
	if (b64.n == 0 || b64.n % 4 != 0)
		return -1;
	while (pad < 2 && b64.p[b64.n - 1 - pad] == '=')
		pad++;
	for (size_t i = 0; i < b64.n - pad; i++)
		if (!is_base64_char(b64.p[i]))
			return -1;
	got = EVP_DecodeBlock(scratch, (const unsigned char *)b64.p, (int)b64.n);
	if (got < 0 || (size_t)got < pad)
		return -1;
	n = (size_t)got - pad;
	colon = memchr(scratch, ':', n);
	if (!colon)
		return -1;
	*password = colon + 1;
	*password_len = n - (size_t)(colon + 1 - scratch);
	return 0;
}

static const char *status_text(int status)
{
	switch (status) {
	case 400: return "Bad Request";
	case 403: return "Forbidden";
	case 405: return "Method Not Allowed";
	case 407: return "Proxy Authentication Required";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 429: return "Too Many Requests";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 501: return "Not Implemented";
	case 502: return "Bad Gateway";
	case 503: return "Service Unavailable";
	case 504: return "Gateway Timeout";
	case 505: return "HTTP Version Not Supported";
	default: return NULL;
	}
}

size_t http_format_refusal(char *out, size_t size, int status, const char *reason)
{
	char clean[401];	/* the response then fits in 1 KiB */
	size_t n = 0;
	const char *text = status_text(status);
	int w;

	if (!text) {
		status = 500;
		text = status_text(status);
	}
	/* Printable ASCII only, so the reason can neither end the header
	 * line nor smuggle bytes to a terminal. */
	for (const char *c = reason ? reason : ""; *c && n + 1 < sizeof(clean); c++)
		if (*c >= 0x20 && *c < 0x7f)
			clean[n++] = *c;
	clean[n] = '\0';
	if (size == 0)
		return 0;
	w = snprintf(out, size,
		     "HTTP/1.1 %d %s\r\n"
		     "Content-Type: text/plain\r\n"
		     "%s"
		     "X-Cordon-Refused: %s\r\n"
		     "Content-Length: %zu\r\n"
		     "Connection: close\r\n"
		     "\r\n"
		     "%s\n",
		     status, text,
		     status == 407 ? "Proxy-Authenticate: Basic realm=\"cordon\"\r\n" : "",
		     clean, n + 1, clean);
	if (w < 0) {
		out[0] = '\0';
		return 0;
	}
	return (size_t)w < size ? (size_t)w : size - 1;
}
