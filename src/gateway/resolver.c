/* resolver.c: the gateway's name lookups with c-ares (see resolver.h). It
 * owns one c-ares channel, tells the event loop which sockets to watch,
 * and turns c-ares answers into sockaddr arrays with the port set.
 *
 * For names only: the gateway handles IP literals itself (an allowed
 * literal is dialled as is). A literal that still reaches us is answered
 * here without a query: c-ares 1.18 would send a dotted-quad to DNS all
 * the same (its AF_UNSPEC check of literals is broken) and add the
 * answers to the literal.
 *
 * Callbacks: a lookup's callback may run before resolver_lookup()
 * returns (literals, /etc/hosts, immediate failures). It may start other
 * lookups; it must not free the resolver. */
#include "gateway/resolver.h"

#include "lib/cleanup.h"

#include <ares.h>
#include <arpa/inet.h>
#include <errno.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* c-ares doubles the timeout on each round, so two tries wait 2 s, then
 * 4 s: a dead server costs a request 6 s, not c-ares's default 75. */
#define RESOLVER_TIMEOUT_MS 2000
#define RESOLVER_TRIES 2

struct resolver {
	ares_channel ch;
	resolver_watch_cb watch;
	void *watch_arg;
	bool closing;	/* in resolver_free: every answer is ECANCELED */
};

struct lookup {
	struct resolver *r;
	resolver_cb cb;
	void *arg;
	uint16_t port;
};

static void on_sock_state(void *data, ares_socket_t fd, int readable,
			  int writable)
{
	struct resolver *r = data;

	r->watch(r->watch_arg, fd, readable != 0, writable != 0);
}

static int status_errno(int status)
{
	switch (status) {
	case ARES_ENOTFOUND:
	case ARES_ENODATA:
		return ENOENT;
	case ARES_ETIMEOUT:
		return ETIMEDOUT;
	case ARES_ECANCELLED:
	case ARES_EDESTRUCTION:
		return ECANCELED;
	default:
		return EIO;
	}
}

/* Copies c-ares's nodes into one array; returns how many, or -1 (ENOMEM). */
static ssize_t copy_nodes(const struct ares_addrinfo *res, uint16_t port,
			  struct sockaddr_storage **out)
{
	const struct ares_addrinfo_node *nd;
	struct sockaddr_storage *v;
	size_t n = 0;

	*out = NULL;
	for (nd = res ? res->nodes : NULL; nd; nd = nd->ai_next)
		if (nd->ai_addr && (nd->ai_family == AF_INET ||
				    nd->ai_family == AF_INET6))
			n++;
	if (!n)
		return 0;
	v = calloc(n, sizeof(*v));
	if (!v)
		return -1;
	n = 0;
	for (nd = res->nodes; nd; nd = nd->ai_next) {
		if (!nd->ai_addr)
			continue;
		if (nd->ai_family == AF_INET &&
		    nd->ai_addrlen >= sizeof(struct sockaddr_in)) {
			struct sockaddr_in *sin = (struct sockaddr_in *)&v[n++];

			memcpy(sin, nd->ai_addr, sizeof(*sin));
			sin->sin_port = htons(port);
		} else if (nd->ai_family == AF_INET6 &&
			   nd->ai_addrlen >= sizeof(struct sockaddr_in6)) {
			struct sockaddr_in6 *sin6 =
				(struct sockaddr_in6 *)&v[n++];

			memcpy(sin6, nd->ai_addr, sizeof(*sin6));
			sin6->sin6_port = htons(port);
		}
	}
	*out = v;
	return (ssize_t)n;
}

static void on_addrinfo(void *arg, int status, int timeouts,
			struct ares_addrinfo *res)
{
	struct lookup *l = arg;
	_cleanup_free_ struct sockaddr_storage *addrs = NULL;
	ssize_t n = 0;
	int st = 0;

	(void)timeouts;
	/* While the channel is destroyed, c-ares ends an AF_UNSPEC lookup
	 * whose A half already answered as a success: not ours to pass on. */
	if (l->r->closing)
		st = ECANCELED;
	else if (status != ARES_SUCCESS)
		st = status_errno(status);
	else if ((n = copy_nodes(res, l->port, &addrs)) < 0)
		st = EIO;
	else if (n == 0)
		st = ENOENT;
	if (st)
		n = 0;
	if (res)
		ares_freeaddrinfo(res);
	l->cb(l->arg, st, st ? NULL : addrs, (size_t)n);
	free(l);
}

/* Literals: answered here, never sent to DNS. Returns false for a name. */
static bool answer_literal(const char *name, uint16_t port, resolver_cb cb,
			   void *arg)
{
	struct sockaddr_storage ss;

	memset(&ss, 0, sizeof(ss));
	if (inet_pton(AF_INET, name, &((struct sockaddr_in *)&ss)->sin_addr) == 1) {
		struct sockaddr_in *sin = (struct sockaddr_in *)&ss;

		sin->sin_family = AF_INET;
		sin->sin_port = htons(port);
	} else if (inet_pton(AF_INET6, name,
			     &((struct sockaddr_in6 *)&ss)->sin6_addr) == 1) {
		struct sockaddr_in6 *sin6 = (struct sockaddr_in6 *)&ss;

		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons(port);
	} else if (strpbrk(name, ":%[]")) {
		/* A malformed IPv6 literal or a zone id: no DNS name either. */
		cb(arg, ENOENT, NULL, 0);
		return true;
	} else {
		return false;
	}
	cb(arg, 0, &ss, 1);
	return true;
}

