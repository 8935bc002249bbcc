/* tests/unit/http.c: the gateway's HTTP proxy request parser
 * (src/gateway/http.c): every refusal next to the same request fixed and
 * accepted, the forwarded head byte for byte, the size limits at their
 * boundaries, byte-by-byte feeding, and reasons that never carry input;
 * the Proxy-Authorization header found and never forwarded, and Basic
 * credentials decoded strictly. */
#include "gateway/http.h"
#include "tap.h"

#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "SECRETxq7Zk3"

/* The input as a printable, bounded test description. Returns buf. */
static const char *shown(const char *text, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 8 < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f && c != '\\')
			buf[o++] = (char)c;
		else if (c == '\r')
			o += (size_t)snprintf(buf + o, size - o, "\\r");
		else if (c == '\n')
			o += (size_t)snprintf(buf + o, size - o, "\\n");
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	if (o + 8 >= size)
		o += (size_t)snprintf(buf + o, size - o, "...");
	buf[o] = '\0';
	return buf;
}

/* A reason is fixed printable text that holds nothing of the input. */
static bool reason_clean(const char *reason)
{
	if (!reason || !*reason || strstr(reason, MARKER))
		return false;
	for (const char *c = reason; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return false;
	return true;
}

/* Parses a heap copy of exactly len bytes, so ASan sees any read past
 * the end of the input. */
static enum http_result parse(const char *in, size_t len, struct http_request *r)
{
	char *copy = malloc(len ? len : 1);
	enum http_result res;

	if (!copy)
		abort();
	if (len)
		memcpy(copy, in, len);
	res = http_parse_request(copy, len, r);
	free(copy);
	return res;
}

static bool refused_n(const char *in, size_t len, int status, const char *reason)
{
	struct http_request r;
	enum http_result res;
	char show[160];
	bool good;

	memset(&r, 0x5a, sizeof(r));
	res = parse(in, len, &r);
	good = res == HTTP_BAD && r.status == status && r.forward == NULL &&
	       reason_clean(r.reason) && strcmp(r.reason, reason) == 0;
	if (!ok(good, "refused %d \"%s\": %s", status, reason,
		shown(in, len, show, sizeof(show))))
		diag("got result %d, status %d, reason %s", res,
		     res == HTTP_BAD ? r.status : 0,
		     res == HTTP_BAD && r.reason ? r.reason : "(none)");
	if (res == HTTP_OK)
		http_request_clear(&r);
	return good;
}

static bool refused(const char *in, int status, const char *reason)
{
	return refused_n(in, strlen(in), status, reason);
}

/* Parses a complete head (the whole input) and expects HTTP_OK; the
 * caller clears r. */
static bool accepted_n(const char *in, size_t len, size_t head_len,
		       struct http_request *r)
{
	enum http_result res;
	char show[160];

	memset(r, 0x5a, sizeof(*r));
	res = parse(in, len, r);
	if (!ok(res == HTTP_OK && r->head_len == head_len, "accepted: %s",
		shown(in, len, show, sizeof(show)))) {
		diag("got result %d, status %d, reason %s, head_len %zu", res,
		     res == HTTP_BAD ? r->status : 0,
		     res == HTTP_BAD && r->reason ? r->reason : "(none)",
		     res == HTTP_OK ? r->head_len : 0);
		if (res != HTTP_OK)
			memset(r, 0, sizeof(*r));
		return false;
	}
	return true;
}

static void accepts_connect(const char *in, const char *host, unsigned port)
{
	struct http_request r;

	if (!accepted_n(in, strlen(in), strlen(in), &r))
		return;
	ok(r.connect, "  is CONNECT");
	is_str(r.host, host, "  host");
	is_int(r.port, port, "  port");
	ok(r.forward == NULL && r.forward_len == 0, "  no forwarded head");
	http_request_clear(&r);
}

static void accepts_get(const char *in, const char *host, unsigned port,
			const char *forward)
{
	struct http_request r;

	if (!accepted_n(in, strlen(in), strlen(in), &r))
		return;
	ok(!r.connect, "  is absolute-form");
	is_str(r.host, host, "  host");
	is_int(r.port, port, "  port");
	is_str(r.forward, forward, "  forwarded head");
	is_int(r.forward_len, forward ? strlen(forward) : 0, "  forward_len");
	http_request_clear(&r);
	ok(r.forward == NULL && r.head_len == 0, "  clear frees and zeroes");
}

/* "METHOD TARGET HTTP/1.1\r\nHost: h\r\n\r\n" in a static buffer. */
static const char *req(const char *method, const char *target)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf), "%s %s HTTP/1.1\r\nHost: h\r\n\r\n", method,
		 target);
	return buf;
}

/* A request for http://example.com/ with one extra header line. */
static const char *with_header(const char *line)
{
	static char buf[1024];

	snprintf(buf, sizeof(buf),
		 "GET http://example.com/ HTTP/1.1\r\n%s\r\nAccept: */*\r\n\r\n",
		 line);
	return buf;
}

static void accepts_header(const char *line)
{
	const char *in = with_header(line);
	struct http_request r;

	if (accepted_n(in, strlen(in), strlen(in), &r))
		http_request_clear(&r);
}

