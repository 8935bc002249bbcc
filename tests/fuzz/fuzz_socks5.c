/* tests/fuzz/fuzz_socks5.c: libFuzzer target for the gateway's SOCKS5
 * parser (src/gateway/socks5.c).
 *
 * The input is fed to the greeting parser as a gateway without a token
 * sees it and, after an accepted greeting, the rest to the request
 * parser; then as a gateway with a token sees it: greeting, the
 * username/password sub-negotiation (RFC 1929), request. The whole
 * input also goes to the request parser and to the sub-negotiation
 * parser directly, so their fields are reached without a greeting
 * first. A result uses no more than it was given; an accepted greeting
 * offered the method asked for; accepted credentials lie inside the
 * input, take exactly 3 + ULEN + PLEN bytes, parse the same from exactly
 * those bytes while every shorter prefix needs more; an accepted request has a
 * printable lower-case host, a port, is_ip agreeing with inet_pton, and
 * parses the same from exactly its own bytes while every shorter prefix
 * needs more. A refusal carries the reply a client can be sent and a
 * printable reason. Any breach aborts, so libFuzzer records the input. */
#include "gateway/socks5.h"
#include "check.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


/* The longest request: 5 1 0 3 255 name port. */
#define REQUEST_MAX (4 + 1 + 255 + 2)

static bool reason_ok(const char *reason)
{
	if (!reason || !*reason)
		return false;
	for (; *reason; reason++)
		if (*reason < 0x20 || *reason > 0x7e)
			return false;
	return true;
}

static void check_request_ok(const uint8_t *buf, size_t len,
			     const struct socks_request *r)
{
	const char *h = r->host;
	struct in6_addr a6;
	struct in_addr a4;
	struct socks_request again;
	uint8_t *copy;

	CHECK(r->used <= len && r->used <= REQUEST_MAX);
	CHECK(r->used == (buf[3] == 1 ? 10u : buf[3] == 4 ? 22u : 7u + buf[4]));
	CHECK(memchr(h, '\0', sizeof(r->host)) != NULL && *h);
	for (const char *c = h; *c; c++)
		CHECK(*c > 0x20 && *c < 0x7f && !(*c >= 'A' && *c <= 'Z'));
	CHECK(r->port != 0);
	CHECK(r->reason == NULL && r->reply == SOCKS_SUCCEEDED);
	switch (r->is_ip) {
	case 4:
		CHECK(inet_pton(AF_INET, h, &a4) == 1);
		break;
	case 6:
		CHECK(inet_pton(AF_INET6, h, &a6) == 1);
		break;
	case 0:
		CHECK(inet_pton(AF_INET, h, &a4) != 1 && inet_pton(AF_INET6, h, &a6) != 1);
		CHECK(buf[3] == 3);
		break;
	default:
		abort();
	}

	copy = malloc(r->used);
	CHECK(copy != NULL);
	memcpy(copy, buf, r->used);
	CHECK(socks5_parse_request(copy, r->used, &again) == SOCKS_OK);
	CHECK(again.used == r->used && again.port == r->port &&
	      again.is_ip == r->is_ip && strcmp(again.host, r->host) == 0);
	for (size_t i = 0; i < r->used; i++)
		CHECK(socks5_parse_request(copy, i, &again) == SOCKS_NEED_MORE);
	free(copy);
}

static void check_request(const uint8_t *buf, size_t len)
{
	struct socks_request r;

	switch (socks5_parse_request(buf, len, &r)) {
	case SOCKS_NEED_MORE:
		CHECK(len < REQUEST_MAX && r.used == 0);
		break;
	case SOCKS_BAD:
		CHECK(r.reply == SOCKS_GENERAL_FAILURE ||
		      r.reply == SOCKS_CMD_UNSUPPORTED ||
		      r.reply == SOCKS_ATYP_UNSUPPORTED);
		CHECK(reason_ok(r.reason) && r.used == 0);
		break;
	case SOCKS_OK:
		check_request_ok(buf, len, &r);
		break;
	default:
		abort();
	}
}

/* The longest sub-negotiation: 1 255 user 255 password. */
#define AUTH_MAX (3 + 255 + 255)

/* The sub-negotiation at buf; the bytes it used, 0 unless accepted. */
static size_t check_auth(const uint8_t *buf, size_t len)
{
	struct socks_auth a, again;
	uint8_t *copy;

	switch (socks5_parse_auth(buf, len, &a)) {
	case SOCKS_NEED_MORE:
		CHECK(len < AUTH_MAX && a.used == 0 && a.reason == NULL);
		CHECK(a.user == NULL && a.password == NULL);
		CHECK(len == 0 || buf[0] == 1);
		return 0;
	case SOCKS_BAD:
		CHECK(len >= 1 && buf[0] != 1 && reason_ok(a.reason) && a.used == 0);
		CHECK(a.user == NULL && a.password == NULL);
		return 0;
	case SOCKS_OK:
		break;
	default:
		abort();
	}
	CHECK(buf[0] == 1 && a.reason == NULL);
	CHECK(a.user_len == buf[1] && a.user == buf + 2);
	CHECK(a.password_len == buf[2 + a.user_len] && a.password == buf + 3 + a.user_len);
	CHECK(a.used == 3 + a.user_len + a.password_len && a.used <= len && a.used <= AUTH_MAX);

	copy = malloc(a.used);
	CHECK(copy != NULL);
	memcpy(copy, buf, a.used);
	CHECK(socks5_parse_auth(copy, a.used, &again) == SOCKS_OK);
	CHECK(again.used == a.used && again.user_len == a.user_len &&
	      again.password_len == a.password_len && again.user == copy + 2 &&
	      memcmp(again.password, a.password, a.password_len) == 0);
	for (size_t i = 0; i < a.used; i++)
		CHECK(socks5_parse_auth(copy, i, &again) == SOCKS_NEED_MORE);
	free(copy);
	return a.used;
}

/* The greeting for a gateway that takes method; its length when accepted. */
static size_t check_greeting(const uint8_t *data, size_t size, uint8_t method)
{
	size_t used = 12345;
	const char *reason = "unset";

	switch (socks5_parse_greeting(data, size, method, &used, &reason)) {
	case SOCKS_NEED_MORE:
		CHECK(used == 0 && reason == NULL && size < 2 + 255);
		return 0;
	case SOCKS_BAD:
		CHECK(used == 0 && reason_ok(reason) && size >= 1);
		return 0;
	case SOCKS_OK:
		CHECK(reason == NULL && used >= 3 && used <= size);
		CHECK(data[0] == 5 && used == 2 + (size_t)data[1]);
		CHECK(memchr(data + 2, method, data[1]) != NULL);
		return used;
	default:
		abort();
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t used;

	/* without a token: greeting, request */
	used = check_greeting(data, size, SOCKS_METHOD_NONE);
	if (used)
		check_request(data + used, size - used);
	/* with a token: greeting, username/password, request */
	used = check_greeting(data, size, SOCKS_METHOD_USERPASS);
	if (used) {
		size_t a = check_auth(data + used, size - used);
		if (a)
			check_request(data + used + a, size - used - a);
	}
	check_auth(data, size);
	check_request(data, size);
	return 0;
}
