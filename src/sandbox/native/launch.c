/* launch.c: the sandbox root, on the host side, in provider/provider.h's
 * steps (launch.h). create starts pid 1 in the stub's namespaces, checks
 * the kernel, decides the limits and makes the cgroups while pid 1 builds
 * its filesystem, and stops where pid 1 waits for its filter; the host
 * records the plan; start records the sandbox's root and namespace,
 * compiles the filter and sends it with the Landlock ruleset (the go),
 * and starts the gateway or the relay; wait serves one event loop:
 * signals in (forwarded to the sandbox's pid 1), the child's exit, and the
 * status pipe that carries any failure before exec. */
#include "sandbox/native/launch.h"
#include "provider/provider.h"
#include "sandbox/adopt.h"
#include "gateway/relay.h"
#include "gateway/gateway.h"
#include "sandbox/limits.h"
#include "sandbox/native/child.h"
#include "sandbox/confine/landlock.h"
#include "sandbox/native/landlock.h"
#include "sandbox/native/mounts.h"
#include "sandbox/native/mover.h"
#include "sandbox/native/net.h"
#include "sandbox/native/syncer.h"
#include "sandbox/prereq.h"
#include "sandbox/confine/seccomp.h"
#include "sandbox/native/stub.h"
#include "sandbox/terminal.h"
#include "sandbox/forward.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/loop.h"
#include "lib/strv.h"
#include "lib/text.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>


/* What the root waits for, in its loop: the child's exit, signals to
 * forward, the status pipe, the record's sync, and the gateway (or the
 * relay) serving the sandbox's connections. */
struct root {
	struct loop *loop;
	struct loop_pid exit;
	struct loop_signal sig;
	struct loop_fd status, synced;
	int pidfd, status_fd;
	struct gateway *gw;		/* NULL without hosts */
	struct relay *relay;		/* instead, a relay to a gateway elsewhere */
	struct syncer *syncer;
	struct mover *leaver;		/* pid 1 out of the sandbox's cgroups */
	bool leave_v2;			/* the root moves it out of a v2 one */
	struct child_status st;
	bool have_status;
	int code;
	int wait_errno;			/* the wait failed: why */
};

static void stop_relay(struct root *l)
{
	relay_free(l->relay);
	l->relay = NULL;
}

static void on_status(struct loop *loop, struct loop_fd *s, uint32_t events)
{
	struct root *l = s->data;
	ssize_t n = read(l->status_fd, &l->st, sizeof(l->st));

	(void)events;
	/* the command started, in the sandbox's cgroups: pid 1 leaves them
	 * (a failure only slows their removal) */
	if (n == (ssize_t)sizeof(l->st) && l->st.spawned) {
		struct err *ignored = NULL;
		if (l->leave_v2 && mover_start(l->leaver, &ignored) < 0)
			err_free(ignored);
		return;
	}
	loop_fd_del(loop, s);
	close(l->status_fd);
	l->status_fd = -1;
	/* pid 1 ended the sandbox and reaped it: the status is final; pid 1's
	 * own exit is the kernel's to finish */
	if (n == (ssize_t)sizeof(l->st) && l->st.done) {
		l->code = l->st.code;
		loop_stop(loop);
		return;
	}
	if (n == (ssize_t)sizeof(l->st))
		l->have_status = true;
}

static void on_synced(struct loop *loop, struct loop_fd *s, uint32_t events)
{
	struct root *l = s->data;

	(void)events;
	loop_fd_del(loop, s);
	pthread_join(l->syncer->thread, NULL);
	l->syncer->joined = true;
	/* a record that cannot be made durable ends the sandbox */
	if (l->syncer->err)
		syscall(SYS_pidfd_send_signal, l->pidfd, SIGKILL, NULL, 0);
}

static void on_signal(struct loop *loop, struct loop_signal *s, const struct signalfd_siginfo *si)
{
	struct root *l = s->data;

	(void)loop;
	syscall(SYS_pidfd_send_signal, l->pidfd, (int)si->ssi_signo, NULL, 0);
}

