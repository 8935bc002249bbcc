/* run.c: an srt launch, from the sandbox root (this process). It binds
 * the gateway's loopback listeners (srt's external proxy, so cordon's
 * allow and deny lists, address guard and audit log decide every
 * connection), records and pins the plan, writes srt's settings with
 * the listeners' ports, runs the preflight, then starts srt (beneath a
 * keeper, below) and serves one loop: the gateway, signals to forward,
 * the keeper's exit. */
#include "sandbox/srt/srt.h"
#include "gateway/gateway.h"
#include "sandbox/adopt.h"
#include "sandbox/srt/limits.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const int forwarded[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGWINCH };

/* One protocol's listeners: 127.0.0.1 and, where the host has IPv6, ::1
 * on the same port, since srt's bridge dials "localhost" and may take
 * either: a port another process held on ::1 would receive the
 * sandbox's connections. */
struct listener {
	int fd4, fd6, port;
};

static int listen_on(int family, int port, int *out_port)
{
	union {
		struct sockaddr_in v4;
		struct sockaddr_in6 v6;
	} a = { 0 };
	socklen_t len;
	int one = 1;
	int fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);

	if (fd < 0)
		return -1;
	if (family == AF_INET) {
		a.v4.sin_family = AF_INET;
		a.v4.sin_port = htons((uint16_t)port);
		a.v4.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		len = sizeof(a.v4);
	} else {
		a.v6.sin6_family = AF_INET6;
		a.v6.sin6_port = htons((uint16_t)port);
		a.v6.sin6_addr = in6addr_loopback;
		len = sizeof(a.v6);
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof(one));
	}
	if (bind(fd, (struct sockaddr *)&a, len) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&a, &len) < 0) {
		int saved = errno;
		close(fd);
		errno = saved;
		return -1;
	}
	*out_port = ntohs(family == AF_INET ? a.v4.sin_port : a.v6.sin6_port);
	return fd;
}

