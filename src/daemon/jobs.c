/* jobs.c: the job endpoints api.c's table calls (see daemon.h): a new
 * job through a binding, a message injected into its inbox, an
 * interrupt, a stop; and a job's state when it is not running here. */
#include "daemon/internal.h"
#include "executor/executor.h"
#include "host/config.h"
#include "host/db.h"
#include "host/request.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "plan/plan.h"
#include "toolbelt/http.h"
#include "toolbelt/toolbelt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

enum MHD_Result hostd_post_job(struct hostd *d, struct MHD_Connection *c, const struct hostd_body *b)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char *id = NULL, *args_text = NULL, *scratch = NULL, *name = NULL;
	_cleanup_free_ char *input = NULL;
	struct host_config *cfg = NULL;
	const struct host_binding *bind;
	_cleanup_strv_ char **argv = NULL;
	const char *workspace;
	size_t i;
	enum MHD_Result r;

	if (host_job_request_parse(b->p, b->n, &name, &argv, &input, &e) < 0)
		return e->reason == ERR_CONFIG ? hostd_fail(c, "bad_request", e->msg) : hostd_refuse(c, e);
	/* the config as it is now: a change applies from the next launch */
	if (host_config_load(d->config, &cfg, &e) < 0)
		return hostd_refuse(c, e);
	bind = host_config_find(cfg, name);
	if (!bind) {
		host_config_free(cfg);
		return hostd_fail(c, "not_found", "no such binding");
	}
	if (!argv)
		for (i = 0; bind->args && bind->args[i]; i++)
			if (strv_push(&argv, bind->args[i]) < 0) {
				host_config_free(cfg);
				return MHD_NO;
			}
	if (!argv) {
		host_config_free(cfg);
		return hostd_fail(c, "bad_request",
			    bind->executor == HOST_EXEC_CLAUDE_CODE
				    ? "the binding names no prompt: give one"
				    : "the binding names no args: give them");
	}
	if (plan_new_execution_id(&id, &e) < 0) {
		host_config_free(cfg);
		return hostd_refuse(c, e);
	}
	workspace = bind->workspace;
	if (bind->git_url) {
		/* made by the first segment's wrapper */
		if (asprintf(&scratch, "%s/workspaces/%s", d->state, id) < 0) {
			host_config_free(cfg);
			return MHD_NO;
		}
		workspace = scratch;
	} else if (bind->scratch) {
		if (asprintf(&scratch, "%s/workspaces/%s", d->state, id) < 0 || mkdir(scratch, 0700) < 0) {
			host_config_free(cfg);
			return hostd_fail(c, "sandbox_unavailable", "cannot make the scratch workspace");
		}
		workspace = scratch;
	}
	_cleanup_json_ json_t *argj = json_strv(argv);
	args_text = argj ? json_dumps(argj, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (host_db_job_new(d->db, id, name, args_text, workspace, &e) < 0 ||
	    (bind->executor == HOST_EXEC_CLAUDE_CODE && !bind->provider &&
	     hostd_operator_claude_check(d, cfg, bind, workspace, &e) < 0) ||
	    (bind->ops && toolbelt_open(d->tb, id, bind->ops, false, &e) < 0) ||
	    hostd_spawn_wrapper(d, bind, id, 1, 1, workspace, argv, input, NULL, &e) < 0) {
		struct err *e2 = NULL;

		if (e && e->msg)
			(void)host_db_job_refused(d->db, id, err_reason_name(e->reason), &e2);
		err_free(e2);
		toolbelt_close(d->tb, id);
		host_config_free(cfg);
		return hostd_refuse(c, e);
	}
	host_config_free(cfg);
	r = hostd_answer(c, 201, json_pack("{s:s}", "id", id));
	return r;
}

struct seg *hostd_running_seg(struct hostd *d, const char *job)
{
	for (struct seg *s = d->segs; s; s = s->next)
		if (s->pinned && !s->ending && strcmp(s->job, job) == 0)
			return s;
	return NULL;
}

/* A job that is not running: 404 when there is no such job, else 409
 * not_accepting. */
/* The job's segment whose wrapper has not answered yet. */
static struct seg *preparing_seg(struct hostd *d, const char *job)
{
	for (struct seg *s = d->segs; s; s = s->next)
		if (!s->pinned && s->ctl >= 0 && strcmp(s->job, job) == 0)
			return s;
	return NULL;
}

enum MHD_Result hostd_not_running(struct hostd *d, struct MHD_Connection *c, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	json_t *j = host_db_job_json(d->db, job, &e);

	if (!j)
		return hostd_fail(c, "not_found", "no such job");
	json_decref(j);
	return hostd_fail(c, "not_accepting", "the job is not running");
}

