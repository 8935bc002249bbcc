/* attach.c: POST /v1/jobs/<id>/attach (see daemon.h): a claude session
 * resumed as the operator on the host (what the client runs), never where
 * a sandbox wrote; for a job that ran in a container, an attach container
 * made by a wrapper of its own while the asking connection waits,
 * suspended, for its answer. */
#include "daemon/internal.h"
#include "container/contract.h"
#include "executor/claude.h"
#include "executor/executor.h"
#include "host/config.h"
#include "host/db.h"
#include "host/home.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "toolbelt/http.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

/* Attaches are recorded as the job's segments from this number on: its
 * own segments never reach it. */
#define HOSTD_ATTACH_FIRST 900001u

/* An answered attach's job counts as live to the sweep this long: its
 * container waits, made and not started, for the operator's client
 * (which runs it; the sweep keeps one that runs). */
#define HOSTD_ATTACH_HOLD_MS 60000

/* The next attach's number: past every record dir of the job's. */
static unsigned int next_attach(struct hostd *d, const char *job)
{
	_cleanup_free_ char *path = NULL;
	unsigned int n = HOSTD_ATTACH_FIRST;
	struct dirent *de;
	DIR *dir;

	if (asprintf(&path, "%s/runs/%s/sandbox", d->state, job) < 0 || !(dir = opendir(path)))
		return n;
	while ((de = readdir(dir))) {
		char *end;
		unsigned long v = strtoul(de->d_name, &end, 10);

		if (!*end && v >= n && v < 1000000)
			n = (unsigned int)v + 1;
	}
	closedir(dir);
	return n;
}

/* The loop's: the attach's wrapper answered (or ended). */
static void attach_answered(struct loop *l, struct loop_fd *src, uint32_t events)
{
	struct attaching *a = src->data;

	(void)l;
	(void)events;
	hostd_on_attach_answer(a->d, a);
}

/* Have the attach container made: the binding's current policy, the
 * job's home and workspace, claude --resume, a terminal, no toolbelt,
 * by a wrapper of its own (the Engine's calls are never the loop's). */
static int attach_spawn(struct hostd *d, const struct host_binding *b, const char *job,
			const char *ws, const char *session, struct attaching **out, struct err **e)
{
	_cleanup_free_ char *home = NULL, *text = NULL, *log = NULL;
	_cleanup_json_ json_t *req = NULL;
	struct host_exec x = { 0 };
	struct attaching *a;
	unsigned int n = next_attach(d, job);
	char **env;
	int sv[2], logfd, rc;
	pid_t pid;

	if (n >= 1000000)
		return err_set(e, ERR_UNAVAILABLE, 0, "the job has had every attach it can");
	if (host_job_home(d->state, job, b->home_seed, &home, e) < 0 ||
	    host_exec_attach(b, session, home, &x, e) < 0)
		return -1;
	req = hostd_wrap_request(d, b, job, n, ws, &x);
	if (!req || json_object_set_new(req, "home", json_string(home)) < 0 ||
	    json_object_set_new(req, "attach", json_true()) < 0 ||
	    !(text = json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII)) ||
	    asprintf(&log, "%s/runs/%s/log", d->state, job) < 0) {
		host_exec_clear(&x);
		return err_set(e, ERR_INTERNAL, ENOMEM, "attach");
	}
	env = hostd_wrapper_env(d, b, &x, e);
	host_exec_clear(&x);
	if (!env)
		return -1;
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = errno;
		if (logfd >= 0)
			close(logfd);
		hostd_env_scrub_free(env);
		return err_set(e, ERR_UNAVAILABLE, rc, "attach");
	}
	rc = hostd_spawn_wrap(d, true, env, logfd, sv[1], &pid);
	hostd_env_scrub_free(env);
	close(logfd);
	close(sv[1]);
	if (rc != 0 || !(a = calloc(1, sizeof(*a)))) {
		if (rc == 0)
			kill(pid, SIGKILL);
		close(sv[0]);
		return err_set(e, ERR_UNAVAILABLE, rc ? rc : ENOMEM, "attach: its wrapper");
	}
	snprintf(a->job, sizeof(a->job), "%s", job);
	a->n = n;
	a->ctl = sv[0];
	a->pid = pid;
	a->d = d;
	a->next = d->attaches;
	d->attaches = a;
	if (send(a->ctl, text, strlen(text), MSG_NOSIGNAL) < 0 ||
	    loop_fd_add(d->loop, &a->src, a->ctl, EPOLLIN, attach_answered, a, NULL) < 0) {
		rc = errno;
		kill(pid, SIGKILL);
		close(a->ctl);
		a->ctl = -1;
		return err_set(e, ERR_UNAVAILABLE, rc, "attach: its wrapper");
	}
	*out = a;
	return 0;
}

