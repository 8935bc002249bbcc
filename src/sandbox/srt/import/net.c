/* net.c: srt's network settings as a cordon policy's
 * network.allow and network.deny, unix_sockets and sockets.
 *
 * Both read "*.example.com" as the names strictly beneath example.com,
 * and both consult the deny list first, so most entries carry over as
 * they are. What cordon's grammar refuses is never widened: an allow it
 * refuses (a wildcard over a public suffix, a malformed name) is dropped;
 * a deny it refuses ("*", "*:22", "*.co.uk") cannot be kept, so every
 * allow it could match is dropped in its place. What cordon's gateway
 * cannot hold at all (srt's checks inside a tunnel, a public address a
 * name must not resolve to) refuses the settings. */
#include "sandbox/srt/import/import.h"
#include "gateway/addrguard.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "policy/host.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <string.h>

/* A deny as srt reads it, enough to tell which allows it could match. */
struct srt_host {
	char name[300];		/* lower case, no trailing dot; the domain of a wildcard */
	bool any;		/* "*": every host */
	bool wildcard;		/* "*.name" */
	uint16_t port;		/* 0: any port */
};

/* An allow entry on its way into the policy. */
struct allow {
	struct host_pattern h;
	char *where;
	bool gone;
};

/* srt's port suffix: 1-65535, no leading zero; 0 when s is not one. */
static uint16_t srt_port(const char *s)
{
	unsigned long v = 0;

	if (*s < '1' || *s > '9' || strlen(s) > 5 || strspn(s, "0123456789") != strlen(s))
		return 0;
	v = strtoul(s, NULL, 10);
	return v <= 65535 ? (uint16_t)v : 0;
}

static void srt_host_read(const char *s, struct srt_host *h)
{
	char *colon, *name = h->name;
	size_t n;

	memset(h, 0, sizeof(*h));
	snprintf(h->name, sizeof(h->name), "%s", s);
	for (char *c = h->name; *c; c++)
		*c = (char)tolower((unsigned char)*c);
	if (name[0] == '[' && (colon = strchr(name, ']'))) {
		*colon = '\0';
		if (colon[1] == ':')
			h->port = srt_port(colon + 2);
		memmove(name, name + 1, strlen(name));
	} else if ((colon = strchr(name, ':')) && !strchr(colon + 1, ':') &&
		   (h->port = srt_port(colon + 1))) {
		*colon = '\0';
	}
	if (strcmp(name, "*") == 0) {
		h->any = true;
	} else if (strncmp(name, "*.", 2) == 0) {
		h->wildcard = true;
		memmove(name, name + 2, strlen(name) - 1);
	}
	n = strlen(name);
	if (n > 0 && name[n - 1] == '.')
		name[n - 1] = '\0';
}

/* Is name strictly beneath domain? */
static bool beneath(const char *name, const char *domain)
{
	size_t n = strlen(name), d = strlen(domain);

	return n > d + 1 && name[n - d - 1] == '.' && strcmp(name + n - d, domain) == 0;
}

/* Could srt's deny d refuse a request that allow a lets through? */
static bool could_match(const struct srt_host *d, const struct host_pattern *a)
{
	unsigned char addr[16];

	if (d->port && a->port && d->port != a->port)
		return false;
	if (d->any)
		return true;
	switch (a->kind) {
	case HOST_NAME:
		return d->wildcard ? beneath(a->name, d->name) : strcmp(a->name, d->name) == 0;
	case HOST_WILDCARD:
		if (d->wildcard)
			return strcmp(a->name, d->name) == 0 || beneath(a->name, d->name) ||
			       beneath(d->name, a->name);
		return beneath(d->name, a->name);
	case HOST_IPV4:
		return !d->wildcard && inet_pton(AF_INET, d->name, addr) == 1 &&
		       memcmp(addr, a->addr, 4) == 0;
	case HOST_IPV6:
		return !d->wildcard && inet_pton(AF_INET6, d->name, addr) == 1 &&
		       memcmp(addr, a->addr, 16) == 0;
	}
	return false;
}

static enum addr_class classify(int family, const unsigned char *addr)
{
	struct sockaddr_storage ss;
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;

