/* host.h: the policy's host entries (network.allow / network.deny) and the
 * matching rules the gateway and the grant check share.
 *
 * Accepted forms, after a trailing dot is dropped and letters lower-cased:
 *   name            any port        example.com
 *   name:port       that port only  example.com:443
 *   *.domain[:port] names strictly beneath domain; domain must not be a
 *                   public suffix (*.com, *.co.uk refused)
 *   IPv4[:port]     1.2.3.4, 1.2.3.4:80
 *   IPv6            ::1, or bracketed: [::1], [::1]:443
 * Refused: empty, "*" alone, URLs (scheme, path, query), userinfo (@),
 * ports outside 1-65535, non-ASCII names, bad labels. */
#ifndef CORDON_POLICY_HOST_H
#define CORDON_POLICY_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum host_kind { HOST_NAME, HOST_WILDCARD, HOST_IPV4, HOST_IPV6 };

struct host_pattern {
	enum host_kind kind;
	/* HOST_NAME: the name; HOST_WILDCARD: the domain after "*."; IP kinds:
	 * canonical text (inet_ntop, no brackets). Lower case, no trailing dot. */
	char *name;
	uint16_t port;		/* 0: any port */
	unsigned char addr[16];	/* IPv4: first 4 bytes; IPv6: all 16 */
};

/* Parse one entry of len bytes (it may hold NULs, which are refused).
 * Returns 0, or -1 with *why pointing at a fixed, static reason that never
 * quotes the input (it may carry a password in userinfo). */
int host_parse(const char *text, size_t len, struct host_pattern *out,
	       const char **why);

/* Canonical text of an entry. Caller frees; NULL on allocation failure. */
char *host_format(const struct host_pattern *h);

void host_pattern_clear(struct host_pattern *h);

/* Normalise a requested name in place: lower case, one trailing dot
 * removed. Returns -1 when it is not a valid ASCII host name. */
int host_normalise_name(char *name);

/* Does entry h allow or deny a request for host (a normalised name or an
 * IP literal in any valid spelling) on port? A name never matches an IP
 * entry and an IP literal never matches a name or wildcard entry. */
bool host_match(const struct host_pattern *h, const char *host, uint16_t port);

/* Does entry a match everything entry b matches? (b's requests are a
 * subset of a's.) Used to check an executor's host need against the
 * policy's allow list. */
bool host_covers(const struct host_pattern *a, const struct host_pattern *b);

/* An address range, "10.20.0.0/16" or "fd00:1::/32": the operator's way
 * to let a listed name resolve into an internal network. The prefix
 * length is required; bits beyond it must be zero; /0 is refused. */
struct net_range {
	int family;		/* AF_INET or AF_INET6 */
	unsigned char addr[16];	/* IPv4: first 4 bytes */
	unsigned int bits;	/* 1-32 or 1-128 */
};

/* Parse one range of len bytes; -1 with *why a fixed reason (never
 * quoting the input). */
int range_parse(const char *text, size_t len, struct net_range *out,
		const char **why);
/* Canonical text ("10.20.0.0/16") into buf of at least RANGE_TEXT_MAX. */
#define RANGE_TEXT_MAX 64
void range_format(const struct net_range *r, char *buf);
/* Does r hold the address (family AF_INET: 4 bytes, AF_INET6: 16)? */
bool range_contains(const struct net_range *r, int family,
		    const unsigned char *addr);
/* Does a hold every address of b? */
bool range_covers(const struct net_range *a, const struct net_range *b);

#endif
