/* gateway.c: `cordon gateway`: the egress proxy on its own, serving HTTP
 * and SOCKS5 on one listener until TERM or INT. */
#include "cli/cli.h"
#include "gateway/gateway.h"
#include "lib/cleanup.h"
#include "lib/num.h"
#include "policy/policy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char gateway_usage[] =
	"usage: cordon gateway --listen unix:PATH|tcp:127.0.0.1:PORT [--allow HOST]...\n"
	"                      [--deny HOST]... [--audit FILE] [--dns ADDR]...\n\n"
	"Serve cordon's egress proxy: HTTP (CONNECT and absolute-form http://) and\n"
	"SOCKS5 on one listener, told apart by the first byte, until TERM or INT.\n"
	"Hosts are policy entries (name, name:port, *.domain, IP literals); the\n"
	"deny list wins. A name is resolved by the gateway and refused when any of\n"
	"its addresses is loopback, private, link-local, shared, multicast, ... or\n"
	"this host's own. Every decision is one JSON line in the audit file.\n\n"
	"  --listen ADDR  unix:PATH, or tcp:IP:PORT on a loopback address\n"
	"  --allow HOST   add to the allow list\n"
	"  --deny HOST    add to the deny list\n"
	"  --audit FILE   append the audit log here (default: none)\n"
	"  --dns ADDR     a DNS server (ip or ip:port), repeatable (default: the system's)\n";

static int listen_unix(const char *path, struct err **e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(e, ERR_CONFIG, ENAMETOOLONG, "--listen unix:%s", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, errno, "listen on `%s`", path);
	}
	return fd;
}

/* Only a loopback address: the gateway is the sandbox's, not the LAN's. */
static int listen_tcp(const char *spec, struct err **e)
{
	char host[128];
	struct sockaddr_storage ss = { 0 };
	struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
	unsigned long port = 0;
	char *colon = NULL;
	int fd, one = 1;
	socklen_t len;

	if (strlen(spec) < sizeof(host)) {
		memcpy(host, spec, strlen(spec) + 1);
		colon = strrchr(host, ':');
	}
	if (!colon || num_parse_ulong(colon + 1, 65535, &port) < 0)
		return err_set(e, ERR_CONFIG, 0, "--listen: tcp:IP:PORT expected");
	*colon = '\0';
	if (host[0] == '[' && colon[-1] == ']') {
		colon[-1] = '\0';
		memmove(host, host + 1, strlen(host));
	}
	if (inet_pton(AF_INET, host, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)port);
		len = sizeof(*s4);
		if ((ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			return err_set(e, ERR_CONFIG, 0,
				       "--listen: `%s` is not a loopback address; the gateway "
				       "serves this machine only", host);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		len = sizeof(*s6);
		if (!IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return err_set(e, ERR_CONFIG, 0,
				       "--listen: `%s` is not a loopback address; the gateway "
				       "serves this machine only", host);
	} else {
		return err_set(e, ERR_CONFIG, 0, "--listen: `%s` is not an IP address", host);
	}
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, (struct sockaddr *)&ss, len) < 0 || listen(fd, 4096) < 0) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, errno, "listen on `%s`", spec);
	}
	return fd;
}

struct gw_opts {
	const char *listen, *audit;
	char dns[1024];
	struct host_pattern *allow, *deny;
	size_t n_allow, n_deny;
};

static int parse(int argc, char **argv, struct gw_opts *o, struct err **e)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "allow", required_argument, NULL, 'a' },
		{ "deny", required_argument, NULL, 'd' },   { "audit", required_argument, NULL, 'A' },
		{ "dns", required_argument, NULL, 'n' },    { "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			o->listen = optarg;
			break;
		case 'a':
			if (policy_add_host(&o->allow, &o->n_allow, optarg, "--allow", e) < 0)
				return -1;
			break;
		case 'd':
			if (policy_add_host(&o->deny, &o->n_deny, optarg, "--deny", e) < 0)
				return -1;
			break;
		case 'A':
			o->audit = optarg;
			break;
		case 'n': {
			size_t used = strlen(o->dns);
			if (used + strlen(optarg) + 2 > sizeof(o->dns))
				return err_set(e, ERR_USAGE, 0, "--dns: too many servers");
			snprintf(o->dns + used, sizeof(o->dns) - used, "%s%s", used ? "," : "",
				 optarg);
			break;
		}
		case 'h':
			return 1;
		default:
			return err_set(e, ERR_USAGE, 0, "unknown or incomplete option\n%s", gateway_usage);
		}
	}
	if (optind != argc || !o->listen)
		return err_set(e, ERR_USAGE, 0, "--listen is required\n%s", gateway_usage);
	return 0;
}

static int serve(struct gateway *gw)
{
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		return -1;
	for (;;) {
		struct pollfd p[2] = { { .fd = gateway_fd(gw), .events = POLLIN },
				       { .fd = sfd, .events = POLLIN } };
		struct signalfd_siginfo si;

		if (poll(p, 2, gateway_timeout_ms(gw)) < 0 && errno != EINTR)
			return -1;
		if (p[1].revents && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
		    si.ssi_signo != SIGPIPE)
			return 0;
		gateway_run(gw);
	}
}

int cli_gateway(int argc, char **argv)
{
	_cleanup_err_ struct err *e = NULL;
	struct gw_opts o = { 0 };
	struct gateway *gw = NULL;
	int r, fd = -1, audit = -1, rc = EXIT_CORDON;

	r = parse(argc, argv, &o, &e);
	if (r == 1) {
		fputs(gateway_usage, stdout);
		rc = 0;
		goto out;
	}
	if (r < 0 || !o.listen)
		goto fail;
	if (strncmp(o.listen, "unix:", 5) == 0)
		fd = listen_unix(o.listen + 5, &e);
	else if (strncmp(o.listen, "tcp:", 4) == 0)
		fd = listen_tcp(o.listen + 4, &e);
	else
		err_set(&e, ERR_CONFIG, 0, "--listen: unix:PATH or tcp:IP:PORT expected");
	if (fd < 0)
		goto fail;
	if (o.audit) {
		audit = open(o.audit, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOCTTY, 0600);
		if (audit < 0) {
			err_set(&e, ERR_UNAVAILABLE, errno, "--audit `%s`", o.audit);
			goto fail;
		}
	}
	struct gw_config cfg = { .allow = o.allow, .n_allow = o.n_allow, .deny = o.deny,
				 .n_deny = o.n_deny, .dns_servers = o.dns[0] ? o.dns : NULL,
				 .audit_fd = audit };
	if (gateway_new(&cfg, &gw, &e) < 0)
		goto fail;
	audit = -1; /* the gateway's now */
	if (gateway_add_listener(gw, fd, GW_PROTO_ANY, &e) < 0)
		goto fail;
	fd = -1;
	rc = serve(gw) < 0 ? EXIT_CORDON : 0;
	goto out;
fail:
	err_print(stderr, e);
out:
	gateway_free(gw);
	if (fd >= 0)
		close(fd);
	if (audit >= 0)
		close(audit);
	for (size_t i = 0; i < o.n_allow; i++)
		host_pattern_clear(&o.allow[i]);
	for (size_t i = 0; i < o.n_deny; i++)
		host_pattern_clear(&o.deny[i]);
	free(o.allow);
	free(o.deny);
	return rc;
}
