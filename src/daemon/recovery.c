/* recovery.c: what a daemon finds at its start that a previous one left
 * (see daemon.h). Every segment the database says is running is adopted
 * again when the provider's proof holds, resumed (a container's start
 * helper), settled from its exit file, or stopped and ended lost with the
 * reason; segments opened but never launched are settled. */

#include "daemon/internal.h"
#include "container/contract.h"
#include "executor/claude.h"

#include "host/config.h"
#include "host/db.h"
#include "toolbelt/toolbelt.h"
#include "host/wrapper.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "plan/plan.h"
#include "host/launch.h"
#include "sandbox/adopt.h"

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

/* End a recovered segment that is not (or no longer) running. */
static void recover_end(struct hostd *d, const struct host_segment *s, enum host_result result,
			int code, const char *reason)
{
	struct host_segment end = { .attempt = s->attempt, .n = s->n, .result = result,
				    .code = code, .reason = (char *)reason };
	struct err *e = NULL;

	snprintf(end.job, sizeof(end.job), "%s", s->job);
	if (hostd_job_is_claude(d, s->job))
		host_claude_keep_session(d->db, d->state, s->job, 0, NULL);
	if (host_db_segment_end(d->db, &end, true, &e) < 0)
		err_print(stderr, e);
	err_free(e);
}

/* Does the job's binding, as the config says now, still run without a
 * sandbox? A segment launched without one is never adopted under a
 * binding that has declared one since. */
static bool binding_unsandboxed(struct hostd *d, const char *job, struct err **e)
{
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, e);
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	bool ok;

	if (!j || host_config_load(d->config, &cfg, e) < 0)
		return false;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	ok = !b || !b->provider;
	host_config_free(cfg);
	if (!ok)
		err_set(e, ERR_DENIED, 0,
			"it was launched without a sandbox and its binding now declares one");
	return ok;
}

/* What a previous daemon left running. A wrapper still alive is adopted
 * only when the provider's proof holds: the record read back hashes to
 * the pin in this database, the wrapper is the root pinned with it (pid
 * and start time), started no earlier than the record, with the sandbox
 * beneath it in namespaces all its own. Anything else is stopped (the
 * wrapper's whole process group) and its segment ends lost, with the
 * reason; a wrapper that exited is settled from its exit file. */
/* Supervise a proven wrapper again through pidfd, the fd held since
 * before the proof (taken on success; the caller's still on failure). 0,
 * or -1 with *e (nothing kept). */
static int adopt_segment(struct hostd *d, const struct host_segment *s, pid_t pid, int pidfd,
			 struct err **e)
{
	struct seg *t = calloc(1, sizeof(*t));

	if (!t)
		return err_set(e, ERR_INTERNAL, ENOMEM, "segment");
	snprintf(t->job, sizeof(t->job), "%s", s->job);
	t->attempt = s->attempt;
	t->n = s->n;
	t->pid = pid;
	t->ctl = -1;
	t->grace_ms = HOST_GRACE_DEFAULT_MS;
	t->pinned = true;
	t->sandboxed = s->provider != NULL;
	t->container = s->container != NULL;
	t->claude = hostd_job_is_claude(d, s->job);
	t->record = strdup(s->record_dir);
	t->pidfd = pidfd;
	t->next = d->segs;
	d->segs = t;
	if (t->record && t->pidfd >= 0 && hostd_watch_pid(d, t) == 0) {
		unsigned int ops = hostd_binding_ops(d, s->job);
		struct err *te = NULL;

		fprintf(stderr, "cordon: daemon: adopted segment %u of %s (wrapper %d)\n", s->n,
			s->job, (int)pid);
		/* its toolbelt, taken up again from the token it holds */
		if (ops && toolbelt_open(d->tb, s->job, ops, true, &te) < 0)
			err_print(stderr, te);
		err_free(te);
		err_free(*e);
		*e = NULL;
		return 0;
	}
	if (t->pidfd >= 0)
		loop_pid_del(d->loop, &t->pid_src);
	t->pidfd = -1; /* (the caller's) */
	hostd_seg_free(d, t);
	err_free(*e);
	*e = NULL;
	return err_set(e, ERR_UNAVAILABLE, errno, "cannot watch the wrapper");
}

/* A container segment after a restart: 0 when its wrapper (the start
 * helper) is alive and proven and its container is the pinned one on the
 * pinned daemon (adopted); -1 otherwise, with *e saying why. */
