/* run.c: an srt launch, from the sandbox root (this process), in
 * provider/provider.h's steps (run.h). create binds the gateway's
 * loopback listeners (srt's external proxy, so cordon's allow and deny
 * lists, address guard and audit log decide every connection) and builds
 * srt's settings with their ports; the host records and pins the plan;
 * start writes the settings, runs the preflight, then starts srt
 * beneath a keeper (keeper.h); wait serves one loop: the gateway, signals
 * to forward, the keeper's exit. */
#include "sandbox/srt/run.h"
#include "provider/provider.h"
#include "sandbox/srt/keeper.h"
#include "sandbox/srt/settings.h"
#include "sandbox/srt/tools.h"
#include "gateway/gateway.h"
#include "lib/sigfwd.h"
#include "sandbox/adopt.h"
#include "sandbox/terminal.h"
#include "sandbox/srt/limits.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

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

/* An srt launch between create and wait (run.h). The grant, the plan and
 * the paths are the caller's. */
struct provider_run {
	const struct grant *g;
	const struct plan *p;
	const struct plan_paths *paths;
	bool quiet;
	struct listener ls[2];		/* the gateway's until it takes them */
	struct limits_plan lp;
	char *sockdir;			/* the launch's own socket dir */
	struct srt_env t;
	json_t *settings;
	char *file;			/* the settings' path in the record dir */
	struct loop *loop;
	struct gateway *gw;
	struct terminal term;
	sigset_t set, old;		/* blocked by start; the caller's mask */
	bool blocked;
	int pidfd, sfd, go;
	pid_t pid;			/* the keeper, once started */
};

/* The gateway over the listeners (it takes them), its audit log in the
 * record dir, which the sandbox cannot reach. */
static int start_gateway(const struct grant *g, struct listener ls[2], const char *record_dir,
			 struct loop *loop, struct gateway **out, struct err **e)
{
	_cleanup_free_ char *audit_path = fs_path_join(record_dir, "network.jsonl");
	struct gw_config cfg = { .allow = g->hosts, .n_allow = g->n_hosts,
				 .deny = g->deny_hosts, .n_deny = g->n_deny_hosts,
				 .allow_ranges = g->allow_ranges, .n_allow_ranges = g->n_allow_ranges,
				 .dns_servers = getenv("CORDON_GATEWAY_DNS"), .audit_fd = -1,
				 .toolbelt_socket = g->toolbelt };
	int r;

