/* gateway.c: `cordon gateway`: the egress proxy on its own, serving HTTP
 * and SOCKS5 on one listener until TERM or INT; on loopback or a unix
 * socket, or on any address when every client must show a proxy token. */
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
#include <openssl/crypto.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static const char gateway_usage[] =
	"usage: cordon gateway --listen unix:PATH|tcp:IP:PORT [--listen-any]\n"
	"                      [--token-file FILE] [--allow HOST]... [--deny HOST]...\n"
	"                      [--allow-range CIDR]...\n"
	"                      [--audit FILE] [--dns ADDR]... [--max-conns N]\n"
	"                      [--toolbelt-socket PATH] [--host-address IP]...\n\n"
	"Serve cordon's egress proxy: HTTP (CONNECT and absolute-form http://) and\n"
	"SOCKS5 on one listener, told apart by the first byte, until TERM or INT.\n"
	"Hosts are policy entries (name, name:port, *.domain, IP literals); the\n"
	"deny list wins. A name is resolved by the gateway and refused when any of\n"
	"its addresses is loopback, private, link-local, shared, multicast, ... or\n"
	"this host's own, unless --allow-range names a range holding it (loopback\n"
	"and link-local only by a range inside them). Every decision is one JSON\n"
	"line in the audit file.\n\n"
	"  --listen ADDR      unix:PATH, or tcp:IP:PORT on a loopback address\n"
	"  --listen-any       let tcp:IP:PORT be any address (needs --token-file)\n"
	"  --token-file FILE  every client must show the proxy token held in FILE:\n"
	"                     HTTP as the password of Proxy-Authorization: Basic,\n"
	"                     SOCKS5 by username/password (any user name). FILE holds\n"
	"                     the token alone (16 to 255 visible ASCII characters), is\n"
	"                     yours and no one else may read it (mode 0600 or 0400)\n"
	"  --allow HOST       add to the allow list\n"
	"  --deny HOST        add to the deny list\n"
	"  --allow-range CIDR an allowed name may resolve into this range\n"
	"                     (10.20.0.0/16, fd00:1::/32), repeatable\n"
	"  --audit FILE       append the audit log here (default: none)\n"
	"  --dns ADDR         a DNS server (ip or ip:port), repeatable (default: the system's)\n"
	"  --max-conns N      the connection cap (default: from the open-file limit);\n"
	"                     over it HTTP clients get 503\n"
	"  --toolbelt-socket PATH  the reserved name " GW_TOOLBELT_NAME ", port 80,\n"
	"                     reaches this unix socket (the host's toolbelt)\n"
	"  --host-address IP  refused as this host's own, as its interfaces' are\n"
	"                     (a gateway in a container is told the host's)\n";

/* A token shorter than this is refused: it stands between the network
 * and the gateway. 255 is what SOCKS5's username/password method can
 * carry. */
#define TOKEN_MIN 16
#define TOKEN_MAX 255

/* The proxy token from a file no one else can read or change. Never
 * printed: every message names the file, none its content. out holds
 * TOKEN_MAX + 1 bytes. */
