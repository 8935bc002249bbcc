/* addrguard.c: the address classes a name may not lead to (see
 * addrguard.h). Pure table lookups on the address bytes, plus this host's
 * own addresses from getifaddrs. Anything we cannot read as IPv4 or IPv6
 * is refused as reserved: the guard fails closed. */
#include "gateway/addrguard.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct v4_range {
	uint32_t net;
	unsigned int bits;
	enum addr_class cls;
};

/* First match wins, so the narrower entries come before the ones that
 * contain them (0.0.0.0 before 0.0.0.0/8, 255.255.255.255 before 240/4). */
static const struct v4_range v4_ranges[] = {
	{ 0x00000000u, 32, ADDR_UNSPECIFIED },	/* 0.0.0.0 */
	{ 0x00000000u, 8, ADDR_THIS_NETWORK },	/* 0.0.0.0/8 */
	{ 0x0a000000u, 8, ADDR_PRIVATE },	/* 10/8 */
	{ 0x64400000u, 10, ADDR_SHARED },	/* 100.64/10 */
	{ 0x7f000000u, 8, ADDR_LOOPBACK },	/* 127/8 */
	{ 0xa9fe0000u, 16, ADDR_LINK_LOCAL },	/* 169.254/16 */
	{ 0xac100000u, 12, ADDR_PRIVATE },	/* 172.16/12 */
	{ 0xc0000000u, 24, ADDR_RESERVED },	/* 192.0.0.0/24 IETF */
	{ 0xc0000200u, 24, ADDR_RESERVED },	/* 192.0.2.0/24 TEST-NET-1 */
	{ 0xc0a80000u, 16, ADDR_PRIVATE },	/* 192.168/16 */
	{ 0xc6120000u, 15, ADDR_RESERVED },	/* 198.18/15 benchmarking */
	{ 0xc6336400u, 24, ADDR_RESERVED },	/* 198.51.100/24 TEST-NET-2 */
	{ 0xcb007100u, 24, ADDR_RESERVED },	/* 203.0.113/24 TEST-NET-3 */
	{ 0xe0000000u, 4, ADDR_MULTICAST },	/* 224/4 */
	{ 0xffffffffu, 32, ADDR_BROADCAST },	/* 255.255.255.255 */
	{ 0xf0000000u, 4, ADDR_RESERVED },	/* 240/4 */
};

static enum addr_class classify_v4(uint32_t a)
{
	for (size_t i = 0; i < sizeof(v4_ranges) / sizeof(v4_ranges[0]); i++) {
		const struct v4_range *r = &v4_ranges[i];
		uint32_t mask = r->bits ? ~0u << (32 - r->bits) : 0;

		if ((a & mask) == r->net)
			return r->cls;
	}
	return ADDR_PUBLIC;
}

static bool own_has(const struct addr_set *own, int family, const void *addr)
{
	if (!own)
		return false;
	for (size_t i = 0; i < own->n; i++) {
		const struct sockaddr_storage *ss = &own->v[i];

		if (ss->ss_family != family)
			continue;
		/* Scope ids are ignored: fe80::1 is ours on any interface. */
		if (family == AF_INET &&
		    memcmp(&((const struct sockaddr_in *)ss)->sin_addr, addr,
			   sizeof(struct in_addr)) == 0)
			return true;
		if (family == AF_INET6 &&
		    memcmp(&((const struct sockaddr_in6 *)ss)->sin6_addr, addr,
			   sizeof(struct in6_addr)) == 0)
			return true;
	}
	return false;
}

/* Loopback stays loopback even though every host owns it: the plainer
 * reason. Any other address of ours is named as ours, whatever its class. */
static enum addr_class with_own(enum addr_class c, const struct addr_set *own,
				int family, const void *addr)
{
	if (c != ADDR_LOOPBACK && own_has(own, family, addr))
		return ADDR_HOST_OWN;
	return c;
}

static enum addr_class classify_in4(const uint8_t b[4],
				    const struct addr_set *own)
{
	uint32_t a = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		     (uint32_t)b[2] << 8 | b[3];

	return with_own(classify_v4(a), own, AF_INET, b);
}