static void test_connect(void)
{
	accepts_connect("CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
			"example.com", 443);
	accepts_connect("CONNECT Example.COM.:443 HTTP/1.1\r\n\r\n", "example.com", 443);
	accepts_connect("CONNECT a..:443 HTTP/1.1\r\n\r\n", "a.", 443);
	accepts_connect("CONNECT a-b_c.x1:1 HTTP/1.0\r\n\r\n", "a-b_c.x1", 1);
	accepts_connect("CONNECT 1.2.3.4:65535 HTTP/1.1\r\n\r\n", "1.2.3.4", 65535);
	accepts_connect("CONNECT example.com:443 HTTP/1.1\n\n", "example.com", 443);
	accepts_connect("CONNECT example.com:443 HTTP/1.1\nHost: x\n\n",
			"example.com", 443);

	/* IPv6: brackets removed, lower-cased, checked by inet_pton. */
	accepts_connect("CONNECT [2001:DB8::1]:443 HTTP/1.1\r\n\r\n", "2001:db8::1", 443);
	accepts_connect("CONNECT [::1]:8443 HTTP/1.1\r\n\r\n", "::1", 8443);
	accepts_connect("CONNECT [::ffff:1.2.3.4]:443 HTTP/1.1\r\n\r\n",
			"::ffff:1.2.3.4", 443);
	refused("CONNECT [2001:db8::g]:443 HTTP/1.1\r\n\r\n", 400,
		"bad IPv6 literal in the target");
	refused("CONNECT [1.2.3.4]:443 HTTP/1.1\r\n\r\n", 400,
		"bad IPv6 literal in the target");
	refused("CONNECT []:443 HTTP/1.1\r\n\r\n", 400, "bad IPv6 literal in the target");
	refused("CONNECT [fe80::1%25eth0]:443 HTTP/1.1\r\n\r\n", 400,
		"bad IPv6 literal in the target");
	refused("CONNECT [::1:443 HTTP/1.1\r\n\r\n", 400, "bad IPv6 literal in the target");
	refused("CONNECT [::1]x:443 HTTP/1.1\r\n\r\n", 400,
		"bad character after the IPv6 literal");
	refused("CONNECT [::1] HTTP/1.1\r\n\r\n", 400, "missing port in the CONNECT target");
	refused("CONNECT ::1:443 HTTP/1.1\r\n\r\n", 400, "empty host in the target");
	refused("CONNECT [1:2:3:4:5:6:7:8:9:10:11:12:13:14:15:16:17]:443 HTTP/1.1\r\n\r\n",
		400, "bad IPv6 literal in the target");

	/* Ports: negative control example.com:443 above. */
	refused("CONNECT example.com HTTP/1.1\r\n\r\n", 400,
		"missing port in the CONNECT target");
	refused("CONNECT example.com: HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:0 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:65536 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:99999 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:443443 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:0443 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:+443 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:-1 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:https HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT example.com:443:443 HTTP/1.1\r\n\r\n", 400, "bad port in the target");
	refused("CONNECT :443 HTTP/1.1\r\n\r\n", 400, "empty host in the target");
	refused("CONNECT .:443 HTTP/1.1\r\n\r\n", 400, "empty host in the target");

	/* Userinfo, paths, other forms. */
	refused("CONNECT user@example.com:443 HTTP/1.1\r\n\r\n", 400, "userinfo in the target");
	refused("CONNECT user:pw@example.com:443 HTTP/1.1\r\n\r\n", 400,
		"userinfo in the target");
	refused("CONNECT example.com:443@evil.com:443 HTTP/1.1\r\n\r\n", 400,
		"userinfo in the target");
	refused("CONNECT example.com:443/ HTTP/1.1\r\n\r\n", 400,
		"CONNECT target is not host:port");
	refused("CONNECT example.com:443?x HTTP/1.1\r\n\r\n", 400,
		"CONNECT target is not host:port");
	refused("CONNECT http://example.com:443/ HTTP/1.1\r\n\r\n", 400,
		"CONNECT target is not host:port");
	refused("CONNECT exa$mple.com:443 HTTP/1.1\r\n\r\n", 400,
		"bad character in the host name");
	refused("CONNECT exa%6dple.com:443 HTTP/1.1\r\n\r\n", 400,
		"bad character in the host name");
	refused("CONNECT exa\\mple.com:443 HTTP/1.1\r\n\r\n", 400,
		"bad character in the host name");
	/* CONNECT is case-sensitive; "connect" is some other method. */
	refused("connect example.com:443 HTTP/1.1\r\n\r\n", 400,
		"target is not an http:// URL");
}

static void test_host_length(void)
{
	char in[600], name[300];
	struct http_request r;

	memset(name, 'a', sizeof(name));
	for (int i = 50; i < 255; i += 50)
		name[i] = '.';
	name[255] = '\0';	/* 255 characters: the longest */
	snprintf(in, sizeof(in), "CONNECT %s:443 HTTP/1.1\r\n\r\n", name);
	if (accepted_n(in, strlen(in), strlen(in), &r)) {
		is_str(r.host, name, "  the whole 255-character name");
		http_request_clear(&r);
	}
	name[255] = '.';	/* the trailing dot does not count */
	name[256] = '\0';
	snprintf(in, sizeof(in), "CONNECT %s:443 HTTP/1.1\r\n\r\n", name);
	if (accepted_n(in, strlen(in), strlen(in), &r)) {
		is_int(strlen(r.host), 255, "  trailing dot dropped");
		http_request_clear(&r);
	}
	name[255] = 'b';
	snprintf(in, sizeof(in), "CONNECT %s:443 HTTP/1.1\r\n\r\n", name);
	refused(in, 400, "host name too long");
	snprintf(in, sizeof(in), "GET http://%s/ HTTP/1.1\r\n\r\n", name);
	refused(in, 400, "host name too long");
}

