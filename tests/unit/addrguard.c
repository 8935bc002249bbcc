/* addrguard.c (test): every address class at both edges of its range, the
 * IPv4 forms carried in IPv6 (mapped, compatible, translated, NAT64, 6to4,
 * Teredo) with a public control for each, this host's own addresses, and
 * what the operator's ranges open and never open. */
#include "gateway/addrguard.h"
#include "tap.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <string.h>
#include <sys/un.h>

static const char *const class_names[] = {
	[ADDR_PUBLIC] = "public",	[ADDR_LOOPBACK] = "loopback",
	[ADDR_PRIVATE] = "private",	[ADDR_LINK_LOCAL] = "link-local",
	[ADDR_UNIQUE_LOCAL] = "ula",	[ADDR_SHARED] = "shared",
	[ADDR_UNSPECIFIED] = "unspec",	[ADDR_MULTICAST] = "multicast",
	[ADDR_BROADCAST] = "broadcast", [ADDR_THIS_NETWORK] = "this-net",
	[ADDR_RESERVED] = "reserved",	[ADDR_HOST_OWN] = "host-own",
};

struct ccase {
	const char *addr;
	enum addr_class want;
};

static const struct ccase v4_cases[] = {
	{ "0.0.0.0", ADDR_UNSPECIFIED },
	{ "0.0.0.1", ADDR_THIS_NETWORK },
	{ "0.255.255.255", ADDR_THIS_NETWORK },
	{ "1.0.0.0", ADDR_PUBLIC },
	{ "9.255.255.255", ADDR_PUBLIC },
	{ "10.0.0.0", ADDR_PRIVATE },
	{ "10.255.255.255", ADDR_PRIVATE },
	{ "11.0.0.0", ADDR_PUBLIC },
	{ "100.63.255.255", ADDR_PUBLIC },
	{ "100.64.0.0", ADDR_SHARED },
	{ "100.127.255.255", ADDR_SHARED },
	{ "100.128.0.0", ADDR_PUBLIC },
	{ "126.255.255.255", ADDR_PUBLIC },
	{ "127.0.0.0", ADDR_LOOPBACK },
	{ "127.0.0.1", ADDR_LOOPBACK },
	{ "127.0.0.2", ADDR_LOOPBACK },
	{ "127.255.255.255", ADDR_LOOPBACK },
	{ "128.0.0.0", ADDR_PUBLIC },
	{ "169.253.255.255", ADDR_PUBLIC },
	{ "169.254.0.0", ADDR_LINK_LOCAL },
	{ "169.254.169.254", ADDR_LINK_LOCAL },
	{ "169.254.255.255", ADDR_LINK_LOCAL },
	{ "169.255.0.0", ADDR_PUBLIC },
	{ "172.15.255.255", ADDR_PUBLIC },
	{ "172.16.0.0", ADDR_PRIVATE },
	{ "172.31.255.255", ADDR_PRIVATE },
	{ "172.32.0.0", ADDR_PUBLIC },
	{ "191.255.255.255", ADDR_PUBLIC },
	{ "192.0.0.0", ADDR_RESERVED },
	{ "192.0.0.255", ADDR_RESERVED },
	{ "192.0.1.0", ADDR_PUBLIC },
	{ "192.0.1.255", ADDR_PUBLIC },
	{ "192.0.2.0", ADDR_PUBLIC },
	{ "192.0.2.255", ADDR_PUBLIC },
	{ "192.0.3.0", ADDR_PUBLIC },
	{ "192.167.255.255", ADDR_PUBLIC },
	{ "192.168.0.0", ADDR_PRIVATE },
	{ "192.168.255.255", ADDR_PRIVATE },
	{ "192.169.0.0", ADDR_PUBLIC },
	{ "198.17.255.255", ADDR_PUBLIC },
	{ "198.18.0.0", ADDR_PUBLIC },	/* benchmarking: public */
	{ "198.19.255.255", ADDR_PUBLIC },
	{ "198.20.0.0", ADDR_PUBLIC },
	{ "198.51.99.255", ADDR_PUBLIC },
	{ "198.51.100.0", ADDR_PUBLIC },
	{ "198.51.100.255", ADDR_PUBLIC },
	{ "198.51.101.0", ADDR_PUBLIC },
	{ "203.0.112.255", ADDR_PUBLIC },
	{ "203.0.113.0", ADDR_PUBLIC },	/* documentation: public */
	{ "203.0.113.255", ADDR_PUBLIC },
	{ "203.0.114.0", ADDR_PUBLIC },
	{ "223.255.255.255", ADDR_PUBLIC },
	{ "224.0.0.0", ADDR_MULTICAST },
	{ "239.255.255.255", ADDR_MULTICAST },
	{ "240.0.0.0", ADDR_RESERVED },
	{ "255.255.255.254", ADDR_RESERVED },
	{ "255.255.255.255", ADDR_BROADCAST },
	{ "8.8.8.8", ADDR_PUBLIC },
	{ "93.184.216.34", ADDR_PUBLIC },
};

