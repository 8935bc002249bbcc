/* gateway.h: cordon's egress proxy, the only way out of a sandbox. One
 * event loop (epoll, edge-triggered) serves HTTP CONNECT, absolute-form
 * http:// and SOCKS5 on its listeners; checks each request against the
 * deny list then the allow list; resolves names itself (c-ares) and refuses
 * any whose addresses fall in a refused class; dials only the addresses it
 * checked; relays with splice; writes one JSON line per decision. It has
 * no loop of its own: its fds, a before-sleep hook and a timer live in its
 * caller's lib/loop, beside the caller's own sources. */
#ifndef CORDON_GATEWAY_GATEWAY_H
#define CORDON_GATEWAY_GATEWAY_H

#include "lib/err.h"
#include "lib/loop.h"
#include "policy/host.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>
#include <stdint.h>

enum gw_proto {
	GW_PROTO_HTTP,
	GW_PROTO_SOCKS5,
	GW_PROTO_ANY,	/* told apart by the first byte (5: SOCKS5) */
};

struct gw_config {
	const struct host_pattern *allow;
	size_t n_allow;
	const struct host_pattern *deny;
	size_t n_deny;
	/* network.allow_ranges: a listed name may resolve into them (see
	 * addrguard_judge for what a range can never open); copied */
	const struct net_range *allow_ranges;
	size_t n_allow_ranges;
	const char *dns_servers;	/* NULL: the system's */
	int audit_fd;			/* -1: none; JSON lines; the gateway owns it */
	unsigned int max_conns;		/* 0: a default that fits the fd limit */
	int head_timeout_ms;		/* 0: 10 s for a request head */
	int connect_timeout_ms;		/* 0: 10 s */
	int idle_timeout_ms;		/* 0: 10 min without a byte either way */
	const char *token;		/* NULL, or the proxy token every client must show
					 * (1 to 255 bytes; only its SHA-256 is kept) */
	/* The host's toolbelt: a unix socket that the reserved name
	 * GW_TOOLBELT_NAME, port 80, reaches (a CONNECT, a SOCKS5 request or
	 * a plain HTTP request for it). NULL: the name is a name like any
	 * other, refused unless listed. Copied. */
	const char *toolbelt_socket;
	/* Addresses refused as this host's own beside the interfaces the
	 * gateway sees: a gateway in a container of its own (the Docker
	 * provider's companion) is told the host's. Copied. */
	const struct sockaddr_storage *host_addrs;
	size_t n_host_addrs;
};

/* The name a sandbox's client asks its gateway for to reach the host's
 * toolbelt: under a top-level domain that resolves nowhere. */
#define GW_TOOLBELT_NAME "toolbelt.cordon.internal"
#define GW_TOOLBELT_PORT 80

struct gateway;

/* The gateway serves while loop runs; the loop outlives it. */
int gateway_new(struct loop *loop, const struct gw_config *cfg, struct gateway **out,
		struct err **e);
/* Every fd it watches leaves the loop. NULL: nothing. */
void gateway_free(struct gateway *gw);

/* Serve a listening socket (non-blocking is set here). The gateway owns it. */
int gateway_add_listener(struct gateway *gw, int fd, enum gw_proto proto,
			 struct err **e);

/* The distinct hosts refused so far, one line each: "host:port (reason)",
 * at most max; for `cordon run`'s note at exit. */
size_t gateway_refused(const struct gateway *gw, char lines[][320], size_t max);

#endif
