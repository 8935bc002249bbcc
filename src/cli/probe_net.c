/* probe_net.c: `cordon netprobe`, internal: what the Docker provider's
 * doctor runs inside its preflight workload to learn what that workload
 * can reach. Each probe is one connection attempt, one DNS query, or one
 * request for a name through an HTTP proxy, each with a deadline; the
 * outcomes are printed as one JSON line. It sends nothing else, listens
 * on nothing and reads no file but /etc/resolv.conf. */
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/num.h"

#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static const char netprobe_usage[] =
	"usage: cordon netprobe [--timeout MS] PROBE...\n\n"
	"Internal: run by the Docker provider's doctor inside its preflight\n"
	"container. Try each PROBE directly (no proxy variable is read) and print\n"
	"one JSON line, {\"PROBE\": \"outcome\", ...}:\n\n"
	"  tcp:IP:PORT        connect: connected, refused, unreachable, no_address,\n"
	"                     unsupported, timeout or error:N (IPv6 as [addr]:port)\n"
	"  dns:NAME[@IP]      one DNS query for NAME's A record to IP, or to each\n"
	"                     nameserver of /etc/resolv.conf (\"dns:NAME@IP\" each;\n"
	"                     one that is not an address literal is left out):\n"
	"                     answered, or what a tcp probe says, or no_server\n"
	"  http:HOST@IP:PORT  ask the HTTP proxy at IP:PORT for http://HOST/: its\n"
	"                     status and the gateway's X-Cordon-Refused reason\n"
	"                     (\"403 host not in network.allow\"), or \"proxy \" and\n"
	"                     what a tcp probe says, or closed (tried again until\n"
	"                     the deadline: the proxy may still be starting)\n\n"
	"  --timeout MS       each probe's deadline (default 2000, at most 30000)\n";

#define PROBES_MAX 32
#define NAME_MAX_LEN 253

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int left_ms(long long deadline)
{
	long long l = deadline - now_ms();

	return l > 0 ? (int)l : 0;
}

static void outcome(int err, char out[32])
{
	const char *s = err == 0		? "connected"
			: err == ECONNREFUSED ? "refused"
			: err == ENETUNREACH || err == EHOSTUNREACH ? "unreachable"
			: err == EADDRNOTAVAIL ? "no_address"
			: err == EAFNOSUPPORT ? "unsupported"
			: err == ETIMEDOUT    ? "timeout"
					      : NULL;

	if (s)
		snprintf(out, 32, "%s", s);
	else
		snprintf(out, 32, "error:%d", err);
}

/* IP, IP:PORT, [IP6]:PORT or IP6 (the port dflt when none; 0: required). */
static int parse_addr(const char *s, unsigned long dflt, struct sockaddr_storage *ss,
		      socklen_t *len)
{
	char ip[INET6_ADDRSTRLEN + 1];
	const char *port = NULL, *end;
	unsigned long p = dflt;
	size_t n;

	if (s[0] == '[') {
		if (!(end = strchr(s, ']')) || (end[1] && end[1] != ':'))
			return -1;
		n = (size_t)(end - s - 1);
		s++;
		port = end[1] ? end + 2 : NULL;
	} else if ((end = strchr(s, ':')) && !strchr(end + 1, ':')) {
		n = (size_t)(end - s);
		port = end + 1;
	} else {
		n = strlen(s);
	}
	if (n == 0 || n >= sizeof(ip) || (port && num_parse_ulong(port, 65535, &p) < 0) || !p)
		return -1;
	memcpy(ip, s, n);
	ip[n] = '\0';
	memset(ss, 0, sizeof(*ss));
	struct sockaddr_in *s4 = (struct sockaddr_in *)ss;
	struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)ss;
	if (inet_pton(AF_INET, ip, &s4->sin_addr) == 1) {
		s4->sin_family = AF_INET;
		s4->sin_port = htons((uint16_t)p);
		*len = sizeof(*s4);
	} else if (inet_pton(AF_INET6, ip, &s6->sin6_addr) == 1) {
		s6->sin6_family = AF_INET6;
		s6->sin6_port = htons((uint16_t)p);
		*len = sizeof(*s6);
	} else {
		return -1;
	}
	return 0;
}

static bool addr_ok(const char *s, unsigned long dflt)
{
	struct sockaddr_storage ss;
	socklen_t len;

	return parse_addr(s, dflt, &ss, &len) == 0;
}