static void on_exit_of_child(struct loop *loop, struct loop_pid *s, const siginfo_t *unused)
{
	struct root *l = s->data;
	siginfo_t info = { 0 };
	ssize_t n = 0;

	(void)unused;
	loop_stop(loop);
	if (waitid(P_PIDFD, (id_t)l->pidfd, &info, WEXITED) < 0) {
		l->wait_errno = errno;
		return;
	}
	l->code = info.si_code == CLD_EXITED ? info.si_status : 128 + info.si_status;
	while (l->status_fd >= 0 &&
	       (n = read(l->status_fd, &l->st, sizeof(l->st))) == (ssize_t)sizeof(l->st) &&
	       l->st.spawned)
		;
	if (n == (ssize_t)sizeof(l->st)) {
		if (l->st.done)
			l->code = l->st.code;
		else
			l->have_status = true;
	}
}

/* One loop: the child's exit, signals to forward (set, blocked since
 * before the child), the status pipe, and the gateway serving the
 * sandbox's connections. -1 with errno when it cannot wait. */
static int wait_child(struct root *l, const sigset_t *set)
{
	struct err *e = NULL;

	if (loop_signal_add(l->loop, &l->sig, set, on_signal, l, &e) < 0 ||
	    loop_pid_add(l->loop, &l->exit, l->pidfd, false, on_exit_of_child, l, &e) < 0 ||
	    loop_fd_add(l->loop, &l->status, l->status_fd, EPOLLIN, on_status, l, &e) < 0 ||
	    (!l->syncer->joined &&
	     loop_fd_add(l->loop, &l->synced, l->syncer->done_fd, EPOLLIN, on_synced, l, &e) < 0) ||
	    loop_run(l->loop, &e) < 0) {
		errno = e ? e->errnum : errno;
		err_free(e);
		return -1;
	}
	if (l->wait_errno) {
		errno = l->wait_errno;
		return -1;
	}
	return 0;
}

/* Give the terminal back to cordon's own group once the command is gone. */
static void reclaim_terminal(void)
{
	sigset_t tt, old;

	if (!isatty(STDIN_FILENO) || tcgetpgrp(STDIN_FILENO) == getpgrp())
		return;
	sigemptyset(&tt);
	sigaddset(&tt, SIGTTOU);
	sigprocmask(SIG_BLOCK, &tt, &old);
	tcsetpgrp(STDIN_FILENO, getpgrp());
	sigprocmask(SIG_SETMASK, &old, NULL);
}