static const struct ccase v6_cases[] = {
	{ "::", ADDR_UNSPECIFIED },
	{ "::1", ADDR_LOOPBACK },
	{ "::2", ADDR_THIS_NETWORK },	/* compatible 0.0.0.2 */
	{ "fe7f:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "fe80::", ADDR_LINK_LOCAL },
	{ "fe80::1", ADDR_LINK_LOCAL },
	{ "febf:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_LINK_LOCAL },
	{ "fec0::", ADDR_PRIVATE },
	{ "feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PRIVATE },
	{ "ff00::", ADDR_MULTICAST },
	{ "ff02::1", ADDR_MULTICAST },
	{ "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_MULTICAST },
	{ "fbff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "fc00::", ADDR_UNIQUE_LOCAL },
	{ "fd12:3456:789a::1", ADDR_UNIQUE_LOCAL },
	{ "fdff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_UNIQUE_LOCAL },
	{ "fe00::", ADDR_PUBLIC },
	{ "2001:db7:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "2001:db8::", ADDR_PUBLIC },
	{ "2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "2001:db9::", ADDR_PUBLIC },
	{ "2001:2::", ADDR_PUBLIC },	/* benchmarking 2001:2::/48 */
	{ "2001:1::", ADDR_PUBLIC },
	{ "2001:4860:4860::8888", ADDR_PUBLIC },
	{ "100::", ADDR_RESERVED },	/* discard */
	{ "100::ffff:ffff:ffff:ffff", ADDR_RESERVED },
	{ "100:0:0:1::", ADDR_PUBLIC },
	{ "3ffe:ffff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "3fff::", ADDR_PUBLIC },	/* documentation 3fff::/20: public */
	{ "3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "3fff:1000::", ADDR_PUBLIC },
	{ "2606:4700:4700::1111", ADDR_PUBLIC },
	{ "2a00:1450:4001::1", ADDR_PUBLIC },
	{ "2003::", ADDR_PUBLIC },
	{ "2001:ffff::", ADDR_PUBLIC },
};

/* IPv4 carried in IPv6: each form of a refused address, and of a public
 * one as the control. */
static const struct ccase embedded_cases[] = {
	/* mapped ::ffff:0:0/96 */
	{ "::ffff:127.0.0.1", ADDR_LOOPBACK },
	{ "::ffff:127.0.0.2", ADDR_LOOPBACK },
	{ "::ffff:169.254.169.254", ADDR_LINK_LOCAL },
	{ "::ffff:10.0.0.1", ADDR_PRIVATE },
	{ "::ffff:100.64.0.1", ADDR_SHARED },
	{ "::ffff:0.0.0.0", ADDR_UNSPECIFIED },
	{ "::ffff:255.255.255.255", ADDR_BROADCAST },
	{ "::ffff:8.8.8.8", ADDR_PUBLIC },
	/* compatible ::/96 */
	{ "::127.0.0.1", ADDR_LOOPBACK },
	{ "::169.254.169.254", ADDR_LINK_LOCAL },
	{ "::192.168.1.1", ADDR_PRIVATE },
	{ "::8.8.8.8", ADDR_PUBLIC },
	/* translated ::ffff:0:0:0/96 */
	{ "::ffff:0:127.0.0.1", ADDR_LOOPBACK },
	{ "::ffff:0:8.8.8.8", ADDR_PUBLIC },
	/* NAT64, well known 64:ff9b::/96 */
	{ "64:ff9b::a00:1", ADDR_PRIVATE },
	{ "64:ff9b::127.0.0.1", ADDR_LOOPBACK },
	{ "64:ff9b::a9fe:a9fe", ADDR_LINK_LOCAL },
	{ "64:ff9b::808:808", ADDR_PUBLIC },
	{ "64:ff9b:0:1::", ADDR_RESERVED },	/* rest of 64:ff9b::/32 */
	/* NAT64, local use 64:ff9b:1::/48 in its /96, /64 and /48 layouts */
	{ "64:ff9b:1::a00:1", ADDR_PRIVATE },
	{ "64:ff9b:1::7f00:1", ADDR_LOOPBACK },
	{ "64:ff9b:1:0:a:0:100:0", ADDR_PRIVATE },
	{ "64:ff9b:1:a00:0:100::", ADDR_PRIVATE },
	{ "64:ff9b:1:a9fe:a9:fe00::", ADDR_LINK_LOCAL },
	{ "64:ff9b:1::808:808", ADDR_PUBLIC },
	{ "64:ff9b:1:ffff:ffff::808:808", ADDR_PUBLIC },
	/* 6to4 2002::/16, the IPv4 in bits 16-48 */
	{ "2002:7f00:1::", ADDR_LOOPBACK },
	{ "2002:a9fe:a9fe::1", ADDR_LINK_LOCAL },
	{ "2002:a00:1::", ADDR_PRIVATE },
	{ "2002:ac10::", ADDR_PRIVATE },
	{ "2002:808:808::", ADDR_PUBLIC },
	{ "2002:808:808:ffff:ffff:ffff:ffff:ffff", ADDR_PUBLIC },
	{ "2002:cb00:7150::", ADDR_PUBLIC },	/* 203.0.113.80 */
	/* Teredo 2001::/32: server 65.54.227.120 (4136:e378), client the
	 * last 32 bits inverted (3fff:fdd2 is 192.0.2.45) */
	{ "2001:0:4136:e378:8000:63bf:3fff:fdd2", ADDR_PUBLIC },
	{ "2001:0:4136:e378:8000:63bf:80ff:fffe", ADDR_LOOPBACK },	/* 127.0.0.1 */
	{ "2001:0:4136:e378:8000:63bf:f5ff:fffe", ADDR_PRIVATE },	/* 10.0.0.1 */
	{ "2001:0:4136:e378:8000:63bf:5601:5601", ADDR_LINK_LOCAL },	/* 169.254.169.254 */
	{ "2001:0:4136:e378:8000:63bf:ffff:ffff", ADDR_UNSPECIFIED },	/* 0.0.0.0 */
	{ "2001::ffff:ffff", ADDR_UNSPECIFIED },	/* server 0.0.0.0 too */
	{ "2001:0:a00:1:8000:63bf:3fff:fdd2", ADDR_PRIVATE },	/* server 10.0.0.1 */
	{ "2001:0:7f00:1:8000:63bf:3fff:fdd2", ADDR_LOOPBACK },	/* server 127.0.0.1 */
	{ "2001:0:4136:e378:8000:63bf:0:0", ADDR_BROADCAST },	/* 255.255.255.255 */
};

static void to_sa(const char *text, struct sockaddr_storage *ss)
{
	memset(ss, 0, sizeof(*ss));
	if (strchr(text, ':')) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(443);
		if (inet_pton(AF_INET6, text, &sin6->sin6_addr) != 1)
			diag("bad test address %s", text);
	} else {
		struct sockaddr_in *sin = (struct sockaddr_in *)ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(443);
		if (inet_pton(AF_INET, text, &sin->sin_addr) != 1)
			diag("bad test address %s", text);
	}
}

static enum addr_class classify(const char *text, const struct addr_set *own)
{
	struct sockaddr_storage ss;

	to_sa(text, &ss);
	return addrguard_classify((const struct sockaddr *)&ss, own);
}

static const char *cname(enum addr_class c)
{
	return (size_t)c < sizeof(class_names) / sizeof(class_names[0]) ?
		       class_names[c] :
		       "?";
}

static void run(const struct ccase *v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		enum addr_class got = classify(v[i].addr, NULL);

		if (!is_int(got, v[i].want, "%s is %s", v[i].addr,
			    cname(v[i].want)))
			diag("got %s", cname(got));
	}
}

static void skip(const char *why)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, why);
}

static void test_odd_input(void)
{
	struct sockaddr_un un;

	memset(&un, 0, sizeof(un));
	un.sun_family = AF_UNIX;
	is_int(addrguard_classify((const struct sockaddr *)&un, NULL),
	       ADDR_RESERVED, "a non-IP family is refused");
	is_int(addrguard_classify(NULL, NULL), ADDR_RESERVED,
	       "no address is refused");
}

static void test_reasons(void)
{
	is_str(addrguard_reason(ADDR_LOOPBACK), "loopback address", "reason");
	is_str(addrguard_reason(ADDR_PRIVATE), "private address", "reason");
	is_str(addrguard_reason(ADDR_LINK_LOCAL),
	       "link-local address (cloud metadata)", "reason");
	for (int c = ADDR_PUBLIC; c <= ADDR_HOST_OWN; c++) {
		const char *r = addrguard_reason((enum addr_class)c);
		bool distinct = true;

		for (int d = ADDR_PUBLIC; d < c; d++)
			if (strcmp(r, addrguard_reason((enum addr_class)d)) == 0)
				distinct = false;
		ok(r && *r && distinct, "%s has its own reason: %s", cname(c),
		   r);
	}
}

/* The first address of a non-loopback interface, of the family. */
static bool first_own(int family, struct sockaddr_storage *out)
{
	struct ifaddrs *ifa = NULL;
	bool found = false;

	if (getifaddrs(&ifa) < 0)
		return false;
	for (const struct ifaddrs *i = ifa; i && !found; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != family ||
		    (i->ifa_flags & IFF_LOOPBACK))
			continue;
		memset(out, 0, sizeof(*out));
		memcpy(out, i->ifa_addr,
		       family == AF_INET ? sizeof(struct sockaddr_in) :
					   sizeof(struct sockaddr_in6));
		found = true;
	}
	freeifaddrs(ifa);
	return found;
}

static void test_own(void)
{
	struct addr_set own = { NULL, 0 };
	struct sockaddr_storage ss;
	char text[INET6_ADDRSTRLEN];

	is_int(addrguard_load_own(&own), 0, "this host's addresses load");
	ok(own.n >= 1, "at least one (loopback): %zu", own.n);
	is_int(classify("127.0.0.1", &own), ADDR_LOOPBACK,
	       "127.0.0.1 stays loopback though it is ours");
	is_int(classify("8.8.8.8", &own), ADDR_PUBLIC,
	       "control: 8.8.8.8 is not ours");
	is_int(classify("2606:4700:4700::1111", &own), ADDR_PUBLIC,
	       "control: 2606:4700:4700::1111 is not ours");

	if (first_own(AF_INET, &ss)) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
		char mapped[INET6_ADDRSTRLEN + 8];

		inet_ntop(AF_INET, &sin->sin_addr, text, sizeof(text));
		sin->sin_port = htons(80);
		is_int(addrguard_classify((struct sockaddr *)&ss, &own),
		       ADDR_HOST_OWN, "%s (an interface's) is host-own", text);
		ok(addrguard_classify((struct sockaddr *)&ss, NULL) !=
			   ADDR_HOST_OWN,
		   "control: %s is not host-own without the set", text);
		snprintf(mapped, sizeof(mapped), "::ffff:%s", text);
		is_int(classify(mapped, &own), ADDR_HOST_OWN,
		       "%s is host-own", mapped);
	} else {
		skip("no non-loopback IPv4 address here");
		skip("no non-loopback IPv4 address here");
		skip("no non-loopback IPv4 address here");
	}

	if (first_own(AF_INET6, &ss)) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		inet_ntop(AF_INET6, &sin6->sin6_addr, text, sizeof(text));
		sin6->sin6_scope_id += 7;	/* scope ids do not matter */
		is_int(addrguard_classify((struct sockaddr *)&ss, &own),
		       ADDR_HOST_OWN, "%s (an interface's) is host-own", text);
	} else {
		skip("no non-loopback IPv6 address here");
	}
	addrguard_free_own(&own);
	is_int(own.n, 0, "freed set is empty");
}

/* One address judged under ranges given as text, ";"-separated. */
static struct addr_judgement judge(const char *addr, const char *ranges,
				   const struct addr_set *own)
{
	struct net_range r[8];
	size_t n = 0;
	struct sockaddr_storage ss;
	struct addr_judgement jd;
	const char *p = ranges;

	while (p && *p && n < 8) {
		const char *end = strchr(p, ';');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		const char *why = NULL;

		if (range_parse(p, len, &r[n], &why) < 0)
			diag("bad test range %.*s: %s", (int)len, p, why);
		else
			n++;
		p = end ? end + 1 : NULL;
	}
	to_sa(addr, &ss);
	addrguard_judge((const struct sockaddr *)&ss, own, r, n, &jd);
	return jd;
}

struct rcase {
	const char *addr, *ranges;
	enum addr_class want;	/* ADDR_PUBLIC: let through */
	int range;		/* the range named (-1: none) */
};

static const struct rcase range_cases[] = {
	/* private, unique local, shared, reserved: opened by a range that
	 * holds them, each with the control just outside */
	{ "10.20.3.4", NULL, ADDR_PRIVATE, -1 },
	{ "10.20.3.4", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	{ "10.21.0.1", "10.20.0.0/16", ADDR_PRIVATE, -1 },
	{ "10.20.3.4", "192.168.0.0/16;10.20.0.0/16", ADDR_PUBLIC, 1 },
	{ "10.20.3.4", "10.20.3.4/32", ADDR_PUBLIC, 0 },
	{ "10.20.3.5", "10.20.3.4/32", ADDR_PRIVATE, -1 },
	{ "172.16.0.1", "172.16.0.0/12", ADDR_PUBLIC, 0 },
	{ "192.168.1.1", "192.168.0.0/16", ADDR_PUBLIC, 0 },
	{ "192.168.1.1", "0.0.0.0/1", ADDR_PRIVATE, -1 },	/* not held */
	{ "192.168.1.1", "128.0.0.0/1", ADDR_PUBLIC, 0 },	/* broad, held */
	{ "fd00:1::5", "fd00:1::/32", ADDR_PUBLIC, 0 },
	{ "fd00:2::5", "fd00:1::/32", ADDR_UNIQUE_LOCAL, -1 },
	{ "fd00:1::5", "10.0.0.0/8", ADDR_UNIQUE_LOCAL, -1 },	/* family */
	{ "100.64.0.1", "100.64.0.0/10", ADDR_PUBLIC, 0 },
	{ "100.128.0.1", "100.64.0.0/10", ADDR_PUBLIC, -1 },	/* public anyway */
	{ "240.0.0.1", "240.0.0.0/4", ADDR_PUBLIC, 0 },
	{ "240.0.0.1", NULL, ADDR_RESERVED, -1 },
	{ "192.0.0.1", "192.0.0.0/24", ADDR_PUBLIC, 0 },
	{ "203.0.113.80", NULL, ADDR_PUBLIC, -1 },	/* documentation */
	/* loopback: only a range inside 127.0.0.0/8 or ::1/128 */
	{ "127.0.0.1", "127.0.0.0/8", ADDR_PUBLIC, 0 },
	{ "127.0.0.2", "127.0.0.2/32", ADDR_PUBLIC, 0 },
	{ "127.0.0.1", "127.0.0.2/32", ADDR_LOOPBACK, -1 },
	{ "127.0.0.1", "0.0.0.0/1", ADDR_LOOPBACK, -1 },
	{ "127.0.0.1", "64.0.0.0/2", ADDR_LOOPBACK, -1 },
	{ "127.0.0.1", "126.0.0.0/7", ADDR_LOOPBACK, -1 },
	{ "127.0.0.1", "64.0.0.0/2;127.0.0.0/8", ADDR_PUBLIC, 1 },
	{ "10.1.1.1", "10.0.0.0/7", ADDR_PUBLIC, 0 },
	{ "::1", "::1/128", ADDR_PUBLIC, 0 },
	{ "::1", "::/1", ADDR_LOOPBACK, -1 },
	{ "::1", "::/127", ADDR_LOOPBACK, -1 },
	{ "::ffff:127.0.0.1", "127.0.0.0/8", ADDR_PUBLIC, 0 },
	{ "::ffff:127.0.0.1", "::ffff:0:0/96", ADDR_LOOPBACK, -1 },	/* judged as IPv4 */
	{ "::ffff:127.0.0.1", "0.0.0.0/1", ADDR_LOOPBACK, -1 },
	/* link-local: only a range inside 169.254.0.0/16 or fe80::/10 */
	{ "169.254.169.254", "169.254.0.0/16", ADDR_PUBLIC, 0 },
	{ "169.254.169.254", "169.254.169.254/32", ADDR_PUBLIC, 0 },
	{ "169.254.169.254", "169.0.0.0/8", ADDR_LINK_LOCAL, -1 },
	{ "169.254.169.254", "128.0.0.0/1", ADDR_LINK_LOCAL, -1 },
	{ "fe80::1", "fe80::/10", ADDR_PUBLIC, 0 },
	{ "fe80::1", "fe00::/7", ADDR_LINK_LOCAL, -1 },
	{ "fe80::1", "fe80::/64", ADDR_PUBLIC, 0 },
	/* never opened by any range */
	{ "0.0.0.0", "0.0.0.0/8", ADDR_UNSPECIFIED, -1 },
	{ "0.0.0.0", "0.0.0.0/32", ADDR_UNSPECIFIED, -1 },
	{ "0.1.2.3", "0.0.0.0/8", ADDR_THIS_NETWORK, -1 },
	{ "224.0.0.1", "224.0.0.0/4", ADDR_MULTICAST, -1 },
	{ "255.255.255.255", "240.0.0.0/4", ADDR_BROADCAST, -1 },
	{ "255.255.255.255", "255.255.255.255/32", ADDR_BROADCAST, -1 },
	{ "ff02::1", "ff00::/8", ADDR_MULTICAST, -1 },
	{ "::", "::/128", ADDR_UNSPECIFIED, -1 },
	{ "::ffff:0.0.0.0", "0.0.0.0/8", ADDR_UNSPECIFIED, -1 },
	/* embedded forms, judged by the IPv4 they carry */
	{ "64:ff9b::a14:5", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	{ "64:ff9b::a14:5", "10.21.0.0/16", ADDR_PRIVATE, -1 },
	{ "64:ff9b:1::a14:5", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	{ "2002:a14:5::", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	{ "2002:7f00:1::", "0.0.0.0/1", ADDR_LOOPBACK, -1 },
	{ "::a14:5", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	/* Teredo: client 10.20.0.5 (f5eb:fffa), server public */
	{ "2001:0:4136:e378:8000:63bf:f5eb:fffa", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	{ "2001:0:4136:e378:8000:63bf:f5eb:fffa", NULL, ADDR_PRIVATE, -1 },
	/* server 10.20.0.5 and client 10.20.0.6: both held */
	{ "2001:0:a14:5:8000:63bf:f5eb:fff9", "10.20.0.0/16", ADDR_PUBLIC, 0 },
	/* server 10.20.0.5 held, client 127.0.0.1 not */
	{ "2001:0:a14:5:8000:63bf:80ff:fffe", "10.20.0.0/16", ADDR_LOOPBACK, -1 },
	/* client 10.20.0.5 held, server 10.30.0.1 not */
	{ "2001:0:a1e:1:8000:63bf:f5eb:fffa", "10.20.0.0/16", ADDR_PRIVATE, -1 },
};

static void test_ranges(void)
{
	for (size_t i = 0; i < sizeof(range_cases) / sizeof(range_cases[0]); i++) {
		const struct rcase *c = &range_cases[i];
		struct addr_judgement jd = judge(c->addr, c->ranges, NULL);

		if (!ok(jd.cls == c->want && jd.range == c->range,
			"%s under [%s]: %s, range %d", c->addr, c->ranges ? c->ranges : "",
			cname(c->want), c->range))
			diag("got %s, range %d", cname(jd.cls), jd.range);
	}
	struct addr_judgement jd = judge("127.0.0.5", "127.0.0.0/8", NULL);
	is_int(jd.opened, ADDR_LOOPBACK, "the class a range opened is told (loopback)");
	jd = judge("10.0.0.5", "10.0.0.0/8", NULL);
	is_int(jd.opened, ADDR_PRIVATE, "the class a range opened is told (private)");
	jd = judge("8.8.8.8", "8.0.0.0/8", NULL);
	ok(jd.cls == ADDR_PUBLIC && jd.range == -1 && jd.opened == ADDR_PUBLIC,
	   "a public address held by a range is public by itself (no range named)");
}

/* This host's own addresses: no range opens them. */
static void test_own_ranges(void)
{
	struct addr_set own = { NULL, 0 };
	struct sockaddr_storage ss;
	char text[INET6_ADDRSTRLEN], range[INET6_ADDRSTRLEN + 8];

	if (addrguard_load_own(&own) < 0 || !first_own(AF_INET, &ss)) {
		skip("no non-loopback IPv4 address here");
		skip("no non-loopback IPv4 address here");
		addrguard_free_own(&own);
		return;
	}
	inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, text, sizeof(text));
	snprintf(range, sizeof(range), "%s/32", text);
	is_int(judge(text, range, &own).cls, ADDR_HOST_OWN,
	       "%s (ours) under %s: still this host's own", text, range);
	ok(judge(text, range, NULL).cls == ADDR_PUBLIC,
	   "control: %s under %s without the set is let through", text, range);
	addrguard_free_own(&own);
}

int main(void)
{
	run(v4_cases, sizeof(v4_cases) / sizeof(v4_cases[0]));
	run(v6_cases, sizeof(v6_cases) / sizeof(v6_cases[0]));
	run(embedded_cases, sizeof(embedded_cases) / sizeof(embedded_cases[0]));
	test_odd_input();
	test_reasons();
	test_own();
	test_ranges();
	test_own_ranges();
	return done_testing();
}