	memset(&ss, 0, sizeof(ss));
	if (family == AF_INET) {
		s4->sin_family = AF_INET;
		memcpy(&s4->sin_addr, addr, 4);
	} else {
		s6->sin6_family = AF_INET6;
		memcpy(&s6->sin6_addr, addr, 16);
	}
	return addrguard_classify((struct sockaddr *)&ss, NULL);
}

static bool listed(const struct host_pattern *list, size_t n, const struct host_pattern *h)
{
	for (size_t i = 0; i < n; i++)
		if (host_covers(&list[i], h) && host_covers(h, &list[i]))
			return true;
	return false;
}

static void allows_free(struct allow *a, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		host_pattern_clear(&a[i].h);
		free(a[i].where);
	}
	free(a);
}

/* allowedDomains as cordon reads them; refused ones dropped. */
static int read_allows(struct srt_import *im, json_t *arr, struct allow **out, size_t *n,
		       struct err **e)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("network.allowedDomains", i);
		struct host_pattern h;
		const char *why = NULL;
		struct allow *na;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		/* Not quoted: an entry cordon refuses may carry a password. */
		if (host_parse(json_string_value(v), json_string_length(v), &h, &why) < 0) {
			srt_note(im, ip, "dropped: cordon refuses it (%s); grants less", why);
			continue;
		}
		na = realloc(*out, (*n + 1) * sizeof(**out));
		if (!na) {
			host_pattern_clear(&h);
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		}
		*out = na;
		na[*n] = (struct allow){ .h = h, .where = steal_pointer(&ip) };
		(*n)++;
	}
	return 0;
}

/* A deny cordon's grammar refuses: the allows it could match go. It is
 * quoted only when it is srt's "*" or "*:port" (another may carry a
 * password). */
static int deny_by_allows(struct srt_import *im, const char *where, const char *text,
			  const char *why, struct allow *a, size_t n, struct err **e)
{
	_cleanup_free_ char *q = NULL;
	struct srt_host d = { .any = false };
	size_t gone = 0;

	srt_host_read(text, &d);
	if (d.any && !(q = srt_quote(text)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *qa = NULL, *t = NULL;

		if (a[i].gone || !could_match(&d, &a[i].h))
			continue;
		t = host_format(&a[i].h);
		if (!t || !(qa = srt_quote(t)))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		a[i].gone = true;
		gone++;
		srt_note(im, a[i].where, "%s dropped: %s could match it, and cordon cannot hold "
			 "that deny (grants less)", qa, where);
	}
	if (d.any)
		srt_note(im, where, "%s (every host%s) has no equivalent in cordon, whose "
			 "network.allow is the only way out: %s", q, d.port ? " on that port" : "",
			 gone ? "the allows it covers were dropped instead" :
			 "no network.allow entry is left for it to cover");
	else
		srt_note(im, where, "cordon refuses this deny (%s): %s", why,
			 gone ? "the allows it could match were dropped instead" :
			 "dropped, as no network.allow entry could match it");
	return 0;
}

/* *public is set to the path of the first public address denied: srt also
 * refuses a name that resolves to it, which cordon cannot hold. */
static int import_denies(struct srt_import *im, json_t *arr, struct allow *a, size_t n,
			 char **public, struct err **e)
{
	struct policy *p = im->p;
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("network.deniedDomains", i);
		_cleanup_free_ char *q = srt_quote(json_string_value(v));
		struct host_pattern h;
		const char *why = NULL;
		int family;

		if (!ip || !q)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (host_parse(json_string_value(v), json_string_length(v), &h, &why) < 0) {
			if (deny_by_allows(im, ip, json_string_value(v), why, a, n, e) < 0)
				return -1;
			continue;
		}
		family = h.kind == HOST_IPV4 ? AF_INET : AF_INET6;
		if ((h.kind == HOST_IPV4 || h.kind == HOST_IPV6) &&
		    classify(family, h.addr) == ADDR_PUBLIC && !*public &&
		    !(*public = strdup(ip))) {
			host_pattern_clear(&h);
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		}
		if (!listed(p->net_deny, p->n_net_deny, &h) &&
		    policy_add_host(&p->net_deny, &p->n_net_deny, json_string_value(v), ip, e) < 0) {
			host_pattern_clear(&h);
			return -1;
		}
		host_pattern_clear(&h);
	}
	return 0;
}

/* A public address srt refuses a name resolving to, at where: cordon's
 * gateway has no such list, so with a name allowed the settings are
 * refused (the import is never wider than srt); with none, an address
 * deny is all srt's holds too. */