static int recover_container(const struct host_segment *s, const struct plan *p, bool live,
			     pid_t pid, struct err **e)
{
	_cleanup_json_ json_t *pin = json_parse_strict(s->container, strlen(s->container), NULL);
	const struct provider *cp;

	if (!pin)
		return err_set(e, ERR_DENIED, 0, "its container pin cannot be read");
	if (!live)
		return err_set(e, ERR_DENIED, 0, "its start helper is gone");
	if (adopt_check_root(p, s->record_dir, 0, pid, e) != 0)
		return -1;
	if (!(cp = provider_of(pin, PROVIDER_CONTAINER, e)))
		return -1;
	return cp->inspect(pin, s->digest, s->job, s->n, NULL, e) < 0 ? -1 : 0;
}

/* End a proven process and its group, and wait (on its pidfd, taken) for
 * it to go. The group is signalled only while the process runs and leads
 * it: its number then cannot be another's. */
static void end_proven(pid_t pid, int pidfd)
{
	if (!procfs_pidfd_wait(pidfd, 0) && getpgid(pid) == pid)
		kill(-pid, SIGKILL);
	(void)syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0);
	(void)procfs_pidfd_wait(pidfd, 2000);
	close(pidfd);
}

/* In the record dir: {"pid", "start_ticks"} of a resume child (which
 * writes it), for the next restart to end it before another takes its
 * place. */
#define RESUME_STAMP "resume.json"

/* A resume child a restart left (the stamp's, by pid and start time),
 * killed with its group: the segment is taken up again by a new one.
 * (Its run goes on: only the watch ends.) */
static void end_old_resume(const struct host_segment *s)
{
	_cleanup_free_ char *buf = NULL, *path = s->record_dir ? fs_path_join(s->record_dir, RESUME_STAMP) : NULL;
	_cleanup_json_ json_t *j = NULL;
	unsigned long long ticks = 0;
	struct err *e = NULL;

	if (!path || fs_read_file(AT_FDCWD, path, 4096, &buf, NULL, &e) < 0 ||
	    !(j = json_parse_strict(buf, strlen(buf), NULL))) {
		err_free(e);
		return;
	}
	pid_t pid = (pid_t)json_integer_value(json_object_get(j, "pid"));
	int pidfd = -1;

	ticks = (unsigned long long)json_integer_value(json_object_get(j, "start_ticks"));
	if (pid > 1 && procfs_pidfd_proven(pid, ticks, &pidfd, NULL) > 0)
		end_proven(pid, pidfd);
}

/* A container segment whose start helper is gone, its run still there
 * (running, or ended with its changes not yet taken): taken up by a
 * child in the helper's place (`cordon container resume`) when its
 * provider can (an SSH remote's run goes on without its connection), and
 * adopted as that child. -1 when it cannot: the recover table then
 * settles it. */
static int resume_container(struct hostd *d, const struct host_segment *s, struct err **e)
{
	_cleanup_json_ json_t *pin = json_parse_strict(s->container, strlen(s->container), NULL);
	const struct provider *cp = pin ? provider_of(pin, PROVIDER_CONTAINER, NULL) : NULL;
	struct err *ie = NULL;
	char n[16];
	pid_t pid = -1;

	if (!cp || !cp->resume || !s->record_dir)
		return -1;
	end_old_resume(s);
	int st = cp->inspect(pin, s->digest, s->job, s->n, NULL, &ie);
	err_free(ie);
	if (st != PROVIDER_RUNNING && st != PROVIDER_EXITED)
		return -1;
	snprintf(n, sizeof(n), "%u", s->n);
	char *const argv[] = { d->self, "container", "resume", "--record", s->record_dir, "--job",
			       (char *)s->job, "--segment", n, NULL };
	posix_spawn_file_actions_t fa;
	int rc = posix_spawn_file_actions_init(&fa);

	if (rc == 0) {
		rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
		if (rc == 0)
			rc = posix_spawn(&pid, d->self, &fa, NULL, argv, environ);
		posix_spawn_file_actions_destroy(&fa);
	}
	if (rc != 0)
		return -1;
	/* (its own child, not yet reaped: the number is its own) */
	int pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (pidfd < 0 || adopt_segment(d, s, pid, pidfd, e) < 0) {
		if (pidfd >= 0)
			close(pidfd);
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return -1;
	}
	fprintf(stderr, "cordon: daemon: segment %u of %s taken up again without its start helper "
			"(pid %d)\n",
		s->n, s->job, (int)pid);
	return 0;
}

