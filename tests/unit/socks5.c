/* tests/unit/socks5.c: the gateway's SOCKS5 parser (src/gateway/socks5.c):
 * greetings and requests accepted and refused with the reply code each
 * deserves, next to the same bytes fixed; every truncation of a valid
 * message waits for more, read from an exactly sized buffer so ASan
 * sees any read past the end; reasons never carry input. The
 * username/password method (RFC 1929) the same way. */
#include "gateway/socks5.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARKER "SECRETxq7Zk3"
#define N(a) (sizeof(a) / sizeof((a)[0]))

static bool reason_clean(const char *reason)
{
	if (!reason || !*reason || strstr(reason, MARKER))
		return false;
	for (const char *c = reason; *c; c++)
		if (*c < 0x20 || *c > 0x7e)
			return false;
	return true;
}

/* A heap copy of exactly len bytes (at least one, for malloc). */
static uint8_t *exact(const uint8_t *buf, size_t len)
{
	uint8_t *p = malloc(len ? len : 1);

	if (!p)
		abort();
	if (len)
		memcpy(p, buf, len);
	return p;
}

static enum socks_result greeting_for(uint8_t method, const uint8_t *buf, size_t len,
				      size_t *used, const char **reason)
{
	uint8_t *p = exact(buf, len);
	enum socks_result r = socks5_parse_greeting(p, len, method, used, reason);

	free(p);
	return r;
}

static enum socks_result greeting(const uint8_t *buf, size_t len, size_t *used,
				  const char **reason)
{
	return greeting_for(SOCKS_METHOD_NONE, buf, len, used, reason);
}

static enum socks_result auth(const uint8_t *buf, size_t len, struct socks_auth *a)
{
	uint8_t *p = exact(buf, len);
	enum socks_result r;

	memset(a, 0x5a, sizeof(*a));
	r = socks5_parse_auth(p, len, a);
	/* the spans point into the input: made relative before it goes */
	if (r == SOCKS_OK) {
		a->user = buf + (a->user - p);
		a->password = buf + (a->password - p);
	}
	free(p);
	return r;
}

static enum socks_result request(const uint8_t *buf, size_t len,
				 struct socks_request *req)
{
	uint8_t *p = exact(buf, len);
	enum socks_result r;

	memset(req, 0x5a, sizeof(*req));
	r = socks5_parse_request(p, len, req);
	free(p);
	return r;
}

static void greets(const char *label, const uint8_t *buf, size_t len, size_t used)
{
	size_t u = 99;
	const char *why = "unset";

	ok(greeting(buf, len, &u, &why) == SOCKS_OK && u == used && why == NULL,
	   "greeting accepted: %s", label);
}

static void refuses_greeting(const char *label, const uint8_t *buf, size_t len)
{
	size_t u = 99;
	const char *why = NULL;

	ok(greeting(buf, len, &u, &why) == SOCKS_BAD && reason_clean(why),
	   "greeting refused: %s (%s)", label, why ? why : "no reason");
}