static void test_absolute(void)
{
	accepts_get("GET http://example.com/path?q=1&r=%20 HTTP/1.1\r\nHost: example.com\r\n\r\n",
		    "example.com", 80,
		    "GET /path?q=1&r=%20 HTTP/1.1\r\nHost: example.com\r\n"
		    "Connection: close\r\n\r\n");
	accepts_get("GET HTTP://Example.COM:8080 HTTP/1.0\r\n\r\n", "example.com", 8080,
		    "GET / HTTP/1.1\r\nHost: example.com:8080\r\nConnection: close\r\n\r\n");
	accepts_get("HEAD hTtP://example.com.:80?x=1 HTTP/1.1\r\n\r\n", "example.com", 80,
		    "HEAD /?x=1 HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	accepts_get("GET http://[2001:DB8::a]:8080/x HTTP/1.1\r\n\r\n", "2001:db8::a", 8080,
		    "GET /x HTTP/1.1\r\nHost: [2001:db8::a]:8080\r\nConnection: close\r\n\r\n");
	accepts_get("GET http://[::1]/ HTTP/1.1\r\n\r\n", "::1", 80,
		    "GET / HTTP/1.1\r\nHost: [::1]\r\nConnection: close\r\n\r\n");
	accepts_get("GET http://example.com/@user HTTP/1.1\r\n\r\n", "example.com", 80,
		    "GET /@user HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	accepts_get("PURGE http://1.2.3.4//a//b HTTP/1.1\r\n\r\n", "1.2.3.4", 80,
		    "PURGE //a//b HTTP/1.1\r\nHost: 1.2.3.4\r\nConnection: close\r\n\r\n");

	/* Negative control for each: http://example.com/ (just above). */
	refused(req("GET", "https://example.com/"), 400, "https:// target: use CONNECT for TLS");
	refused(req("GET", "HTTPS://example.com:443/"), 400,
		"https:// target: use CONNECT for TLS");
	refused(req("GET", "ftp://example.com/"), 400, "target is not an http:// URL");
	refused(req("GET", "ws://example.com/"), 400, "target is not an http:// URL");
	refused(req("GET", "http:/example.com/"), 400, "target is not an http:// URL");
	refused(req("GET", "http:example.com"), 400, "target is not an http:// URL");
	refused(req("GET", "example.com:80"), 400, "target is not an http:// URL");
	refused(req("GET", "/index.html"), 400, "not a proxy request");
	refused(req("GET", "/"), 400, "not a proxy request");
	refused(req("OPTIONS", "*"), 400, "not a proxy request");
	refused(req("GET", "http://user@example.com/"), 400, "userinfo in the target");
	refused(req("GET", "http://user:pw@example.com/"), 400, "userinfo in the target");
	refused(req("GET", "http://example.com@evil.com/"), 400, "userinfo in the target");
	refused(req("GET", "http://example.com\\@evil.com/"), 400, "userinfo in the target");
	refused(req("GET", "http://evil.com\\.example.com/"), 400,
		"bad character in the host name");
	refused(req("GET", "http:///path"), 400, "empty host in the target");
	refused(req("GET", "http://"), 400, "empty host in the target");
	refused(req("GET", "http://:80/"), 400, "empty host in the target");
	refused(req("GET", "http://?x"), 400, "empty host in the target");
	refused(req("GET", "http://example.com:/"), 400, "bad port in the target");
	refused(req("GET", "http://example.com:0/"), 400, "bad port in the target");
	refused(req("GET", "http://example.com:65536/"), 400, "bad port in the target");
	refused(req("GET", "http://example.com:8o/"), 400, "bad port in the target");
	refused(req("GET", "http://::1/"), 400, "empty host in the target");
	refused(req("GET", "http://[::1/"), 400, "bad IPv6 literal in the target");
	refused(req("GET", "http://example.com/#frag"), 400, "fragment in the request target");
	refused(req("GET", "http://example.com#@evil.com/"), 400,
		"fragment in the request target");
	refused(req("GET", "http://exa_mple.com/\x7f"), 400,
		"bad character in the request target");
	refused(req("GET", "http://example.com/\xc3\xa9"), 400,
		"bad character in the request target");
}

static void test_request_line(void)
{
	accepts_get("GET http://example.com/ HTTP/1.1\r\n\r\n", "example.com", 80,
		    "GET / HTTP/1.1\r\nHost: example.com\r\nConnection: close\r\n\r\n");
	refused("GET  http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/  HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/ HTTP/1.1 \r\n\r\n", 400, "malformed request line");
	refused(" GET http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET\thttp://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/\tHTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/\r\n\r\n", 400, "malformed request line");
	refused("GET\r\n\r\n", 400, "malformed request line");
	refused("\r\n\r\n", 400, "malformed request line");
	refused("\r\nGET http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GE(T http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/ http/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/ HTTP/1.10\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/ HTTP/1\r\n\r\n", 400, "malformed request line");
	refused("GET http://example.com/ HTTP/1.2\r\n\r\n", 505, "HTTP version not supported");
	refused("GET http://example.com/ HTTP/2.0\r\n\r\n", 505, "HTTP version not supported");
	refused("GET http://example.com/ HTTP/0.9\r\n\r\n", 505, "HTTP version not supported");
	refused("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", 505, "HTTP version not supported");
}

static void test_line_ends(void)
{
	const char *crlf = "GET http://example.com/ HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n";
	const char *lf = "GET http://example.com/ HTTP/1.1\nA: 1\nB: 2\n\n";
	const char *want = "GET / HTTP/1.1\r\nHost: example.com\r\nA: 1\r\nB: 2\r\n"
			   "Connection: close\r\n\r\n";

	/* Either style alone is accepted and forwarded as CRLF. */
	accepts_get(crlf, "example.com", 80, want);
	accepts_get(lf, "example.com", 80, want);
	/* A mix never is, wherever it falls. */
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\nB: 2\r\n\r\n", 400,
		"mixed line ends in the request head");
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\r\nB: 2\r\n\n", 400,
		"mixed line ends in the request head");
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\r\n\n\r\n", 400,
		"mixed line ends in the request head");
	refused("GET http://example.com/ HTTP/1.1\nA: 1\r\nB: 2\n\n", 400,
		"mixed line ends in the request head");
	refused("GET http://example.com/ HTTP/1.1\nA: 1\nB: 2\n\r\n", 400,
		"mixed line ends in the request head");
	/* Bare CR: in a value, in the request line, doubled, in LF mode. */
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\rB: 2\r\n\r\n", 400,
		"bare CR in the request head");
	refused("GET http://example.com/\r HTTP/1.1\r\n\r\n", 400,
		"bare CR in the request head");
	refused("GET http://example.com/ HTTP/1.1\r\r\n\r\n", 400,
		"bare CR in the request head");
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\r\r\n\r\n", 400,
		"bare CR in the request head");
	refused("GET http://example.com/ HTTP/1.1\r\n\r\r\n", 400,
		"bare CR in the request head");
	/* ... refused as soon as seen, before the head ends. */
	refused("GET http://example.com/ HTTP/1.1\r\nA: 1\rB", 400,
		"bare CR in the request head");
	refused("GET http://example.com/ HTTP/1.1\nA: 1\r", 400,
		"bare CR in the request head");
	refused("GET http://exa\rmple.com/", 400, "bare CR in the request head");
}