_Static_assert(HOST_INBOX_MAX == 1024 && HOST_INBOX_BYTES_MAX == 16777216,
	       "inject's refusal names the bounds");

/* Is there room in the inbox (dfd) for one more message of n bytes: at
 * most HOST_INBOX_MAX of them and HOST_INBOX_BYTES_MAX in all? The inbox
 * is the sandbox's to write too: what it left there counts, and the
 * look stops at the bound. */
static bool inbox_room(int dfd, size_t n)
{
	int fd = openat(dfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *dir = fd >= 0 ? fdopendir(fd) : NULL;
	unsigned long long total = n;
	unsigned int count = 0;
	struct dirent *de;
	struct stat st;

	if (!dir) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	/* every entry counts, the sandbox's own dot-files too: a look that
	 * passed them over read as many as the sandbox made, on the loop */
	while (count < HOST_INBOX_MAX && total <= HOST_INBOX_BYTES_MAX && (de = readdir(dir)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0) {
			count++;
			if (fstatat(dirfd(dir), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == 0)
				total += (unsigned long long)st.st_size;
		}
	closedir(dir);
	return count < HOST_INBOX_MAX && total <= HOST_INBOX_BYTES_MAX;
}

/* Inject: a message file in the job's inbox, which the command sees at
 * $CORDON_INBOX (its run dir is one of its write grants). It is a file,
 * so an adopted segment takes it too. */
enum MHD_Result hostd_inject(struct hostd *d, struct MHD_Connection *c, struct seg *s,
			      const struct hostd_body *b)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char *text = NULL, *inbox = NULL;
	_cleanup_close_ int dfd = -1;
	struct timespec t;
	char name[64];

	if (host_inject_request_parse(b->p, b->n, &text, &e) < 0)
		return hostd_fail(c, "bad_request", e->msg);
	if (asprintf(&inbox, "%s/runs/%s/run/inbox", d->state, s->job) < 0)
		return MHD_NO;
	dfd = fs_open_nofollow(AT_FDCWD, inbox, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return hostd_fail(c, "not_accepting", "the job has no inbox");
	if (!inbox_room(dfd, strlen(text)))
		return hostd_fail(c, "not_accepting",
				  "the job's inbox is full (1024 messages or 16 MiB): no more are "
				  "taken");
	clock_gettime(CLOCK_REALTIME, &t);
	snprintf(name, sizeof(name), "%lld-%04u.txt", (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000,
		 ++s->injected);
	if (fs_write_atomic(dfd, name, text, strlen(text), 0600, false, &e) < 0)
		return hostd_refuse(c, e);
	return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", s->job, "message", name));
}

/* Interrupt: TERM to the wrapper's group, no KILL after it. What reaches
 * the command is the plan's: its handler runs ("term", native), or srt
 * ends it ("kill"). */
enum MHD_Result hostd_interrupt(struct hostd *d, struct MHD_Connection *c, struct seg *s)
{
	_cleanup_err_ struct err *e = NULL;
	struct plan *p = NULL;

	if (!s->record || plan_read_record(s->record, NULL, &p, &e) < 0)
		return hostd_refuse(c, e);
	s->interrupted = p->signals == PLAN_SIGNALS_TERM ? "term" : "kill";
	plan_free(p);
	if (kill(-s->pid, SIGTERM) < 0 && errno != ESRCH)
		return hostd_fail(c, "sandbox_unavailable", "cannot signal the job");
	return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", s->job, "signals", s->interrupted));
}

/* Stop the job's running segment (stop_segment). A segment whose wrapper is still making the
 * workspace (a clone that may take long) has launched nothing: the
 * wrapper's group is killed, and the job ends refused, having run
 * nothing. */
enum MHD_Result hostd_stop(struct hostd *d, struct MHD_Connection *c, const char *job)
{
	struct seg *s = hostd_running_seg(d, job);

	if (!s && (s = preparing_seg(d, job))) {
		s->stop_sig = SIGKILL;
		if (kill(-s->pid, SIGKILL) < 0)
			(void)kill(s->pid, SIGKILL);
		(void)hostd_log_line(d, job, "cordon: daemon: ",
			       "stopped before anything was launched (the workspace was being made)");
		return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", job, "signal", "KILL"));
	}
	if (!s)
		return hostd_not_running(d, c, job);
	if (hostd_stop_segment(d, s) < 0 && errno != ESRCH)
		return hostd_fail(c, "sandbox_unavailable", "cannot signal the job");
	return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", s->job, "signal",
					 s->stop_sig == SIGKILL ? "KILL" : "TERM"));
}
