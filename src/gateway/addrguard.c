/* addrguard.c: the address classes a name may not lead to, and the
 * operator's ranges that open some of them (see addrguard.h). Pure table
 * lookups on the address bytes, plus this host's own addresses from
 * getifaddrs. Anything we cannot read as IPv4 or IPv6 is refused as
 * reserved: the guard fails closed. */
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
 * contain them (0.0.0.0 before 0.0.0.0/8, 255.255.255.255 before 240/4).
 * Not here, so public: the documentation ranges (192.0.2.0/24,
 * 198.51.100.0/24, 203.0.113.0/24) and benchmarking (198.18.0.0/15).
 * Resolvers and proxies do answer names from them, and nothing of this
 * host or its LAN lives there by definition (docs/gateway.md). */
static const struct v4_range v4_ranges[] = {
	{ 0x00000000u, 32, ADDR_UNSPECIFIED },	/* 0.0.0.0 */
	{ 0x00000000u, 8, ADDR_THIS_NETWORK },	/* 0.0.0.0/8 */
	{ 0x0a000000u, 8, ADDR_PRIVATE },	/* 10/8 */
	{ 0x64400000u, 10, ADDR_SHARED },	/* 100.64/10 */
	{ 0x7f000000u, 8, ADDR_LOOPBACK },	/* 127/8 */
	{ 0xa9fe0000u, 16, ADDR_LINK_LOCAL },	/* 169.254/16 */
	{ 0xac100000u, 12, ADDR_PRIVATE },	/* 172.16/12 */
	{ 0xc0000000u, 24, ADDR_RESERVED },	/* 192.0.0.0/24 IETF protocol */
	{ 0xc0a80000u, 16, ADDR_PRIVATE },	/* 192.168/16 */
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

/* What a judgement carries down to every address it looks at (an IPv6
 * address and the IPv4 ones it carries): this host's own addresses, the
 * operator's ranges, and which range opened something. */
struct judge {
	const struct addr_set *own;
	const struct net_range *ranges;
	size_t n_ranges;
	int range;
	enum addr_class opened;
};

static const struct net_range loopback4 = { AF_INET, { 127 }, 8 };
static const struct net_range loopback6 = { AF_INET6, { [15] = 1 }, 128 };
static const struct net_range linklocal4 = { AF_INET, { 169, 254 }, 16 };
static const struct net_range linklocal6 = { AF_INET6, { 0xfe, 0x80 }, 10 };

/* May range r open an address of class c? Loopback and link-local only
 * for a range inside their block: the operator who writes 10.0.0.0/7 or
 * 0.0.0.0/1 means a network, not this host's services or the metadata
 * service. Unspecified, this-network, multicast and broadcast are never
 * a host to dial, and this host's own addresses are its services, which
 * a range of the LAN it sits in must not open. */
static bool range_opens(const struct net_range *r, enum addr_class c)
{
	switch (c) {
	case ADDR_PRIVATE:
	case ADDR_UNIQUE_LOCAL:
	case ADDR_SHARED:
	case ADDR_RESERVED:
		return true;
	case ADDR_LOOPBACK:
		return range_covers(&loopback4, r) || range_covers(&loopback6, r);
	case ADDR_LINK_LOCAL:
		return range_covers(&linklocal4, r) || range_covers(&linklocal6, r);
	default:
		return false;
	}
}

/* c, unless a listed range holds the address and may open its class:
 * then public, and the range is noted. */
static enum addr_class open_by_range(enum addr_class c, struct judge *j, int family,
				     const uint8_t *addr)
{
	if (c == ADDR_PUBLIC)
		return c;
	for (size_t i = 0; i < j->n_ranges; i++) {
		if (range_contains(&j->ranges[i], family, addr) &&
		    range_opens(&j->ranges[i], c)) {
			j->range = (int)i;
			j->opened = c;
			return ADDR_PUBLIC;
		}
	}
	return c;
}

static enum addr_class classify_in4(const uint8_t b[4], struct judge *j)
{
	uint32_t a = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 |
		     (uint32_t)b[2] << 8 | b[3];

	return open_by_range(with_own(classify_v4(a), j->own, AF_INET, b), j, AF_INET, b);
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
static enum addr_class classify_nat64_local(const uint8_t *b, struct judge *j)
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
		for (size_t k = 0; k < 4; k++)
			v4[k] = b[layouts[i].at[k]];
		c = classify_in4(v4, j);
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

/* Teredo (RFC 4380): 2001:0:SSSS:SSSS:flags:port:CCCC:CCCC, the server's
 * IPv4 in bits 32-63 and the client's (the NAT's outside address, where
 * packets for this address are sent) in the last 32 bits, inverted. Both
 * are judged: the worse decides. */
static enum addr_class classify_teredo(const uint8_t *b, struct judge *j)
{
	uint8_t client[4];
	enum addr_class c;

	for (size_t k = 0; k < 4; k++)
		client[k] = (uint8_t)~b[12 + k];
	c = classify_in4(client, j);
	return c != ADDR_PUBLIC ? c : classify_in4(b + 4, j);
}

static enum addr_class classify_in6(const uint8_t *b, struct judge *j)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
					    0, 0, 0xff, 0xff };
	static const uint8_t translated[12] = { 0, 0, 0, 0, 0, 0, 0, 0,
						0xff, 0xff, 0, 0 };
	static const uint8_t nat64[12] = { 0, 0x64, 0xff, 0x9b };
	static const uint8_t nat64_local[6] = { 0, 0x64, 0xff, 0x9b, 0, 1 };
	static const uint8_t sixtofour[2] = { 0x20, 0x02 };
	static const uint8_t teredo[4] = { 0x20, 0x01, 0, 0 };
	static const uint8_t discard[8] = { 1, 0 };
	enum addr_class c;

	/* One of ours in any form (a 6to4 or Teredo interface too), but
	 * ::1, which is loopback. */
	if (!(all_zero(b, 15) && b[15] == 1) && own_has(j->own, AF_INET6, b))
		return ADDR_HOST_OWN;
	if (all_zero(b, 12)) {
		/* ::, ::1, and the deprecated IPv4-compatible ::a.b.c.d */
		if (all_zero(b + 12, 3) && b[15] <= 1)
			return open_by_range(b[15] ? ADDR_LOOPBACK : ADDR_UNSPECIFIED, j,
					     AF_INET6, b);
		return classify_in4(b + 12, j);
	}
	if (memcmp(b, mapped, 12) == 0 || memcmp(b, translated, 12) == 0 ||
	    memcmp(b, nat64, 12) == 0)
		return classify_in4(b + 12, j);
	if (memcmp(b, nat64_local, 6) == 0)
		return classify_nat64_local(b, j);
	if (prefix6(b, sixtofour, 16))
		return classify_in4(b + 2, j);
	if (prefix6(b, teredo, 32))
		return classify_teredo(b, j);
	/* the rest of 64:ff9b::/32 (unassigned) and the discard prefix */
	if (prefix6(b, nat64, 32) || prefix6(b, discard, 64))
		c = ADDR_RESERVED;
	else if (b[0] == 0xff)
		c = ADDR_MULTICAST;
	else if (b[0] == 0xfe && (b[1] & 0xc0) == 0x80)
		c = ADDR_LINK_LOCAL;
	else if (b[0] == 0xfe && (b[1] & 0xc0) == 0xc0)
		c = ADDR_PRIVATE;	/* fec0::/10, deprecated site-local */
	else if ((b[0] & 0xfe) == 0xfc)
		c = ADDR_UNIQUE_LOCAL;
	else
		c = ADDR_PUBLIC;
	return open_by_range(c, j, AF_INET6, b);
}