static int read_token(const char *path, char *out, struct err **e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	char buf[TOKEN_MAX + 3]; /* the token, CR LF, and one byte too many */
	size_t len = 0;
	struct stat st;
	int r = 0;

	if (fd < 0)
		return err_set(e, ERR_CONFIG, errno, "--token-file `%s`", path);
	if (fstat(fd, &st) < 0)
		return err_set(e, ERR_CONFIG, errno, "--token-file `%s`", path);
	if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode))
		return err_set(e, ERR_CONFIG, 0, "--token-file `%s`: not a regular file or a pipe",
			       path);
	if (st.st_mode & 077)
		return err_set(e, ERR_CONFIG, 0,
			       "--token-file `%s`: group or others may access it (mode %04o); "
			       "make it 0600 or 0400", path, (unsigned)(st.st_mode & 07777));
	if (st.st_uid != geteuid())
		return err_set(e, ERR_CONFIG, 0,
			       "--token-file `%s`: owned by uid %u, not by the user running cordon "
			       "(uid %u)", path, (unsigned)st.st_uid, (unsigned)geteuid());
	while (len < sizeof(buf)) {
		ssize_t n = read(fd, buf + len, sizeof(buf) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_set(e, ERR_CONFIG, errno, "--token-file `%s`", path);
			goto out;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	/* one line end, if any, is not part of the token */
	if (len > 0 && buf[len - 1] == '\n')
		len--;
	if (len > 0 && buf[len - 1] == '\r')
		len--;
	bool visible = len >= TOKEN_MIN && len <= TOKEN_MAX;
	for (size_t i = 0; visible && i < len; i++)
		visible = buf[i] > 0x20 && buf[i] < 0x7f;
	if (!visible) {
		r = err_set(e, ERR_CONFIG, 0,
			    "--token-file `%s`: the token must be %d to %d visible ASCII characters "
			    "(no spaces), alone on one line", path, TOKEN_MIN, TOKEN_MAX);
		goto out;
	}
	memcpy(out, buf, len);
	out[len] = '\0';
out:
	OPENSSL_cleanse(buf, sizeof(buf));
	return r;
}

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

/* A loopback address, unless any is allowed (then the caller has made
 * sure there is a token): the gateway is this machine's, not the LAN's. */
#define NOT_LOOPBACK                                                                    \
	"--listen: `%s` is not a loopback address; the gateway serves this machine only, " \
	"unless --listen-any is given with --token-file"

static int listen_tcp(const char *spec, bool any, struct err **e)
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
		if (!any && (ntohl(s4->sin_addr.s_addr) >> 24) != 127)
			return err_set(e, ERR_CONFIG, 0, NOT_LOOPBACK, host);
	} else if (inet_pton(AF_INET6, host, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)port);
		len = sizeof(*s6);
		if (!any && !IN6_IS_ADDR_LOOPBACK(&s6->sin6_addr))
			return err_set(e, ERR_CONFIG, 0, NOT_LOOPBACK, host);
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
	const char *listen, *audit, *token_file, *toolbelt;
	bool listen_any;
	unsigned long max_conns;
	char dns[1024];
	struct host_pattern *allow, *deny;
	size_t n_allow, n_deny;
	struct net_range *ranges;
	size_t n_ranges;
	struct sockaddr_storage hosts[64];	/* --host-address */
	size_t n_hosts;
};

static int parse(int argc, char **argv, struct gw_opts *o, struct err **e)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' }, { "allow", required_argument, NULL, 'a' },
		{ "deny", required_argument, NULL, 'd' },   { "audit", required_argument, NULL, 'A' },
		{ "dns", required_argument, NULL, 'n' },    { "help", no_argument, NULL, 'h' },
		{ "listen-any", no_argument, NULL, 'L' },   { "token-file", required_argument, NULL, 't' },
		{ "max-conns", required_argument, NULL, 'm' },
		{ "allow-range", required_argument, NULL, 'r' },
		{ "toolbelt-socket", required_argument, NULL, 'T' },
		{ "host-address", required_argument, NULL, 'H' },
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
		case 'r':
			if (policy_add_range(&o->ranges, &o->n_ranges, optarg, "--allow-range", e) < 0)
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
		case 'L':
			o->listen_any = true;
			break;
		case 't':
			o->token_file = optarg;
			break;
		case 'T':
			if (optarg[0] != '/')
				return err_set(e, ERR_USAGE, 0, "--toolbelt-socket: an absolute path expected");
			o->toolbelt = optarg;
			break;
		case 'H': {
			struct sockaddr_storage *ss = &o->hosts[o->n_hosts];

			if (o->n_hosts >= sizeof(o->hosts) / sizeof(*o->hosts))
				return err_set(e, ERR_USAGE, 0, "--host-address: at most 64");
			memset(ss, 0, sizeof(*ss));
			if (inet_pton(AF_INET, optarg, &((struct sockaddr_in *)ss)->sin_addr) == 1)
				ss->ss_family = AF_INET;
			else if (inet_pton(AF_INET6, optarg, &((struct sockaddr_in6 *)ss)->sin6_addr) == 1)
				ss->ss_family = AF_INET6;
			else
				return err_set(e, ERR_USAGE, 0, "--host-address: an IP address expected");
			o->n_hosts++;
			break;
		}
		case 'm':
			if (num_parse_ulong(optarg, 1000000, &o->max_conns) < 0 || o->max_conns == 0)
				return err_set(e, ERR_USAGE, 0, "--max-conns: 1 to 1000000 expected");
			break;
		case 'h':
			return 1;
		default:
			return err_set(e, ERR_USAGE, 0, "unknown or incomplete option\n%s", gateway_usage);
		}
	}
	if (optind != argc || !o->listen)
		return err_set(e, ERR_USAGE, 0, "--listen is required\n%s", gateway_usage);
	if (o->listen_any && strncmp(o->listen, "tcp:", 4) != 0)
		return err_set(e, ERR_USAGE, 0, "--listen-any applies to a tcp: listen address only");
	if (o->listen_any && !o->token_file)
		return err_set(e, ERR_CONFIG, 0,
			       "--listen-any needs --token-file: a gateway other machines can reach "
			       "serves only clients that show a proxy token");
	return 0;
}