static int listener_open(struct listener *l, struct err **e)
{
	for (int tries = 0; tries < 32; tries++) {
		int p6 = 0;

		l->fd4 = listen_on(AF_INET, 0, &l->port);
		if (l->fd4 < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's loopback listener");
		l->fd6 = listen_on(AF_INET6, l->port, &p6);
		if (l->fd6 >= 0 || errno == EADDRNOTAVAIL || errno == EAFNOSUPPORT)
			return 0;
		close(l->fd4);
		l->fd4 = -1;
		if (errno != EADDRINUSE)
			break;
	}
	return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's loopback listener on ::1");
}

static void listener_close(struct listener *l)
{
	if (l->fd4 >= 0)
		close(l->fd4);
	if (l->fd6 >= 0)
		close(l->fd6);
	l->fd4 = l->fd6 = -1;
}

/* The gateway over the listeners (it takes them), its audit log in the
 * record dir, which the sandbox cannot reach. */
static int start_gateway(const struct grant *g, struct listener ls[2], const char *record_dir,
			 struct gateway **out, struct err **e)
{
	_cleanup_free_ char *audit_path = fs_path_join(record_dir, "network.jsonl");
	struct gw_config cfg = { .allow = g->hosts, .n_allow = g->n_hosts,
				 .deny = g->deny_hosts, .n_deny = g->n_deny_hosts,
				 .dns_servers = getenv("CORDON_GATEWAY_DNS"), .audit_fd = -1 };
	int r;

	cfg.audit_fd = audit_path ? open(audit_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
							     O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (cfg.audit_fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's audit log");
	r = gateway_new(&cfg, out, e);
	if (r < 0) {
		close(cfg.audit_fd);
		return -1;
	}
	for (int i = 0; i < 2; i++) {
		enum gw_proto proto = i == 0 ? GW_PROTO_HTTP : GW_PROTO_SOCKS5;
		int *fds[2] = { &ls[i].fd4, &ls[i].fd6 };

		for (int k = 0; k < 2; k++) {
			if (r == 0 && *fds[k] >= 0)
				r = gateway_add_listener(*out, *fds[k], proto, e);
			if (r == 0)
				*fds[k] = -1; /* the gateway's now */
		}
	}
	return r;
}

/* Is the srt found now the one the plan names? */
static int same_srt(const struct plan *p, const struct srt_env *t, struct err **e)
{
	for (size_t i = 1; p->argv[i] && p->argv[i + 1]; i++)
		if (strcmp(p->argv[i + 1], "--settings") == 0)
			return strcmp(p->argv[i], t->srt) == 0 ? 0
				: err_set(e, ERR_UNAVAILABLE, 0,
					  "srt_unavailable: srt is now `%s`, not the plan's `%s`",
					  t->srt, p->argv[i]);
	return err_set(e, ERR_DENIED, 0, "the plan is not an srt plan");
}

/* Record, settings, preflight: everything before srt runs the command. */
static int prepare(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		   const struct provider_record *rec, struct listener ls[2],
		   struct limits_plan *lp, struct gateway **gw, struct err **e)
{
	struct srt_env t = { 0 };
	struct srt_helpers h;
	struct srt_ports ports = { ls[0].port, ls[1].port };
	_cleanup_free_ char *self = NULL;
	_cleanup_json_ json_t *settings = NULL;
	_cleanup_free_ char *file = fs_path_join(paths->record_dir, SRT_SETTINGS_FILE);
	int r = file ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "srt");

	/* The plan asked srt its version moments ago, in this process; the
	 * helpers and srt are looked up again and must be the plan's. */
	if (r == 0)
		r = srt_locate(&t, false, e);
	if (r == 0)
		r = same_srt(p, &t, e);
	if (r == 0)
		r = srt_self_exe(g, &self, e);
	h = (struct srt_helpers){ t.bwrap, t.socat, t.rg, self };
	if (r == 0)
		r = srt_settings_build(g, &h, &ports, &settings, e);
	if (r == 0)
		r = srt_limits_settings(settings, p, e);
	if (r == 0)
		r = rec->fn(rec->ctx, e);
	if (r == 0)
		r = start_gateway(g, ls, paths->record_dir, gw, e);
	if (r == 0)
		r = srt_settings_write(paths->record_dir, settings, true, e);
	if (r == 0)
		r = plan_sync_record(paths->record_dir, e);
	if (r == 0)
		r = srt_sockdir_make(e);
	/* srt binds the cgroups into its sandbox: they must exist first */
	if (r == 0)
		r = limits_create(lp, e);
	if (r == 0)
		r = srt_preflight(&t, file, paths->record_dir, paths->record_dir, e);
	srt_env_clear(&t);
	return r;
}

/* The command's environment: the process's, with the plan's own keys. */
static char **child_environ(const struct plan *p)
{
	char **env = strv_dup(environ);

	for (size_t i = 0; env && p->env && p->env[i]; i++)
		if (strv_push(&env, p->env[i]) < 0)
			return NULL;
	return env;
}

/* The keeper's signal that the root is gone: not one the root forwards. */
#define KEEPER_ORPHANED (SIGRTMIN + 1)

/* Kill every process beneath the keeper, orphans reparented to it
 * included, until none is left. */
static void keeper_kill_all(void)
{
	for (int round = 0; round < 64; round++) {
		pid_t kids[64];
		int n = adopt_children(getpid(), kids, 64);

		if (n <= 0)
			return;
		for (int i = 0; i < n; i++) {
			pid_t sub[64];
			int m = adopt_children(kids[i], sub, 64);

			kill(kids[i], SIGSTOP); /* no new children while its own die */
			for (int k = 0; k < m; k++)
				kill(sub[k], SIGKILL);
			kill(kids[i], SIGKILL);
		}
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		usleep(10000);
	}
}

/* The keeper sits between the root and srt. srt's tree outlives srt
 * itself (its shell, bwrap, the bridges), and the plan's stop is a
 * SIGKILL of the root, which nothing in srt would notice: the keeper is a
 * subreaper, so the tree stays beneath it, and it kills all of it when
 * the root dies or when srt exits, then removes the sandbox's cgroups
 * (nothing of the root may be left to). It passes on the signals the
 * root forwards and exits with srt's status. */
static _Noreturn void keeper(const struct plan *p, char **env, const sigset_t *mask,
			     int status_fd, pid_t root, struct limits_plan *lp)
{
	sigset_t set;
	pid_t srt;
	int sfd, code = 125;

	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, KEEPER_ORPHANED);
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, KEEPER_ORPHANED);
	sigprocmask(SIG_BLOCK, &set, NULL);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0 || getppid() != root)
		_exit(125);
	srt = fork();
	if (srt == 0) {
		int err;

		/* srt dies with the keeper, whatever else happens. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		execve(p->argv[0], p->argv, env);
		err = errno;
		(void)!write(status_fd, &err, sizeof(err));
		_exit(127);
	}
	close(status_fd);
	for (;;) {
		struct signalfd_siginfo si;
		int ws;
		pid_t w;

		if (srt < 0 || read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			break;
		if ((int)si.ssi_signo == KEEPER_ORPHANED)
			break;
		if (si.ssi_signo != SIGCHLD) {
			kill(srt, (int)si.ssi_signo);
			continue;
		}
		while ((w = waitpid(-1, &ws, WNOHANG)) > 0)
			if (w == srt) {
				code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				srt = 0;
			}
		if (srt == 0)
			break;
	}
	keeper_kill_all();
	/* The root may be gone (the plan's stop kills it): the sandbox's
	 * cgroups go with the tree. */
	limits_remove(lp);
	_exit(code);
}

