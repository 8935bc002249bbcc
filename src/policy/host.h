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

#endif