/* TERM or INT ends the gateway; a SIGPIPE is read and ignored. */
static void on_signal(struct loop *l, struct loop_signal *s, const struct signalfd_siginfo *si)
{
	(void)s;
	if (si->ssi_signo != SIGPIPE)
		loop_stop(l);
}

/* The signals, blocked before the gateway serves its first client. */
static int watch_signals(struct loop *l, struct loop_signal *s)
{
	sigset_t set;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGPIPE);
	return loop_signal_add(l, s, &set, on_signal, NULL, NULL);
}

int cli_gateway(int argc, char **argv)
{
	_cleanup_err_ struct err *e = NULL;
	struct gw_opts o = { 0 };
	struct loop *loop = NULL;
	struct loop_signal sig = { 0 };
	struct gateway *gw = NULL;
	char token[TOKEN_MAX + 1] = "";
	int r, fd = -1, audit = -1, rc = EXIT_CORDON;

	r = parse(argc, argv, &o, &e);
	if (r == 1) {
		fputs(gateway_usage, stdout);
		rc = 0;
		goto out;
	}
	if (r < 0 || !o.listen)
		goto fail;
	/* the token is read before anything listens */
	if (o.token_file && read_token(o.token_file, token, &e) < 0)
		goto fail;
	if (strncmp(o.listen, "unix:", 5) == 0)
		fd = listen_unix(o.listen + 5, &e);
	else if (strncmp(o.listen, "tcp:", 4) == 0)
		fd = listen_tcp(o.listen + 4, o.listen_any, &e);
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
				 .n_deny = o.n_deny, .allow_ranges = o.ranges,
				 .n_allow_ranges = o.n_ranges, .dns_servers = o.dns[0] ? o.dns : NULL,
				 .audit_fd = audit, .max_conns = (unsigned int)o.max_conns,
				 .token = o.token_file ? token : NULL, .toolbelt_socket = o.toolbelt,
				 .host_addrs = o.hosts, .n_host_addrs = o.n_hosts };
	r = loop_new(&loop, &e);
	if (r == 0)
		r = gateway_new(loop, &cfg, &gw, &e);
	OPENSSL_cleanse(token, sizeof(token)); /* the gateway keeps a digest */
	if (r < 0)
		goto fail;
	audit = -1; /* the gateway's now */
	if (gateway_add_listener(gw, fd, GW_PROTO_ANY, &e) < 0)
		goto fail;
	fd = -1;
	/* a failure here was never printed: the exit code says it */
	rc = watch_signals(loop, &sig) < 0 || loop_run(loop, NULL) < 0 ? EXIT_CORDON : 0;
	goto out;
fail:
	err_print(stderr, e);
out:
	OPENSSL_cleanse(token, sizeof(token));
	gateway_free(gw);
	loop_free(loop);
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
	free(o.ranges);
	return rc;
}