/* The attach's wrapper answered (or ended): the pin of what it made,
 * kept (its word), or its refusal; the waiting connection resumed. */
void hostd_on_attach_answer(struct hostd *d, struct attaching *a)
{
	_cleanup_json_ json_t *ans = hostd_read_answer(d, &a->src, a->ctl);
	const char *digest = json_string_value(json_object_get(ans, "digest"));
	json_t *pin = json_object_get(ans, "container");
	if (digest && json_is_object(pin) && send(a->ctl, "g", 1, MSG_NOSIGNAL) == 1) {
		a->status = 200;
		a->answer = json_pack("{s:O, s:s, s:i}", "container", pin, "digest", digest, "attach",
				      (int)a->n);
		fprintf(stderr, "cordon: daemon: attach %u of job %s: container %.12s\n", a->n, a->job,
			json_string_value(json_object_get(pin, "container")));
	} else {
		const char *why = json_string_value(json_object_get(ans, "error"));
		const char *msg = json_string_value(json_object_get(ans, "message"));

		a->status = why && strcmp(why, "sandbox_unavailable") != 0 ? 409 : 503;
		a->answer = json_pack("{s:s, s:s}", "error", why ? why : "sandbox_unavailable",
				      "message", msg ? msg : "attach: its wrapper ended without an answer");
	}
	close(a->ctl);
	a->ctl = -1;
	a->answered_ms = hostd_wall_ms();
	if (!a->answer)
		a->status = 500;
	if (a->c)
		MHD_resume_connection(a->c);
}

static void drop_attach_secrets(struct hostd *d, const char *job)
{
	_cleanup_free_ char *run = NULL;
	_cleanup_close_ int dfd = -1;

	if (asprintf(&run, "%s/runs/%s/run", d->state, job) >= 0 &&
	    (dfd = fs_open_nofollow(AT_FDCWD, run, O_PATH | O_DIRECTORY, 0)) >= 0)
		(void)unlinkat(dfd, CONTAINER_SECRETS_FILE, 0);
}

/* Reap the attaches' wrappers; an entry goes once answered, delivered
 * and reaped. */
void hostd_attaches_reap(struct hostd *d)
{
	for (struct attaching **p = &d->attaches; *p;) {
		struct attaching *a = *p;

		if (a->pid > 0 && waitpid(a->pid, NULL, WNOHANG) != 0)
			a->pid = 0;
		if (a->pid == 0 && a->ctl < 0 && !a->c &&
		    hostd_wall_ms() - a->answered_ms > HOSTD_ATTACH_HOLD_MS) {
			/* a container the client never started left its secrets
			 * file (the runtime takes it at its start): it goes */
			if (!hostd_job_live(d, a->job))
				drop_attach_secrets(d, a->job);
			*p = a->next;
			json_decref(a->answer);
			free(a);
		} else {
			p = &a->next;
		}
	}
}

/* Is an attach of the job being made? A second one then would take
 * the same number, and its create would remove the first's container. */
static bool attach_being_made(struct hostd *d, const char *job)
{
	for (struct attaching *a = d->attaches; a; a = a->next)
		if (a->ctl >= 0 && strcmp(a->job, job) == 0)
			return true;
	return false;
}

/* A job that ran in a container attaches in one, never on the host. */
static enum MHD_Result attach_in_container(struct hostd *d, struct MHD_Connection *c,
					   const char *job, const json_t *j)
{
	_cleanup_err_ struct err *e = NULL;
	const char *ws = json_string_value(json_object_get(j, "workspace"));
	const char *session = json_string_value(json_object_get(j, "session"));
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	struct attaching *made = NULL;
	int r;

	/* a connection resumed: its answer */
	for (struct attaching *a = d->attaches; a; a = a->next)
		if (a->c == c && strcmp(a->job, job) == 0) {
			if (!a->status)
				return MHD_YES;
			a->c = NULL;
			return hostd_answer(c, a->status, steal_pointer(&a->answer));
		}
	if (host_config_load(d->config, &cfg, &e) < 0)
		return hostd_refuse(c, e);
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	if (!b || !b->container) {
		r = 1;
	} else if (hostd_job_live(d, job) || attach_being_made(d, job)) {
		r = 3;
	} else if (b->executor != HOST_EXEC_CLAUDE_CODE || !host_claude_session_ok(session) || !ws) {
		r = 2;
	} else if (hostd_live_places_check(d, b, job, ws, &e) < 0) {
		r = e && e->reason == ERR_UNAVAILABLE ? 4 : -1;
	} else {
		r = attach_spawn(d, b, job, ws, session, &made, &e) < 0 ? -1 : 0;
	}
	host_config_free(cfg);
	switch (r) {
	case 0:
		/* (attach_spawn makes it when it succeeds; 500, not 503: it is
		 * the daemon's fault, and clients read it so) */
		if (!made)
			return hostd_fail_status(c, 500, "sandbox_unavailable",
						 "the attach was not made");
		break;
	case 1:
		return hostd_fail(c, "attach_sandboxed",
				  "the job ran in a container: it attaches only in one, and its "
				  "binding declares none now");
	case 2:
		return hostd_fail(c, "nothing_to_attach",
				  "the job has no claude session to resume");
	case 3:
		return hostd_fail(c, "job_running",
				  "the job is running, or an attach of it is being made: attach once "
				  "it has ended");
	case 4:
		/* (409, not 503: the job's state, not the host's; clients wait
		 * for the other job on it) */
		return hostd_fail_status(c, 409, "sandbox_unavailable",
				  "another job runs on the job's workspace: attach once it has ended");
	default:
		return hostd_refuse(c, e);
	}
	made->c = c;
	MHD_suspend_connection(c);
	return MHD_YES;
}