/* A container segment that was not adopted: settled by what its pinned
 * container says (the recover table). Exited: its status, and what it
 * made removed. Running without its helper: stopped, confirmed only once
 * the daemon says so. Gone on the same daemon: confirmed not running. A
 * daemon that cannot be asked, or another: not confirmed, and nothing of
 * the job runs again on a guess. */
static void recover_container_end(struct hostd *d, const struct host_segment *s,
				  const struct err *why)
{
	_cleanup_json_ json_t *pin = json_parse_strict(s->container, strlen(s->container), NULL);
	_cleanup_free_ char *reason = NULL;
	struct err *e = NULL;
	const struct provider *cp = pin ? provider_of(pin, PROVIDER_CONTAINER, &e) : NULL;
	struct provider_state cs = { .exit_code = 125 };
	int st = cp ? cp->inspect(pin, s->digest, s->job, s->n, &cs, &e)
		    : e ? -1 : err_set(&e, ERR_DENIED, 0, "its container pin cannot be read");

	if (st == PROVIDER_RUNNING && cp) {
		if (cp->stop(pin, &e) == 0)
			st = PROVIDER_GONE;
		else
			st = -1;
	}
	/* made and never started: nothing of it ran */
	if (st == PROVIDER_CREATED)
		st = PROVIDER_GONE;
	if (st == PROVIDER_EXITED) {
		recover_end(d, s, HOST_EXITED, cs.exit_code, NULL);
	} else if (st == PROVIDER_GONE) {
		if (asprintf(&reason, "not adopted after a restart (%s); its container is not "
				      "running", why && why->msg ? why->msg : "no reason") < 0)
			reason = NULL;
		recover_end(d, s, HOST_LOST, 125, reason ? reason : "not adopted after a restart");
	} else {
		if (asprintf(&reason, "container_stop_unverified: %s",
			     e && e->msg ? e->msg : "the container could not be asked") < 0)
			reason = NULL;
		recover_end(d, s, HOST_LOST, 125, reason ? reason : "container_stop_unverified");
	}
	err_free(e);
	e = NULL;
	/* what it made goes once it is confirmed not running */
	if (cp && st >= 0 && cp->remove(pin, &e) < 0)
		err_print(stderr, e);
	err_free(e);
	provider_state_clear(&cs);
}

/* The wrapper is the root pinned with the plan (pid and start time): a
 * pid reused since is another process, never signalled. Its pidfd
 * (*wfd) is opened before it is dated, and everything after (the wait,
 * the signal, the adoption) goes through that fd. *pid: the pinned
 * root's (0 when none); true when it is that process, alive. */
static bool wrapper_proven(const struct host_segment *s, pid_t *pid, int *wfd)
{
	_cleanup_free_ char *exec_dir = NULL, *pinned = NULL;
	struct plan_root root = { 0 };
	char *slash;

	exec_dir = s->record_dir ? strdup(s->record_dir) : NULL;
	for (int i = 0; exec_dir && i < 2 && (slash = strrchr(exec_dir, '/')); i++)
		*slash = '\0';
	if (exec_dir && plan_read_pin_root(exec_dir, s->n, &pinned, &root, NULL) == 0)
		*pid = root.pid;
	return procfs_pidfd_proven(*pid, root.start_ticks, wfd, NULL) > 0;
}

/* A segment not adopted ends: ended (r >= 0), by what its exit file in
 * its record (dfd) says, or lost without one; not proven (r < 0), lost
 * with e's reason. */
static void recover_settle(struct hostd *d, const struct host_segment *s, int r, int dfd,
			   const struct err *e)
{
	_cleanup_free_ char *buf = NULL;

	if (r >= 0 && dfd >= 0 && fs_read_file(dfd, HOST_WRAPPER_EXIT, 4096, &buf, NULL, NULL) == 0) {
		/* it ended: what it wrote */
		_cleanup_json_ json_t *x = json_parse_strict(buf, strlen(buf), NULL);
		const char *why = x ? json_string_value(json_object_get(x, "error")) : NULL;

		recover_end(d, s, why ? HOST_REFUSED : HOST_EXITED,
			    x ? (int)json_integer_value(json_object_get(x, "code")) : 125, why);
	} else if (r >= 0) {
		recover_end(d, s, HOST_LOST, 125, "the wrapper ended without an exit file");
	} else {
		_cleanup_free_ char *why = NULL;

		if (asprintf(&why, "not proven after a restart: %s",
			     e && e->msg ? e->msg : "no reason") < 0)
			why = NULL;
		recover_end(d, s, HOST_LOST, 125, why ? why : "not proven after a restart");
	}
}

