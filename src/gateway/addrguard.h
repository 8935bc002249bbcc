/* addrguard.h: which addresses a name may lead to. The gateway resolves a
 * name itself and refuses it when any of its addresses falls in a class a
 * sandbox must never reach through a name: loopback, link-local (cloud
 * metadata services), private (RFC 1918), unique local, shared (CGNAT),
 * unspecified, multicast, broadcast, 0.0.0.0/8, reserved (240/4,
 * 192.0.0.0/24, ...), the IPv4-mapped, -compatible, NAT64, 6to4 and
 * Teredo forms of those, and this host's own addresses. Documentation and
 * benchmarking ranges are public. The operator's ranges
 * (network.allow_ranges) open some classes, never all (addrguard_judge). */
#ifndef CORDON_GATEWAY_ADDRGUARD_H
#define CORDON_GATEWAY_ADDRGUARD_H

#include "policy/host.h"

#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

enum addr_class {
	ADDR_PUBLIC = 0,	/* may be dialled */
	ADDR_LOOPBACK,
	ADDR_PRIVATE,
	ADDR_LINK_LOCAL,
	ADDR_UNIQUE_LOCAL,
	ADDR_SHARED,
	ADDR_UNSPECIFIED,
	ADDR_MULTICAST,
	ADDR_BROADCAST,
	ADDR_THIS_NETWORK,
	ADDR_RESERVED,
	ADDR_HOST_OWN,
};

/* This host's own addresses (getifaddrs), refused whatever their class. */
struct addr_set {
	struct sockaddr_storage *v;
	size_t n;
};
int addrguard_load_own(struct addr_set *own);
/* Add n addresses to own (the host's, seen from a gateway elsewhere). */
int addrguard_add_own(struct addr_set *own, const struct sockaddr_storage *v, size_t n);
void addrguard_free_own(struct addr_set *own);

/* The class of an IPv4 or IPv6 address; own may be NULL. Embedded IPv4
 * (mapped ::ffff:0:0/96, translated ::ffff:0:0:0/96, compatible ::/96,
 * NAT64 64:ff9b::/96 and 64:ff9b:1::/48, 6to4 2002::/16, Teredo
 * 2001::/32: both its client and its server) is classified as the IPv4
 * address it carries. */
enum addr_class addrguard_classify(const struct sockaddr *sa,
				   const struct addr_set *own);

/* An address judged with the operator's ranges: cls is ADDR_PUBLIC when
 * it may be dialled, either by itself (range -1) or because ranges[range]
 * holds it and may open its class (opened). A range opens private,
 * unique local, shared and reserved addresses; loopback only when the
 * range lies inside 127.0.0.0/8 or ::1/128, link-local only inside
 * 169.254.0.0/16 or fe80::/10; never unspecified, 0.0.0.0/8, multicast,
 * broadcast or this host's own addresses. Embedded forms are judged by
 * the IPv4 they carry, against IPv4 ranges. */
struct addr_judgement {
	enum addr_class cls;
	int range;
	enum addr_class opened;
};
void addrguard_judge(const struct sockaddr *sa, const struct addr_set *own,
		     const struct net_range *ranges, size_t n_ranges,
		     struct addr_judgement *out);

/* Is sa local to this host by any route (an address on an interface, or
 * one that only a `local` route makes this host's)? The kernel answers:
 * a socket binds to a local address and to nothing else. Where the host
 * lets sockets bind any address (ip_nonlocal_bind), the answer is yes for
 * every address: the gateway then refuses names rather than guess. */
bool addrguard_is_local(const struct sockaddr *sa);

/* Fixed text for a refusal: "loopback address", ... */
const char *addrguard_reason(enum addr_class c);

#endif
