/* settle.c: a segment's end (see daemon.h): its wrapper's exit (the exit
 * file, or lost without one), a stop confirmed once nothing of it is
 * left, a container whose helper left no exit file settled by a child,
 * the result recorded and a failed attempt tried again; and a stop (TERM,
 * then KILL once the binding's grace is over). */
#include "daemon/internal.h"
#include "executor/claude.h"
#include "host/db.h"
#include "host/wrapper.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "sandbox/adopt.h"
#include "toolbelt/toolbelt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The job's own workspace (a clone cut short, a scratch) removed. */
void hostd_remove_own_workspace(struct hostd *d, const char *job)
{
	_cleanup_free_ char *wss = fs_path_join(d->state, "workspaces");
	_cleanup_close_ int wfd = wss ? open(wss, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;

	if (wfd >= 0 && faccessat(wfd, job, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fs_remove_tree(wfd, job, 256) < 0)
		fprintf(stderr, "cordon: daemon: cannot remove workspaces/%s\n", job);
}

/* A container segment whose helper left no exit file: `cordon docker
 * settle` checks its pinned container (the record's container.json),
 * stops it when it runs, confirms it stopped and removes what the segment
 * made; the segment's pid and pidfd become the child's, and it ends when
 * the child does. 0 started, -1 not (the stop is then unverified). */
static int spawn_settle(struct hostd *d, struct seg *s)
{
	char n[16];
	char *const argv[] = { d->self, "container", "settle", "--record", s->record, "--job",
			       s->job, "--segment", n, NULL };
	posix_spawn_file_actions_t fa;
	pid_t pid = -1;
	int pidfd, rc;

	if (!s->record)
		return -1;
	snprintf(n, sizeof(n), "%u", s->n);
	rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0) {
		if (posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0) == 0)
			rc = posix_spawn(&pid, d->self, &fa, NULL, argv, environ);
		else
			rc = -1;
		posix_spawn_file_actions_destroy(&fa);
	}
	if (rc != 0)
		return -1;
	pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	loop_pid_del(d->loop, &s->pid_src);
	close(s->pidfd);
	s->pidfd = pidfd;
	s->pid = pid;
	s->settling = true;
	if (hostd_watch_pid(d, s) < 0) {
		/* (without its watch, waited for here: it is bounded) */
		waitpid(pid, NULL, 0);
		return -1;
	}
	return 0;
}

/* What the settle child found: the record's settle.json. */
static bool settle_verified(int dfd)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *v = NULL;
	struct err *e = NULL;

	if (dfd >= 0 && fs_read_file(dfd, "settle.json", 4096, &buf, NULL, &e) == 0)
		v = json_parse_strict(buf, strlen(buf), NULL);
	err_free(e);
	return json_is_true(json_object_get(v, "verified"));
}

/* A segment that was never pinned (refused, or stopped before its first
 * launch) ends: nothing ran. */
static void unlaunched_end(struct hostd *d, struct seg *s)
{
	char job[HOST_JOB_ID_MAX];
	bool first = s->n == 1 && s->attempt == 1;

	snprintf(job, sizeof(job), "%s", s->job);
	hostd_seg_free(d, s);
	/* a job refused or stopped before its first launch: what its
	 * wrapper made of a workspace of its own (a clone cut short)
	 * goes, nothing having run in it */
	if (first)
		hostd_remove_own_workspace(d, job);
	if (!hostd_job_live(d, job))
		toolbelt_close(d->tb, job);
}

/* The segment's result is known (seg): recorded, a failed attempt tried
 * again, s freed. A container whose start helper left no exit file is
 * settled by a child first (s then waits for it, settling). */
