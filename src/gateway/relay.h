/* relay.h: the proxies inside a container, for `cordon cinit` (and for a
 * native sandbox whose gateway is elsewhere, relay_new_on). A
 * container of the Docker provider has no network but loopback; its one
 * way out is the gateway companion, which serves HTTP and SOCKS5 on one
 * unix socket (the channel) in a volume the two share. pid 1 listens on
 * 127.0.0.1:3128 (HTTP proxy) and 127.0.0.1:1080 (SOCKS5) and relays each
 * connection to the channel byte for byte: every decision is the
 * gateway's, none is made here. */
#ifndef CORDON_GATEWAY_RELAY_H
#define CORDON_GATEWAY_RELAY_H

#include "lib/err.h"
#include "lib/loop.h"

#include <stdint.h>

#define RELAY_HTTP_PORT 3128
#define RELAY_SOCKS_PORT 1080
/* Connections relayed at once, at most (fewer where the open-file limit
 * cannot hold this many); a client over it is closed at once. */
#define RELAY_MAX_CONNS 512

struct relay;

/* Listen on both ports and serve them in the caller's loop (its fds, a
 * hook after each round and a timer for its deadlines), which outlives
 * the relay. The channel's path is checked here (it must fit a unix
 * socket address) but connected only per client. -1 with *e when a
 * listener cannot be made. */
int relay_new(struct loop *loop, const char *channel, struct relay **out, struct err **e);
/* The same on two listeners the caller made (HTTP, SOCKS5: native's, in
 * its sandbox's network namespace), which the relay takes (closed on
 * failure too). */
int relay_new_on(struct loop *loop, const char *channel, int fds[2], struct relay **out,
		 struct err **e);
/* Close every connection and listener; all leave the loop (NULL: nothing). */
void relay_free(struct relay *r);

#endif
