/* tests/unit/host.c: the policy's host entries (src/policy/host.c):
 * accepted forms and their canonical text, every refusal next to a nearby
 * form that is accepted, and the match and covers truth tables. */
#include "policy/host.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input as a printable test description: TAP lines must not carry
 * control characters or raw bytes. Returns buf. */
static const char *shown(const char *text, size_t len, char *buf, size_t size)
{
	size_t o = 0;

	for (size_t i = 0; i < len && o + 5 < size; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x20 && c < 0x7f)
			buf[o++] = (char)c;
		else
			o += (size_t)snprintf(buf + o, size - o, "\\x%02x", c);
	}
	buf[o] = '\0';
	return buf;
}

/* Parses text, checks it is accepted with the given kind and canonical
 * text, and that the canonical text parses back to itself. */
static void accepts(const char *text, enum host_kind kind, const char *want)
{
	struct host_pattern h, again;
	const char *why = "unset";
	char *got = NULL, *got2 = NULL;
	int r = host_parse(text, strlen(text), &h, &why);

	if (!ok(r == 0 && why == NULL, "accepted: %s", text)) {
		diag("reason: %s", why ? why : "(null)");
		return;
	}
	is_int(h.kind, kind, "  kind of %s", text);
	got = host_format(&h);
	is_str(got, want, "  canonical text of %s", text);
	r = got ? host_parse(got, strlen(got), &again, &why) : -1;
	got2 = r == 0 ? host_format(&again) : NULL;
	is_str(got2, want, "  canonical text of %s is stable", text);
	if (r == 0)
		host_pattern_clear(&again);
	free(got);
	free(got2);
	host_pattern_clear(&h);
	ok(h.name == NULL && h.port == 0, "  clear zeroes %s", text);
}

/* Parses len bytes of text and checks it is refused with a reason that
 * holds nothing of the input and leaves nothing allocated. */
static void refuses_n(const char *text, size_t len, const char *label)
{
	struct host_pattern h;
	const char *why = NULL;
	int r;

	memset(&h, 0x5a, sizeof(h));
	r = host_parse(text, len, &h, &why);
	ok(r == -1 && why != NULL && h.name == NULL, "refused: %s (%s)", label,
	   why ? why : "no reason");
	host_pattern_clear(&h);
}

static void refuses(const char *text)
{
	char buf[400];

	refuses_n(text, strlen(text), shown(text, strlen(text), buf, sizeof(buf)));
}

static void refuses_because(const char *text, const char *reason)
{
	struct host_pattern h;
	const char *why = NULL;
	char buf[400];

	if (!ok(host_parse(text, strlen(text), &h, &why) == -1 && why &&
			strcmp(why, reason) == 0,
		"refused: %s, because %s",
		shown(text, strlen(text), buf, sizeof(buf)), reason))
		diag("reason given: %s", why ? why : "(none)");
	host_pattern_clear(&h);
}

static struct host_pattern entry(const char *text)
{
	struct host_pattern h;
	const char *why;

	if (host_parse(text, strlen(text), &h, &why) < 0) {
		diag("test entry %s refused: %s", text, why);
		abort();
	}
	return h;
}

static void test_names(void)
{
	accepts("example.com", HOST_NAME, "example.com");
	accepts("Example.COM.", HOST_NAME, "example.com");
	accepts("example.com:443", HOST_NAME, "example.com:443");
	accepts("EXAMPLE.com.:8080", HOST_NAME, "example.com:8080");
	accepts("localhost", HOST_NAME, "localhost");
	accepts("a-b_c.x1.example.org", HOST_NAME, "a-b_c.x1.example.org");
	accepts("_dmarc.example.com", HOST_NAME, "_dmarc.example.com");
	accepts("1.2.3.example", HOST_NAME, "1.2.3.example");
	accepts("123.example.com", HOST_NAME, "123.example.com");
	accepts("xn--bcher-kva.example", HOST_NAME, "xn--bcher-kva.example");
	accepts("h:1", HOST_NAME, "h:1");
	accepts("h:65535", HOST_NAME, "h:65535");
}