/* The filter's length with the ruleset's fd, then its program. */
static int send_sync(int fd, const struct confine_filter *f, int ruleset)
{
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { (void *)&f->len, sizeof(f->len) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	ssize_t n;

	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(cm), &ruleset, sizeof(int));
	do
		n = sendmsg(fd, &msg, MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	if (n != (ssize_t)sizeof(f->len))
		return -1;
	return fs_write_exact(fd, f->insns, f->len * sizeof(*f->insns));
}

/* A native sandbox between create and wait (launch.h): what the launch
 * holds from the stub's pid 1 to the command's end. The grant, the plan,
 * the paths and the channel are the caller's. */
struct provider_run {
	const struct grant *g;
	const char *record_dir, *execution;
	const char *channel;		/* NULL, or the relay's (create_relayed) */
	bool quiet;
	struct mount_plan mp;
	char **env;
	struct child_args a;
	struct limits_plan lp;
	struct syncer syncer;
	struct mover joiner;		/* pid 1 into a v2 cgroup, while the host records */
	struct mover leaver;		/* pid 1 out of it, once the command holds it */
	char *word;			/* the word for pid 1 (mover_word) */
	unsigned long long ns;		/* pid 1's pid namespace */
	struct root l;
	struct terminal term;
	sigset_t set, old;		/* blocked by create; the caller's mask */
	pid_t pid;
	int pidfd;
	bool made;			/* the stub started pid 1 */
	bool undone;			/* pid 1 killed, what was made removed */
};

/* Work done while the child builds its filesystem, up to the host's
 * record: the sandbox's cgroups made and the child moved in (it has
 * started nothing yet; it waits for the word before it shows them, and
 * for the filter before it runs anything). */
static int before_record(struct provider_run *r, struct err **e)
{
	struct mover *j = &r->joiner;
	bool v2 = false;
	/* before pid 1 hears anything: it then makes itself undumpable */
	int rc = sandbox_ns_id(r->pid, &r->ns, e);

	*j = (struct mover){ .lp = &r->lp, .pid = r->pid, .tell_fd = r->a.sync_fd };
	if (rc == 0)
		rc = limits_decide(NULL, r->g, r->execution, &r->lp, e);

	if (rc == 0)
		rc = limits_create(&r->lp, e);
	if (rc == 0 && mover_word(&r->lp, &r->word, &j->word_len) < 0)
		rc = err_set(e, ERR_INTERNAL, ENOMEM, "limits");
	j->word = r->word;
	for (size_t i = 0; i < r->lp.n; i++)
		v2 |= r->lp.dirs[i].v2;
	if (rc == 0 && !v2)
		rc = mover_tell(r->a.sync_fd, r->word, j->word_len, &r->lp, e);
	else if (rc == 0 && v2)
		rc = mover_start(j, e);
	return rc;
}

/* Once the host recorded and pinned the plan: the sandbox's pid
 * namespace and root recorded, the record being made durable, the
 * seccomp filter compiled and the Landlock ruleset built and sent (the
 * child runs nothing before it has them). */
static int after_record(struct provider_run *r, struct err **e)
{
	struct confine_filter filter = { 0 };
	const char *step = NULL;
	int ruleset = -1;
	/* the sandbox's pid namespace, for adoption to prove it gone */
	int rc = sandbox_ns_record(r->record_dir, r->ns, e);

	if (rc == 0)
		rc = sandbox_root_record(r->record_dir, r->pid, e);
	if (rc == 0)
		rc = syncer_start(&r->syncer, r->record_dir, e);
	if (rc == 0)
		rc = confine_seccomp_compile(r->g->unix_sockets_all, &filter, e);
	/* the filter, with the ruleset, follows the word on the same socket */
	rc = mover_finish(&r->joiner, rc, e);
	if (rc == 0 && native_landlock_build(r->a.mp, r->a.landlock_abi, &ruleset, &step) < 0)
		rc = err_set(e, ERR_UNAVAILABLE, errno, "%s", step ? step : "landlock");
	if (rc == 0 && send_sync(r->a.sync_fd, &filter, ruleset) < 0)
		rc = err_set(e, ERR_UNAVAILABLE, errno, "hand the filter to the sandbox");
	if (ruleset >= 0)
		close(ruleset);
	confine_filter_free(&filter);
	return rc;
}

/* Anything short of a whole start kills the child before it runs the
 * command: it waits for the filter, and a closed socket ends it. What
 * was made is removed; -1, with the step the child failed first as the
 * cause when it names one. */
static int undo(struct provider_run *r, struct err **e)
{
	struct child_status st;
	struct err *ignored = NULL;
	int saved;

	(void)mover_finish(&r->joiner, -1, &ignored);
	saved = errno;
	r->undone = true;
	if (r->a.sync_fd >= 0)
		close(r->a.sync_fd);
	r->a.sync_fd = -1;
	syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
	waitpid(r->pid, NULL, 0);
	limits_remove(&r->lp);
	gateway_free(r->l.gw);
	r->l.gw = NULL;
	stop_relay(&r->l);
	syncer_finish(&r->syncer, &ignored); /* the first failure is the cause */
	err_free(ignored);
	/* A step the child failed first is the cause: name it. */
	if (read(r->a.status_fd, &st, sizeof(st)) == (ssize_t)sizeof(st) && !st.exec) {
		text_printable(st.step, sizeof(st.step));
		err_free(*e);
		*e = NULL;
		return err_set(e, ERR_UNAVAILABLE, st.err, "%.*s", CHILD_STEP_MAX, st.step);
	}
	return err_set(e, ERR_UNAVAILABLE, saved, "start the sandbox");
}

/* One line per refused host unless -q: what was asked, and the entry
 * that would allow it. */
static void note_refused(const struct gateway *gw)
{
	char lines[16][320];
	size_t n = gateway_refused(gw, lines, 16);

	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "cordon: network: refused %s\n", lines[i]);
}

static void close_if_open(int fd)
{
	if (fd >= 0)
		close(fd);
}

