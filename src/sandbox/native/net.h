/* net.h: the sandbox's way out, on the root's side (launch.c's start).
 * pid 1 makes the HTTP and SOCKS5 listeners in its network namespace and
 * hands them over a socket; the root serves them in its loop, with a
 * gateway of its own or a relay to one elsewhere. */
#ifndef CORDON_SANDBOX_NATIVE_NET_H
#define CORDON_SANDBOX_NATIVE_NET_H

#include "gateway/gateway.h"
#include "gateway/relay.h"
#include "guard/guard.h"
#include "lib/err.h"
#include "lib/loop.h"

/* The gateway for this sandbox on the listeners received on sock: the
 * grant's hosts, its audit log in the record dir (which the sandbox
 * cannot write). */
int net_gateway_start(const struct grant *g, int sock, const char *record_dir, struct loop *loop,
		      struct gateway **out, struct err **e);
/* A relay instead (native_create_relayed): the listeners' connections
 * go, byte for byte, to the gateway's unix socket at channel, which
 * decides everything; nothing is decided or audited here. */
int net_relay_start(int sock, const char *channel, struct loop *loop, struct relay **out,
		    struct err **e);

#endif