static void test_greeting(void)
{
	static const uint8_t plain[] = { 5, 1, 0 };
	static const uint8_t two[] = { 5, 2, 2, 0 };
	static const uint8_t userpass[] = { 5, 1, 2 };
	static const uint8_t gssapi_userpass[] = { 5, 2, 1, 2 };
	static const uint8_t none[] = { 5, 0 };
	static const uint8_t v4[] = { 4, 1, 0, 80, 127, 0, 0, 1, 0 };
	static const uint8_t v4a[] = { 4, 1, 0, 80, 0, 0, 0, 1, 0, 'x', 0 };
	static const uint8_t http[] = "CONNECT example.com:443 HTTP/1.1\r\n\r\n";
	static const uint8_t pipelined[] = { 5, 1, 0, 5, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	uint8_t many[257];
	size_t u;
	const char *why;

	greets("no authentication", plain, sizeof(plain), 3);
	greets("user/password or none", two, sizeof(two), 4);
	greets("followed by the request", pipelined, sizeof(pipelined), 3);
	refuses_greeting("user/password only", userpass, sizeof(userpass));
	refuses_greeting("GSSAPI and user/password", gssapi_userpass,
			 sizeof(gssapi_userpass));
	refuses_greeting("no methods", none, sizeof(none));
	refuses_greeting("SOCKS4 CONNECT", v4, sizeof(v4));
	refuses_greeting("SOCKS4a CONNECT", v4a, sizeof(v4a));
	refuses_greeting("SOCKS4 first byte alone", v4, 1);
	refuses_greeting("HTTP", http, sizeof(http) - 1);
	refuses_greeting("version 0", (const uint8_t *)"\0\1\0", 3);

	/* 255 methods, no authentication last; then without it. */
	many[0] = 5;
	many[1] = 255;
	for (int i = 0; i < 255; i++)
		many[2 + i] = (uint8_t)(255 - i);
	many[256] = 0;
	greets("255 methods, none last", many, sizeof(many), 257);
	many[256] = 0x80;
	refuses_greeting("255 methods, none missing", many, sizeof(many));

	/* Every prefix waits. */
	many[256] = 0;
	{
		bool all = true;

		for (size_t i = 0; i < sizeof(many) && all; i++)
			all = greeting(many, i, &u, &why) == SOCKS_NEED_MORE && u == 0 &&
			      why == NULL;
		ok(all, "every prefix of a 257-byte greeting needs more");
		all = true;
		for (size_t i = 0; i < sizeof(two) && all; i++)
			all = greeting(two, i, &u, &why) == SOCKS_NEED_MORE;
		ok(all, "every prefix of a 4-byte greeting needs more");
	}
}

/* Greetings when the gateway has a token: username/password only. */
static void test_greeting_userpass(void)
{
	static const uint8_t userpass[] = { 5, 1, 2 };
	static const uint8_t both[] = { 5, 2, 0, 2 };
	static const uint8_t none[] = { 5, 1, 0 };
	static const uint8_t gssapi[] = { 5, 1, 1 };
	size_t u;
	const char *why;

	u = 99;
	why = "unset";
	ok(greeting_for(SOCKS_METHOD_USERPASS, userpass, sizeof(userpass), &u, &why) == SOCKS_OK &&
		   u == 3 && why == NULL,
	   "token: a greeting offering username/password is accepted");
	ok(greeting_for(SOCKS_METHOD_USERPASS, both, sizeof(both), &u, &why) == SOCKS_OK && u == 4,
	   "token: one offering none and username/password is accepted");
	ok(greeting_for(SOCKS_METHOD_USERPASS, none, sizeof(none), &u, &why) == SOCKS_BAD &&
		   reason_clean(why) && strcmp(why, "SOCKS5 client does not offer username/password") == 0,
	   "token: one offering no-authentication only is refused (%s)", why ? why : "no reason");
	ok(greeting_for(SOCKS_METHOD_USERPASS, gssapi, sizeof(gssapi), &u, &why) == SOCKS_BAD &&
		   reason_clean(why),
	   "token: one offering GSSAPI only is refused");
	ok(greeting_for(SOCKS_METHOD_NONE, none, sizeof(none), &u, &why) == SOCKS_OK,
	   "control: without a token the no-authentication greeting is accepted");
	ok(greeting_for(SOCKS_METHOD_NONE, userpass, sizeof(userpass), &u, &why) == SOCKS_BAD,
	   "control: without a token username/password alone is refused");
	{
		bool all = true;

		for (size_t i = 0; i < sizeof(both) && all; i++)
			all = greeting_for(SOCKS_METHOD_USERPASS, both, i, &u, &why) ==
				      SOCKS_NEED_MORE && u == 0;
		ok(all, "token: every prefix of a greeting needs more");
	}
}

/* RFC 1929: 1 ULEN UNAME PLEN PASSWD. Returns its length. */
static size_t auth_msg(uint8_t *out, const char *user, size_t ulen, const char *pw, size_t plen)
{
	out[0] = 1;
	out[1] = (uint8_t)ulen;
	memcpy(out + 2, user, ulen);
	out[2 + ulen] = (uint8_t)plen;
	memcpy(out + 3 + ulen, pw, plen);
	return 3 + ulen + plen;
}

static void auth_parses(const char *label, const uint8_t *buf, size_t len, size_t used,
			const char *user, size_t ulen, const char *pw, size_t plen)
{
	struct socks_auth a;

	if (!ok(auth(buf, len, &a) == SOCKS_OK, "auth accepted: %s", label))
		return;
	ok(a.used == used && a.user_len == ulen && a.password_len == plen &&
		   memcmp(a.user, user, ulen) == 0 && memcmp(a.password, pw, plen) == 0 &&
		   a.user == buf + 2 && a.password == buf + 3 + ulen && a.reason == NULL,
	   "  user, password and length");
}

static void test_auth(void)
{
	uint8_t b[600];
	char u255[255], p255[255];
	size_t n;
	struct socks_auth a;

	n = auth_msg(b, "agent", 5, "tok", 3);
	auth_parses("agent / tok", b, n, n, "agent", 5, "tok", 3);
	memcpy(b + n, "\x05\x01", 2);
	auth_parses("followed by the request", b, n + 2, n, "agent", 5, "tok", 3);
	n = auth_msg(b, "", 0, "tok", 3);
	auth_parses("empty user name", b, n, n, "", 0, "tok", 3);
	n = auth_msg(b, "agent", 5, "", 0);
	auth_parses("empty password", b, n, n, "agent", 5, "", 0);
	n = auth_msg(b, "", 0, "", 0);
	auth_parses("both empty", b, n, n, "", 0, "", 0);
	n = auth_msg(b, "a\0b", 3, MARKER "\x01\xff", strlen(MARKER) + 2);
	auth_parses("any bytes in both", b, n, n, "a\0b", 3, MARKER "\x01\xff", strlen(MARKER) + 2);
	memset(u255, 'u', sizeof(u255));
	memset(p255, 'p', sizeof(p255));
	n = auth_msg(b, u255, 255, p255, 255);
	auth_parses("255 and 255 bytes", b, n, n, u255, 255, p255, 255);
	{
		bool all = true;
		size_t at = 0;

		for (size_t i = 0; i < n && all; i++) {
			all = auth(b, i, &a) == SOCKS_NEED_MORE && a.used == 0 && a.reason == NULL;
			at = i;
		}
		if (!ok(all, "every prefix of a 513-byte message needs more"))
			diag("%zu bytes did not", at);
	}
	n = auth_msg(b, "agent", 5, "tok", 3);
	{
		unsigned wrong = 0;

		for (unsigned v = 0; v < 256; v++) {
			if (v == 1)
				continue;
			b[0] = (uint8_t)v;
			if (auth(b, n, &a) != SOCKS_BAD || !reason_clean(a.reason) || a.used != 0 ||
			    auth(b, 1, &a) != SOCKS_BAD)
				wrong++;
		}
		is_int(wrong, 0, "every version but 1 is refused, at the first byte too");
	}
	b[0] = 5;
	ok(auth(b, 1, &a) == SOCKS_BAD && reason_clean(a.reason),
	   "a second SOCKS5 greeting in its place: refused at once");
	b[0] = 1;
	ok(auth(b, n, &a) == SOCKS_OK, "control: version 1 accepted");
}

static void test_auth_reply(void)
{
	uint8_t out[2] = { 0xaa, 0xaa };

	is_int(socks5_format_auth_reply(out, 1), 2, "auth reply is 2 bytes");
	ok(out[0] == 1 && out[1] == 0, "  granted: 1 0");
	socks5_format_auth_reply(out, 0);
	ok(out[0] == 1 && out[1] == 1, "  refused: 1 1");
}

static void accepts(const char *label, const uint8_t *buf, size_t len,
		    size_t used, const char *host, int is_ip, unsigned port)
{
	struct socks_request r;

	if (!ok(request(buf, len, &r) == SOCKS_OK, "request accepted: %s", label)) {
		diag("reply %d, reason %s", r.reply, r.reason ? r.reason : "(none)");
		return;
	}
	is_str(r.host, host, "  host");
	is_int(r.is_ip, is_ip, "  is_ip");
	is_int(r.port, port, "  port");
	is_int(r.used, used, "  used");
}

static void refuses(const char *label, const uint8_t *buf, size_t len,
		    enum socks_reply reply)
{
	struct socks_request r;
	enum socks_result res = request(buf, len, &r);

	if (!ok(res == SOCKS_BAD && r.reply == reply && reason_clean(r.reason),
		"request refused with reply %d: %s", reply, label))
		diag("result %d, reply %d, reason %s", res, r.reply,
		     res == SOCKS_BAD && r.reason ? r.reason : "(none)");
}

/* A name request: 5 1 0 3 LEN NAME PORT(2). Returns its length. */
static size_t name_req(uint8_t *out, const char *name, size_t n, unsigned port)
{
	out[0] = 5;
	out[1] = 1;
	out[2] = 0;
	out[3] = 3;
	out[4] = (uint8_t)n;
	memcpy(out + 5, name, n);
	out[5 + n] = (uint8_t)(port >> 8);
	out[6 + n] = (uint8_t)port;
	return 7 + n;
}

static void accepts_name(const char *name, const char *host, int is_ip)
{
	uint8_t buf[300];
	size_t n = name_req(buf, name, strlen(name), 443);

	accepts(name, buf, n, n, host, is_ip, 443);
}

static void refuses_name(const char *label, const char *name, size_t len)
{
	uint8_t buf[300];

	refuses(label, buf, name_req(buf, name, len, 443), SOCKS_GENERAL_FAILURE);
}

static void test_addresses(void)
{
	static const uint8_t v4[] = { 5, 1, 0, 1, 93, 184, 216, 34, 0, 80 };
	static const uint8_t v6[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 1, 0x01, 0xbb };
	static const uint8_t mapped[] = { 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0,
					  0, 0, 0xff, 0xff, 127, 0, 0, 1, 0xff, 0xff };
	static const uint8_t v4_more[] = { 5, 1, 0, 1, 10, 0, 0, 1, 0, 80, 'G', 'E' };

	accepts("IPv4", v4, sizeof(v4), 10, "93.184.216.34", 4, 80);
	accepts("IPv6", v6, sizeof(v6), 22, "2001:db8::1", 6, 443);
	accepts("IPv4-mapped IPv6", mapped, sizeof(mapped), 22, "::ffff:127.0.0.1", 6,
		65535);
	accepts("IPv4, then data", v4_more, sizeof(v4_more), 10, "10.0.0.1", 4, 80);

	accepts_name("example.com", "example.com", 0);
	accepts_name("Example.COM.", "example.com", 0);
	accepts_name("a..", "a.", 0);
	accepts_name("x", "x", 0);
	accepts_name("_srv-1.Example", "_srv-1.example", 0);
	/* An IP literal's text is that literal, canonical. */
	accepts_name("127.0.0.1", "127.0.0.1", 4);
	accepts_name("::1", "::1", 6);
	accepts_name("::FFFF:7F00:1", "::ffff:127.0.0.1", 6);
	accepts_name("2001:DB8:0:0::1", "2001:db8::1", 6);
	/* Other spellings stay names, for the allowlist to judge. */
	accepts_name("127.1", "127.1", 0);
	accepts_name("0x7f.0.0.1", "0x7f.0.0.1", 0);
	accepts_name("[::1]", "[::1]", 0);
	{
		char name[256];

		memset(name, 'a', 255);
		name[255] = '\0';
		accepts_name(name, name, 0);
	}

	/* Negative control for each: example.com above. */
	refuses_name("empty name", "", 0);
	refuses_name("only a dot", ".", 1);
	refuses_name("NUL in the name", "example.com\0evil.com", 20);
	refuses_name("NUL ending the name", "example.com\0", 12);
	refuses_name("control byte in the name", "exa\x01mple.com", 12);
	refuses_name("escape sequence in the name", "\x1b[31mexample.com", 16);
	refuses_name("DEL in the name", "example.com\x7f", 12);
	refuses_name("high byte in the name", "caf\xc3\xa9.com", 9);
	refuses_name("space in the name", "exa mple.com", 12);
	refuses_name("CR LF in the name", "example.com\r\nX: y", 17);
}

static void test_fields(void)
{
	static const uint8_t ok_req[] = { 5, 1, 0, 1, 1, 2, 3, 4, 0, 80 };
	uint8_t b[sizeof(ok_req)];

	accepts("the control", ok_req, sizeof(ok_req), 10, "1.2.3.4", 4, 80);
	{
		unsigned wrong = 0;

		for (unsigned cmd = 0; cmd < 256; cmd++) {
			struct socks_request r;

			if (cmd == 1)
				continue;
			memcpy(b, ok_req, sizeof(b));
			b[1] = (uint8_t)cmd;
			if (request(b, sizeof(b), &r) != SOCKS_BAD ||
			    r.reply != SOCKS_CMD_UNSUPPORTED || !reason_clean(r.reason))
				wrong++;
		}
		is_int(wrong, 0, "every command but CONNECT: command not supported");
	}
	memcpy(b, ok_req, sizeof(b));
	b[1] = 2;
	refuses("BIND", b, sizeof(b), SOCKS_CMD_UNSUPPORTED);
	refuses("BIND, two bytes read", b, 2, SOCKS_CMD_UNSUPPORTED);
	b[1] = 3;
	refuses("UDP ASSOCIATE", b, sizeof(b), SOCKS_CMD_UNSUPPORTED);
	b[1] = 9;
	refuses("unknown command", b, sizeof(b), SOCKS_CMD_UNSUPPORTED);

	memcpy(b, ok_req, sizeof(b));
	b[2] = 1;
	refuses("reserved byte 1", b, sizeof(b), SOCKS_GENERAL_FAILURE);
	b[2] = 0xff;
	refuses("reserved byte 255, three bytes read", b, 3, SOCKS_GENERAL_FAILURE);

	memcpy(b, ok_req, sizeof(b));
	for (unsigned atyp = 0; atyp < 8; atyp++) {
		char label[32];

		if (atyp == 1 || atyp == 3 || atyp == 4)
			continue;
		b[3] = (uint8_t)atyp;
		snprintf(label, sizeof(label), "address type %u", atyp);
		refuses(label, b, sizeof(b), SOCKS_ATYP_UNSUPPORTED);
	}
	b[3] = 0xff;
	refuses("address type 255, four bytes read", b, 4, SOCKS_ATYP_UNSUPPORTED);

	memcpy(b, ok_req, sizeof(b));
	b[8] = 0;
	b[9] = 0;
	refuses("port 0", b, sizeof(b), SOCKS_GENERAL_FAILURE);
	b[8] = 0xff;
	b[9] = 0xff;
	accepts("port 65535", b, sizeof(b), 10, "1.2.3.4", 4, 65535);
	b[8] = 0;
	b[9] = 1;
	accepts("port 1", b, sizeof(b), 10, "1.2.3.4", 4, 1);
	{
		uint8_t nb[300];
		size_t n = name_req(nb, "example.com", 11, 0);

		refuses("name, port 0", nb, n, SOCKS_GENERAL_FAILURE);
	}

	memcpy(b, ok_req, sizeof(b));
	b[0] = 4;
	refuses("SOCKS4 version byte", b, sizeof(b), SOCKS_GENERAL_FAILURE);
	refuses("SOCKS4 version byte alone", b, 1, SOCKS_GENERAL_FAILURE);
	b[0] = 0x47;	/* 'G' */
	refuses("HTTP", b, sizeof(b), SOCKS_GENERAL_FAILURE);
}

/* Every truncation of a valid request waits, the whole is accepted. */
static void truncated(const char *label, const uint8_t *buf, size_t len)
{
	struct socks_request r;
	bool all = true;
	size_t at = 0;

	for (size_t i = 0; i < len && all; i++) {
		all = request(buf, i, &r) == SOCKS_NEED_MORE;
		at = i;
	}
	if (!ok(all, "every truncation needs more: %s", label))
		diag("%zu bytes did not", at);
	ok(request(buf, len, &r) == SOCKS_OK && r.used == len, "  whole: accepted");
}

static void test_truncated(void)
{
	static const uint8_t v4[] = { 5, 1, 0, 1, 93, 184, 216, 34, 0, 80 };
	static const uint8_t v6[] = { 5, 1, 0, 4, 0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
				      0, 0, 0, 0, 0, 0, 0, 1, 0x01, 0xbb };
	uint8_t name[300];
	char long_name[256];

	truncated("IPv4", v4, sizeof(v4));
	truncated("IPv6", v6, sizeof(v6));
	truncated("name", name, name_req(name, "example.com", 11, 443));
	memset(long_name, 'b', 255);
	truncated("255-byte name", name, name_req(name, long_name, 255, 443));
}

static void test_reasons_quote_nothing(void)
{
	uint8_t buf[300];
	struct socks_request r;
	const char *name = MARKER "\x01";

	ok(request(buf, name_req(buf, name, strlen(name), 443), &r) == SOCKS_BAD &&
		   reason_clean(r.reason),
	   "a refused name is not quoted in the reason");
	ok(request(buf, name_req(buf, MARKER, strlen(MARKER), 0), &r) == SOCKS_BAD &&
		   reason_clean(r.reason),
	   "port 0 to a name: the name is not quoted");
}

static void test_reply(void)
{
	static const uint8_t want[10] = { 5, 0x07, 0, 1, 0, 0, 0, 0, 0, 0 };
	uint8_t out[10];

	memset(out, 0xaa, sizeof(out));
	is_int(socks5_format_reply(out, SOCKS_CMD_UNSUPPORTED), 10, "reply is 10 bytes");
	ok(memcmp(out, want, sizeof(want)) == 0, "  VER 5, REP, RSV 0, IPv4 0.0.0.0:0");
	socks5_format_reply(out, SOCKS_SUCCEEDED);
	ok(out[0] == 5 && out[1] == 0 && out[3] == 1, "success reply");
}

int main(void)
{
	test_greeting();
	test_greeting_userpass();
	test_auth();
	test_auth_reply();
	test_addresses();
	test_fields();
	test_truncated();
	test_reasons_quote_nothing();
	test_reply();
	return done_testing();
}