/* What the run holds, freed; the sandbox ended (wait) or undone. */
static void run_free(struct provider_run *r)
{
	if (!r)
		return;
	gateway_free(r->l.gw);
	stop_relay(&r->l);
	loop_free(r->l.loop);
	/* before the stub answered, a's fds are not the root's (a->gw_fd is a
	 * flag until then) */
	if (r->made) {
		close_if_open(r->a.sync_fd);
		close_if_open(r->a.status_fd);
		close_if_open(r->a.gw_fd);
	}
	close_if_open(r->l.status_fd);
	close_if_open(r->pidfd);
	mounts_plan_clear(&r->mp);
	limits_clear(&r->lp);
	strv_free(r->env);
	free(r->word);
	free(r);
}

/* pid 1 started in the stub's namespaces, as this process's child, and
 * taken up to the host's record. The limits are decided and the cgroups
 * made while the child builds its filesystem. */
static int make(struct provider_run *r, struct err **e)
{
	struct child_args *a = &r->a;

	for (size_t i = 0; i < r->lp.n; i++)
		r->l.leave_v2 |= r->lp.dirs[i].v2; /* v1 ones pid 1 leaves itself */
	/* A child that died early must not take the root with it: writes to
	 * its pipe fail with EPIPE instead. */
	a->sigpipe_ignored = signal(SIGPIPE, SIG_IGN) == SIG_IGN;
	/* Seen from here, where the terminal's group has a pid; inside the
	 * sandbox a group of the host reads as 0. */
	a->foreground = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	terminal_save(&r->term);
	sigemptyset(&r->set);
	sigaddset(&r->set, SIGCHLD);
	sigfwd_add(&r->set, SIGFWD_COMMAND);
	sigprocmask(SIG_BLOCK, &r->set, &r->old);
	a->caller_mask = r->old;
	/* The namespaces were made by the stub while the host decided; pid 1
	 * now starts in them, as this process's child. */
	/* a gateway for the grant's hosts, or for the toolbelt alone */
	if (loop_new(&r->l.loop, e) < 0 ||
	    native_stub_launch(a, r->g->n_hosts > 0 || r->g->toolbelt, &r->pid, &r->pidfd, e) < 0) {
		sigprocmask(SIG_SETMASK, &r->old, NULL);
		return -1;
	}
	r->made = true;
	if (before_record(r, e) < 0)
		return undo(r, e);
	return 0;
}

int native_create(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		  const struct provider_launch *pl, struct provider_run **run, json_t **pin,
		  struct err **e)
{
	return native_create_relayed(g, p, paths, pl, NULL, run, pin, e);
}

int native_create_relayed(const struct grant *g, const struct plan *p,
			  const struct plan_paths *paths, const struct provider_launch *pl,
			  const char *channel, struct provider_run **run, json_t **pin,
			  struct err **e)
{
	struct provider_run *r;
	int abi = confine_landlock_abi();

	*run = NULL;
	if (pin)
		*pin = NULL;
	/* (each failure returns -1 itself: *run is NULL on every one) */
	if (abi < LANDLOCK_ABI_FLOOR) {
		err_set(e, ERR_UNAVAILABLE, 0, "landlock: ABI %d is below %d; see `cordon doctor`",
			abi, LANDLOCK_ABI_FLOOR);
		return -1;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		err_set(e, ERR_INTERNAL, ENOMEM, "the sandbox");
		return -1;
	}
	*r = (struct provider_run){ .g = g, .record_dir = paths->record_dir,
				    .execution = paths->execution, .channel = channel,
				    .quiet = pl->quiet, .pidfd = -1,
				    .syncer = { .done_fd = -1 } };
	r->leaver = (struct mover){ .lp = &r->lp, .tell_fd = -1, .leave = true };
	r->l = (struct root){ .code = 125, .syncer = &r->syncer, .leaver = &r->leaver,
			      .status_fd = -1, .pidfd = -1 };
	/* The command's whole environment, made here: pid 1 is handed no
	 * value of the caller's that the policy does not pass. */
	if (envfilter_for_command(environ, g->env_pass, p->env, pl->quiet ? NULL : stderr,
				  &r->env) < 0) {
		run_free(r);
		err_set(e, ERR_INTERNAL, ENOMEM, "the command's environment");
		return -1;
	}
	if (mounts_plan(g, &r->mp, e) < 0) {
		run_free(r);
		return -1;
	}
	r->a = (struct child_args){ .mp = &r->mp, .landlock_abi = abi, .argv = p->argv,
				    .env = r->env, .gw_fd = -1, .sync_fd = -1, .status_fd = -1 };
	if (make(r, e) < 0) {
		run_free(r);
		return -1;
	}
	*run = r;
	return 0;
}