static void test_name_lengths(void)
{
	char label[80], name[300];

	/* 63-character label accepted, 64 refused. */
	memset(label, 'a', 63);
	strcpy(label + 63, ".com");
	accepts(label, HOST_NAME, label);
	memset(label, 'a', 64);
	strcpy(label + 64, ".com");
	refuses_because(label, "host name has a label longer than 63 characters");

	/* 253 characters accepted (with or without the trailing dot), 254
	 * refused: four 61-byte labels, dots, then a tail. */
	memset(name, 'a', sizeof(name));
	for (int i = 61; i < 253; i += 62)
		name[i] = '.';
	name[252] = 'b';
	name[253] = '\0';
	accepts(name, HOST_NAME, name);
	name[253] = '.';
	name[254] = '\0';
	{
		char want[254];

		memcpy(want, name, 253);
		want[253] = '\0';
		accepts(name, HOST_NAME, want);
	}
	name[253] = 'b';
	refuses_because(name, "host name is longer than 253 characters");
	memset(name, 'a', sizeof(name) - 1);
	name[sizeof(name) - 1] = '\0';
	refuses_because(name, "host is too long");
}

static void test_wildcards(void)
{
	accepts("*.example.com", HOST_WILDCARD, "*.example.com");
	accepts("*.Example.COM.:443", HOST_WILDCARD, "*.example.com:443");
	accepts("*.GitHubUserContent.com", HOST_WILDCARD,
		"*.githubusercontent.com");
	accepts("*.github.io", HOST_WILDCARD, "*.github.io");
	accepts("*.example.co.uk", HOST_WILDCARD, "*.example.co.uk");
	accepts("*.a.b.example.com", HOST_WILDCARD, "*.a.b.example.com");
	accepts("*.city.kawasaki.jp", HOST_WILDCARD, "*.city.kawasaki.jp");

	refuses_because("*", "\"*\" alone would allow every host");
	refuses_because("*:443", "\"*\" alone would allow every host");
	refuses_because("*.com", "wildcard domain needs at least two labels");
	refuses_because("*.co.uk", "wildcard over a public suffix");
	refuses_because("*.com.au", "wildcard over a public suffix");
	refuses_because("*.CO.UK.", "wildcard over a public suffix");
	refuses_because("*.x.kawasaki.jp", "wildcard over a public suffix");
	refuses("*.localhost");
	refuses("*.");
	refuses("*..com");
	refuses("*.example.com..");
	refuses("a*.b.com");
	refuses("*foo.com");
	refuses("x.*.com");
	refuses("**.com");
	refuses("*.*.example.com");
	refuses("example.*");
	refuses("*.example.com:0");
	refuses("*.1.2.3");
}

static void test_ips(void)
{
	accepts("1.2.3.4", HOST_IPV4, "1.2.3.4");
	accepts("1.2.3.4:80", HOST_IPV4, "1.2.3.4:80");
	accepts("0.0.0.0", HOST_IPV4, "0.0.0.0");
	accepts("255.255.255.255:65535", HOST_IPV4, "255.255.255.255:65535");
	accepts("::1", HOST_IPV6, "::1");
	accepts("::0001", HOST_IPV6, "::1");
	accepts("[::1]", HOST_IPV6, "::1");
	accepts("[::1]:443", HOST_IPV6, "[::1]:443");
	accepts("2001:DB8:0:0:0:0:0:1", HOST_IPV6, "2001:db8::1");
	accepts("[2001:db8::a]:8443", HOST_IPV6, "[2001:db8::a]:8443");
	accepts("::ffff:1.2.3.4", HOST_IPV6, "::ffff:1.2.3.4");
	accepts("[::FFFF:1.2.3.4]:80", HOST_IPV6, "[::ffff:1.2.3.4]:80");

	/* IPv4 spellings that are not the dotted quad: refused as
	 * addresses and as names. */
	refuses("1.2.3");
	refuses("1.2.3.");
	refuses("0x7f.1");
	refuses("0x7f");
	refuses("0x7f000001");
	refuses("2130706433");
	refuses("01.2.3.4");
	refuses("127.1");
	refuses("1.2.3.4.5");
	refuses("256.1.1.1");
	refuses("1.2.3.4.");
	refuses_because("1.2.3.4.5",
			"not a valid host name (numeric, like an IPv4 address)");

	refuses_because("[1.2.3.4]", "brackets are for IPv6 addresses only");
	refuses_because("[1.2.3.4]:80", "brackets are for IPv6 addresses only");
	refuses_because("::1%eth0", "IPv6 zone ids are not allowed");
	refuses_because("[fe80::1%eth0]:80", "IPv6 zone ids are not allowed");
	refuses_because("::1:", "not a valid IPv6 address");
	refuses("[::1]:");
	refuses("[::1]80");
	refuses("[::1");
	refuses("::1]");
	refuses("[]");
	refuses("[example.com]");
	refuses("[::1]:0");
	refuses("[::1]:65536");
	refuses("1::2::3");
	refuses("a:b:c");
}

