/* start.c: the SSH provider's start helper, on the host's word (in
 * the segment's wrapper, which stays in the executor's group). ssh runs
 * in a process group of its own, on this process's stdin, stdout and
 * stderr, with one forward: a native run's gateway (served here, the
 * plan's lists, the audit log the segment's) to the run's records, or
 * the toolbelt's socket to the same path on the remote (isolation none);
 * the remote starts the stub in a session of its own, the run's
 * environment on ssh's stdin ahead of this process's (a child of the
 * helper feeds it: never a file on the remote). TERM, INT
 * and HUP are recorded as the host's and then sent to the stub over a
 * second connection (retried until the run has started). When ssh ends,
 * the run's status is asked of the remote: a run a lost connection left
 * running is stopped (TERM, then KILL to its group after ten seconds),
 * its changes are copied back, and the helper fails (125), as it does
 * when the run never started or its status or changes cannot be read: a
 * segment never reports success with its work left on the remote. Then
 * the run's records and copies there are removed. The same helper takes
 * up a run whose own died (resume): a new connection that watches it. */
#include "container/ssh/ssh.h"
#include "container/ssh/internal.h"

#include "gateway/gateway.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 10000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

/* What the run gets for a signal to the helper: QUIT is the host's last
 * word after a stop's grace, a KILL to the run's whole group. */
static const char *sig_name(int sig)
{
	return sig == SIGTERM ? "TERM"
	       : sig == SIGINT ? "INT"
	       : sig == SIGHUP ? "HUP"
	       : sig == SIGQUIT ? "KILL"
				: NULL;
}

/* A run a lost connection left running: TERM, then KILL to its group
 * after the grace; 0 once the remote says it is not running. */
static int stop_left_running(const struct ssh_conn *c, const json_t *pin, struct err **e)
{
	struct ssh_run_status st;
	long long until = now_ms() + STOP_GRACE_MS;

	if (ssh_signal_run(c, pin, "TERM", false, e) < 0)
		return -1;
	do {
		nap_ms(200);
		if (ssh_status(c, pin, &st, e) < 0)
			return -1;
		if (st.state != PROVIDER_RUNNING)
			return 0;
	} while (now_ms() < until);
	if (ssh_signal_run(c, pin, "KILL", true, e) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		nap_ms(200);
		if (ssh_status(c, pin, &st, e) < 0)
			return -1;
		if (st.state != PROVIDER_RUNNING)
			return 0;
	}
	return err_set(e, ERR_UNAVAILABLE, 0,
		       "container_stop_unverified: the remote run still runs after KILL");
}

/* A native run's gateway: the host's own, in this helper, holding the
 * plan's lists, its audit log the segment's (the record dir's
 * network.jsonl, as a native run on the host has it), its socket
 * forwarded to the run's records on the remote, where the sandbox's
 * proxies relay to it. */
struct host_gw {
	struct grant *g;	/* the lists the gateway points into */
	struct gateway *gw;
	char *sock;		/* the host's end */
	char *tmp;		/* a directory made for it, or NULL */
};

static void gw_stop(struct host_gw *h)
{
	gateway_free(h->gw);
	grant_free(h->g);
	if (h->sock)
		unlink(h->sock);
	if (h->tmp)
		rmdir(h->tmp);
	free(h->sock);
	free(h->tmp);
	memset(h, 0, sizeof(*h));
}

static int gw_start(const struct plan *p, const struct plan_paths *paths, struct loop *loop,
		    struct host_gw *h, struct err **e)
{
	_cleanup_json_ json_t *data = json_deep_copy(p->data);
	_cleanup_free_ char *audit_path = fs_path_join(paths->record_dir, "network.jsonl");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int audit = -1, fd = -1;