	cfg.audit_fd = audit_path ? open(audit_path, O_WRONLY | O_CREAT | O_EXCL | O_APPEND |
							     O_CLOEXEC | O_NOFOLLOW, 0600) : -1;
	if (cfg.audit_fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's audit log");
	r = gateway_new(loop, &cfg, out, e);
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

/* Before the host's record: srt and its helpers found again (they must
 * be the plan's), the settings built. Nothing is written or started. */
static int prepare(struct provider_run *r, struct err **e)
{
	struct srt_helpers h;
	struct srt_ports ports = { r->ls[0].port, r->ls[1].port };
	_cleanup_free_ char *self = NULL;
	int rc;

	r->file = fs_path_join(r->paths->record_dir, SRT_SETTINGS_FILE);
	rc = r->file ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "srt");
	/* The plan asked srt its version moments ago, in this process; the
	 * helpers and srt are looked up again and must be the plan's. */
	if (rc == 0)
		rc = srt_locate(&r->t, false, e);
	if (rc == 0)
		rc = same_srt(r->p, &r->t, e);
	if (rc == 0)
		rc = srt_self_exe(r->g, &self, e);
	h = (struct srt_helpers){ r->t.bwrap, r->t.socat, r->t.rg, self };
	if (rc == 0)
		rc = srt_settings_build(r->g, &h, &ports, &r->settings, e);
	if (rc == 0)
		rc = srt_limits_settings(r->settings, r->p, e);
	return rc;
}

/* After it, everything before srt runs the command: the gateway, the
 * settings written and the record made durable, srt's socket dir and the
 * sandbox's cgroups made, the preflight run. */
static int ready(struct provider_run *r, struct err **e)
{
	const struct plan_paths *paths = r->paths;
	int rc = start_gateway(r->g, r->ls, paths->record_dir, r->loop, &r->gw, e);

	if (rc == 0)
		rc = srt_settings_write(paths->record_dir, r->settings, true, e);
	if (rc == 0)
		rc = plan_sync_record(paths->record_dir, e);
	_cleanup_free_ char *sockdir = srt_run_sockdir(paths);
	if (rc == 0 && !sockdir)
		rc = err_set(e, ERR_INTERNAL, ENOMEM, "srt");
	if (rc == 0)
		rc = srt_sockdir_make(sockdir, e);
	/* srt binds the cgroups into its sandbox: they must exist first */
	if (rc == 0)
		rc = limits_create(&r->lp, e);
	if (rc == 0)
		rc = srt_preflight(&r->t, r->file, paths->record_dir, paths->record_dir, sockdir, e);
	srt_env_clear(&r->t);
	return rc;
}

/* The keeper, as the loop sees it. */
struct keeper_wait {
	pid_t pid;
	int code;
	int wait_errno;		/* the wait failed: why */
};

/* A signal the root got (blocked, read from sfd) goes to the keeper. */
static void on_signal(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct keeper_wait *k = s->data;
	struct signalfd_siginfo si;

	(void)l;
	(void)events;
	if (read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		kill(k->pid, (int)si.ssi_signo);
}

static void on_keeper_exit(struct loop *l, struct loop_pid *s, const siginfo_t *unused)
{
	struct keeper_wait *k = s->data;
	siginfo_t info = { 0 };

	(void)unused;
	loop_stop(l);
	if (waitid(P_PID, (id_t)k->pid, &info, WEXITED) < 0) {
		k->wait_errno = errno;
		return;
	}
	k->code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
}

/* The gateway (in loop already), signals to forward and the keeper's
 * exit, until the keeper is reaped. -1 with errno when it cannot wait. */
static int wait_srt(struct loop *loop, pid_t pid, int pidfd, int sfd, int *code)
{
	struct keeper_wait k = { .pid = pid };
	struct loop_fd sig;
	struct loop_pid exit_src;
	struct err *e = NULL;
	int r = -1;

	if (loop_fd_add(loop, &sig, sfd, EPOLLIN, on_signal, &k, &e) == 0) {
		if (loop_pid_add(loop, &exit_src, pidfd, false, on_keeper_exit, &k, &e) == 0) {
			r = loop_run(loop, &e);
			loop_pid_del(loop, &exit_src);
		}
		loop_fd_del(loop, &sig);
	}
	if (r < 0) {
		errno = e ? e->errnum : errno;
		err_free(e);
		return -1;
	}
	if (k.wait_errno) {
		errno = k.wait_errno;
		return -1;
	}
	*code = k.code;
	return 0;
}

static void note_refused(const struct gateway *gw)
{
	char lines[16][320];
	size_t n = gateway_refused(gw, lines, 16);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "cordon: network: refused %s\n", lines[i]);
}

/* What the run holds, removed and freed: the keeper (when start left
 * one) has ended everything beneath it. */
static void run_free(struct provider_run *r)
{
	srt_sockdir_remove(r->sockdir);
	if (r->go >= 0)
		close(r->go);
	/* the keeper has ended everything beneath it */
	limits_remove(&r->lp);
	limits_clear(&r->lp);
	if (r->pidfd >= 0)
		close(r->pidfd);
	if (r->sfd >= 0)
		close(r->sfd);
	gateway_free(r->gw);
	loop_free(r->loop);
	listener_close(&r->ls[0]);
	listener_close(&r->ls[1]);
	srt_env_clear(&r->t);
	json_decref(r->settings);
	free(r->file);
	free(r->sockdir);
	free(r);
}

/* The caller's signal mask and terminal back, once srt was started (or
 * could not be). */
static void unblock(struct provider_run *r)
{
	if (!r->blocked)
		return;
	sigprocmask(SIG_SETMASK, &r->old, NULL);
	terminal_restore(&r->term);
	r->blocked = false;
}

int srt_create(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
	       const struct provider_launch *pl, struct provider_run **run, json_t **pin,
	       struct err **e)
{
	struct provider_run *r = calloc(1, sizeof(*r));