static void test_ports(void)
{
	/* Negative controls for these: h:1, h:65535, example.com:443. */
	refuses_because("example.com:", "empty port after ':'");
	refuses_because("example.com:0", "port 0 is out of range 1-65535");
	refuses_because("example.com:080", "port has a leading zero");
	refuses_because("example.com:00", "port has a leading zero");
	refuses_because("example.com:65536", "port is out of range 1-65535");
	refuses_because("example.com:99999", "port is out of range 1-65535");
	refuses_because("example.com:100000", "port is out of range 1-65535");
	refuses_because("example.com:18446744073709551617",
			"port is out of range 1-65535");
	refuses_because("example.com:+443", "port is not a decimal number");
	refuses_because("example.com:-1", "port is not a decimal number");
	refuses_because("example.com:https", "port is not a decimal number");
	refuses_because("example.com:44 3", "port is not a decimal number");
	refuses_because(":443", "empty host name");
}

static void test_text(void)
{
	/* Negative control for all of these: example.com (test_names). */
	refuses_because("", "empty host");
	refuses_n("example.com\0evil.com", 20, "example.com NUL evil.com");
	refuses_n("example.com\0", 12, "example.com NUL");
	refuses_because(" example.com",
			"host has leading or trailing whitespace");
	refuses_because("example.com\n",
			"host has leading or trailing whitespace");
	refuses_because("example.com\t",
			"host has leading or trailing whitespace");
	refuses_because("exa\tmple.com", "host contains a control character");
	refuses_because("exa\x7fmple.com", "host contains a control character");
	refuses("exa mple.com");
	refuses_because("b\xc3\xbc" "cher.example",
			"host is not ASCII (write IDNs in their xn-- form)");
	refuses_because("example.com\x80",
			"host is not ASCII (write IDNs in their xn-- form)");
	refuses_because("https://example.com",
			"host is a URL; give the host name only");
	refuses_because("https://user:pw@example.com/",
			"host is a URL; give the host name only");
	refuses_because("example.com/", "host carries a path");
	refuses_because("example.com/path", "host carries a path");
	refuses_because("example.com?q=1", "host carries a query");
	refuses_because("example.com#top", "host carries a fragment");
	refuses_because("user@example.com", "host carries userinfo");
	refuses_because("user:hunter2@example.com", "host carries userinfo");
	refuses_because("@example.com", "host carries userinfo");

	/* Labels. */
	refuses_because("-example.com",
			"host name label starts or ends with '-'");
	refuses_because("example-.com",
			"host name label starts or ends with '-'");
	refuses_because("example..com", "host name has an empty label");
	refuses_because(".example.com", "host name has an empty label");
	refuses_because("example.com..", "host name has an empty label");
	refuses_because(".", "empty host name");
	refuses("exa!mple.com");
	refuses("exa%mple.com");
	refuses("exa[mple.com");
	refuses("example.com]");
	refuses("example.com:443:1");
	accepts("e-x.com", HOST_NAME, "e-x.com");
}

/* Reasons are fixed strings: nothing of the input, whatever it held. */
static void test_reasons_quote_nothing(void)
{
	static const char *const inputs[] = {
		"user:hunter2@example.com",
		"https://user:hunter2@example.com/",
		"hunter2.example.com:hunter2",
		"hunter2..example.com",
		"*.hunter2",
		"[hunter2]",
		" hunter2.example.com",
	};

	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		struct host_pattern h;
		const char *why = NULL;
		int r = host_parse(inputs[i], strlen(inputs[i]), &h, &why);

		ok(r == -1 && why && !strstr(why, "hunter2") &&
			   !strstr(why, "example"),
		   "reason for refused entry %zu quotes none of it", i);
		host_pattern_clear(&h);
	}
}

static void test_normalise(void)
{
	char a[] = "WWW.Example.COM.";
	char b[] = "example.com..";
	char c[] = "1.2.3.4";
	char d[] = "0x7f.1";
	char e[] = "b\xc3\xbc" "cher.example";
	char f[] = "[::1]";
	char g[] = "";

	is_int(host_normalise_name(a), 0, "normalise WWW.Example.COM.");
	is_str(a, "www.example.com", "  lower case, trailing dot dropped");
	is_int(host_normalise_name(b), -1, "normalise drops only one dot");
	is_int(host_normalise_name(c), -1, "an IPv4 literal is not a name");
	is_int(host_normalise_name(d), -1, "an IPv4 spelling is not a name");
	is_int(host_normalise_name(e), -1, "a non-ASCII name is refused");
	is_int(host_normalise_name(f), -1, "an IPv6 literal is not a name");
	is_int(host_normalise_name(g), -1, "an empty name is refused");
	is_int(host_normalise_name(NULL), -1, "NULL is refused");
}