int native_start(struct provider_run *r, struct err **e)
{
	struct child_args *a = &r->a;

	if (after_record(r, e) < 0 ||
	    (a->gw_fd >= 0 &&
	     (r->channel ? net_relay_start(a->gw_fd, r->channel, r->l.loop, &r->l.relay, e)
			 : net_gateway_start(r->g, a->gw_fd, r->record_dir, r->l.loop, &r->l.gw,
					     e)) < 0))
		return undo(r, e);
	close(a->sync_fd);
	a->sync_fd = -1;
	r->leaver.pid = r->pid;
	r->l.pidfd = r->pidfd;
	r->l.status_fd = a->status_fd; /* the loop's now */
	a->status_fd = -1;
	if (a->gw_fd >= 0)
		close(a->gw_fd);
	a->gw_fd = -1;
	return 0;
}

/* The loop until the command is gone, then what it leaves: the terminal,
 * the record durable, the cgroups removed, the notes. The command's
 * status, or -1 with *e. */
static int finish(struct provider_run *r, struct err **e)
{
	struct root *l = &r->l;
	struct err *ignored = NULL;

	if (wait_child(l, &r->set) < 0) {
		int saved = errno;

		gateway_free(l->gw);
		l->gw = NULL;
		stop_relay(l);
		syncer_finish(&r->syncer, &ignored);
		err_free(ignored);
		ignored = NULL;
		syscall(SYS_pidfd_send_signal, r->pidfd, SIGKILL, NULL, 0);
		mover_finish(&r->leaver, 0, &ignored);
		err_free(ignored);
		limits_remove(&r->lp);
		return err_set(e, ERR_UNAVAILABLE, saved, "wait for the sandbox");
	}
	reclaim_terminal();
	terminal_restore(&r->term);
	/* Nothing is reported before the record is durable. */
	int synced = syncer_finish(&r->syncer, e);
	/* the command and all it started are gone, pid 1 out of the cgroups
	 * (else the removal waits for pid 1's own exit) */
	mover_finish(&r->leaver, 0, &ignored);
	err_free(ignored);
	limits_remove(&r->lp);
	stop_relay(l);
	if (synced < 0)
		return -1;
	if (!r->quiet)
		limits_note(&r->lp, stderr);
	if (l->gw && !r->quiet)
		note_refused(l->gw);
	/* The step crossed from inside: printed as plain text only. */
	text_printable(l->st.step, sizeof(l->st.step));
	if (l->have_status && !l->st.exec)
		return err_set(e, ERR_UNAVAILABLE, l->st.err, "%.*s", CHILD_STEP_MAX, l->st.step);
	if (l->have_status) {
		fprintf(stderr, "cordon: exec `%s`: %s\n", r->a.argv[0], strerror(l->st.err));
		return l->st.err == ENOENT ? 127 : 126;
	}
	return l->code;
}

int native_wait(struct provider_run *r, struct provider_exit *x, struct err **e)
{
	int code = finish(r, e);

	run_free(r);
	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code };
	return code;
}

void native_discard(struct provider_run *r)
{
	struct err *ignored = NULL;

	if (r && r->made && !r->undone) {
		(void)undo(r, &ignored);
		err_free(ignored);
	}
	run_free(r);
}

int native_run_steps(const struct grant *g, const struct plan *p,
		     const struct plan_paths *paths, int (*record)(void *ctx, struct err **e),
		     void *ctx, bool quiet, const char *channel, struct err **e)
{
	struct provider_launch pl = { .quiet = quiet };
	struct provider_exit x = { 0 };
	struct provider_run *run = NULL;

	if (native_create_relayed(g, p, paths, &pl, channel, &run, NULL, e) < 0)
		return -1;
	/* a record that fails ends the sandbox as any failure before the
	 * go does, and names the child's failed step when it has one */
	if (record(ctx, e) < 0) {
		(void)undo(run, e);
		native_discard(run);
		return -1;
	}
	if (native_start(run, e) < 0) {
		native_discard(run);
		return -1;
	}
	return native_wait(run, &x, e) < 0 ? -1 : x.code;
}