static void test_nul(void)
{
	static const char body[] = "POST http://example.com/ HTTP/1.1\r\n"
				   "Content-Length: 3\r\n\r\na\0b";
	struct http_request r;

	refused_n("GET http://example.com/\0 HTTP/1.1\r\n\r\n", 37, 400,
		  "NUL byte in the request head");
	refused_n("GET http://example.com/ HTTP/1.1\r\nA: 1\0\r\n\r\n", 43, 400,
		  "NUL byte in the request head");
	refused_n("GET http://example.com/ HTTP/1.1\r\nA\0: 1\r\n\r\n", 43, 400,
		  "NUL byte in the request head");
	refused_n("GET http://example.com/ HTTP/1.1\r\n\0\r\n\r\n", 39, 400,
		  "NUL byte in the request head");
	refused_n("\0", 1, 400, "NUL byte in the request head");
	refused_n("GET http://exa\0", 15, 400, "NUL byte in the request head");
	/* NUL in the body is not the parser's business. */
	if (accepted_n(body, sizeof(body) - 1, sizeof(body) - 1 - 3, &r)) {
		is_str(r.forward, "POST / HTTP/1.1\r\nHost: example.com\r\n"
				  "Content-Length: 3\r\nConnection: close\r\n\r\n",
		       "  forwarded head without the body");
		http_request_clear(&r);
	}
}

static void test_headers(void)
{
	/* Negative control for each: the same header spelt right. */
	accepts_header("X-A: b");
	accepts_header("X-A:b");
	accepts_header("X-A:");
	accepts_header("X-A: b\tc ");
	accepts_header("X-A: caf\xc3\xa9");
	accepts_header("!#$%&'*+-.^_`|~09az: x");
	refused(with_header("X-A: b\r\n c"), 400, "obs-fold (line folding) in the request head");
	refused(with_header("X-A: b\r\n\tc"), 400, "obs-fold (line folding) in the request head");
	refused(with_header(" X-A: b"), 400, "obs-fold (line folding) in the request head");
	refused(with_header("X-A b"), 400, "header line without a colon");
	refused(with_header("X-A : b"), 400, "bad header name");
	refused(with_header(": b"), 400, "bad header name");
	refused(with_header("X(A): b"), 400, "bad header name");
	refused(with_header("X-\xc3\xa9: b"), 400, "bad header name");
	refused(with_header("X-A: b\x01"), 400, "control character in a header value");
	refused(with_header("X-A: \x1b[31m"), 400, "control character in a header value");
	refused(with_header("X-A: b\x7f"), 400, "control character in a header value");
}

static void test_framing(void)
{
	accepts_header("Content-Length: 0");
	accepts_header("Content-Length: 5\r\nContent-Length: 5");
	accepts_header("Content-Length: 5, 5");
	accepts_header("Content-Length: 18446744073709551615");
	accepts_header("Transfer-Encoding: chunked");
	accepts_header("Transfer-Encoding: Chunked ");
	refused(with_header("Content-Length: 5\r\nTransfer-Encoding: chunked"), 400,
		"Transfer-Encoding with Content-Length");
	refused(with_header("Transfer-Encoding: chunked\r\ncontent-length: 0"), 400,
		"Transfer-Encoding with Content-Length");
	refused(with_header("Content-Length: 5\r\nContent-Length: 6"), 400,
		"Content-Length values differ");
	refused(with_header("Content-Length: 5, 6"), 400, "Content-Length values differ");
	refused(with_header("Content-Length: 5\r\nContent-Length: 05, 6"), 400,
		"Content-Length values differ");
	refused(with_header("Content-Length: "), 400, "bad Content-Length");
	refused(with_header("Content-Length: 5,"), 400, "bad Content-Length");
	refused(with_header("Content-Length: -1"), 400, "bad Content-Length");
	refused(with_header("Content-Length: +5"), 400, "bad Content-Length");
	refused(with_header("Content-Length: 0x5"), 400, "bad Content-Length");
	refused(with_header("Content-Length: 5 5"), 400, "bad Content-Length");
	refused(with_header("Content-Length: 18446744073709551616"), 400,
		"bad Content-Length");
	refused(with_header("Transfer-Encoding: chunked\r\nTransfer-Encoding: chunked"),
		400, "several Transfer-Encoding headers");
	refused(with_header("Transfer-Encoding: gzip"), 501, "transfer coding not supported");
	refused(with_header("Transfer-Encoding: gzip, chunked"), 501,
		"transfer coding not supported");
	refused(with_header("Transfer-Encoding: chunked, chunked"), 501,
		"transfer coding not supported");
	refused(with_header("Transfer-Encoding: \"chunked\""), 501,
		"transfer coding not supported");
	refused("POST http://example.com/ HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
		400, "Transfer-Encoding in an HTTP/1.0 request");
	{
		const char *in = "POST http://example.com/ HTTP/1.1\r\n"
				 "Transfer-Encoding: chunked\r\n\r\n";
		struct http_request r;

		if (accepted_n(in, strlen(in), strlen(in), &r)) {
			ok(strstr(r.forward, "\r\nTransfer-Encoding: chunked\r\n") != NULL,
			   "  Transfer-Encoding forwarded");
			http_request_clear(&r);
		}
	}
}

static void test_connection_options(void)
{
	char line[600];
	size_t n = 0;

	n += (size_t)snprintf(line + n, sizeof(line) - n, "Connection: o0");
	for (int i = 1; i < 32; i++)
		n += (size_t)snprintf(line + n, sizeof(line) - n, ", o%d", i);
	accepts_header(line);
	snprintf(line + n, sizeof(line) - n, ", o32");
	refused(with_header(line), 400, "too many Connection options");
	accepts_header("Connection: a\r\nConnection: , b,,c , ");
	refused(with_header("Connection: a b"), 400, "bad Connection header");
	refused(with_header("Connection: a;b"), 400, "bad Connection header");
}