static int refuse_resolved(bool names, const char *where, const char *what,
			   struct err **e)
{
	if (!names)
		return 0;
	return err_set(e, ERR_CONFIG, 0, "%s: %s: srt also refuses an allowed name that "
		       "resolves there, and cordon's gateway has no list of public addresses to "
		       "refuse; drop the entry or the allowed names to import", json_path_show(where),
		       what);
}

/* deniedResolvedAddresses: cordon's gateway refuses internal addresses
 * itself, and has no list for any other. */
static int note_resolved(struct srt_import *im, json_t *arr, bool names, struct err **e)
{
	json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("network.deniedResolvedAddresses", i);
		_cleanup_free_ char *q = NULL, *text = NULL;
		const char *s = json_string_value(v), *why = NULL;
		unsigned char last[16];
		enum addr_class c1, c2;
		struct net_range r;
		unsigned int all;

		if (!ip || asprintf(&text, strchr(s, '/') ? "%s" : strchr(s, ':') ?
					  "%s/128" : "%s/32", s) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		/* Quoted only once it reads as an address range. */
		if (range_parse(text, strlen(text), &r, &why) == 0) {
			if (!(q = srt_quote(s)))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			all = r.family == AF_INET ? 32 : 128;
			memcpy(last, r.addr, sizeof(last));
			for (unsigned int b = r.bits; b < all; b++)
				last[b / 8] |= (unsigned char)(0x80u >> (b % 8));
			c1 = classify(r.family, r.addr);
			c2 = classify(r.family, last);
			if (c1 != ADDR_PUBLIC && c1 == c2) {
				srt_note(im, ip, "%s: cordon's gateway refuses a name resolving there "
					 "already (%s)", q, addrguard_reason(c1));
				continue;
			}
		}
		if (!names) {
			srt_note(im, ip, "%s%sno name is allowed to resolve there: nothing to carry "
				 "over", q ? q : "", q ? ": " : "");
			continue;
		}
		return refuse_resolved(names, ip, q ? "a range with public addresses" :
				       "an entry cordon cannot read as a range", e);
	}
	return 0;
}

/* allowUnixSockets. srt on Linux grants nothing by this list: without
 * allowAllUnixSockets every unix socket is refused, with it every socket
 * its filesystem rules leave visible may be used. cordon's guard makes a
 * sockets entry beneath a read deny a read exception, so an entry is kept
 * only where no deny of the settings hides it, to lift one of cordon's
 * own escape-socket denies, which srt has not. */
static int import_unix_sockets(struct srt_import *im, json_t *net, struct err **e)
{
	json_t *arr = json_object_get(net, "allowUnixSockets"), *v;
	bool all = json_is_true(json_object_get(net, "allowAllUnixSockets"));
	size_t i;

	if (all) {
		im->p->unix_sockets_all = true;
		srt_note(im, "network.allowAllUnixSockets", "unix_sockets \"all\"; cordon still "
			 "hides its escape sockets (docker, dbus, ssh-agent, ...) unless sockets "
			 "names them, and keeps AF_VSOCK refused, which srt unblocks (stricter)");
	}
	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("network.allowUnixSockets", i), *t = NULL;
		_cleanup_free_ char *qt = NULL, *qd = NULL;
		const char *d;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (srt_import_path(im, ip, v, SRT_PATH_ALLOW, NULL, &t, e) < 0)
			return -1;
		if (!t)
			continue;
		if (!(qt = srt_quote(t)))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (!all) {
			srt_note(im, ip, "%s dropped: without allowAllUnixSockets srt on Linux refuses "
				 "every unix socket, as cordon does", qt);
			continue;
		}
		if ((d = srt_denied_at(im, t))) {
			if (!(qd = srt_quote(d)))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			srt_note(im, ip, "%s dropped: it lies in denied %s, which srt keeps hidden "
				 "and a cordon sockets entry would make readable (grants less)", qt, qd);
			continue;
		}
		if (policy_add_path(&im->p->sockets, t, ip, e) < 0)
			return -1;
		srt_note(im, ip, "%s: listed in sockets: naming one of cordon's escape sockets "
			 "exactly lifts its default deny", qt);
	}
	return 0;
}

#define FILTER "dropped: it serves srt's request filter (filterRequest), which cordon has not"