int hostd_recover_one(void *ctx, const struct host_segment *s)
{
	struct hostd *d = ctx;
	_cleanup_close_ int dfd = -1;
	struct plan *p = NULL;
	struct err *e = NULL;
	_cleanup_close_ int wfd = -1;	/* the wrapper, from its proof on */
	pid_t pid = 0;
	bool live = false, p_ok = false;
	int r = -1;

	dfd = s->record_dir ? fs_open_nofollow(AT_FDCWD, s->record_dir, O_PATH | O_DIRECTORY, 0)
			    : -1;
	live = wrapper_proven(s, &pid, &wfd);
	/* the record must hash to the pin this database holds */
	if (dfd < 0 || !s->digest)
		err_set(&e, ERR_DENIED, 0, "the segment's record is gone");
	else if ((p_ok = plan_read_record(s->record_dir, s->digest, &p, &e) == 0) &&
		 host_plan_unsandboxed(p) != !s->provider) {
		p_ok = false;
		err_set(&e, ERR_DENIED, 0, "its record and the database differ on its sandbox");
	} else if (p_ok && !s->provider) {
		/* its wrapper's identity is all there is to prove, and its
		 * binding must still run without a sandbox */
		p_ok = binding_unsandboxed(d, s->job, &e);
		r = !p_ok ? -1 : live ? 0 : 1;
	} else if (p_ok && s->container) {
		/* a container: its wrapper (the start helper) proven as any
		 * root, and the container the pinned one on the pinned daemon */
		int cr = recover_container(s, p, live, pid, &e);

		plan_free(p);
		if (cr == 0 && adopt_segment(d, s, pid, wfd, &e) == 0) {
			wfd = -1;
			return 0;
		}
		/* without its helper: taken up again where the provider can */
		if (!live && resume_container(d, s, &e) == 0) {
			err_free(e);
			return 0;
		}
		/* not adopted: its helper (the pinned root, by pid and start
		 * time) goes, and the container is settled on its own */
		if (live) {
			(void)syscall(SYS_pidfd_send_signal, wfd, SIGKILL, NULL, 0);
			(void)procfs_pidfd_wait(wfd, 2000);
		}
		recover_container_end(d, s, e);
		err_free(e);
		return 0;
	} else if (p_ok) {
		/* the provider the segment was pinned with, never a guess */
		const struct provider *sp = provider_find_kind(s->provider, PROVIDER_PROCESS);

		r = !sp	  ? err_set(&e, ERR_DENIED, 0, "its provider `%s` is not in this program",
				    s->provider)
		    : live ? sp->adopt(p, s->record_dir, 0, pid, &e)
			   : 1;
	}
	plan_free(p);
	/* A wrapper between its sandbox's end and its own (or before its
	 * sandbox exists) cannot be proven: its record verified, it is given
	 * a moment to exit and is settled from its exit file if it does. */
	if (r < 0 && p_ok && live && procfs_pidfd_wait(wfd, 2000))
		r = 1;
	if (r == 0 && live && !procfs_pidfd_wait(wfd, 0)) {
		if (adopt_segment(d, s, pid, wfd, &e) == 0) {
			wfd = -1;
			return 0;
		}
		r = -1;
	}
	if (r < 0 && live) {
		/* not proven: stopped, whole (the sandbox dies with its root);
		 * the group only while the wrapper leads it */
		end_proven(pid, wfd);
		wfd = -1;
	}
	recover_settle(d, s, r, dfd, e);
	err_free(e);
	return 0;
}

/* A job the last daemon accepted whose launch it never pinned (it died
 * between the two): its wrapper ran nothing without the word, and ends
 * on its own. The job ends refused, saying so, for the operator to start
 * again: nothing is launched on a restart's guess. */
void hostd_settle_unlaunched(struct hostd *d)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *jobs = host_db_jobs_json(d->db, &e);
	json_t *j;
	size_t i;

	if (!jobs) {
		err_print(stderr, e);
		return;
	}
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "id"));
		struct err *e2 = NULL;

		if (!id || json_integer_value(json_object_get(j, "ended_ms")) != 0 ||
		    hostd_running_seg(d, id))
			continue;
		fprintf(stderr, "cordon: daemon: job %s was never launched: the daemon stopped first\n",
			id);
		if (host_db_job_refused(d->db, id,
					"not launched: the daemon stopped before its launch was pinned "
					"(nothing of it ran); start it again",
					&e2) < 0)
			err_print(stderr, e2);
		err_free(e2);
	}
}