	if (!data || !audit_path || json_object_del(data, "container") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "the run's gateway");
	if (grant_from_json(data, &h->g, e) < 0)
		return -1;
	/* the record dir when the path fits a socket address, else a
	 * directory of this helper's own */
	if (asprintf(&h->sock, "%s/gateway.sock", paths->record_dir) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "the run's gateway");
	if (strlen(h->sock) >= sizeof(sa.sun_path)) {
		free(h->sock);
		h->sock = NULL;
		if (!(h->tmp = strdup("/tmp/cordon-gw.XXXXXX")) || !mkdtemp(h->tmp)) {
			free(h->tmp);
			h->tmp = NULL;
			return err_set(e, ERR_UNAVAILABLE, errno, "the run's gateway: a socket dir");
		}
		if (asprintf(&h->sock, "%s/gateway.sock", h->tmp) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "the run's gateway");
	}
	memcpy(sa.sun_path, h->sock, strlen(h->sock) + 1);
	audit = open(audit_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (audit < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the gateway's audit log");
	struct gw_config cfg = { .allow = h->g->hosts, .n_allow = h->g->n_hosts,
				 .deny = h->g->deny_hosts, .n_deny = h->g->n_deny_hosts,
				 .allow_ranges = h->g->allow_ranges,
				 .n_allow_ranges = h->g->n_allow_ranges,
				 .dns_servers = getenv("CORDON_GATEWAY_DNS"), .audit_fd = audit,
				 .toolbelt_socket = h->g->toolbelt };
	if (gateway_new(loop, &cfg, &h->gw, e) < 0) {
		close(audit);
		return -1;
	}
	(void)unlink(h->sock);
	mode_t um = umask(077);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	int bound = fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 && listen(fd, 128) == 0;
	int saved = errno;
	umask(um);
	if (!bound) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, saved, "the run's gateway: listen");
	}
	return gateway_add_listener(h->gw, fd, GW_PROTO_ANY, e);
}

/* ssh's stdin for a start: the run's environment (block, never a file
 * on the remote), then this process's stdin, through a pipe a child of
 * this process feeds; -1 with *e. The child is ended by the caller. */
static int feed_stdin(const char *block, size_t len, pid_t *feeder, struct err **e)
{
	int pfd[2];

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh start: pipe");
	*feeder = fork();
	if (*feeder < 0) {
		int saved = errno;

		close(pfd[0]);
		close(pfd[1]);
		return err_set(e, ERR_UNAVAILABLE, saved, "ssh start: fork");
	}
	if (*feeder == 0) {
		char buf[16384];
		ssize_t n;

		/* (ends with ssh: its write then fails, SIGPIPE blocked) */
		close(pfd[0]);
		if (fs_write_exact(pfd[1], block, len) < 0)
			_exit(1);
		while ((n = read(0, buf, sizeof(buf))) != 0) {
			if (n < 0 && errno == EINTR)
				continue;
			if (n < 0 || fs_write_exact(pfd[1], buf, (size_t)n) < 0)
				_exit(1);
		}
		_exit(0);
	}
	close(pfd[1]);
	return pfd[0];
}

/* While ssh runs: the signals the helper got, recorded and then sent
 * to the run (again later while it has not started). */
struct relayed_signals {
	const struct ssh_conn *c;
	const json_t *pin;
	const struct plan_paths *paths;
	int pending[8], npending;
	bool ssh_gone;
	struct loop_fd sig;
	struct loop_pid ssh;
	struct loop_hook send;
	struct loop_timer retry;
};

static void on_signal(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct relayed_signals *rs = s->data;
	struct signalfd_siginfo si;

	(void)l;
	(void)events;
	if (read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
	    sig_name((int)si.ssi_signo) && rs->npending < 8) {
		struct err *se = NULL;

		/* recorded first: every signal the run gets through the
		 * host is there */
		if (container_record_signal(rs->paths, (int)si.ssi_signo, &se) < 0)
			err_print(stderr, se);
		err_free(se);
		rs->pending[rs->npending++] = (int)si.ssi_signo;
	}
}

static void on_ssh_exit(struct loop *l, struct loop_pid *s, const siginfo_t *unused)
{
	struct relayed_signals *rs = s->data;

	(void)l;
	(void)unused;
	rs->ssh_gone = true; /* the round's signals are sent first */
}

/* After each round: send what is pending (not started yet: again in
 * 200 ms at most), then end once ssh has. */
