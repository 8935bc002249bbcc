/* resolver.h: name resolution for the gateway, off its event loop, with
 * c-ares. The servers can be set (tests run their own DNS server on
 * loopback); otherwise the system's (resolv.conf). The loop watches the
 * resolver's sockets and calls resolver_process() on their events and on
 * its timeout. */
#ifndef CORDON_GATEWAY_RESOLVER_H
#define CORDON_GATEWAY_RESOLVER_H

#include "lib/err.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct resolver;

/* Called once per lookup: status 0 with n addresses (IPv4 and IPv6, in
 * the resolver's order, ports set), or an errno-like status (ENOENT: no
 * such name, ETIMEDOUT, EIO) with n = 0. */
typedef void (*resolver_cb)(void *arg, int status,
			    const struct sockaddr_storage *addrs, size_t n);

/* Tell the loop which fds to watch: called with (fd, readable, writable);
 * both false means stop watching fd. */
typedef void (*resolver_watch_cb)(void *arg, int fd, bool readable, bool writable);

/* servers: NULL or "ip[:port],ip[:port]" (IPv6 bracketed with a port). */
int resolver_new(const char *servers, resolver_watch_cb watch, void *watch_arg,
		 struct resolver **out, struct err **e);
void resolver_free(struct resolver *r);	/* pending lookups get ECANCELED */

void resolver_lookup(struct resolver *r, const char *name, uint16_t port,
		     resolver_cb cb, void *arg);

/* Handle activity on fd (or -1 for a timeout tick). */
void resolver_process(struct resolver *r, int fd, bool readable, bool writable);
/* Milliseconds until resolver_process(r, -1, ...) is due; -1: none. */
int resolver_timeout_ms(struct resolver *r);

#endif