static void seg_end(struct hostd *d, struct seg *s, struct host_segment *seg)
{
	_cleanup_close_ int dfd =
		s->record ? fs_open_nofollow(AT_FDCWD, s->record, O_PATH | O_DIRECTORY, 0) : -1;
	struct err *e = NULL;

	/* A container whose start helper ended without its exit file may
	 * still run: stopped and confirmed before anything runs again, and
	 * what it made removed, by a child (the Engine's calls are never the
	 * loop's); the segment ends once it has. Unconfirmed, the job is not
	 * tried again. */
	bool unverified = false;
	if (s->container && !s->exit) {
		if (!s->settling && spawn_settle(d, s) == 0)
			return;
		unverified = !s->settling || !settle_verified(dfd);
		if (unverified)
			seg->reason = "container_stop_unverified: its start helper ended and its "
				      "container could not be confirmed stopped";
	}
	/* a failed attempt is tried again while the binding allows; a stop
	 * is the operator's and final */
	bool failed = seg->result == HOST_REFUSED || seg->result == HOST_LOST ||
		      (seg->result == HOST_EXITED &&
		       (seg->code != 0 || (seg->reason && !s->interrupted &&
					   strncmp(seg->reason, "interrupted:", 12) == 0)));
	bool again = failed && !s->stop_sig && !unverified && s->attempt <= s->retries;
	if (host_db_segment_end(d->db, seg, !again, &e) < 0) {
		err_print(stderr, e);
		again = false;
	}
	err_free(e);
	e = NULL;
	if (again && (host_db_attempt_end(d->db, s->job, s->attempt, seg->result, seg->code,
					  seg->reason, &e) < 0 ||
		      hostd_retry(d, s->job, s->n + 1, &e) < 0)) {
		struct err *e2 = NULL;

		err_print(stderr, e);
		/* the job ends with the failure it had */
		(void)host_db_job_refused(d->db, s->job,
					  e && e->reason != ERR_INTERNAL ? err_reason_name(e->reason)
									  : "sandbox_unavailable",
					  &e2);
		err_free(e2);
	}
	err_free(e);
	char job[HOST_JOB_ID_MAX];
	snprintf(job, sizeof(job), "%s", s->job);
	hostd_seg_free(d, s);
	/* a job that has ended loses its toolbelt (revoked) */
	if (!hostd_job_live(d, job))
		toolbelt_close(d->tb, job);
}

/* A stopped segment's end, once its stop is confirmed (left 0) or not
 * (left: the wrapper's pid, a process of the segment still left). */
static void stop_end(struct hostd *d, struct seg *s, pid_t left)
{
	struct host_segment seg = { .attempt = s->attempt, .n = s->n };
	json_t *code = json_object_get(s->exit, "code");

	s->ending = false;
	snprintf(seg.job, sizeof(seg.job), "%s", s->job);
	seg.result = HOST_STOPPED;
	seg.signal = s->stop_sig;
	seg.code = json_is_integer(code) ? (int)json_integer_value(code) : 128 + s->stop_sig;
	seg.reason = !left	    ? NULL
		     : s->sandboxed ? "stopped, but a process of the sandbox was still left"
				    : "stopped, but a process of its group was still left";
	seg_end(d, s, &seg);
}

/* A stop is confirmed once nothing of the segment is left; without a
 * sandbox, by its wrapper's process group (its number stays taken while
 * a member lives), KILLed every STOP_LOOK_MS up to STOP_LOOKS times until
 * it is gone. */
#define STOP_LOOKS 500
#define STOP_LOOK_MS 10
/* With one, by the sandbox's first process, given this long to go. */
#define STOP_ROOT_MS 5000

static void group_look(struct loop *l, struct loop_timer *t)
{
	struct seg *s = t->data;

	if (s->looks >= STOP_LOOKS) {
		stop_end(s->d, s, s->pid);
		return;
	}
	if (kill(-s->pid, SIGKILL) < 0) {
		stop_end(s->d, s, 0);
		return;
	}
	s->looks++;
	loop_timer_start(l, &s->confirm, STOP_LOOK_MS, 0, group_look, s);
}

static void root_gone(struct loop *l, struct loop_pid *src, const siginfo_t *info)
{
	struct seg *s = src->data;

	(void)info;
	loop_timer_stop(l, &s->confirm);
	close(src->src.fd);
	stop_end(s->d, s, 0);
}

static void root_left(struct loop *l, struct loop_timer *t)
{
	struct seg *s = t->data;

	loop_pid_del(l, &s->root);
	close(s->root.src.fd);
	stop_end(s->d, s, s->pid);
}

/* A stopped segment's wrapper ended: its stop confirmed (the loop goes
 * on meanwhile; the segment, ending, is no longer the job's running one),
 * then stop_end. The sandbox dies with its first process (pid 1 of its
 * pid namespace), a moment after the wrapper. That process is found by
 * the pid and start time its record names, through a pidfd opened before
 * it is dated: a number (a pid, a pid namespace's) used again since names
 * another's, never signalled. A record naming no first process, a
 * container's, has its stop confirmed by its start helper. */
static void stop_confirm(struct hostd *d, struct seg *s)
{
	int rfd = -1;

	if (!s->sandboxed) {
		s->ending = true;
		s->looks = 0;
		s->confirm.data = s;
		group_look(d->loop, &s->confirm);
		return;
	}
	if (!s->record || sandbox_root_open(s->record, &rfd, NULL) <= 0) {
		stop_end(d, s, 0);
		return;
	}
	(void)syscall(SYS_pidfd_send_signal, rfd, SIGKILL, NULL, 0);
	if (loop_pid_add(d->loop, &s->root, rfd, false, root_gone, s, NULL) == 0) {
		s->ending = true;
		loop_timer_start(d->loop, &s->confirm, STOP_ROOT_MS, 0, root_left, s);
		return;
	}
	/* (the loop cannot watch it: waited for here, bounded) */
	bool gone = procfs_pidfd_wait(rfd, STOP_ROOT_MS);
	close(rfd);
	stop_end(d, s, gone ? 0 : s->pid);
}