static void test_forward(void)
{
	/* Hop-by-hop headers, those Connection names (any case) and the
	 * Proxy-* credentials never reach the origin; the rest keeps its
	 * order and spelling. */
	accepts_get("GET http://example.com/a?b=c HTTP/1.1\r\n"
		    "Host: example.com\r\n"
		    "User-Agent: t/1\r\n"
		    "Connection: keep-alive, X-Secret-Hop\r\n"
		    "Proxy-Connection: keep-alive\r\n"
		    "Keep-Alive: 300\r\n"
		    "Proxy-Authorization: Basic dXNlcjpwdw==\r\n"
		    "Proxy-Authenticate: Basic\r\n"
		    "TE: trailers\r\n"
		    "Trailer: X-T\r\n"
		    "Upgrade: h2c\r\n"
		    "x-secret-hop: 1\r\n"
		    "Accept: */*\r\n"
		    "X-Keep:  spaced  \r\n"
		    "\r\n",
		    "example.com", 80,
		    "GET /a?b=c HTTP/1.1\r\n"
		    "Host: example.com\r\n"
		    "User-Agent: t/1\r\n"
		    "Accept: */*\r\n"
		    "X-Keep:  spaced  \r\n"
		    "Connection: close\r\n\r\n");
	/* No Host: one is added from the target. Header names are matched
	 * whatever their case; LF line ends become CRLF; several equal
	 * Content-Lengths become one. */
	accepts_get("POST http://Example.com:8080 HTTP/1.0\n"
		    "CONNECTION: X-Drop\n"
		    "x-DROP: 1\n"
		    "Content-Type: text/plain\n"
		    "content-length: 005\n"
		    "Content-Length: 5, 5\n"
		    "PROXY-CONNECTION: close\n"
		    "\n",
		    "example.com", 8080,
		    "POST / HTTP/1.1\r\n"
		    "Host: example.com:8080\r\n"
		    "Content-Type: text/plain\r\n"
		    "Content-Length: 5\r\n"
		    "Connection: close\r\n\r\n");
	/* The target, never a Host header, says where the request goes and
	 * what the origin is told: a client's Host is replaced. Connection
	 * cannot strip the framing. */
	accepts_get("PUT http://example.com/x HTTP/1.1\r\n"
		    "Host: evil.example\r\n"
		    "Connection: Content-Length, Transfer-Encoding, Host\r\n"
		    "Content-Length: 2\r\n"
		    "Host: other.example\r\n"
		    "\r\n",
		    "example.com", 80,
		    "PUT /x HTTP/1.1\r\n"
		    "Host: example.com\r\n"
		    "Content-Length: 2\r\n"
		    "Connection: close\r\n\r\n");
}

/* A CRLF head of exactly total bytes: a request line and X-Pad headers. */
static char *head_of(size_t total, bool crlf)
{
	const char *start = crlf ? "GET http://example.com/ HTTP/1.1\r\n"
				 : "GET http://example.com/ HTTP/1.1\n";
	const char *eol = crlf ? "\r\n" : "\n";
	size_t el = strlen(eol), n = strlen(start);
	char *buf = malloc(total + 1);

	if (!buf)
		abort();
	memcpy(buf, start, n);
	/* "X: " + value + eol lines, values of 1 to 1000 bytes, filling
	 * all but the final empty line. */
	for (size_t room = total - el - n; room > 0;) {
		size_t line = room;

		if (line > 1000 + 3 + el) {
			line = 1000 + 3 + el;
			if (room - line < 4 + el)
				line = room - (4 + el);
		}
		memcpy(buf + n, "X: ", 3);
		memset(buf + n + 3, 'v', line - 3 - el);
		memcpy(buf + n + line - el, eol, el);
		n += line;
		room -= line;
	}
	memcpy(buf + n, eol, el);
	buf[total] = '\0';
	return buf;
}

static void test_head_limit(void)
{
	struct http_request r;
	char *h;

	for (int crlf = 1; crlf >= 0; crlf--) {
		const char *style = crlf ? "CRLF" : "LF";

		h = head_of(HTTP_HEAD_MAX, crlf);
		ok(accepted_n(h, HTTP_HEAD_MAX, HTTP_HEAD_MAX, &r),
		   "%s head of exactly %d bytes accepted", style, HTTP_HEAD_MAX);
		http_request_clear(&r);
		/* ... and with a body after it. */
		h = realloc(h, HTTP_HEAD_MAX + 100);
		if (!h)
			abort();
		memset(h + HTTP_HEAD_MAX, 'b', 100);
		ok(accepted_n(h, HTTP_HEAD_MAX + 100, HTTP_HEAD_MAX, &r),
		   "%s head of exactly %d bytes and a body", style, HTTP_HEAD_MAX);
		http_request_clear(&r);
		free(h);

		h = head_of(HTTP_HEAD_MAX + 1, crlf);
		refused_n(h, HTTP_HEAD_MAX + 1, 431, "request head too large");
		/* Without its end: too large once the limit is read, never
		 * NEED_MORE forever. */
		refused_n(h, HTTP_HEAD_MAX, 431, "request head too large");
		is_int(parse(h, HTTP_HEAD_MAX - 1, &r), HTTP_NEED_MORE,
		       "%s: %d bytes without an end wait for more", style,
		       HTTP_HEAD_MAX - 1);
		free(h);
	}
	/* A buffer far past the limit, one endless header. */
	h = malloc((size_t)3 * HTTP_HEAD_MAX);
	if (!h)
		abort();
	memset(h, 'a', (size_t)3 * HTTP_HEAD_MAX);
	memcpy(h, "GET http://example.com/ HTTP/1.1\r\nX: ", 37);
	refused_n(h, (size_t)3 * HTTP_HEAD_MAX, 431, "request head too large");
	free(h);
}

static void test_line_limit(void)
{
	size_t pre = strlen("GET http://example.com/"), post = strlen(" HTTP/1.1");
	char *buf = malloc(20000);
	struct http_request r;
	size_t n;

	if (!buf)
		abort();
	/* A request line of exactly 8192 bytes (without its end). */
	snprintf(buf, 20000, "GET http://example.com/");
	memset(buf + pre, 'p', 8192 - pre - post);
	memcpy(buf + 8192 - post, " HTTP/1.1\r\n\r\n", post + 4);
	ok(accepted_n(buf, 8196, 8196, &r), "request line of 8192 bytes accepted");
	is_int(r.forward_len, strlen("GET / HTTP/1.1\r\nHost: example.com\r\n"
				     "Connection: close\r\n\r\n") + 8192 - pre - post,
	       "  the long path forwarded");
	http_request_clear(&r);
	/* 8192 bytes of it and a CR waiting for its LF: may still end well. */
	is_int(parse(buf, 8193, &r), HTTP_NEED_MORE,
	       "8192-byte line and its CR: need more");
	is_int(parse(buf, 8192, &r), HTTP_NEED_MORE,
	       "8192 bytes of request line: need more");

	/* One more byte of path: 8193. */
	memset(buf + pre, 'p', 8193 - pre - post);
	memcpy(buf + 8193 - post, " HTTP/1.1\r\n\r\n", post + 4);
	refused_n(buf, 8197, 414, "request line too long");
	refused_n(buf, 8193, 414, "request line too long");
	refused_n(buf, 8194, 414, "request line too long");

	/* The request line decides before the head's size does. */
	n = 17000;
	snprintf(buf, 20000, "GET http://example.com/");
	memset(buf + pre, 'a', n - pre);
	refused_n(buf, n, 414, "request line too long");
	free(buf);
}