/* A connected socket, or -1 with *err the reason. */
static int dial(const char *addr, unsigned long dflt, int type, long long deadline, int *err)
{
	struct sockaddr_storage ss;
	socklen_t len, elen = sizeof(*err);
	int fd;

	if (parse_addr(addr, dflt, &ss, &len) < 0) {
		*err = EINVAL;
		return -1;
	}
	fd = socket(ss.ss_family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		*err = errno;
		return -1;
	}
	if (connect(fd, (struct sockaddr *)&ss, len) == 0) {
		*err = 0;
		return fd;
	}
	*err = errno;
	if (*err == EINPROGRESS) {
		struct pollfd p = { fd, POLLOUT, 0 };
		int r = poll(&p, 1, left_ms(deadline));

		*err = r < 0 ? errno : r == 0 ? ETIMEDOUT : 0;
		if (r > 0 && getsockopt(fd, SOL_SOCKET, SO_ERROR, err, &elen) < 0)
			*err = errno;
	}
	if (*err) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Letters, digits, '-' and '.', labels of 1 to 63. */
static bool name_ok(const char *s)
{
	size_t n = strlen(s), label = 0;

	if (n == 0 || n > NAME_MAX_LEN)
		return false;
	for (const char *c = s; *c; c++) {
		if (*c == '.') {
			if (!label)
				return false;
			label = 0;
		} else if (strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-",
				  *c) && ++label <= 63) {
			continue;
		} else {
			return false;
		}
	}
	return label > 0;
}

static void probe_tcp(const char *addr, long long deadline, char out[32])
{
	int err, fd = dial(addr, 0, SOCK_STREAM, deadline, &err);

	if (fd >= 0)
		close(fd);
	outcome(err, out);
}

static void probe_dns(const char *name, const char *server, long long deadline, char out[32])
{
	unsigned char q[12 + NAME_MAX_LEN + 2 + 4] = { 0 }, a[512];
	uint16_t id = 0;
	size_t n = 12;
	int err;

	if (getrandom(&id, sizeof(id), 0) != (ssize_t)sizeof(id))
		id = (uint16_t)getpid();
	q[0] = (unsigned char)(id >> 8);
	q[1] = (unsigned char)id;
	q[2] = 0x01; /* recursion desired */
	q[5] = 1;    /* one question */
	for (const char *l = name; *l;) {
		size_t k = strcspn(l, ".");

		q[n++] = (unsigned char)k;
		memcpy(q + n, l, k);
		n += k;
		l += k + (l[k] == '.');
	}
	n++;			/* the root */
	q[n + 1] = 1;		/* type A */
	q[n + 3] = 1;		/* class IN */
	n += 4;
	_cleanup_close_ int fd = dial(server, 53, SOCK_DGRAM, deadline, &err);
	if (fd < 0 || send(fd, q, n, 0) < 0) {
		outcome(fd < 0 ? err : errno, out);
		return;
	}
	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		int r = poll(&p, 1, left_ms(deadline));
		ssize_t got;

		if (r <= 0) {
			outcome(r == 0 ? ETIMEDOUT : errno, out);
			return;
		}
		got = recv(fd, a, sizeof(a), 0);
		if (got < 0 && errno != EAGAIN && errno != EINTR) {
			outcome(errno, out);
			return;
		}
		if (got >= 12 && a[0] == q[0] && a[1] == q[1]) {
			snprintf(out, 32, "answered");
			return;
		}
	}
}

/* The proxy's status line and the gateway's reason, at most once per
 * connection; a connection closed before any answer is tried again. */