	*run = NULL;
	if (pin)
		*pin = NULL;
	if (!r) {
		err_set(e, ERR_INTERNAL, ENOMEM, "srt");
		return -1; /* (itself: *run is NULL on every failure) */
	}
	*r = (struct provider_run){ .g = g, .p = p, .paths = paths, .quiet = pl->quiet,
				    .ls = { { -1, -1, 0 }, { -1, -1, 0 } },
				    .pidfd = -1, .sfd = -1, .go = -1, .pid = -1 };
	r->sockdir = srt_run_sockdir(paths);
	terminal_save(&r->term);
	/* the plan's cgroups must still be this host's */
	if (limits_decide(NULL, g, paths->execution, &r->lp, e) < 0 ||
	    srt_limits_check_plan(p, &r->lp, g, e) < 0 || listener_open(&r->ls[0], e) < 0 ||
	    listener_open(&r->ls[1], e) < 0 || loop_new(&r->loop, e) < 0 || prepare(r, e) < 0) {
		run_free(r);
		return -1;
	}
	*run = r;
	return 0;
}

int srt_start(struct provider_run *r, struct err **e)
{
	unsigned long long ns = 0;

	if (ready(r, e) < 0)
		return -1;
	sigemptyset(&r->set);
	sigfwd_add(&r->set, SIGFWD_COMMAND);
	sigprocmask(SIG_BLOCK, &r->set, &r->old);
	r->blocked = true;
	r->sfd = signalfd(-1, &r->set, SFD_CLOEXEC);
	r->pid = r->sfd < 0 ? err_set(e, ERR_UNAVAILABLE, errno, "start srt")
		 : !r->sockdir ? err_set(e, ERR_INTERNAL, ENOMEM, "start srt")
			       : srt_keeper_spawn(r->g, r->p, r->quiet, &r->old, &r->lp,
						  r->sockdir, &r->pidfd, &r->go, e);
	if (r->pid < 0) {
		/* nothing of the command ran */
		unblock(r);
		return -1;
	}
	if (sandbox_ns_id(r->pid, &ns, e) < 0 ||
	    sandbox_ns_record(r->paths->record_dir, ns, e) < 0 ||
	    sandbox_root_record(r->paths->record_dir, r->pid, e) < 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
		r->pid = -1;
		unblock(r);
		return -1;
	}
	return 0;
}

int srt_wait(struct provider_run *r, struct provider_exit *x, struct err **e)
{
	int code = -1;

	if (wait_srt(r->loop, r->pid, r->pidfd, r->sfd, &code) < 0) {
		err_set(e, ERR_UNAVAILABLE, errno, "wait for srt");
		code = -1;
	}
	unblock(r);
	if (code >= 0 && !r->quiet) {
		limits_note(&r->lp, stderr);
		note_refused(r->gw);
	}
	run_free(r);
	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code };
	return code;
}

void srt_discard(struct provider_run *r)
{
	if (!r)
		return;
	/* a keeper started and never waited for: ended, with all beneath it */
	if (r->pid > 0) {
		kill(r->pid, SIGKILL);
		waitpid(r->pid, NULL, 0);
	}
	unblock(r);
	run_free(r);
}

int srt_run_steps(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		  int (*record)(void *ctx, struct err **e), void *ctx, bool quiet,
		  struct err **e)
{
	struct provider_launch pl = { .quiet = quiet };
	struct provider_exit x = { 0 };
	struct provider_run *run = NULL;

	if (srt_create(g, p, paths, &pl, &run, NULL, e) < 0)
		return -1;
	if (record(ctx, e) < 0 || srt_start(run, e) < 0) {
		srt_discard(run);
		return -1;
	}
	return srt_wait(run, &x, e) < 0 ? -1 : x.code;
}
