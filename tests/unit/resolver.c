/* resolver.c (test): lookups through c-ares against tests/gateway/
 * dnsserver.py on loopback, driven by a poll loop the way the gateway's
 * epoll loop drives them: A, A+AAAA, unknown names, a loopback answer
 * other than 127.0.0.1, literals never sent to DNS, a server that never
 * answers (ETIMEDOUT) and lookups cut short by resolver_free. */
#include "gateway/addrguard.h"
#include "gateway/resolver.h"
#include "lib/cleanup.h"
#include "tap.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 16
#define LOOP_BUDGET_MS 30000	/* a broken resolver fails, never hangs */

struct loop {
	struct pollfd fds[MAX_FDS];
	int n;
	int bad;	/* watch calls we could not honour */
};

struct result {
	bool done;
	int calls;
	int status;
	size_t n;
	struct sockaddr_storage addrs[16];
};

static void watch(void *arg, int fd, bool readable, bool writable)
{
	struct loop *lp = arg;
	int i;

	for (i = 0; i < lp->n && lp->fds[i].fd != fd; i++)
		;
	if (!readable && !writable) {
		if (i == lp->n) {
			lp->bad++;
			return;
		}
		lp->fds[i] = lp->fds[--lp->n];
		return;
	}
	if (i == lp->n) {
		if (lp->n == MAX_FDS) {
			lp->bad++;
			return;
		}
		lp->n++;
	}
	lp->fds[i].fd = fd;
	lp->fds[i].events = (short)((readable ? POLLIN : 0) |
				    (writable ? POLLOUT : 0));
}

static void on_result(void *arg, int status,
		      const struct sockaddr_storage *addrs, size_t n)
{
	struct result *res = arg;

	res->calls++;
	res->done = true;
	res->status = status;
	res->n = n;
	if (n > sizeof(res->addrs) / sizeof(res->addrs[0]))
		n = sizeof(res->addrs) / sizeof(res->addrs[0]);
	if (n)
		memcpy(res->addrs, addrs, n * sizeof(*addrs));
}

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static bool all_done(struct result *const *rs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!rs[i]->done)
			return false;
	return true;
}

/* Serve the loop for a while, whatever ends. */
static void run_for(struct resolver *r, struct loop *lp, int ms)
{
	int64_t end = now_ms() + ms;
	int64_t left;

	while ((left = end - now_ms()) > 0) {
		struct pollfd fds[MAX_FDS];
		int nfds = lp->n, k;

		memcpy(fds, lp->fds, sizeof(fds[0]) * (size_t)nfds);
		k = poll(fds, (nfds_t)nfds, (int)(left < 50 ? left : 50));
		if (k <= 0) {
			resolver_process(r, -1, false, false);
			continue;
		}
		for (int i = 0; i < nfds; i++)
			if (fds[i].revents)
				resolver_process(
					r, fds[i].fd,
					fds[i].revents & (POLLIN | POLLERR | POLLHUP),
					fds[i].revents & POLLOUT);
	}
}

/* Poll until every result is in or the budget is spent. */
static bool run_until(struct resolver *r, struct loop *lp,
		      struct result *const *rs, size_t n)
{
	int64_t deadline = now_ms() + LOOP_BUDGET_MS;

	while (!all_done(rs, n)) {
		struct pollfd fds[MAX_FDS];
		int nfds = lp->n, t = resolver_timeout_ms(r), k;
		int64_t left = deadline - now_ms();

		if (left <= 0)
			return false;
		if (t < 0 || t > left)
			t = (int)left;
		memcpy(fds, lp->fds, sizeof(fds[0]) * (size_t)nfds);
		k = poll(fds, (nfds_t)nfds, t);
		if (k < 0 && errno != EINTR)
			return false;
		if (k <= 0) {
			resolver_process(r, -1, false, false);
			continue;
		}
		/* A copy: resolver_process may change what is watched. */
		for (int i = 0; i < nfds; i++)
			if (fds[i].revents)
				resolver_process(
					r, fds[i].fd,
					fds[i].revents & (POLLIN | POLLERR | POLLHUP),
					fds[i].revents & POLLOUT);
	}
	return true;
}

