/* spawn.c: a segment started and pinned (see daemon.h): its wrapper
 * spawned with the request on its control socket, the pin it answers
 * opened as the segment in the database before the word ("g") is given,
 * a refusal ending the job; and the next attempt of a failed one. */
#include "daemon/internal.h"
#include "executor/executor.h"
#include "host/config.h"
#include "host/db.h"
#include "host/home.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "toolbelt/toolbelt.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* Start a wrapper (posix_spawn: a vfork, nothing of the daemon's memory
 * copied). The daemon's blocked and ignored signals are its own: the
 * wrapper hands an empty mask on to the command. fd 3 is the control
 * socket; 0 nothing, 1 and 2 the log; every other fd of the daemon is
 * close-on-exec. 0, or an errno with *pid -1. */
int hostd_spawn_wrap(struct hostd *d, bool container, char **env, int logfd, int ctl, pid_t *pid)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	/* a container's wrapper is cordon-host's, which has the providers */
	char *const wargv[] = { d->self, "wrap", "--ctl", "3", NULL };
	char *const cargv[] = { d->self, "container", "wrap", "--ctl", "3", NULL };
	int rc;

	*pid = -1;
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	rc = posix_spawn_file_actions_init(&fa);
	if (rc == 0 && posix_spawnattr_init(&at) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		rc = ENOMEM;
	}
	if (rc == 0) {
		if ((rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) ||
		    (rc = posix_spawn_file_actions_adddup2(&fa, logfd, 1)) ||
		    (rc = posix_spawn_file_actions_adddup2(&fa, logfd, 2)) ||
		    (rc = posix_spawn_file_actions_adddup2(&fa, ctl, 3)) ||
		    (rc = posix_spawnattr_setsigmask(&at, &none)) ||
		    (rc = posix_spawnattr_setsigdefault(&at, &dfl)) ||
		    (rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK |
								POSIX_SPAWN_SETSIGDEF)))
			;
		else
			rc = posix_spawn(pid, d->self, &fa, &at, container ? cargv : wargv, env);
		posix_spawn_file_actions_destroy(&fa);
		posix_spawnattr_destroy(&at);
	}
	if (rc != 0)
		*pid = -1;
	return rc;
}

/* What the segment's wrapper is handed (the caller frees), and what the
 * executor runs (*x, the caller clears; cleared on failure): the
 * binding's request, with the job's toolbelt, home and clone. NULL with
 * *e on failure. */
static char *segment_request(struct hostd *d, const struct host_binding *b, const char *job,
			     unsigned int attempt, unsigned int n, const char *workspace,
			     char *const *args, const char *run, const char *session,
			     struct host_exec *x, struct err **e)
{
	_cleanup_json_ json_t *req = NULL;
	char *text = NULL;

	/* the job's toolbelt: its token's path for the command (the token
	 * itself is read inside), its socket for the sandbox's gateway */
	_cleanup_free_ char *tbdir = toolbelt_dir_of(d->tb, job);
	_cleanup_free_ char *tbsock = toolbelt_socket_of(d->tb, job);
	/* claude-code in a container: the job's own home, made (and
	 * seeded) on first use */
	_cleanup_free_ char *home = NULL;
	if (b->container && b->executor == HOST_EXEC_CLAUDE_CODE &&
	    host_job_home(d->state, job, b->home_seed, &home, e) < 0)
		return NULL;
	/* what the executor runs, with what it needs */
	if (host_exec_build(b, args, run, session, home, tbdir ? d->self : NULL, x, e) < 0)
		return NULL;
	char *tbkv = NULL;
	if (tbdir && (asprintf(&tbkv, "CORDON_TOOLBELT=%s/%s", tbdir, TOOLBELT_TOKEN) < 0 ||
		      strv_push_take(&x->env, tbkv) < 0)) {
		host_exec_clear(x);
		err_set(e, ERR_INTERNAL, ENOMEM, "toolbelt");
		return NULL;
	}
	/* git asks the toolbelt for its credential: the helper set through
	 * git's GIT_CONFIG_* variables (after an empty one that drops any a
	 * config file named) */
	if (tbdir && b->n_git_creds > 0 && hostd_git_helper_env(d, x) < 0) {
		host_exec_clear(x);
		err_set(e, ERR_INTERNAL, ENOMEM, "git's credential helper");
		return NULL;
	}
	req = hostd_wrap_request(d, b, job, n, workspace, x);
	/* a clone workspace is made by the wrapper, before its first
	 * segment is planned */
	if (req && b->git_url && n == 1 && attempt == 1 &&
	    json_object_set_new(req, "clone", hostd_clone_request(d, b, tbdir != NULL)) < 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && home && json_object_set_new(req, "home", json_string(home)) < 0) {
		json_decref(req);
		req = NULL;
	}
	if (req && tbdir && b->provider &&
	    json_object_set_new(req, "toolbelt", json_pack("{s:s, s:s}", "dir", tbdir, "socket",
							   tbsock)) < 0) {
		json_decref(req);
		req = NULL;
	}
	if (!req || !(text = json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII))) {
		host_exec_clear(x);
		err_set(e, ERR_INTERNAL, ENOMEM, "request");
		return NULL;
	}
	return text;
}