static void send_pending(struct loop *l, struct loop_hook *h)
{
	struct relayed_signals *rs = h->data;

	while (rs->npending > 0) {
		struct err *se = NULL;
		int r = ssh_signal_run(rs->c, rs->pin, sig_name(rs->pending[0]),
				       rs->pending[0] == SIGQUIT, &se);

		if (r < 0)
			err_print(stderr, se);
		err_free(se);
		if (r == 1)
			break;
		memmove(rs->pending, rs->pending + 1, (size_t)--rs->npending * sizeof(*rs->pending));
	}
	if (rs->ssh_gone)
		loop_stop(l);
	else
		loop_wake_in(l, &rs->retry, rs->npending ? 200 : -1);
}

/* Serve the loop (the gateway's sources are in it already) until ssh
 * ends; a loop that fails ends the wait as ssh's end would. */
static void relay_signals(struct loop *loop, struct relayed_signals *rs, int sfd, int pidfd)
{
	struct err *le = NULL;

	if (loop_fd_add(loop, &rs->sig, sfd, EPOLLIN, on_signal, rs, NULL) == 0) {
		if (loop_pid_add(loop, &rs->ssh, pidfd, false, on_ssh_exit, rs, NULL) == 0) {
			loop_hook_add(loop, &rs->send, send_pending, rs);
			if (loop_run(loop, &le) < 0)
				err_free(le);
			loop_hook_del(loop, &rs->send);
			loop_timer_stop(loop, &rs->retry);
			loop_pid_del(loop, &rs->ssh);
		}
		loop_fd_del(loop, &rs->sig);
	}
}

/* Run ssh (the start script) until it ends, passing signals on (and
 * serving the gateway, when the run has one); envb: the run's
 * environment for its stub (a start, not a resume). */
