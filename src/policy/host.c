/* host.c: the policy's host entries: parsing one entry into a
 * struct host_pattern, its canonical text, and the match and covers rules
 * the gateway and the grant check share (see host.h).
 *
 * Refusal reasons are static strings and never quote the entry: an entry
 * may be a URL with a password in its userinfo. */
#include "host.h"

#include <arpa/inet.h>
#include <libpsl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HOST_NAME_LEN_MAX 253
#define HOST_LABEL_LEN_MAX 63
/* Longer than any acceptable entry ("*." + 253 + "." + ":65535", or a
 * bracketed IPv6 with a port): anything longer is refused unread, which
 * lets the parser work on a fixed buffer. */
#define HOST_TEXT_MAX 272

/* The public suffix list, loaded once on first use and never freed. It is
 * the only state this module keeps: read-only after pthread_once sets it,
 * so concurrent readers need no lock. NULL when libpsl has no list, and
 * then every wildcard is refused (we cannot tell *.com from *.example.com). */
static const psl_ctx_t *host_psl;
static pthread_once_t host_psl_once = PTHREAD_ONCE_INIT;

static void host_psl_load(void)
{
	host_psl = psl_latest(NULL);
	if (!host_psl)
		host_psl = psl_builtin();
}

static const psl_ctx_t *host_psl_get(void)
{
	pthread_once(&host_psl_once, host_psl_load);
	return host_psl;
}

static bool host_is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static bool host_is_label_char(char c)
{
	return (c >= 'a' && c <= 'z') || host_is_digit(c) || c == '-' ||
	       c == '_';
}

static bool host_is_space(char c)
{
	return c == ' ' || (c >= '\t' && c <= '\r');
}

static void host_lower(char *s)
{
	/* ASCII only: tolower() would follow the locale. */
	for (; *s; s++)
		if (*s >= 'A' && *s <= 'Z')
			*s = (char)(*s - 'A' + 'a');
}

/* Checks one label [s, s+n); NULL when it is good. */
static const char *host_check_label(const char *s, size_t n)
{
	if (n == 0)
		return "host name has an empty label";
	if (n > HOST_LABEL_LEN_MAX)
		return "host name has a label longer than 63 characters";
	if (s[0] == '-' || s[n - 1] == '-')
		return "host name label starts or ends with '-'";
	for (size_t i = 0; i < n; i++)
		if (!host_is_label_char(s[i]))
			return "host name has a character outside a-z, 0-9, '-' and '_'";
	return NULL;
}

static bool host_all_digits(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!host_is_digit(s[i]))
			return false;
	return true;
}

/* A name that a resolver could read as an IPv4 address ("1.2.3",
 * "0x7f.1", "2130706433") would let an address in under a name rule, so
 * it is not a name: refuse an all-numeric last label (no real top-level
 * domain is numeric) and anything inet_aton accepts. */
static bool host_looks_numeric(const char *name, const char *last, size_t n)
{
	struct in_addr a;

	return host_all_digits(last, n) || inet_aton(name, &a) != 0;
}

/* Checks a lower-cased name with no trailing dot; NULL when it is good. */
static const char *host_check_name(const char *name)
{
	size_t len = strlen(name);
	const char *label = name, *why;

	if (len == 0)
		return "empty host name";
	if (len > HOST_NAME_LEN_MAX)
		return "host name is longer than 253 characters";
	for (;;) {
		const char *dot = strchr(label, '.');
		size_t n = dot ? (size_t)(dot - label) : strlen(label);

		why = host_check_label(label, n);
		if (why)
			return why;
		if (!dot)
			return host_looks_numeric(name, label, n) ?
				       "not a valid host name (numeric, like an IPv4 address)" :
				       NULL;
		label = dot + 1;
	}
}

/* host_normalise_name() with a reason for the parser. */
static const char *host_normalise(char *name)
{
	size_t len = strlen(name);

	host_lower(name);
	if (len > 0 && name[len - 1] == '.')
		name[len - 1] = '\0';
	return host_check_name(name);
}

int host_normalise_name(char *name)
{
	if (!name)
		return -1;
	return host_normalise(name) ? -1 : 0;
}

/* Decimal 1-65535, one spelling only: no sign, no leading zero. */
static const char *host_parse_port(const char *s, uint16_t *port)
{
	size_t n = strlen(s);
	unsigned long v = 0;

	if (n == 0)
		return "empty port after ':'";
	if (!host_all_digits(s, n))
		return "port is not a decimal number";
	if (s[0] == '0')
		return n == 1 ? "port 0 is out of range 1-65535" :
				"port has a leading zero";
	if (n > 5)
		return "port is out of range 1-65535";
	for (size_t i = 0; i < n; i++)
		v = v * 10 + (unsigned long)(s[i] - '0');
	if (v > 65535)
		return "port is out of range 1-65535";
	*port = (uint16_t)v;
	return NULL;
}