/* Every proper prefix of a valid head is NEED_MORE; the whole is OK. */
static void incremental(const char *in, size_t len, size_t head_len)
{
	struct http_request r;
	char show[160];
	size_t bad_at = 0;
	bool all = true;

	for (size_t i = 0; i < head_len && all; i++) {
		enum http_result res = parse(in, i, &r);

		if (res == HTTP_OK)
			http_request_clear(&r);
		if (res != HTTP_NEED_MORE) {
			all = false;
			bad_at = i;
		}
	}
	if (!ok(all, "every prefix needs more: %s", shown(in, len, show, sizeof(show))))
		diag("prefix of %zu bytes did not", bad_at);
	if (accepted_n(in, len, head_len, &r))
		http_request_clear(&r);
}

static void test_incremental(void)
{
	static const char *heads[] = {
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"CONNECT [2001:db8::1]:443 HTTP/1.1\r\nUser-Agent: curl/8\r\n\r\n",
		"CONNECT example.com:443 HTTP/1.0\n\n",
		("GET http://example.com/a?b HTTP/1.1\r\nHost: example.com\r\n"
		 "Connection: keep-alive, X-A\r\nX-A: 1\r\nContent-Length: 0\r\n\r\n"),
		"POST http://example.com:81/ HTTP/1.1\nTransfer-Encoding: chunked\nA: b\n\n",
	};
	static const char with_body[] = "POST http://example.com/ HTTP/1.1\r\n"
					"Content-Length: 4\r\n\r\nbody";

	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		incremental(heads[i], strlen(heads[i]), strlen(heads[i]));
	incremental(with_body, sizeof(with_body) - 1, sizeof(with_body) - 1 - 4);
}

static void test_garbage(void)
{
	static const unsigned char tls[] = { 0x16, 0x03, 0x01, 0x02, 0x00, 0x01,
					     0x00, 0x01, 0xfc, 0x03, 0x03 };
	static const unsigned char socks5[] = { 0x05, 0x01, 0x00 };
	static const unsigned char socks4[] = { 0x04, 0x01, 0x01, 0xbb, 0x7f,
						0x00, 0x00, 0x01, 0x00 };
	struct http_request r;
	unsigned seed = 12345;
	char buf[520];
	int fine = 0;

	is_int(http_parse_request("", 0, &r), HTTP_NEED_MORE, "empty buffer: need more");
	refused_n((const char *)tls, sizeof(tls), 400, "NUL byte in the request head");
	refused_n((const char *)socks5, sizeof(socks5), 400, "NUL byte in the request head");
	refused_n((const char *)socks4, sizeof(socks4), 400, "NUL byte in the request head");
	refused("\x05\x01\x02\r\n\r\n", 400, "malformed request line");
	refused("hello\n\n", 400, "malformed request line");
	refused("GET http://example.com/ HTTP/1.1\r\nGET http://example.com/ HTTP/1.1\r\n\r\n",
		400, "bad header name");

	/* Random lines: never accepted, always a known status and a clean
	 * reason. */
	for (int i = 0; i < 2000; i++) {
		size_t n = 0, len;
		enum http_result res;

		seed = seed * 1103515245u + 12345u;
		len = 1 + (seed >> 16) % (sizeof(buf) - 9);
		for (; n < len; n++) {
			seed = seed * 1103515245u + 12345u;
			buf[n] = (char)(seed >> 16);
		}
		snprintf(buf + n, sizeof(buf) - n, "\r\n\r\n");
		res = parse(buf, n + 4, &r);
		if (res == HTTP_BAD && reason_clean(r.reason) &&
		    (r.status == 400 || r.status == 414 || r.status == 431 ||
		     r.status == 501 || r.status == 505))
			fine++;
		if (res == HTTP_OK)
			http_request_clear(&r);
	}
	is_int(fine, 2000, "2000 random heads refused with clean reasons");
}

/* A secret-looking marker in every part of refused requests never comes
 * back in a reason (refused() checks each for the marker). */
static void test_reasons_quote_nothing(void)
{
	refused("CONNECT " MARKER ".example.com HTTP/1.1\r\n\r\n", 400,
		"missing port in the CONNECT target");
	refused("CONNECT " MARKER "@example.com:443 HTTP/1.1\r\n\r\n", 400,
		"userinfo in the target");
	refused("GET http://" MARKER ":pw@example.com/ HTTP/1.1\r\n\r\n", 400,
		"userinfo in the target");
	refused("GET http://example.com/" MARKER "#x HTTP/1.1\r\n\r\n", 400,
		"fragment in the request target");
	refused("GET /" MARKER " HTTP/1.1\r\n\r\n", 400, "not a proxy request");
	refused(MARKER "( http://example.com/ HTTP/1.1\r\n\r\n", 400, "malformed request line");
	refused("GET https://" MARKER "/ HTTP/1.1\r\n\r\n", 400,
		"https:// target: use CONNECT for TLS");
	refused(with_header("X-" MARKER " : 1"), 400, "bad header name");
	refused(with_header("Authorization: " MARKER "\x01"), 400,
		"control character in a header value");
	refused(with_header("Content-Length: " MARKER), 400, "bad Content-Length");
	refused(with_header("Transfer-Encoding: " MARKER), 501, "transfer coding not supported");
	refused(with_header(MARKER), 400, "header line without a colon");
}

/* Basic credentials for user:password, as a Proxy-Authorization value. */
static const char *basic(const char *scheme, const char *creds, char *out, size_t size)
{
	size_t n = strlen(scheme);
	unsigned char enc[1400];

	if (EVP_EncodeBlock(enc, (const unsigned char *)creds, (int)strlen(creds)) < 0 ||
	    n + strlen((char *)enc) + 1 > size)
		abort();
	memcpy(out, scheme, n);
	strcpy(out + n, (char *)enc);
	return out;
}

