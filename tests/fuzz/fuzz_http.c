/* tests/fuzz/fuzz_http.c: libFuzzer target for the gateway's HTTP proxy
 * request parser (src/gateway/http.c).
 *
 * Any input: http_parse_request() returns one of its three results and
 * never reads past the input. NEED_MORE only under the head limit; BAD
 * with a known status and a printable reason; OK with a head inside the
 * input and the limit, a printable lower-case host, a port, and for
 * absolute-form a forwarded head that is NUL-free, CRLF-only, ends once
 * in CRLF CRLF with "Connection: close", carries one Host and no
 * hop-by-hop header. An accepted head parses the same on its own, and
 * one byte short of it needs more. The input is also a reason for
 * http_format_refusal(), whose response must keep its shape and fit
 * in 1 KiB. A Proxy-Authorization value lies inside the head; Basic
 * credentials (in it, and the whole input as one) decode to a password
 * inside the scratch buffer, after the first colon, or to nothing. Any
 * breach aborts, so libFuzzer records the input. */
#include "gateway/http.h"
#include "check.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


static bool printable(const char *s)
{
	for (; *s; s++)
		if (*s < 0x20 || *s > 0x7e)
			return false;
	return true;
}

static bool host_ok(const char *h)
{
	if (memchr(h, '\0', HTTP_HOST_MAX + 1) == NULL || !*h)
		return false;
	for (; *h; h++)
		if (!((*h >= 'a' && *h <= 'z') || (*h >= '0' && *h <= '9') ||
		      *h == '-' || *h == '.' || *h == '_' || *h == ':'))
			return false;
	return true;
}

/* Header names the origin must never see. */
static const char *const dropped[] = {
	"connection:", "proxy-connection:", "keep-alive:", "proxy-authorization:",
	"proxy-authenticate:", "te:", "trailer:", "upgrade:",
};

static void check_forward(const struct http_request *r)
{
	const char *f = r->forward, *end;
	size_t n = r->forward_len, hosts = 0;

	CHECK(f != NULL && n >= 4);
	CHECK(strlen(f) == n);
	CHECK(memcmp(f + n - 4, "\r\n\r\n", 4) == 0);
	CHECK(n >= 23 && memcmp(f + n - 23, "\r\nConnection: close\r\n\r\n", 23) == 0);
	end = strstr(f, "\r\n\r\n");
	CHECK(end == f + n - 4);
	for (size_t i = 0; i < n; i++) {
		if (f[i] == '\n')
			CHECK(i > 0 && f[i - 1] == '\r');
		if (f[i] == '\r')
			CHECK(i + 1 < n && f[i + 1] == '\n');
	}
	/* Request line: METHOD SP /... SP HTTP/1.1 */
	{
		const char *sp = strchr(f, ' ');
		const char *eol = strstr(f, "\r\n");

		CHECK(sp && sp < eol && sp[1] == '/');
		CHECK(eol - f >= 11 && memcmp(eol - 9, " HTTP/1.1", 9) == 0);
	}
	for (const char *line = strstr(f, "\r\n") + 2; line < f + n - 2;
	     line = strstr(line, "\r\n") + 2) {
		for (size_t i = 0; i < sizeof(dropped) / sizeof(dropped[0]); i++) {
			size_t dl = strlen(dropped[i]);

			if (strncasecmp(line, dropped[i], dl) == 0)
				CHECK(strncmp(line, "Connection: close\r\n\r\n", 21) == 0 &&
				      line + 21 == f + n);
		}
		if (strncasecmp(line, "host:", 5) == 0)
			hosts++;
	}
	CHECK(hosts == 1);
}

static void check_same(const struct http_request *a, const struct http_request *b)
{
	CHECK(a->connect == b->connect && a->port == b->port &&
	      a->head_len == b->head_len && strcmp(a->host, b->host) == 0);
	CHECK(a->forward_len == b->forward_len);
	CHECK((a->forward == NULL) == (b->forward == NULL));
	CHECK(!a->forward || memcmp(a->forward, b->forward, a->forward_len) == 0);
}