/* Whole-entry checks before any splitting, so that URL pieces and
 * userinfo get a reason that says what they are. */
static const char *host_check_text(const char *text, size_t len)
{
	if (len == 0)
		return "empty host";
	if (memchr(text, '\0', len))
		return "host contains a NUL byte";
	if (len > HOST_TEXT_MAX)
		return "host is too long";
	if (host_is_space(text[0]) || host_is_space(text[len - 1]))
		return "host has leading or trailing whitespace";
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];

		if (c >= 0x80)
			return "host is not ASCII (write IDNs in their xn-- form)";
		if (c < 0x20 || c == 0x7f)
			return "host contains a control character";
	}
	if (memmem(text, len, "://", 3))
		return "host is a URL; give the host name only";
	if (memchr(text, '@', len))
		return "host carries userinfo";
	if (memchr(text, '/', len))
		return "host carries a path";
	if (memchr(text, '?', len))
		return "host carries a query";
	if (memchr(text, '#', len))
		return "host carries a fragment";
	if (len == 1 && text[0] == '*')
		return "\"*\" alone would allow every host";
	return NULL;
}

static const char *host_set_ip(struct host_pattern *out, int af)
{
	char txt[INET6_ADDRSTRLEN];

	if (!inet_ntop(af, out->addr, txt, sizeof(txt)))
		return "cannot format the IP address";
	out->kind = af == AF_INET ? HOST_IPV4 : HOST_IPV6;
	out->name = strdup(txt);
	return out->name ? NULL : "out of memory";
}

static const char *host_parse_v6(const char *s, struct host_pattern *out)
{
	if (strchr(s, '%'))
		return "IPv6 zone ids are not allowed";
	if (inet_pton(AF_INET6, s, out->addr) != 1)
		return "not a valid IPv6 address";
	return host_set_ip(out, AF_INET6);
}

/* "[v6]" or "[v6]:port"; buf starts with '[' and may be modified. */
static const char *host_parse_bracketed(char *buf, struct host_pattern *out)
{
	char *close = strchr(buf, ']');
	const char *why;

	if (!close)
		return "'[' without a closing ']'";
	if (close[1] != '\0' && close[1] != ':')
		return "unexpected text after ']'";
	if (close[1] == ':') {
		why = host_parse_port(close + 2, &out->port);
		if (why)
			return why;
	}
	*close = '\0';
	if (strchr(buf + 1, '.') && !strchr(buf + 1, ':'))
		return "brackets are for IPv6 addresses only";
	return host_parse_v6(buf + 1, out);
}

static const char *host_parse_wildcard(char *domain, struct host_pattern *out)
{
	const psl_ctx_t *psl;
	const char *why;

	if (strchr(domain, '*'))
		return "a wildcard must be the whole first label, as in *.example.com";
	why = host_normalise(domain);
	if (why)
		return why;
	if (!strchr(domain, '.'))
		return "wildcard domain needs at least two labels";
	psl = host_psl_get();
	if (!psl)
		return "no public suffix list to check a wildcard against";
	if (psl_is_public_suffix2(psl, domain, PSL_TYPE_ICANN))
		return "wildcard over a public suffix";
	out->kind = HOST_WILDCARD;
	out->name = strdup(domain);
	return out->name ? NULL : "out of memory";
}

/* A name, wildcard or IPv4 address, the port already split off. */
static const char *host_parse_host(char *host, struct host_pattern *out)
{
	const char *why;

	if (inet_pton(AF_INET, host, out->addr) == 1)
		return host_set_ip(out, AF_INET);
	if (strcmp(host, "*") == 0)
		return "\"*\" alone would allow every host";
	if (strncmp(host, "*.", 2) == 0)
		return host_parse_wildcard(host + 2, out);
	if (strchr(host, '*'))
		return "a wildcard must be the whole first label, as in *.example.com";
	why = host_normalise(host);
	if (why)
		return why;
	out->kind = HOST_NAME;
	out->name = strdup(host);
	return out->name ? NULL : "out of memory";
}

static const char *host_parse_buf(char *buf, struct host_pattern *out)
{
	char *colon = strchr(buf, ':');
	const char *why;

	if (buf[0] == '[')
		return host_parse_bracketed(buf, out);
	if (strchr(buf, '[') || strchr(buf, ']'))
		return "misplaced '[' or ']'";
	/* Two colons or more: a bare IPv6 address, which cannot take a port. */
	if (colon && strchr(colon + 1, ':'))
		return host_parse_v6(buf, out);
	if (colon) {
		*colon = '\0';
		why = host_parse_port(colon + 1, &out->port);
		if (why)
			return why;
	}
	return host_parse_host(buf, out);
}