/* http_basic_password() on an exactly sized heap copy of value. */
static int password_of(const char *value, size_t len, char *pw, size_t size)
{
	unsigned char scratch[HTTP_AUTH_DECODED_MAX];
	const unsigned char *p = (const unsigned char *)"unset";
	size_t n = 99;
	char *copy = value ? malloc(len ? len : 1) : NULL;
	int r;

	if (value && !copy)
		abort();
	if (value)
		memcpy(copy, value, len);
	r = http_basic_password(copy, len, scratch, &p, &n);
	free(copy);
	if (r < 0) {
		if (p != NULL || n != 0)
			return -2; /* a failure must leave nothing behind */
		return -1;
	}
	if (n >= size || p < scratch || p + n > scratch + sizeof(scratch))
		return -2;
	memcpy(pw, p, n);
	pw[n] = '\0';
	return 0;
}

static void basic_is(const char *value, const char *want, const char *label)
{
	char pw[HTTP_AUTH_DECODED_MAX + 1];
	int r = password_of(value, strlen(value), pw, sizeof(pw));

	if (!ok(r == 0 && strcmp(pw, want) == 0, "Basic password: %s", label))
		diag("result %d, password \"%s\"", r, r == 0 ? pw : "");
}

static void basic_refused(const char *value, size_t len, const char *label)
{
	char pw[HTTP_AUTH_DECODED_MAX + 1];

	is_int(password_of(value, len, pw, sizeof(pw)), -1, "Basic refused: %s", label);
}

static void test_basic_password(void)
{
	char v[1500], big[800];

	/* each refusal next to the accepted spelling above it */
	basic_is(basic("Basic ", "agent:tok", v, sizeof(v)), "tok", "agent:tok, no padding");
	basic_is(basic("Basic ", "agent:toke", v, sizeof(v)), "toke", "two bytes of padding");
	basic_is(basic("Basic ", "agent:token", v, sizeof(v)), "token", "one byte of padding");
	basic_is(basic("basic ", "a:b", v, sizeof(v)), "b", "scheme in lower case");
	basic_is(basic("BASIC ", "a:b", v, sizeof(v)), "b", "scheme in upper case");
	basic_is(basic("Basic    ", "a:b", v, sizeof(v)), "b", "several spaces");
	basic_is(basic("Basic ", ":tok", v, sizeof(v)), "tok", "empty user name");
	basic_is(basic("Basic ", "agent:", v, sizeof(v)), "", "empty password");
	basic_is(basic("Basic ", "agent:a:b", v, sizeof(v)), "a:b", "a colon in the password");
	basic_is(basic("Basic ", "agent:" MARKER "\x01\xff", v, sizeof(v)),
		 MARKER "\x01\xff", "any bytes in the password");

	basic(" Basic ", "a:b", v, sizeof(v));
	basic_refused(v, strlen(v), "a space before the scheme");
	basic_refused(basic("Bearer ", "a:b", v, sizeof(v)), strlen(v), "scheme Bearer");
	basic_refused(basic("Basically ", "a:b", v, sizeof(v)), strlen(v), "scheme Basically");
	basic_refused(basic("Basic", "a:b", v, sizeof(v)), strlen(v), "no space after the scheme");
	basic_refused(basic("Basic\t", "a:b", v, sizeof(v)), strlen(v), "a tab after the scheme");
	basic_refused("Basic", 5, "the scheme alone");
	basic_refused("Basic ", 6, "the scheme and a space");
	basic_refused("Basic    ", 9, "the scheme and spaces");
	basic_refused(basic("Basic ", "agent-tok", v, sizeof(v)), strlen(v), "no colon");
	basic_refused("Basic YTpi", 9, "base64 cut short");
	basic_refused("Basic YTpiY", 11, "base64 not a multiple of 4");
	basic_refused("Basic YT*i", 10, "a byte outside base64");
	basic_refused("Basic YT=i", 10, "padding inside");
	basic_refused("Basic Y===", 10, "three bytes of padding");
	basic_refused("Basic ====", 10, "padding alone");
	basic_refused("Basic YTp YTpi", 14, "a space inside");
	basic_refused("Basic YTp\tYTpi", 14, "a tab inside");
	basic_refused("Basic YTpi\0YTp", 14, "a NUL inside");
	basic_refused("Basic YT-_", 10, "the URL-safe alphabet");
	basic_refused(NULL, 0, "no value");

	/* the length bound: the longest value taken, one base64 block more */
	memset(big, 'p', sizeof(big));
	memcpy(big, "a:", 2);
	big[762] = '\0';
	basic("Basic   ", big, v, sizeof(v));
	is_int(strlen(v), HTTP_AUTH_VALUE_MAX, "  a value of exactly HTTP_AUTH_VALUE_MAX bytes");
	basic_is(v, big + 2, "a value of HTTP_AUTH_VALUE_MAX bytes (760-byte password)");
	big[762] = 'p';
	big[765] = '\0';
	basic("Basic   ", big, v, sizeof(v));
	basic_refused(v, strlen(v), "a value of HTTP_AUTH_VALUE_MAX + 4 bytes");
	basic_refused(basic("Basic ", big, v, sizeof(v)), strlen(v),
		      "a value of HTTP_AUTH_VALUE_MAX + 2 bytes");
}

/* The header's value points into the input: parse an exact heap copy
 * and keep it (*keep, freed by the caller) while r is read. */
static bool auth_parsed(const char *in, struct http_request *r, char **keep)
{
	size_t len = strlen(in);
	char show[160];

	*keep = malloc(len);
	if (!*keep)
		abort();
	memcpy(*keep, in, len);
	memset(r, 0x5a, sizeof(*r));
	if (!ok(http_parse_request(*keep, len, r) == HTTP_OK && r->head_len == len, "accepted: %s",
		shown(in, len, show, sizeof(show)))) {
		memset(r, 0, sizeof(*r));
		return false;
	}
	return true;
}

static bool auth_is(const struct http_request *r, const char *keep, unsigned count,
		    const char *value)
{
	if (!value)
		return r->proxy_auth_count == count && r->proxy_auth == NULL &&
		       r->proxy_auth_len == 0;
	return r->proxy_auth_count == count && r->proxy_auth_len == strlen(value) &&
	       r->proxy_auth > keep && memcmp(r->proxy_auth, value, strlen(value)) == 0;
}