static void probe_http(const char *host, const char *proxy, long long deadline, char out[160])
{
	char req[NAME_MAX_LEN * 2 + 80], buf[2048];
	int err, len = snprintf(req, sizeof(req),
				"GET http://%s/ HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n",
				host, host);

	for (;;) {
		_cleanup_close_ int fd = dial(proxy, 0, SOCK_STREAM, deadline, &err);
		size_t have = 0;
		char why[32];

		if (fd < 0 && err != ECONNREFUSED) {
			outcome(err, why);
			snprintf(out, 160, "proxy %s", why);
			return;
		}
		if (fd >= 0 && send(fd, req, (size_t)len, MSG_NOSIGNAL) == len) {
			while (have < sizeof(buf) - 1) {
				struct pollfd p = { fd, POLLIN, 0 };
				ssize_t got;

				if (poll(&p, 1, left_ms(deadline)) <= 0)
					break;
				got = recv(fd, buf + have, sizeof(buf) - 1 - have, 0);
				if (got <= 0 && (got == 0 || (errno != EAGAIN && errno != EINTR)))
					break;
				have += got > 0 ? (size_t)got : 0;
				buf[have] = '\0';
				if (strstr(buf, "\r\n\r\n"))
					break;
			}
		}
		buf[have] = '\0';
		unsigned long status = 0;
		char digits[4] = "";
		if (have && (strncmp(buf, "HTTP/1.0 ", 9) == 0 || strncmp(buf, "HTTP/1.1 ", 9) == 0) &&
		    strspn(buf + 9, "0123456789") >= 3 && memcpy(digits, buf + 9, 3) &&
		    num_parse_ulong(digits, 999, &status) == 0) {
			const char *r = strstr(buf, "\r\nX-Cordon-Refused: ");
			int at = snprintf(out, 160, "%lu", status);

			/* the reason, printable ASCII only: the line is JSON */
			if (r)
				out[at++] = ' ';
			for (r = r ? r + 20 : ""; *r && *r != '\r' && at < 159; r++)
				if (*r >= 0x20 && *r < 0x7f)
					out[at++] = *r;
			out[at] = '\0';
			return;
		}
		if (have || left_ms(deadline) == 0) {
			snprintf(out, 160, have ? "malformed" : fd < 0 ? "proxy refused" : "closed");
			return;
		}
		usleep(100 * 1000);
	}
}

/* dns:NAME without a server: each nameserver of /etc/resolv.conf. */
static int dns_all(json_t *res, const char *name, long timeout)
{
	_cleanup_fclose_ FILE *f = fopen("/etc/resolv.conf", "re");
	char line[256], server[INET6_ADDRSTRLEN + 1], key[NAME_MAX_LEN + 64], out[32];
	int found = 0;

	while (f && found < 8 && fgets(line, sizeof(line), f))
		if (sscanf(line, " nameserver %46s", server) == 1 && addr_ok(server, 53)) {
			snprintf(key, sizeof(key), "dns:%s@%s", name, server);
			probe_dns(name, server, now_ms() + timeout, out);
			json_object_set_new(res, key, json_string(out));
			found++;
		}
	return found;
}

int cli_netprobe(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_json_ json_t *res = json_object();
	_cleanup_free_ char *text = NULL;
	unsigned long timeout = 2000;
	int o;

	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		if (o == 't' && num_parse_ulong(optarg, 30000, &timeout) == 0 && timeout > 0)
			continue;
		fputs(netprobe_usage, o == 'h' ? stdout : stderr);
		return o == 'h' ? 0 : EXIT_CORDON;
	}
	if (optind >= argc || argc - optind > PROBES_MAX || !res) {
		fprintf(stderr, "cordon: usage: 1 to %d probes\n%s", PROBES_MAX, netprobe_usage);
		return EXIT_CORDON;
	}
	for (int i = optind; i < argc; i++) {
		const char *p = argv[i], *at = strrchr(p, '@');
		_cleanup_free_ char *name = NULL;
		char out[160];
		long long deadline = now_ms() + (long long)timeout;

		if (strncmp(p, "tcp:", 4) == 0) {
			if (!addr_ok(p + 4, 0))
				goto bad;
			probe_tcp(p + 4, deadline, out);
		} else if (strncmp(p, "dns:", 4) == 0 || strncmp(p, "http:", 5) == 0) {
			const char *start = strchr(p, ':') + 1;

			name = at ? strndup(start, (size_t)(at - start)) : strdup(start);
			if (!name || !name_ok(name) || (p[0] == 'h' && !at) ||
			    (at && !addr_ok(at + 1, p[0] == 'd' ? 53 : 0)))
				goto bad;
			if (p[0] == 'h')
				probe_http(name, at + 1, deadline, out);
			else if (at)
				probe_dns(name, at + 1, deadline, out);
			else if (!dns_all(res, name, (long)timeout))
				snprintf(out, sizeof(out), "no_server");
			else
				continue;
		} else {
			goto bad;
		}
		json_object_set_new(res, p, json_string(out));
		continue;
bad:
		fprintf(stderr, "cordon: usage: netprobe: `%s`: not a probe\n%s", p, netprobe_usage);
		return EXIT_CORDON;
	}
	text = json_dumps(res, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
	if (!text) {
		fprintf(stderr, "cordon: error: out of memory\n");
		return EXIT_CORDON;
	}
	printf("%s\n", text);
	return 0;
}