/* The segment of a wrapper spawned (pid, ctl its control socket, taken):
 * one of d's, handed text, its answer and exit watched. */
static int segment_watch(struct hostd *d, const struct host_binding *b, const char *job,
			 unsigned int attempt, unsigned int n, pid_t pid, int ctl, off_t log_start,
			 const char *text, struct err **e)
{
	struct seg *s = calloc(1, sizeof(*s));

	if (!s) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(ctl);
		return err_set(e, ERR_INTERNAL, ENOMEM, "segment");
	}
	snprintf(s->job, sizeof(s->job), "%s", job);
	s->attempt = attempt;
	s->n = n;
	s->retries = b->retries;
	s->pid = pid;
	s->ctl = ctl;
	s->grace_ms = b->grace_ms;
	s->sandboxed = b->provider != NULL;
	s->claude = b->executor == HOST_EXEC_CLAUDE_CODE;
	s->container = b->container != NULL;
	s->log_start = log_start;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->next = d->segs;
	d->segs = s;
	if (s->pidfd < 0 || send(s->ctl, text, strlen(text), MSG_NOSIGNAL) < 0 ||
	    hostd_watch_ctl(d, s) < 0 || hostd_watch_pid(d, s) < 0) {
		int saved = errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		hostd_seg_free(d, s);
		return err_set(e, ERR_UNAVAILABLE, saved, "wrapper");
	}
	return 0;
}

int hostd_spawn_wrapper(struct hostd *d, const struct host_binding *b, const char *job,
			unsigned int attempt, unsigned int n, const char *workspace,
			char *const *args, const char *input, const char *session,
			struct err **e)
{
	_cleanup_free_ char *text = NULL, *log = NULL, *dir = NULL, *run = NULL;
	struct host_exec x = { 0 };
	char **env = NULL;
	int sv[2] = { -1, -1 }, logfd, spawn_errno = 0;
	pid_t pid = -1;

	if (hostd_live_places_check(d, b, job, workspace, e) < 0)
		return -1;
	if (asprintf(&dir, "%s/runs/%s", d->state, job) < 0 ||
	    asprintf(&log, "%s/runs/%s/log", d->state, job) < 0 ||
	    asprintf(&run, "%s/runs/%s/run", d->state, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "log");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", dir);
	if (hostd_job_run_dir(d, job, input, e) < 0)
		return -1;
	text = segment_request(d, b, job, attempt, n, workspace, args, run, session, &x, e);
	if (!text)
		return -1;
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0) {
		host_exec_clear(&x);
		return err_set(e, ERR_UNAVAILABLE, errno, "log `%s`", log);
	}
	struct stat lst;
	off_t log_start = fstat(logfd, &lst) == 0 ? lst.st_size : 0;
	env = hostd_wrapper_env(d, b, &x, e);
	host_exec_clear(&x);
	if (!env) {
		close(logfd);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		hostd_env_scrub_free(env); /* it holds the binding's secrets */
		close(logfd);
		return err_set(e, ERR_UNAVAILABLE, errno, "wrapper");
	}
	spawn_errno = hostd_spawn_wrap(d, b->container != NULL, env, logfd, sv[1], &pid);
	hostd_env_scrub_free(env);
	close(logfd);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return err_set(e, ERR_UNAVAILABLE, spawn_errno, "wrapper");
	}
	return segment_watch(d, b, job, attempt, n, pid, sv[0], log_start, text, e);
}