static const struct srt_drop network_drops[] = {
	{ "deniedDomainReasons", SRT_WHEN_NONEMPTY, "dropped: a cordon refusal gives its "
	  "own reason" },
	{ "strictAllowlist", SRT_WHEN_FALSE, "cordon never asks about a host: one outside "
	  "network.allow is refused (stricter)" },
	{ "allowLocalBinding", SRT_WHEN_TRUE, "cordon's sandbox has a loopback of its own, as "
	  "srt's has on Linux; the host's local ports are reached only through network.allow "
	  "entries that name them (127.0.0.1:PORT)" },
	{ "allowMachLookup", SRT_WHEN_NONEMPTY, "macOS only: dropped" },
	{ "httpProxyPort", SRT_WHEN_ANY, "dropped: cordon's own gateway is the way out and "
	  "filters by network.allow; an external proxy's rules are not carried over" },
	{ "socksProxyPort", SRT_WHEN_ANY, "dropped: cordon's own gateway is the way out and "
	  "filters by network.allow; an external proxy's rules are not carried over" },
	{ "mitmProxy", SRT_WHEN_ANY, "dropped: cordon routes no host through another proxy; "
	  "those domains stay subject to network.allow" },
	{ "allowPlaintextHeaderSet", SRT_WHEN_TRUE, FILTER },
	{ "stripResponseHeaders", SRT_WHEN_NONEMPTY, FILTER },
	{ "ambiguousRequestTarget", SRT_WHEN_ANY, FILTER },
	{ "tlsTerminate", SRT_WHEN_ANY, "dropped: cordon terminates no TLS; a tunnel to an "
	  "allowed host is relayed as it is" },
	{ "parentProxy", SRT_WHEN_ANY, "dropped: cordon's gateway dials allowed hosts itself" },
	{ NULL, SRT_WHEN_ANY, NULL },
};

/* srt's restrictions inside a connection, which cordon's gateway has not:
 * true is refused (the import is never wider than srt). */
static const struct {
	const char *key, *why;
} refused_true[] = {
	{ "refuseOpaqueTunnels", "cordon's gateway relays CONNECT and SOCKS tunnels to "
	  "allowed hosts without looking inside" },
	{ "requireHostMatch", "cordon's gateway judges the host it is asked to dial, not a "
	  "Host header or TLS server name sent inside" },
};

int srt_import_network(struct srt_import *im, json_t *net, struct err **e)
{
	_cleanup_free_ char *public = NULL;
	struct allow *a = NULL;
	struct policy *p = im->p;
	size_t n = 0;
	bool names = false;
	int r = -1;

	for (size_t i = 0; i < sizeof(refused_true) / sizeof(refused_true[0]); i++)
		if (json_is_true(json_object_get(net, refused_true[i].key)))
			return err_set(e, ERR_CONFIG, 0, "network.%s: no equivalent: %s; set it "
				       "false or drop it to import", refused_true[i].key,
				       refused_true[i].why);
	if (read_allows(im, json_object_get(net, "allowedDomains"), &a, &n, e) < 0 ||
	    import_denies(im, json_object_get(net, "deniedDomains"), a, n, &public, e) < 0)
		goto out;
	for (size_t i = 0; i < n; i++) {
		_cleanup_free_ char *t = NULL;

		if (a[i].gone || listed(p->net_allow, p->n_net_allow, &a[i].h))
			continue;
		t = host_format(&a[i].h);
		if (!t || policy_add_host(&p->net_allow, &p->n_net_allow, t, a[i].where, e) < 0)
			goto out;
		names |= a[i].h.kind == HOST_NAME || a[i].h.kind == HOST_WILDCARD;
	}
	if (names)
		srt_note(im, "network.allowedDomains", "srt lets an allowed name resolve to a "
			 "private address unless deniedResolvedAddresses lists it; cordon's gateway "
			 "refuses private, shared and other internal addresses unless "
			 "network.allow_ranges names them (stricter)");
	if (public && refuse_resolved(names, public, "a public address", e) < 0)
		goto out;
	if (note_resolved(im, json_object_get(net, "deniedResolvedAddresses"), names, e) < 0 ||
	    import_unix_sockets(im, net, e) < 0)
		goto out;
	srt_drop_notes(im, net, "network", network_drops);
	r = 0;
out:
	allows_free(a, n);
	if (r < 0 && !*e)
		err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	return r;
}