static bool all_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

/* The local-use NAT64 prefix 64:ff9b:1::/48 (RFC 8215) may be split into
 * any RFC 6052 prefix length from /48 to /96, and we cannot know which
 * one the translator uses. Every layout the address is consistent with
 * (u octet and suffix zero) is decoded; the first that is not public
 * decides. Fails closed: a public address in the /48 layout reads as
 * 0.0.0.0 in the /96 one and is refused. */
static enum addr_class classify_nat64_local(const uint8_t *b,
					    const struct addr_set *own)
{
	/* For each prefix length: where the four IPv4 bytes are (skipping
	 * byte 8, the u octet) and where the zero suffix starts. */
	static const struct {
		uint8_t at[4];
		uint8_t suffix;
	} layouts[] = {
		{ { 6, 7, 9, 10 }, 11 },	/* /48 */
		{ { 7, 9, 10, 11 }, 12 },	/* /56 */
		{ { 9, 10, 11, 12 }, 13 },	/* /64 */
		{ { 12, 13, 14, 15 }, 16 },	/* /96 */
	};

	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		uint8_t v4[4];
		enum addr_class c;

		if (layouts[i].suffix < 16 &&
		    (b[8] || !all_zero(b + layouts[i].suffix,
				       16 - (size_t)layouts[i].suffix)))
			continue;
		for (size_t j = 0; j < 4; j++)
			v4[j] = b[layouts[i].at[j]];
		c = classify_in4(v4, own);
		if (c != ADDR_PUBLIC)
			return c;
	}
	return ADDR_PUBLIC;
}

static bool prefix6(const uint8_t *b, const uint8_t *p, unsigned int bits)
{
	size_t whole = bits / 8;
	unsigned int rest = bits % 8;

	if (memcmp(b, p, whole) != 0)
		return false;
	if (rest) {
		uint8_t mask = (uint8_t)(0xffu << (8 - rest));

		return (b[whole] & mask) == (p[whole] & mask);
	}
	return true;
}

static enum addr_class classify_in6(const uint8_t *b,
				    const struct addr_set *own)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };
	static const uint8_t translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
						0xff, 0xff, 0, 0 };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	static const uint8_t nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
	static const uint8_t sixtofour[2] = { 0x20, 0x02 };
	static const uint8_t teredo[4] = { 0x20, 0x01, 0, 0 };
	static const uint8_t doc[4] = { 0x20, 0x01, 0x0d, 0xb8 };
	static const uint8_t doc2[3] = { 0x3f, 0xff, 0 };	/* 3fff::/20 */
	static const uint8_t discard[8] = { 1, 0 };
	enum addr_class c;

	if (all_zero(b, 12)) {
		/* ::, ::1, and the deprecated IPv4-compatible ::a.b.c.d */
		if (all_zero(b + 12, 3) && b[15] <= 1)
			return b[15] ? ADDR_LOOPBACK : ADDR_UNSPECIFIED;
		return classify_in4(b + 12, own);
	}
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, translated, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0)
		return classify_in4(b + 12, own);
	if (memcmp(b, nat64_local, 6) == 0)
		return classify_nat64_local(b, own);
	if (prefix6(b, nat64, 32))
		return ADDR_RESERVED;	/* the rest of 64:ff9b::/32: unused */
	if (prefix6(b, sixtofour, 16))
		return classify_in4(b + 2, own);
	if (prefix6(b, teredo, 32))
		return ADDR_RESERVED;	/* tunnels to an address we can't see */
	if (prefix6(b, doc, 32) || prefix6(b, doc2, 20) ||
	    prefix6(b, discard, 64))
		return ADDR_RESERVED;
	if (b[0] == 0xff)
		c = ADDR_MULTICAST;
	else if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		c = ADDR_LINK_LOCAL;
	else if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		c = ADDR_PRIVATE;	/* fec0::/10, deprecated site-local */
	else if ((b[0] & 0xfe) == 0xfc)
		c = ADDR_UNIQUE_LOCAL;
	else
		c = ADDR_PUBLIC;
	return with_own(c, own, AF_INET6, b);
}