static int run_attached(const struct ssh_conn *c, const json_t *pin, const struct plan_paths *paths,
			const char *toolbelt_dir, struct host_gw *h, const char *envb,
			size_t envlen, struct loop *loop, int sfd, struct err **e)
{
	struct relayed_signals rs = { .c = c, .pin = pin, .paths = paths };
	bool resume = !envb;
	_cleanup_free_ char *sock = NULL, *fwd = NULL;
	_cleanup_close_ int pidfd = -1;
	char started[32];
	char *fwds[2] = { NULL, NULL };
	int status;
	pid_t pid = -1;

	if (h->gw) {
		/* the gateway, to the run's records (a native run reaches the
		 * toolbelt through it) */
		if (asprintf(&fwd, "%s/" SSH_RECORDS "/%s/" SSH_CHANNEL ":%s",
			     json_string_value(json_object_get(pin, "remote_home")),
			     json_string_value(json_object_get(pin, "container")), h->sock) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh start");
		fwds[0] = fwd;
	} else if (toolbelt_dir) {
		if (asprintf(&sock, "%s/toolbelt.sock", toolbelt_dir) < 0 ||
		    asprintf(&fwd, "%s:%s", sock, sock) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh start");
		if (access(sock, F_OK) == 0)
			fwds[0] = fwd;
	}
	snprintf(started, sizeof(started), "%lld", now_ms());
	char *const args[] = { (char *)json_string_value(json_object_get(pin, "container")),
			       (char *)json_string_value(json_object_get(pin, "container")), started,
			       NULL };
	/* resumed: the run started long ago, its stdin went with the
	 * connection that started it */
	struct ssh_io io = { -1, 1, 2 };
	_cleanup_close_ int feed = -1;
	pid_t feeder = -1;
	if (resume && h->gw) {
		_cleanup_free_ char *out = NULL;
		int ust = 0;

		if (ssh_call(c, ssh_script_unbind, args, NULL, 0, &out, NULL, 4096, &ust, e) < 0)
			return -1;
		if (ust != 0)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "the remote run's gateway socket cannot be bound again (exit %d)",
				       ust);
	}
	if (!resume) {
		if ((feed = feed_stdin(envb, envlen, &feeder, e)) < 0)
			return -1;
		io.in = feed;
	}
	int sr = ssh_spawn(c, resume ? ssh_script_watch : ssh_script_start, args, fwds, &io, true,
			   &pid, e);
	if (sr == 0 && (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		sr = err_set(e, ERR_UNAVAILABLE, errno, "ssh start: pidfd");
	}
	if (sr < 0) {
		if (feeder > 0) {
			kill(feeder, SIGKILL);
			waitpid(feeder, NULL, 0);
		}
		return -1;
	}
	relay_signals(loop, &rs, sfd, pidfd);
	if (feeder > 0) {
		kill(feeder, SIGKILL);
		while (waitpid(feeder, NULL, 0) < 0 && errno == EINTR)
			;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, ERR_UNAVAILABLE, errno, "ssh start: wait");
	return 0;
}

static void loop_freep(struct loop **l)
{
	loop_free(*l);
}

/* The helper, starting the run or (resume) taking up a running one. */
static int helper(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		  bool resume, bool *interrupted, struct err **e)
{
	const json_t *pc = json_object_get(p->data, "container");
	struct ssh_conn c = { 0 };
	struct ssh_run_status st = { 0 };
	struct host_gw gw = { 0 };
	__attribute__((cleanup(loop_freep))) struct loop *loop = NULL;
	const char *iso = json_string_value(json_object_get(pc, "isolation"));
	_cleanup_close_ int sfd = -1;
	_cleanup_free_ char *envb = NULL;
	size_t envlen = 0;
	int code = -1;
	bool lost = false;

	*interrupted = false;
	if (!pc || ssh_conn_from_pin(&c, pin, e) < 0)
		goto out;
	if ((sfd = container_helper_signals(e)) < 0 || loop_new(&loop, e) < 0)
		goto remove;
	if (iso && strcmp(iso, "native") == 0 && gw_start(p, paths, loop, &gw, e) < 0)
		goto remove;
	if (!resume && !(envb = ssh_env_block(p, json_string_value(json_object_get(pc, "home")),
					      &envlen))) {
		err_set(e, ERR_INTERNAL, ENOMEM, "the run's environment");
		goto remove;
	}
	int ar = run_attached(&c, pin, paths, json_string_value(json_object_get(pc, "toolbelt_dir")),
			      &gw, envb, envlen, loop, sfd, e);
	/* (sent: not kept) */
	if (envb)
		explicit_bzero(envb, envlen);
	/* the run's connection is gone: so is its way out */
	gw_stop(&gw);
	if (ar < 0)
		goto remove;
	/* ssh ended: how is the run? (the answer may take a moment to be
	 * there: the connection can end before the stub's status is
	 * written, never the other way) */
	for (int i = 0;; i++) {
		if (ssh_status(&c, pin, &st, e) < 0)
			goto remove;
		if (st.state != PROVIDER_RUNNING || i >= 10)
			break;
		nap_ms(100);
	}
	if (st.state == PROVIDER_RUNNING) {
		lost = true;
		if (stop_left_running(&c, pin, e) < 0)
			goto remove;
		if (ssh_status(&c, pin, &st, e) < 0)
			goto remove;
	}
	if (st.state == PROVIDER_GONE || st.state == PROVIDER_CREATED) {
		err_set(e, ERR_UNAVAILABLE, 0, "the run never started on the remote");
		goto remove;
	}
	if (ssh_copy_back(&c, pc, pin, paths, e) < 0)
		goto remove;
	if (lost) {
		err_set(e, ERR_UNAVAILABLE, 0,
			"the connection to the remote was lost: the run was stopped and its changes "
			"copied back");
		goto remove;
	}
	code = st.code;
	*interrupted = st.term && !container_host_sent_term(paths);
remove:
	gw_stop(&gw);
	/* its status is known (or never will be): its records and copies go */
	if (c.known_hosts) {
		struct err *re = NULL;

		if (ssh_remove(pin, &re) < 0) {
			err_wrap(&re, "remove the run on the remote");
			err_print(stderr, re);
		}
		err_free(re);
	}
out:
	ssh_conn_clear(&c);
	return code;
}

int ssh_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
	      bool *interrupted, struct err **e)
{
	return helper(p, paths, pin, false, interrupted, e);
}

int ssh_resume(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
	       bool *interrupted, struct err **e)
{
	return helper(p, paths, pin, true, interrupted, e);
}
