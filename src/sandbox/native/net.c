/* net.c: the sandbox's way out (net.h): the listeners pid 1 made in its
 * network namespace, taken by the root and served. */
#include "sandbox/native/net.h"
#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The listeners the child made in its network namespace. */
static int take_listeners(int sock, int fds[2], struct err **e)
{
	char byte, cbuf[CMSG_SPACE(2 * sizeof(int))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	if (recvmsg(sock, &msg, MSG_CMSG_CLOEXEC) != 1 || !(cm = CMSG_FIRSTHDR(&msg)) ||
	    cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(2 * sizeof(int)))
		return err_set(e, ERR_UNAVAILABLE, errno, "receive the gateway's listeners");
	memcpy(fds, CMSG_DATA(cm), 2 * sizeof(int));
	return 0;
}

int net_gateway_start(const struct grant *g, int sock, const char *record_dir, struct loop *loop,
		      struct gateway **out, struct err **e)
{
	_cleanup_free_ char *audit_path = fs_path_join(record_dir, "network.jsonl");
	int fds[2] = { -1, -1 }, audit;
	struct gw_config cfg = { .allow = g->hosts, .n_allow = g->n_hosts,
				 .deny = g->deny_hosts, .n_deny = g->n_deny_hosts,
				 .allow_ranges = g->allow_ranges, .n_allow_ranges = g->n_allow_ranges,
				 .dns_servers = getenv("CORDON_GATEWAY_DNS"), .audit_fd = -1,
				 .toolbelt_socket = g->toolbelt };

	if (take_listeners(sock, fds, e) < 0)
		return -1;
	audit = audit_path ? open(audit_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
						  O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (audit < 0) {
		close(fds[0]);
		close(fds[1]);
		return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's audit log");
	}
	cfg.audit_fd = audit; /* the gateway keeps it for its life */
	int r = gateway_new(loop, &cfg, out, e);
	for (int i = 0; i < 2; i++) {
		if (r == 0)
			r = gateway_add_listener(*out, fds[i], i == 0 ? GW_PROTO_HTTP : GW_PROTO_SOCKS5, e);
		if (r == 0)
			fds[i] = -1; /* the gateway's now */
	}
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	if (r < 0 && !*out)
		close(audit);
	return r;
}

int net_relay_start(int sock, const char *channel, struct loop *loop, struct relay **out,
		    struct err **e)
{
	int fds[2] = { -1, -1 };

	if (take_listeners(sock, fds, e) < 0)
		return -1;
	return relay_new_on(loop, channel, fds, out, e);
}