int host_parse(const char *text, size_t len, struct host_pattern *out,
	       const char **why)
{
	char buf[HOST_TEXT_MAX + 1];
	const char *reason;

	/* Zeroed first, so host_pattern_clear() is safe after a refusal. */
	memset(out, 0, sizeof(*out));
	reason = text ? host_check_text(text, len) : "empty host";
	if (!reason) {
		memcpy(buf, text, len);
		buf[len] = '\0';
		reason = host_parse_buf(buf, out);
	}
	if (why)
		*why = reason;
	if (reason) {
		host_pattern_clear(out);
		return -1;
	}
	return 0;
}

char *host_format(const struct host_pattern *h)
{
	char *s = NULL;
	int r;

	if (!h || !h->name)
		return NULL;
	if (h->kind == HOST_IPV6 && h->port)
		r = asprintf(&s, "[%s]:%u", h->name, (unsigned)h->port);
	else if (h->port)
		r = asprintf(&s, "%s%s:%u", h->kind == HOST_WILDCARD ? "*." : "",
			     h->name, (unsigned)h->port);
	else
		r = asprintf(&s, "%s%s", h->kind == HOST_WILDCARD ? "*." : "",
			     h->name);
	return r < 0 ? NULL : s;
}

void host_pattern_clear(struct host_pattern *h)
{
	if (!h)
		return;
	free(h->name);
	memset(h, 0, sizeof(*h));
}

/* Is name strictly beneath domain (both normalised)? */
static bool host_beneath(const char *name, const char *domain)
{
	size_t n = strlen(name), d = strlen(domain);

	return n > d + 1 && name[n - d - 1] == '.' &&
	       strcmp(name + n - d, domain) == 0;
}

/* An IP literal in any spelling inet_pton takes for af; IPv6 may be
 * bracketed. Zone ids never match. */
static bool host_literal(const char *host, int af, unsigned char *addr)
{
	char buf[INET6_ADDRSTRLEN + 2];
	size_t n = strlen(host);

	if (af == AF_INET6 && n >= 2 && host[0] == '[' && host[n - 1] == ']') {
		if (n - 2 >= sizeof(buf))
			return false;
		memcpy(buf, host + 1, n - 2);
		buf[n - 2] = '\0';
		host = buf;
	}
	return inet_pton(af, host, addr) == 1;
}

static bool host_match_name(const struct host_pattern *h, const char *host)
{
	char buf[HOST_NAME_LEN_MAX + 2];
	size_t n = strlen(host);

	/* Normalising refuses every IP literal, so none gets past here. */
	if (n >= sizeof(buf))
		return false;
	memcpy(buf, host, n + 1);
	if (host_normalise_name(buf) < 0)
		return false;
	if (h->kind == HOST_NAME)
		return strcmp(buf, h->name) == 0;
	return host_beneath(buf, h->name);
}

bool host_match(const struct host_pattern *h, const char *host, uint16_t port)
{
	unsigned char addr[16];

	if (!h || !h->name || !host)
		return false;
	if (h->port != 0 && h->port != port)
		return false;
	switch (h->kind) {
	case HOST_NAME:
	case HOST_WILDCARD:
		return host_match_name(h, host);
	case HOST_IPV4:
		return host_literal(host, AF_INET, addr) &&
		       memcmp(addr, h->addr, 4) == 0;
	case HOST_IPV6:
		return host_literal(host, AF_INET6, addr) &&
		       memcmp(addr, h->addr, 16) == 0;
	}
	return false;
}

bool host_covers(const struct host_pattern *a, const struct host_pattern *b)
{
	if (!a || !b || !a->name || !b->name)
		return false;
	if (a->port != 0 && a->port != b->port)
		return false;
	switch (a->kind) {
	case HOST_NAME:
		return b->kind == HOST_NAME && strcmp(a->name, b->name) == 0;
	case HOST_WILDCARD:
		if (b->kind == HOST_NAME)
			return host_beneath(b->name, a->name);
		return b->kind == HOST_WILDCARD &&
		       (strcmp(a->name, b->name) == 0 ||
			host_beneath(b->name, a->name));
	case HOST_IPV4:
		return b->kind == HOST_IPV4 && memcmp(a->addr, b->addr, 4) == 0;
	case HOST_IPV6:
		return b->kind == HOST_IPV6 && memcmp(a->addr, b->addr, 16) == 0;
	}
	return false;
}