static void test_match_names(void)
{
	struct host_pattern n = entry("example.com");
	struct host_pattern np = entry("example.com:443");
	struct host_pattern w = entry("*.example.com");
	struct host_pattern wp = entry("*.example.com:8443");

	ok(host_match(&n, "example.com", 443), "name matches itself");
	ok(host_match(&n, "example.com", 1), "name without port: any port");
	ok(host_match(&n, "EXAMPLE.Com.", 80), "name matches case/dot spelling");
	ok(host_match(&n, "example.com.", 80), "name matches trailing dot");
	ok(!host_match(&n, "example.com..", 80), "two trailing dots: no match");
	ok(!host_match(&n, "www.example.com", 80), "name: no subdomains");
	ok(!host_match(&n, "badexample.com", 80), "name: no suffix match");
	ok(!host_match(&n, "example.co", 80), "name: no prefix match");
	ok(!host_match(&n, "example.com:80", 80), "host with a port: no match");
	ok(!host_match(&n, "", 80), "empty host: no match");
	ok(!host_match(&n, NULL, 80), "NULL host: no match");
	ok(host_match(&np, "Example.com.", 443), "name:port matches its port");
	ok(!host_match(&np, "example.com", 80), "name:port: other port no");
	ok(!host_match(&np, "example.com", 0), "name:port: unknown port no");

	ok(host_match(&w, "a.example.com", 443), "wildcard: subdomain");
	ok(host_match(&w, "a.b.example.com", 443), "wildcard: deeper");
	ok(host_match(&w, "A.B.EXAMPLE.COM.", 443), "wildcard: case/dot");
	ok(!host_match(&w, "example.com", 443), "wildcard: not the domain");
	ok(!host_match(&w, "Example.com.", 443), "wildcard: nor its spellings");
	ok(!host_match(&w, "aexample.com", 443), "wildcard: label boundary");
	ok(!host_match(&w, ".example.com", 443), "wildcard: empty label");
	ok(!host_match(&w, "example.com.evil.net", 443), "wildcard: suffix only");
	ok(host_match(&wp, "a.example.com", 8443), "wildcard:port its port");
	ok(!host_match(&wp, "a.example.com", 443), "wildcard:port other port");

	host_pattern_clear(&n);
	host_pattern_clear(&np);
	host_pattern_clear(&w);
	host_pattern_clear(&wp);
}

static void test_match_ips(void)
{
	struct host_pattern v4 = entry("1.2.3.4");
	struct host_pattern v4p = entry("1.2.3.4:80");
	struct host_pattern v6 = entry("::1");
	struct host_pattern v6p = entry("[::1]:443");
	struct host_pattern map = entry("::ffff:1.2.3.4");
	struct host_pattern n = entry("localhost");
	struct host_pattern w = entry("*.example.com");

	ok(host_match(&v4, "1.2.3.4", 5), "IPv4 matches itself");
	ok(!host_match(&v4, "1.2.3.5", 5), "IPv4: other address no");
	ok(!host_match(&v4, "01.2.3.4", 5), "IPv4: octal spelling no");
	ok(!host_match(&v4, "1.2.3.4.", 5), "IPv4: trailing dot no");
	ok(!host_match(&v4, "::ffff:1.2.3.4", 5), "IPv4: mapped IPv6 no");
	ok(!host_match(&v4, "[::ffff:1.2.3.4]", 5), "IPv4: bracketed mapped no");
	ok(host_match(&v4p, "1.2.3.4", 80), "IPv4:port its port");
	ok(!host_match(&v4p, "1.2.3.4", 81), "IPv4:port other port no");

	ok(host_match(&v6, "::1", 1), "IPv6 matches itself");
	ok(host_match(&v6, "[::1]", 1), "IPv6 matches bracketed");
	ok(host_match(&v6, "0:0:0:0:0:0:0:1", 1), "IPv6 long spelling");
	ok(host_match(&v6, "::0001", 1), "IPv6 leading zeros spelling");
	ok(!host_match(&v6, "::1%lo", 1), "IPv6 with zone no");
	ok(!host_match(&v6, "[::1", 1), "IPv6 half bracket no");
	ok(!host_match(&v6, "::2", 1), "IPv6 other address no");
	ok(!host_match(&v6, "localhost", 1), "a name never matches IPv6");
	ok(host_match(&v6p, "[::1]", 443), "[IPv6]:port its port");
	ok(!host_match(&v6p, "::1", 80), "[IPv6]:port other port no");
	ok(host_match(&map, "::FFFF:1.2.3.4", 1), "mapped matches itself");
	ok(host_match(&map, "::ffff:102:304", 1), "mapped hex spelling");
	ok(!host_match(&map, "1.2.3.4", 1), "mapped: plain IPv4 no");

	ok(!host_match(&n, "127.0.0.1", 1), "IPv4 literal never matches name");
	ok(!host_match(&n, "::1", 1), "IPv6 literal never matches name");
	ok(!host_match(&w, "1.2.3.4", 1), "IP literal never matches wildcard");
	ok(!host_match(&w, "[::1]", 1), "IPv6 never matches wildcard");

	host_pattern_clear(&v4);
	host_pattern_clear(&v4p);
	host_pattern_clear(&v6);
	host_pattern_clear(&v6p);
	host_pattern_clear(&map);
	host_pattern_clear(&n);
	host_pattern_clear(&w);
}