enum addr_class addrguard_classify(const struct sockaddr *sa,
				   const struct addr_set *own)
{
	if (!sa)
		return ADDR_RESERVED;
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, sa, sizeof(sin));
		return classify_in4((const uint8_t *)&sin.sin_addr, own);
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, sa, sizeof(sin6));
		return classify_in6(sin6.sin6_addr.s6_addr, own);
	}
	return ADDR_RESERVED;
}

/* A snapshot: addresses added later (DHCP, a new bridge) are not in it
 * until the caller loads again. */
int addrguard_load_own(struct addr_set *own)
{
	struct ifaddrs *ifa = NULL;
	size_t n = 0;

	own->v = NULL;
	own->n = 0;
	if (getifaddrs(&ifa) < 0)
		return -1;
	for (const struct ifaddrs *i = ifa; i; i = i->ifa_next)
		if (i->ifa_addr && (i->ifa_addr->sa_family == AF_INET ||
				    i->ifa_addr->sa_family == AF_INET6))
			n++;
	if (n) {
		own->v = calloc(n, sizeof(*own->v));
		if (!own->v) {
			freeifaddrs(ifa);
			errno = ENOMEM;
			return -1;
		}
	}
	for (const struct ifaddrs *i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr)
			continue;
		if (i->ifa_addr->sa_family == AF_INET)
			memcpy(&own->v[own->n++], i->ifa_addr,
			       sizeof(struct sockaddr_in));
		else if (i->ifa_addr->sa_family == AF_INET6)
			memcpy(&own->v[own->n++], i->ifa_addr,
			       sizeof(struct sockaddr_in6));
	}
	freeifaddrs(ifa);
	return 0;
}

void addrguard_free_own(struct addr_set *own)
{
	if (!own)
		return;
	free(own->v);
	own->v = NULL;
	own->n = 0;
}

const char *addrguard_reason(enum addr_class c)
{
	switch (c) {
	case ADDR_PUBLIC:
		return "public address";
	case ADDR_LOOPBACK:
		return "loopback address";
	case ADDR_PRIVATE:
		return "private address";
	case ADDR_LINK_LOCAL:
		return "link-local address (cloud metadata)";
	case ADDR_UNIQUE_LOCAL:
		return "unique local address";
	case ADDR_SHARED:
		return "shared address (carrier-grade NAT)";
	case ADDR_UNSPECIFIED:
		return "unspecified address";
	case ADDR_MULTICAST:
		return "multicast address";
	case ADDR_BROADCAST:
		return "broadcast address";
	case ADDR_THIS_NETWORK:
		return "this-network address (0.0.0.0/8)";
	case ADDR_RESERVED:
		return "reserved address";
	case ADDR_HOST_OWN:
		return "this host's own address";
	}
	return "unclassified address";
}

bool addrguard_is_local(const struct sockaddr *sa)
{
	struct sockaddr_storage ss;
	socklen_t len;
	int fd;
	bool local;

	if (sa->sa_family == AF_INET)
		len = sizeof(struct sockaddr_in);
	else if (sa->sa_family == AF_INET6)
		len = sizeof(struct sockaddr_in6);
	else
		return true;
	memcpy(&ss, sa, len);
	/* port 0, and no flow or scope: only the address is asked about */
	if (ss.ss_family == AF_INET) {
		((struct sockaddr_in *)&ss)->sin_port = 0;
	} else {
		((struct sockaddr_in6 *)&ss)->sin6_port = 0;
		((struct sockaddr_in6 *)&ss)->sin6_flowinfo = 0;
		((struct sockaddr_in6 *)&ss)->sin6_scope_id = 0;
	}
	fd = socket(ss.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return true; /* cannot ask: fail closed */
	local = bind(fd, (struct sockaddr *)&ss, len) == 0 || errno != EADDRNOTAVAIL;
	close(fd);
	return local;
}