static bool has_addr(const struct result *res, const char *text, uint16_t port)
{
	for (size_t i = 0; i < res->n; i++) {
		const struct sockaddr_storage *ss = &res->addrs[i];
		char buf[INET6_ADDRSTRLEN] = "";
		uint16_t p;

		if (ss->ss_family == AF_INET) {
			const struct sockaddr_in *sin = (const void *)ss;

			inet_ntop(AF_INET, &sin->sin_addr, buf, sizeof(buf));
			p = ntohs(sin->sin_port);
		} else if (ss->ss_family == AF_INET6) {
			const struct sockaddr_in6 *sin6 = (const void *)ss;

			inet_ntop(AF_INET6, &sin6->sin6_addr, buf, sizeof(buf));
			p = ntohs(sin6->sin6_port);
		} else {
			continue;
		}
		if (strcmp(buf, text) == 0 && p == port)
			return true;
	}
	return false;
}

static void skip(const char *why)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, why);
}

/* Starts dnsserver.py; returns its pid and port, or -1. */
static pid_t spawn_dns(const char *script, const char *log, uint16_t *port)
{
	int p[2];
	pid_t pid;
	char line[32];
	size_t got = 0;
	int64_t deadline;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		dup2(p[1], STDOUT_FILENO);
		execlp("python3", "python3", script, "--port", "0",
		       "--max-seconds", "120", "--log", log,
		       "--record", "one.test=93.184.216.34",
		       "--record", "mixed.test=93.184.216.35,fd12:3456::1",
		       "--record", "six.test=2606:4700:4700::1111",
		       "--record", "loop.test=127.0.0.2",
		       "--record", "*.wild.test=8.8.4.4",
		       "--record", "half.test=93.184.216.36,2606:4700::6",
		       "--drop", "half.test/AAAA", (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	/* The first line is the port; python can take a while to start. */
	deadline = now_ms() + 20000;
	while (got < sizeof(line) - 1 && !memchr(line, '\n', got)) {
		struct pollfd pfd = { .fd = p[0], .events = POLLIN };
		int64_t left = deadline - now_ms();
		ssize_t k;

		if (left <= 0 || poll(&pfd, 1, (int)left) <= 0)
			break;
		k = read(p[0], line + got, sizeof(line) - 1 - got);
		if (k <= 0)
			break;
		got += (size_t)k;
	}
	close(p[0]);
	line[got] = '\0';
	*port = (uint16_t)strtoul(line, NULL, 10);
	if (!memchr(line, '\n', got) || !*port) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	return pid;
}

static bool log_has(const char *log, const char *needle)
{
	char buf[8192];
	FILE *f = fopen(log, "re");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static enum addr_class worst(const struct result *res)
{
	for (size_t i = 0; i < res->n; i++) {
		enum addr_class c = addrguard_classify(
			(const struct sockaddr *)&res->addrs[i], NULL);

		if (c != ADDR_PUBLIC)
			return c;
	}
	return ADDR_PUBLIC;
}

static void test_names(const char *servers, const char *log)
{
	_cleanup_err_ struct err *e = NULL;
	struct loop lp = { .n = 0 };
	struct resolver *r = NULL;
	struct result one = { 0 }, mixed = { 0 }, nope = { 0 }, loop = { 0 },
		      six = { 0 }, wild = { 0 }, lit4 = { 0 }, lit6 = { 0 };
	struct result *all[] = { &one, &mixed, &nope, &loop, &six, &wild };

	if (!ok(resolver_new(servers, watch, &lp, &r, &e) == 0,
		"resolver on %s", servers)) {
		diag("%s", e ? e->msg : "?");
		return;
	}
	is_int(resolver_timeout_ms(r), -1, "idle: no timeout due");

	/* All at once: the loop serves them together. */
	resolver_lookup(r, "one.test", 443, on_result, &one);
	resolver_lookup(r, "mixed.test", 8080, on_result, &mixed);
	resolver_lookup(r, "nope.test", 443, on_result, &nope);
	resolver_lookup(r, "loop.test", 80, on_result, &loop);
	resolver_lookup(r, "six.test", 443, on_result, &six);
	resolver_lookup(r, "a.b.wild.test", 443, on_result, &wild);
	ok(lp.n > 0, "lookups pending: the loop watches %d socket(s)", lp.n);
	ok(resolver_timeout_ms(r) >= 0, "a timeout is due while pending");
	ok(run_until(r, &lp, all, sizeof(all) / sizeof(all[0])),
	   "every lookup ended");

	is_int(one.status, 0, "one.test: found");
	is_int(one.n, 1, "one.test: one address (A only)");
	ok(has_addr(&one, "93.184.216.34", 443), "one.test: 93.184.216.34:443");
	is_int(worst(&one), ADDR_PUBLIC, "one.test: public");

	is_int(mixed.status, 0, "mixed.test: found");
	is_int(mixed.n, 2, "mixed.test: A and AAAA");
	ok(has_addr(&mixed, "93.184.216.35", 8080), "mixed.test: the A, port set");
	ok(has_addr(&mixed, "fd12:3456::1", 8080), "mixed.test: the AAAA, port set");
	is_int(worst(&mixed), ADDR_UNIQUE_LOCAL,
	       "mixed.test: refused for its private half");

	is_int(nope.status, ENOENT, "nope.test: ENOENT");
	is_int(nope.n, 0, "nope.test: no addresses");

	is_int(loop.status, 0, "loop.test: found");
	is_int(loop.n, 1, "loop.test: one address");
	ok(has_addr(&loop, "127.0.0.2", 80), "loop.test: 127.0.0.2:80");
	is_int(worst(&loop), ADDR_LOOPBACK, "loop.test: loopback, refused");

	is_int(six.status, 0, "six.test: found");
	ok(six.n == 1 && has_addr(&six, "2606:4700:4700::1111", 443),
	   "six.test: AAAA only");
	ok(wild.status == 0 && has_addr(&wild, "8.8.4.4", 443),
	   "a.b.wild.test: the wildcard answers");
	ok(one.calls == 1 && mixed.calls == 1 && nope.calls == 1 &&
		   loop.calls == 1 && six.calls == 1 && wild.calls == 1,
	   "each callback ran once");
	ok(log_has(log, "one.test 1\n") && log_has(log, "one.test 28\n"),
	   "the server saw A and AAAA queries");

	/* Literals: answered without a query, whatever c-ares would do. */
	resolver_lookup(r, "10.1.2.3", 25, on_result, &lit4);
	ok(lit4.done && lit4.status == 0 && lit4.n == 1 &&
		   has_addr(&lit4, "10.1.2.3", 25),
	   "IPv4 literal answered at once");
	resolver_lookup(r, "fe80::1", 25, on_result, &lit6);
	ok(lit6.done && lit6.status == 0 && lit6.n == 1 &&
		   has_addr(&lit6, "fe80::1", 25),
	   "IPv6 literal answered at once");
	run_for(r, &lp, 200);	/* c-ares 1.18 would have sent 10.1.2.3 */
	ok(!log_has(log, "10.1.2.3") && !log_has(log, "fe80"),
	   "literals never reached DNS");

	resolver_free(r);
	is_int(lp.n, 0, "every socket unwatched after free");
	is_int(lp.bad, 0, "watch calls were consistent");
}

/* The host's search domains and HOSTALIASES are not the sandbox's: a
 * short name is asked as is, and an alias file is not read. */
static void test_no_search(const char *servers, const char *log,
			   const char *dir)
{
	_cleanup_err_ struct err *e = NULL;
	struct loop lp = { .n = 0 };
	struct resolver *r = NULL;
	struct result shortname = { 0 }, alias = { 0 };
	struct result *all[] = { &shortname, &alias };
	char aliases[128];
	FILE *f;

	snprintf(aliases, sizeof(aliases), "%s/hostaliases", dir);
	f = fopen(aliases, "we");
	if (f) {
		fputs("shortcut one.test\n", f);
		fclose(f);
	}
	setenv("LOCALDOMAIN", "corp.example", 1);
	setenv("HOSTALIASES", aliases, 1);
	if (!ok(resolver_new(servers, watch, &lp, &r, &e) == 0,
		"resolver with LOCALDOMAIN and HOSTALIASES set")) {
		diag("%s", e ? e->msg : "?");
		goto out;
	}
	resolver_lookup(r, "db", 443, on_result, &shortname);
	resolver_lookup(r, "shortcut", 443, on_result, &alias);
	ok(run_until(r, &lp, all, 2), "both lookups ended");
	is_int(shortname.status, ENOENT, "db: not found");
	ok(log_has(log, "\ndb 1\n"), "db was asked as is");
	ok(!log_has(log, "corp.example"), "no search domain was appended");
	is_int(alias.status, ENOENT, "shortcut: not found, the alias unread");
	ok(log_has(log, "\nshortcut 1\n"), "shortcut was asked as is");
	resolver_free(r);
out:
	unsetenv("LOCALDOMAIN");
	unsetenv("HOSTALIASES");
	unlink(aliases);
}

/* An A+AAAA lookup whose A half answered and whose AAAA half never will:
 * freeing the resolver must report ECANCELED, not the half answer. */
static void test_free_half(const char *servers)
{
	_cleanup_err_ struct err *e = NULL;
	struct loop lp = { .n = 0 };
	struct resolver *r = NULL;
	struct result half = { 0 };

	if (!ok(resolver_new(servers, watch, &lp, &r, &e) == 0,
		"resolver for a half-answered lookup")) {
		diag("%s", e ? e->msg : "?");
		return;
	}
	resolver_lookup(r, "half.test", 443, on_result, &half);
	run_for(r, &lp, 500);	/* the A answer is in; AAAA waits 2 s */
	ok(!half.done, "half.test: still waiting for its AAAA");
	resolver_free(r);
	ok(half.done && half.calls == 1 && half.status == ECANCELED &&
		   half.n == 0,
	   "freed: ECANCELED with no addresses (status %d, n %zu)",
	   half.status, half.n);
}

static void test_bad_servers(void)
{
	struct loop lp = { .n = 0 };
	struct resolver *r = NULL;
	{
		_cleanup_err_ struct err *e = NULL;

		is_int(resolver_new("", watch, &lp, &r, &e), -1,
		       "an empty server list is refused");
		ok(e && e->reason == ERR_CONFIG, "as a config error");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		is_int(resolver_new("not-an-address", watch, &lp, &r, &e), -1,
		       "a server that is not an address is refused");
		ok(e && e->reason == ERR_CONFIG && strstr(e->msg, "not-an-address"),
		   "as a config error naming it: %s", e ? e->msg : "");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		if (ok(resolver_new("127.0.0.1:53,[::1]:5353", watch, &lp, &r,
				    &e) == 0,
		       "ip:port and [ipv6]:port accepted"))
			resolver_free(r);
	}
}

/* A UDP socket that never answers: the lookup must time out. */
static void test_timeout(void)
{
	_cleanup_close_ int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	_cleanup_err_ struct err *e = NULL;
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t len = sizeof(sin);
	struct loop lp = { .n = 0 };
	struct resolver *r = NULL;
	struct result res = { 0 }, cut = { 0 };
	struct result *one[] = { &res };
	char servers[64];
	int64_t t0;

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (s < 0 || bind(s, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    getsockname(s, (struct sockaddr *)&sin, &len) < 0) {
		skip("no UDP socket on loopback");
		return;
	}
	snprintf(servers, sizeof(servers), "127.0.0.1:%u",
		 (unsigned int)ntohs(sin.sin_port));
	if (!ok(resolver_new(servers, watch, &lp, &r, &e) == 0,
		"resolver on a silent server")) {
		diag("%s", e ? e->msg : "?");
		return;
	}
	t0 = now_ms();
	resolver_lookup(r, "silent.test", 443, on_result, &res);
	ok(run_until(r, &lp, one, 1), "the lookup ended");
	is_int(res.status, ETIMEDOUT, "ETIMEDOUT (after %lld ms)",
	       (long long)(now_ms() - t0));
	is_int(res.n, 0, "no addresses");

	/* Freeing with a lookup in flight cancels it. */
	resolver_lookup(r, "pending.test", 443, on_result, &cut);
	ok(!cut.done, "a lookup is in flight");
	resolver_free(r);
	ok(cut.done && cut.status == ECANCELED && cut.calls == 1,
	   "resolver_free: ECANCELED, once (status %d)", cut.status);
	is_int(lp.n, 0, "every socket unwatched after free");
}

int main(void)
{
	const char *src = getenv("CORDON_SRC");
	char script[4096], dir[] = "/tmp/cordon-resolver-XXXXXX", log[64];
	char servers[64];
	uint16_t port = 0;
	pid_t pid;
	int status = 0;

	snprintf(script, sizeof(script), "%s/tests/gateway/dnsserver.py",
		 src ? src : ".");
	if (access(script, R_OK) < 0)
		tap_skip_all("tests/gateway/dnsserver.py not found");
	if (!mkdtemp(dir))
		tap_skip_all("no temporary directory");
	snprintf(log, sizeof(log), "%s/queries", dir);

	test_bad_servers();
	pid = spawn_dns(script, log, &port);
	if (ok(pid > 0, "test DNS server started (port %u)", (unsigned int)port)) {
		snprintf(servers, sizeof(servers), "127.0.0.1:%u",
			 (unsigned int)port);
		test_names(servers, log);
		test_no_search(servers, log, dir);
		test_free_half(servers);
		kill(pid, SIGTERM);
		waitpid(pid, &status, 0);
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "the DNS server stopped on SIGTERM");
	}
	test_timeout();
	unlink(log);
	rmdir(dir);
	return done_testing();
}