/* The wrapper's answer: the pin goes into the database with the segment,
 * then the word; a refusal ends the job. */
/* A wrapper's answer on its control socket, no longer watched: NULL when
 * it ended without one or sent something that is not JSON. */
json_t *hostd_read_answer(struct hostd *d, struct loop_fd *src, int ctl)
{
	_cleanup_free_ char *buf = malloc(ANSWER_MAX);
	struct err *e = NULL;
	ssize_t n = buf ? recv(ctl, buf, ANSWER_MAX, 0) : -1;
	json_t *a = NULL;

	loop_fd_del(d->loop, src);
	if (n > 0)
		a = json_parse_strict(buf, (size_t)n, &e);
	err_free(e);
	return a;
}

void hostd_on_answer(struct hostd *d, struct seg *s)
{
	_cleanup_json_ json_t *a = hostd_read_answer(d, &s->ctl_src, s->ctl);
	struct err *e = NULL;
	const char *digest = a ? json_string_value(json_object_get(a, "digest")) : NULL;
	const char *record = a ? json_string_value(json_object_get(a, "record")) : NULL;
	const char *provider = a ? json_string_value(json_object_get(a, "provider")) : NULL;
	/* a sandboxed binding's segment names its provider, and only that
	 * one is ever counted as sandboxed: a mismatch runs nothing */
	/* (a stop sent before the answer was taken: nothing is launched) */
	if (digest && record && (provider != NULL) == s->sandboxed && !s->stop_sig) {
		struct host_segment seg = {
			.attempt = s->attempt, .n = s->n,
			.provider = (char *)provider,
			.digest = (char *)digest,
			.summary = (char *)json_string_value(json_object_get(a, "summary")),
			.record_dir = (char *)record,
		};
		snprintf(seg.job, sizeof(seg.job), "%s", s->job);
		if (!seg.summary)
			seg.summary = "";
		/* a container's pin (its image, daemon, container) with the plan's */
		json_t *cpin = json_object_get(a, "container");
		_cleanup_free_ char *ctext = json_is_object(cpin) ? json_dumps(cpin, JSON_COMPACT) : NULL;
		seg.container = ctext;
		s->record = strdup(record);
		if (s->record && host_db_segment_open(d->db, &seg, &e) == 0 &&
		    send(s->ctl, "g", 1, MSG_NOSIGNAL) == 1)
			s->pinned = true;
	}
	if (!s->pinned) {
		const char *why = a ? json_string_value(json_object_get(a, "error")) : NULL;
		struct err *e2 = NULL;

		/* the wrapper runs nothing without the word */
		if (host_db_job_refused(d->db, s->job, why ? why : "sandbox_unavailable", &e2) < 0)
			err_print(stderr, e2);
		err_free(e2);
	}
	if (e)
		err_print(stderr, e);
	err_free(e);
	close(s->ctl);
	s->ctl = -1;
}

/* Another attempt of a job: its binding as the config says now, the
 * job's own args and workspace, the next segment. */
int hostd_retry(struct hostd *d, const char *job, unsigned int n, struct err **e)
{
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, e);
	_cleanup_strv_ char **argv = NULL;
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	unsigned int attempt = 0;
	json_t *v;
	size_t i;
	int r;

	if (!j)
		return -1;
	json_array_foreach(json_object_get(j, "args"), i, v)
		if (strv_push(&argv, json_string_value(v)) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "retry");
	if (!argv)
		return err_set(e, ERR_INTERNAL, 0, "job `%s` has no args to retry", job);
	if (host_config_load(d->config, &cfg, e) < 0)
		return -1;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	if (!b) {
		host_config_free(cfg);
		return err_set(e, ERR_CONFIG, 0, "job `%s`: its binding is gone", job);
	}
	r = host_db_attempt_new(d->db, job, &attempt, e);
	if (r == 0 && b->executor == HOST_EXEC_CLAUDE_CODE && !b->provider)
		r = hostd_operator_claude_check(d, cfg, b, json_string_value(json_object_get(j, "workspace")), e);
	if (r == 0)
		r = hostd_spawn_wrapper(d, b, job, attempt, n,
				  json_string_value(json_object_get(j, "workspace")), argv, NULL,
				  json_string_value(json_object_get(j, "session")), e);
	host_config_free(cfg);
	return r;
}
