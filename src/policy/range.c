/* range.c: the policy's address ranges (network.allow_ranges, see
 * host.h): parsing, canonical text and containment. Refusal reasons are
 * fixed strings that never quote the entry. */
#include "policy/host.h"
#include "lib/num.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#define RANGE_INPUT_MAX 64

static bool bits_beyond_zero(const unsigned char *a, unsigned int width, unsigned int bits)
{
	for (unsigned int i = bits; i < width; i++)
		if (a[i / 8] & (0x80u >> (i % 8)))
			return false;
	return true;
}

int range_parse(const char *text, size_t len, struct net_range *out,
		const char **why)
{
	char buf[RANGE_INPUT_MAX + 1];
	char *slash;
	unsigned long bits = 0;
	unsigned int width;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (len == 0)
		return *why = "empty range", -1;
	if (len > RANGE_INPUT_MAX || memchr(text, '\0', len))
		return *why = "not an address range such as 10.20.0.0/16", -1;
	memcpy(buf, text, len);
	buf[len] = '\0';
	slash = strchr(buf, '/');
	if (!slash)
		return *why = "a range needs a prefix length, as in 10.20.0.0/16", -1;
	*slash = '\0';
	if (num_parse_ulong(slash + 1, 128, &bits) < 0 || (slash[1] == '0' && slash[2]))
		return *why = "the prefix length is not a decimal number from 1 to 128", -1;
	if (strchr(buf, '%'))
		return *why = "IPv6 zone ids are not allowed", -1;
	if (inet_pton(AF_INET, buf, out->addr) == 1) {
		out->family = AF_INET;
		width = 32;
	} else if (inet_pton(AF_INET6, buf, out->addr) == 1) {
		out->family = AF_INET6;
		width = 128;
	} else {
		return *why = "not an IPv4 or IPv6 address before the '/'", -1;
	}
	if (bits == 0)
		return *why = "a /0 range would allow every address", -1;
	if (bits > width)
		return *why = "the prefix length is longer than the address", -1;
	if (!bits_beyond_zero(out->addr, width, (unsigned int)bits))
		return *why = "the address has bits set beyond the prefix length", -1;
	out->bits = (unsigned int)bits;
	return 0;
}

void range_format(const struct net_range *r, char *buf)
{
	char a[INET6_ADDRSTRLEN];

	if (!inet_ntop(r->family, r->addr, a, sizeof(a)))
		snprintf(a, sizeof(a), "?");
	snprintf(buf, RANGE_TEXT_MAX, "%s/%u", a, r->bits);
}

bool range_contains(const struct net_range *r, int family, const unsigned char *addr)
{
	unsigned int full = r->bits / 8, rest = r->bits % 8;

	if (family != r->family)
		return false;
	if (memcmp(r->addr, addr, full) != 0)
		return false;
	if (rest == 0)
		return true;
	unsigned char mask = (unsigned char)(0xffu << (8 - rest));
	return (r->addr[full] & mask) == (addr[full] & mask);
}

bool range_covers(const struct net_range *a, const struct net_range *b)
{
	return a->family == b->family && a->bits <= b->bits &&
	       range_contains(a, b->family, b->addr);
}