static enum addr_class judge_sa(const struct sockaddr *sa, struct judge *j)
{
	if (!sa)
		return ADDR_RESERVED;
	if (sa->sa_family == AF_INET) {
		struct sockaddr_in sin;

		memcpy(&sin, sa, sizeof(sin));
		return classify_in4((const uint8_t *)&sin.sin_addr, j);
	}
	if (sa->sa_family == AF_INET6) {
		struct sockaddr_in6 sin6;

		memcpy(&sin6, sa, sizeof(sin6));
		return classify_in6(sin6.sin6_addr.s6_addr, j);
	}
	return ADDR_RESERVED;
}

enum addr_class addrguard_classify(const struct sockaddr *sa,
				   const struct addr_set *own)
{
	struct judge j = { .own = own, .range = -1 };

	return judge_sa(sa, &j);
}

void addrguard_judge(const struct sockaddr *sa, const struct addr_set *own,
		     const struct net_range *ranges, size_t n_ranges,
		     struct addr_judgement *out)
{
	struct judge j = { .own = own, .ranges = ranges, .n_ranges = n_ranges, .range = -1 };

	out->cls = judge_sa(sa, &j);
	out->range = out->cls == ADDR_PUBLIC ? j.range : -1;
	out->opened = out->range >= 0 ? j.opened : ADDR_PUBLIC;
}

int addrguard_add_own(struct addr_set *own, const struct sockaddr_storage *v, size_t n)
{
	struct sockaddr_storage *nv;

	if (n == 0)
		return 0;
	nv = realloc(own->v, (own->n + n) * sizeof(*nv));
	if (!nv) {
		errno = ENOMEM;
		return -1;
	}
	memcpy(nv + own->n, v, n * sizeof(*nv));
	own->v = nv;
	own->n += n;
	return 0;
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