struct covers_case {
	const char *a, *b;
	bool want;
};

static void test_covers(void)
{
	static const struct covers_case cases[] = {
		{ "example.com", "example.com", true },
		{ "example.com", "Example.COM.:443", true },
		{ "example.com:443", "example.com:443", true },
		{ "example.com:443", "example.com", false },
		{ "example.com:443", "example.com:80", false },
		{ "example.com", "www.example.com", false },
		{ "example.com", "*.example.com", false },
		{ "*.example.com", "a.example.com", true },
		{ "*.example.com", "a.b.example.com:443", true },
		{ "*.example.com", "example.com", false },
		{ "*.example.com", "badexample.com", false },
		{ "*.example.com", "*.example.com", true },
		{ "*.example.com", "*.a.example.com:80", true },
		{ "*.a.example.com", "*.example.com", false },
		{ "*.example.com:443", "a.example.com", false },
		{ "*.example.com:443", "a.example.com:443", true },
		{ "*.example.com", "1.2.3.4", false },
		{ "example.com", "1.2.3.4", false },
		{ "1.2.3.4", "1.2.3.4:80", true },
		{ "1.2.3.4:80", "1.2.3.4", false },
		{ "1.2.3.4", "1.2.3.5", false },
		{ "1.2.3.4", "::ffff:1.2.3.4", false },
		{ "::ffff:1.2.3.4", "1.2.3.4", false },
		{ "::1", "[::0001]:443", true },
		{ "[::1]:443", "::1", false },
		{ "::1", "::2", false },
		{ "::1", "localhost", false },
		{ "localhost", "::1", false },
		{ "1.2.3.4", "*.example.com", false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct host_pattern a = entry(cases[i].a);
		struct host_pattern b = entry(cases[i].b);

		ok(host_covers(&a, &b) == cases[i].want, "%s %s %s", cases[i].a,
		   cases[i].want ? "covers" : "does not cover", cases[i].b);
		host_pattern_clear(&a);
		host_pattern_clear(&b);
	}
	ok(!host_covers(NULL, NULL), "covers: NULL entries cover nothing");
}

static void test_format_edges(void)
{
	struct host_pattern h;

	memset(&h, 0, sizeof(h));
	ok(host_format(&h) == NULL, "format of a cleared entry is NULL");
	ok(host_format(NULL) == NULL, "format of NULL is NULL");
	host_pattern_clear(NULL);
	ok(!host_match(&h, "example.com", 1), "a cleared entry matches nothing");
	ok(host_parse(NULL, 0, &h, NULL) == -1, "NULL text refused");
	ok(host_parse("example.com", 11, &h, NULL) == 0 && h.name &&
		   strcmp(h.name, "example.com") == 0,
	   "parse takes a NULL reason pointer");
	host_pattern_clear(&h);
	ok(host_parse("example.com:443x", 11, &h, NULL) == 0 && h.port == 0,
	   "parse reads only len bytes");
	host_pattern_clear(&h);
}

int main(void)
{
	test_names();
	test_name_lengths();
	test_wildcards();
	test_ips();
	test_ports();
	test_text();
	test_reasons_quote_nothing();
	test_normalise();
	test_match_names();
	test_match_ips();
	test_covers();
	test_format_edges();
	return done_testing();
}