static pid_t spawn(const struct plan *p, const sigset_t *mask, struct limits_plan *lp,
		   int *pidfd, int *errnum)
{
	_cleanup_strv_ char **env = child_environ(p);
	pid_t root = getpid();
	int status[2];
	pid_t pid;
	ssize_t n;

	if (!env || pipe2(status, O_CLOEXEC) < 0) {
		*errnum = env ? errno : ENOMEM;
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		close(status[0]);
		keeper(p, env, mask, status[1], root, lp);
	}
	close(status[1]);
	if (pid < 0) {
		*errnum = errno;
		close(status[0]);
		return -1;
	}
	n = read(status[0], errnum, sizeof(*errnum));
	close(status[0]);
	if (n == (ssize_t)sizeof(*errnum)) {
		waitpid(pid, NULL, 0);
		return -1;
	}
	*pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	return pid;
}

static int wait_srt(pid_t pid, int pidfd, int sfd, struct gateway *gw, int *code)
{
	struct pollfd pf[3] = {
		{ .fd = pidfd, .events = POLLIN },
		{ .fd = sfd, .events = POLLIN },
		{ .fd = gateway_fd(gw), .events = POLLIN },
	};

	for (;;) {
		if (poll(pf, 3, gateway_timeout_ms(gw)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		gateway_run(gw);
		if (pf[1].revents) {
			struct signalfd_siginfo si;
			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si))
				kill(pid, (int)si.ssi_signo);
		}
		if (pf[0].revents) {
			siginfo_t info = { 0 };
			if (waitid(P_PID, (id_t)pid, &info, WEXITED) < 0)
				return -1;
			*code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
			return 0;
		}
	}
}

static void note_refused(const struct gateway *gw)
{
	char lines[16][320];
	size_t n = gateway_refused(gw, lines, 16);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "cordon: network: refused %s\n", lines[i]);
}

int srt_run(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
	    const struct provider_record *rec, struct err **e)
{
	struct listener ls[2] = { { -1, -1, 0 }, { -1, -1, 0 } };
	struct limits_plan lp = { 0 };
	struct gateway *gw = NULL;
	sigset_t set, old;
	int pidfd = -1, sfd = -1, errnum = 0, code = -1;
	pid_t pid;

	/* the plan's cgroups must still be this host's */
	if (limits_decide(NULL, g, paths->execution, &lp, e) < 0 ||
	    srt_limits_check_plan(p, &lp, g, e) < 0 || listener_open(&ls[0], e) < 0 ||
	    listener_open(&ls[1], e) < 0 || prepare(g, p, paths, rec, ls, &lp, &gw, e) < 0)
		goto out;
	sigemptyset(&set);
	for (size_t i = 0; i < sizeof(forwarded) / sizeof(*forwarded); i++)
		sigaddset(&set, forwarded[i]);
	sigprocmask(SIG_BLOCK, &set, &old);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	pid = sfd < 0 ? -1 : spawn(p, &old, &lp, &pidfd, &errnum);
	if (pid < 0 || pidfd < 0) {
		if (pid > 0) {
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
		}
		err_set(e, ERR_UNAVAILABLE, pid < 0 ? errnum : errno, "start srt");
	} else if (wait_srt(pid, pidfd, sfd, gw, &code) < 0) {
		err_set(e, ERR_UNAVAILABLE, errno, "wait for srt");
		code = -1;
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (code >= 0 && !rec->quiet) {
		limits_note(&lp, stderr);
		note_refused(gw);
	}
out:
	/* the keeper has killed everything beneath it */
	limits_remove(&lp);
	limits_clear(&lp);
	if (pidfd >= 0)
		close(pidfd);
	if (sfd >= 0)
		close(sfd);
	gateway_free(gw);
	listener_close(&ls[0]);
	listener_close(&ls[1]);
	return code;
}