static void test_proxy_auth_header(void)
{
	struct http_request r;
	char *keep;

	if (auth_parsed("CONNECT example.com:443 HTTP/1.1\r\n"
			"Proxy-Authorization:  Basic YTpi \r\n\r\n", &r, &keep))
		ok(auth_is(&r, keep, 1, "Basic YTpi"), "  CONNECT: its Proxy-Authorization value, trimmed");
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("CONNECT example.com:443 HTTP/1.1\r\n"
			"proxy-AUTHORIZATION: Basic YTpi\r\n\r\n", &r, &keep))
		ok(auth_is(&r, keep, 1, "Basic YTpi"), "  the header's name in any case");
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("CONNECT example.com:443 HTTP/1.1\r\n"
			"Proxy-Authorizations: Basic YTpi\r\n\r\n", &r, &keep))
		ok(auth_is(&r, keep, 0, NULL), "  another header's name is not it");
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("GET http://example.com/ HTTP/1.1\r\nProxy-Authorization: Basic AAAA\r\n"
			"X-A: b\r\nProxy-Authorization: Basic YTpi\r\n\r\n", &r, &keep)) {
		ok(auth_is(&r, keep, 2, "Basic AAAA"), "  two of them: counted, the first kept");
		is_str(r.forward, "GET / HTTP/1.1\r\nHost: example.com\r\nX-A: b\r\n"
				  "Connection: close\r\n\r\n",
		       "  neither is forwarded");
	}
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("GET http://example.com/ HTTP/1.1\nProxy-Authorization: Basic YTpi\n\n",
			&r, &keep)) {
		ok(auth_is(&r, keep, 1, "Basic YTpi"), "  bare LF line ends: the same value");
		ok(strstr(r.forward, "YTpi") == NULL, "  and it is not forwarded");
	}
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("GET http://example.com/ HTTP/1.1\r\nProxy-Authorization:\r\n\r\n", &r,
			&keep))
		ok(auth_is(&r, keep, 1, ""), "  an empty value: counted, empty");
	http_request_clear(&r);
	free(keep);
	if (auth_parsed("GET http://example.com/ HTTP/1.1\r\nX-A: b\r\n\r\n", &r, &keep))
		ok(auth_is(&r, keep, 0, NULL), "  control: none sent, none found");
	http_request_clear(&r);
	free(keep);
	refused(with_header("Proxy-Authorization: Basic YTpi\x01"), 400,
		"control character in a header value");
}

static void test_refusal(void)
{
	char out[2048];
	const char *want = "HTTP/1.1 403 Forbidden\r\n"
			   "Content-Type: text/plain\r\n"
			   "X-Cordon-Refused: host not in network.allow: example.com\r\n"
			   "Content-Length: 39\r\n"
			   "Connection: close\r\n"
			   "\r\n"
			   "host not in network.allow: example.com\n";
	size_t n;

	n = http_format_refusal(out, sizeof(out), 403,
				"host not in network.allow: example.com");
	is_str(out, want, "403 refusal, byte for byte");
	is_int(n, strlen(want), "  its length");

	n = http_format_refusal(out, sizeof(out), 431, "request head too large");
	is_str(out, "HTTP/1.1 431 Request Header Fields Too Large\r\n"
		    "Content-Type: text/plain\r\n"
		    "X-Cordon-Refused: request head too large\r\n"
		    "Content-Length: 23\r\n"
		    "Connection: close\r\n\r\n"
		    "request head too large\n",
	       "431 refusal");
	is_int(n, strlen(out), "  its length");

	/* CR, LF, NUL-free by construction, other control and high bytes
	 * dropped: the reason cannot add a header or end the head. */
	http_format_refusal(out, sizeof(out), 403,
			    "no\r\nSet-Cookie: a=b\r\n\r\nx\x1b[0m\x7f\xc3\xa9!");
	is_str(out, "HTTP/1.1 403 Forbidden\r\n"
		    "Content-Type: text/plain\r\n"
		    "X-Cordon-Refused: noSet-Cookie: a=bx[0m!\r\n"
		    "Content-Length: 23\r\n"
		    "Connection: close\r\n\r\n"
		    "noSet-Cookie: a=bx[0m!\n",
	       "control bytes stripped from the reason");

	http_format_refusal(out, sizeof(out), 999, NULL);
	is_str(out, "HTTP/1.1 500 Internal Server Error\r\n"
		    "Content-Type: text/plain\r\n"
		    "X-Cordon-Refused: \r\n"
		    "Content-Length: 1\r\n"
		    "Connection: close\r\n\r\n\n",
	       "unknown status becomes 500; NULL reason is empty");

	n = http_format_refusal(out, sizeof(out), 407, "proxy authentication required");
	is_str(out, "HTTP/1.1 407 Proxy Authentication Required\r\n"
		    "Content-Type: text/plain\r\n"
		    "Proxy-Authenticate: Basic realm=\"cordon\"\r\n"
		    "X-Cordon-Refused: proxy authentication required\r\n"
		    "Content-Length: 30\r\n"
		    "Connection: close\r\n\r\n"
		    "proxy authentication required\n",
	       "407 refusal carries the Basic challenge (the 403 above does not)");
	is_int(n, strlen(out), "  its length");
	http_format_refusal(out, sizeof(out), 503, "connection cap reached");
	ok(strncmp(out, "HTTP/1.1 503 Service Unavailable\r\n", 34) == 0 &&
		   strstr(out, "Proxy-Authenticate") == NULL &&
		   strstr(out, "\r\nX-Cordon-Refused: connection cap reached\r\n") != NULL,
	   "503 refusal, no challenge");

	n = http_format_refusal(out, 10, 403, "x");
	ok(n == 9 && strcmp(out, "HTTP/1.1 ") == 0, "truncated to the buffer");
	is_int(http_format_refusal(out, 0, 403, "x"), 0, "size 0 writes nothing");

	{
		char big[2000];

		memset(big, 'r', sizeof(big) - 1);
		big[sizeof(big) - 1] = '\0';
		n = http_format_refusal(out, sizeof(out), 431, big);
		ok(n < 1024 && n == strlen(out),
		   "a long reason is cut, the response fits in 1 KiB");
	}
}

int main(void)
{
	test_connect();
	test_host_length();
	test_absolute();
	test_request_line();
	test_line_ends();
	test_nul();
	test_headers();
	test_framing();
	test_connection_options();
	test_forward();
	test_head_limit();
	test_line_limit();
	test_incremental();
	test_garbage();
	test_reasons_quote_nothing();
	test_refusal();
	test_basic_password();
	test_proxy_auth_header();
	return done_testing();
}