/* The wrapper (or the settle child) ended: what its exit file says, or
 * lost without one; a stop's end once it is confirmed. */
void hostd_on_exit_of(struct hostd *d, struct seg *s)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int dfd = -1;
	struct host_segment seg = { .attempt = s->attempt, .n = s->n };
	_cleanup_free_ char *failed_turn = NULL, *turn_reason = NULL;
	struct err *e = NULL;
	siginfo_t info = { 0 };

	(void)waitid(P_PIDFD, (id_t)s->pidfd, &info, WEXITED);
	if (s->ctl >= 0)
		hostd_on_answer(d, s); /* died before (or while) answering */
	if (!s->pinned) {
		unlaunched_end(d, s);
		return;
	}
	snprintf(seg.job, sizeof(seg.job), "%s", s->job);
	if (s->claude)
		host_claude_keep_session(d->db, d->state, s->job, s->log_start, &failed_turn);
	dfd = s->record ? fs_open_nofollow(AT_FDCWD, s->record, O_PATH | O_DIRECTORY, 0) : -1;
	json_decref(s->exit);
	s->exit = NULL;
	if (dfd >= 0 && fs_read_file(dfd, HOST_WRAPPER_EXIT, 4096, &buf, NULL, &e) == 0)
		s->exit = json_parse_strict(buf, strlen(buf), &e);
	err_free(e);
	if (s->stop_sig) {
		stop_confirm(d, s);
		return;
	}
	const json_t *x = s->exit;
	if (x && json_is_integer(json_object_get(x, "code"))) {
		const char *why = json_string_value(json_object_get(x, "error"));

		seg.code = (int)json_integer_value(json_object_get(x, "code"));
		seg.result = why ? HOST_REFUSED : HOST_EXITED;
		seg.reason = (char *)why;
		/* whether its handler could run: the plan's signals */
		if (!why && s->interrupted)
			seg.reason = strcmp(s->interrupted, "term") == 0
					     ? "interrupted: TERM reached the command (term)"
					     : "interrupted: the command was killed (kill)";
		/* a container that got a TERM the host did not send: whatever
		 * its status, it did not end on its own */
		if (!why && !s->interrupted && json_is_true(json_object_get(x, "interrupted")))
			seg.reason = "interrupted: a TERM the host did not send reached the container";
		/* claude-code: a failed turn says so */
		if (!seg.reason && failed_turn) {
			if (asprintf(&turn_reason, "claude: the turn failed: %s", failed_turn) < 0)
				turn_reason = NULL;
			seg.reason = turn_reason;
		}
	} else {
		seg.result = HOST_LOST;
		seg.code = 125;
		seg.reason = "the wrapper ended without an exit file";
	}
	seg_end(d, s, &seg);
}

/* The loop's: a stop's grace (or a container's helper's last one) is
 * over. */
static void grace_over(struct loop *l, struct loop_timer *t)
{
	struct seg *s = t->data;

	(void)l;
	hostd_on_grace(s->d, s);
}

/* The grace is over: KILL to the wrapper's process group (the sandbox
 * dies with its root). */
void hostd_on_grace(struct hostd *d, struct seg *s)
{
	/* (its helper is gone: the settle child does the rest) */
	if (s->settling)
		return;
	/* A container does not die with its start helper: the helper is
	 * asked (QUIT) to kill it and to return once the daemon says it is
	 * not running, and has a last grace to do so. */
	if (s->container && !s->quit_sent) {
		s->quit_sent = true;
		loop_timer_start(d->loop, &s->grace, (int64_t)HOSTD_CONTAINER_KILL_S * 1000, 0,
				 grace_over, s);
		kill(s->pid, SIGQUIT);
		return;
	}
	s->stop_sig = SIGKILL;
	kill(-s->pid, SIGKILL);
}

/* Stop: TERM to the wrapper's process group, which forwards it into the
 * sandbox; KILL once the binding's grace is over. */
int hostd_stop_segment(struct hostd *d, struct seg *s)
{
	if (s->stop_sig || s->settling)
		return 0; /* stopping already, or ended and being settled */
	s->stop_sig = SIGTERM;
	if (s->grace_ms == 0 && !s->container) {
		s->stop_sig = SIGKILL;
		return kill(-s->pid, SIGKILL);
	}
	/* (a container's helper needs a moment to pass a KILL on: 1 ms) */
	loop_timer_start(d->loop, &s->grace, s->grace_ms ? (int64_t)s->grace_ms : 1, 0, grace_over,
			 s);
	return kill(-s->pid, SIGTERM);
}