/* A connection is done: an attach waiting on it no longer answers it
 * (its entry then goes once reaped). */
void hostd_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct hostd *d = cls;

	for (struct attaching *a = d->attaches; a; a = a->next)
		if (a->c == c)
			a->c = NULL;
	/* a kept-alive connection waits for its next request */
	hostd_admit_idle(d, c);
	hostd_body_done(cls, c, con_cls, why);
}

/* Did any segment of the job run in a container? */
static bool ran_in_container(const json_t *j)
{
	json_t *seg;
	size_t i;

	json_array_foreach(json_object_get(j, "segments"), i, seg)
		if (json_object_get(seg, "container") && !json_is_null(json_object_get(seg, "container")))
			return true;
	return false;
}

/* Attach runs the executor's session on the host as the operator: never
 * for a workspace a sandboxed segment of any job ever wrote, and never
 * for a job that ran in a container (it attaches in one). */
enum MHD_Result hostd_attach(struct hostd *d, struct MHD_Connection *c, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	json_t *j = host_db_job_json(d->db, job, &e);
	const char *ws;

	if (!j)
		return hostd_fail(c, "not_found", "no such job");
	if (ran_in_container(j)) {
		enum MHD_Result ret = attach_in_container(d, c, job, j);

		json_decref(j);
		return ret;
	}
	ws = json_string_value(json_object_get(j, "workspace"));
	/* claude-code: its session resumed on the host, in the workspace,
	 * with the binding's own env (its config directory); the client runs it */
	const char *session = json_string_value(json_object_get(j, "session"));
	struct host_config *cfg = NULL;
	const struct host_binding *b = NULL;
	_cleanup_free_ char *claude = NULL;

	if (host_config_load(d->config, &cfg, &e) == 0)
		b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	/* where it would run and what it would read, as the binding says
	 * now (a binding that dropped its sandbox is the operator's now),
	 * against every place a sandboxed run wrote */
	if (!ws || hostd_operator_claude_check(d, cfg, b, ws, &e) < 0) {
		bool denied = !ws || e->reason == ERR_DENIED;

		host_config_free(cfg);
		json_decref(j);
		return !denied ? hostd_refuse(c, e)
			       : hostd_fail(c, "attach_sandboxed",
					    !ws ? "the job has no workspace to attach in"
						: e->msg);
	}
	if (!b || b->executor != HOST_EXEC_CLAUDE_CODE || !host_claude_session_ok(session)) {
		bool shell = b && b->executor == HOST_EXEC_SHELL;

		host_config_free(cfg);
		json_decref(j);
		return hostd_fail(c, "nothing_to_attach",
			    shell ? "the shell executor has no session to attach"
				  : "the job has no claude session to resume");
	}
	json_t *env = json_object();

	/* (the same claude a launch runs) */
	(void)host_claude_path(&claude, &e);
	for (size_t i = 0; env && b->env[i]; i++) {
		_cleanup_free_ char *k = strndup(b->env[i], strcspn(b->env[i], "="));
		if (k)
			json_object_set_new(env, k, json_string(strchr(b->env[i], '=') + 1));
	}
	host_config_free(cfg);
	json_t *ans = claude && env ? json_pack("{s:[s, s, s], s:s, s:O}", "argv", claude, "--resume",
					       session, "cwd", ws, "env", env)
				    : NULL;
	json_decref(env);
	json_decref(j);
	if (!ans)
		return e ? hostd_refuse(c, e) : MHD_NO;
	return hostd_answer(c, 200, ans);
}