/* Basic credentials: a password inside the scratch buffer, or nothing. */
static void check_basic(const char *value, size_t len)
{
	unsigned char scratch[HTTP_AUTH_DECODED_MAX];
	const unsigned char *pw = (const unsigned char *)"unset";
	size_t n = 12345;

	if (http_basic_password(value, len, scratch, &pw, &n) < 0) {
		CHECK(pw == NULL && n == 0);
		return;
	}
	CHECK(len <= HTTP_AUTH_VALUE_MAX && len > 6 && strncasecmp(value, "basic ", 6) == 0);
	CHECK(pw > scratch && pw[-1] == ':' && pw + n <= scratch + sizeof(scratch));
	CHECK(memchr(scratch, ':', (size_t)(pw - 1 - scratch)) == NULL);
}

static void check_ok(const uint8_t *data, size_t size, const struct http_request *r)
{
	struct http_request again;
	char *copy;

	CHECK(r->head_len > 0 && r->head_len <= size && r->head_len <= HTTP_HEAD_MAX);
	if (r->proxy_auth_count == 0) {
		CHECK(r->proxy_auth == NULL && r->proxy_auth_len == 0);
	} else {
		const char *head = (const char *)data;

		CHECK(r->proxy_auth > head && r->proxy_auth + r->proxy_auth_len < head + r->head_len);
		check_basic(r->proxy_auth, r->proxy_auth_len);
	}
	CHECK(host_ok(r->host));
	CHECK(r->port != 0);
	if (r->connect)
		CHECK(r->forward == NULL && r->forward_len == 0);
	else
		check_forward(r);

	/* The head alone, in an exactly sized buffer, parses the same. */
	copy = malloc(r->head_len);
	CHECK(copy != NULL);
	memcpy(copy, data, r->head_len);
	CHECK(http_parse_request(copy, r->head_len, &again) == HTTP_OK);
	check_same(r, &again);
	http_request_clear(&again);
	/* One byte short of it waits for more. */
	CHECK(http_parse_request(copy, r->head_len - 1, &again) == HTTP_NEED_MORE);
	free(copy);
}

static void check_refusal(const uint8_t *data, size_t size)
{
	char reason[600], out[2048], *body;
	size_t n = size < sizeof(reason) - 1 ? size : sizeof(reason) - 1, w;
	unsigned long cl;
	int lines = 0;

	memcpy(reason, data, n);
	reason[n] = '\0';
	w = http_format_refusal(out, sizeof(out), 431, reason);
	CHECK(w == strlen(out) && w < 1024);
	body = strstr(out, "\r\n\r\n");
	CHECK(body != NULL);
	body += 4;
	for (const char *c = out; c < body; c++) {
		if (*c == '\n')
			lines++;
		CHECK(*c != '\n' || c[-1] == '\r');
		CHECK(*c != '\r' || c[1] == '\n');
	}
	CHECK(lines == 6);	/* status, 4 headers, the empty line */
	CHECK(strncmp(out, "HTTP/1.1 431 Request Header Fields Too Large\r\n", 46) == 0);
	{
		const char *h = strstr(out, "\r\nContent-Length: ");

		CHECK(h != NULL);
		cl = strtoul(h + 18, NULL, 10);
	}
	CHECK(cl == strlen(body) && cl > 0 && body[cl - 1] == '\n');
	CHECK(strchr(body, '\r') == NULL && strchr(body, '\n') == body + cl - 1);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct http_request r;

	switch (http_parse_request((const char *)data, size, &r)) {
	case HTTP_NEED_MORE:
		CHECK(size < HTTP_HEAD_MAX && r.forward == NULL);
		break;
	case HTTP_BAD:
		CHECK(r.status == 400 || r.status == 414 || r.status == 431 ||
		      r.status == 500 || r.status == 501 || r.status == 505);
		CHECK(r.reason != NULL && *r.reason && printable(r.reason));
		CHECK(r.forward == NULL);
		break;
	case HTTP_OK:
		check_ok(data, size, &r);
		http_request_clear(&r);
		break;
	default:
		abort();
	}
	check_refusal(data, size);
	check_basic((const char *)data, size);
	return 0;
}