void resolver_lookup(struct resolver *r, const char *name, uint16_t port,
		     resolver_cb cb, void *arg)
{
	struct ares_addrinfo_hints hints;
	struct lookup *l;
	char service[8];

	if (r->closing) {
		cb(arg, ECANCELED, NULL, 0);
		return;
	}
	if (!name || !*name) {
		cb(arg, ENOENT, NULL, 0);
		return;
	}
	if (answer_literal(name, port, cb, arg))
		return;
	l = calloc(1, sizeof(*l));
	if (!l) {
		cb(arg, EIO, NULL, 0);
		return;
	}
	l->r = r;
	l->cb = cb;
	l->arg = arg;
	l->port = port;
	memset(&hints, 0, sizeof(hints));
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	/* c-ares refuses service "0"; the ports are set on copy anyway. */
	if (port) {
		hints.ai_flags = ARES_AI_NUMERICSERV;
		snprintf(service, sizeof(service), "%u", (unsigned int)port);
	}
	ares_getaddrinfo(r->ch, name, port ? service : NULL, &hints,
			 on_addrinfo, l);
}

int resolver_new(const char *servers, resolver_watch_cb watch, void *watch_arg,
		 struct resolver **out, struct err **e)
{
	struct resolver *r;
	struct ares_options o;
	int rc;

	if (servers && !*servers)
		return err_set(e, ERR_CONFIG, 0, "DNS servers: empty list");
	r = calloc(1, sizeof(*r));
	if (!r)
		return err_set(e, ERR_INTERNAL, ENOMEM, "resolver");
	r->watch = watch;
	r->watch_arg = watch_arg;

	/* c-ares counts its initialisations: each resolver takes one and
	 * gives it back in resolver_free, so no flag of ours records it. On
	 * Linux it does no real work; it is not thread-safe, which the
	 * gateway (one thread) does not need. */
	rc = ares_library_init(ARES_LIB_INIT_ALL);
	if (rc != ARES_SUCCESS) {
		free(r);
		return err_set(e, ERR_INTERNAL, 0, "c-ares: %s",
			       ares_strerror(rc));
	}

	memset(&o, 0, sizeof(o));
	o.timeout = RESOLVER_TIMEOUT_MS;
	o.tries = RESOLVER_TRIES;
	/* HOSTALIASES is the environment's, not the policy's. */
	o.flags = ARES_FLAG_NOALIASES;
	/* No search domains: a sandbox asking for "db" must not reach the
	 * host's db.corp.example. */
	o.domains = NULL;
	o.ndomains = 0;
	o.sock_state_cb = on_sock_state;
	o.sock_state_cb_data = r;
	rc = ares_init_options(&r->ch, &o,
			       ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES |
				       ARES_OPT_FLAGS | ARES_OPT_DOMAINS |
				       ARES_OPT_SOCK_STATE_CB);
	if (rc != ARES_SUCCESS) {
		ares_library_cleanup();
		free(r);
		return err_set(e, ERR_INTERNAL, 0, "c-ares channel: %s",
			       ares_strerror(rc));
	}
	if (servers) {
		rc = ares_set_servers_ports_csv(r->ch, servers);
		if (rc != ARES_SUCCESS) {
			ares_destroy(r->ch);
			ares_library_cleanup();
			free(r);
			return err_set(e, ERR_CONFIG, 0, "DNS servers `%s`: %s",
				       servers, ares_strerror(rc));
		}
	}
	*out = r;
	return 0;
}

void resolver_free(struct resolver *r)
{
	if (!r)
		return;
	r->closing = true;
	ares_destroy(r->ch);	/* calls back: lookups, then socket watches */
	ares_library_cleanup();
	free(r);
}

void resolver_process(struct resolver *r, int fd, bool readable, bool writable)
{
	ares_socket_t rfd = ARES_SOCKET_BAD, wfd = ARES_SOCKET_BAD;

	if (fd >= 0) {
		if (readable)
			rfd = fd;
		if (writable)
			wfd = fd;
	}
	ares_process_fd(r->ch, rfd, wfd);
}

int resolver_timeout_ms(struct resolver *r)
{
	struct timeval tv, *t;
	long long ms;

	t = ares_timeout(r->ch, NULL, &tv);
	if (!t)
		return -1;
	/* Rounded up, so the loop never wakes a hair early and spins. */
	ms = (long long)t->tv_sec * 1000 + (t->tv_usec + 999) / 1000;
	if (ms < 0)
		ms = 0;
	return ms > INT_MAX ? INT_MAX : (int)ms;
}
