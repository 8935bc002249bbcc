/* daemon.c: `cordon daemon` (see daemon.h). The state dir is made 0700
 * with its token (0600, made once), socket (0600) and database; the
 * config is checked at start and read again for every launch. A job's
 * segment runs under `cordon wrap`: the daemon hands it the request, gets
 * the pin back, opens the segment with that pin in its database, and only
 * then gives the word; the wrapper's pidfd tells when it ended, and its
 * exit file what came of it. */
#include "daemon/internal.h"
#include "container/contract.h"

#include "host/config.h"
#include "host/db.h"
#include "executor/claude.h"
#include "executor/executor.h"
#include "host/home.h"
#include "host/logdrain.h"
#include "host/places.h"
#include "toolbelt/http.h"
#include "toolbelt/toolbelt.h"
#include "host/request.h"
#include "host/wrapper.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/place.h"
#include "lib/procfs.h"
#include "lib/strv.h"
#include "plan/plan.h"
#include "sandbox/adopt.h"
#include "sandbox/provider.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/timerfd.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

int64_t hostd_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* --- segments ----------------------------------------------------------- */

int hostd_watch_add(struct hostd *d, int fd, struct watch *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
}

void hostd_seg_free(struct hostd *d, struct seg *s)
{
	for (struct seg **p = &d->segs; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	/* out of the epoll set before closing: a wrapper forked meanwhile and
	 * not yet exec'd holds copies, which would keep them in it */
	for (int *fd = (int[]){ s->ctl, s->pidfd, s->grace_fd }, i = 0; i < 3; i++)
		if (fd[i] >= 0) {
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd[i], NULL);
			close(fd[i]);
		}
	free(s->record);
	free(s);
}

/* Has the job a segment this daemon runs or is starting (a retry's is
 * started before the last one is let go)? */
bool hostd_job_live(struct hostd *d, const char *job)
{
	for (struct seg *s = d->segs; s; s = s->next)
		if (strcmp(s->job, job) == 0)
			return true;
	return false;
}

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
		return e->reason == ERR_CONFIG ? hostd_fail(c, 400, "bad_request", e->msg) : hostd_refuse(c, e);
	/* the config as it is now: a change applies from the next launch */
	if (host_config_load(d->config, &cfg, &e) < 0)
		return hostd_refuse(c, e);
	bind = host_config_find(cfg, name);
	if (!bind) {
		host_config_free(cfg);
		return hostd_fail(c, 404, "not_found", "no such binding");
	}
	if (!argv)
		for (i = 0; bind->args && bind->args[i]; i++)
			if (strv_push(&argv, bind->args[i]) < 0) {
				host_config_free(cfg);
				return MHD_NO;
			}
	if (!argv) {
		host_config_free(cfg);
		return hostd_fail(c, 400, "bad_request",
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
			return hostd_fail(c, 503, "sandbox_unavailable", "cannot make the scratch workspace");
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
		if (s->pinned && strcmp(s->job, job) == 0)
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
		return hostd_fail(c, 404, "not_found", "no such job");
	json_decref(j);
	return hostd_fail(c, 409, "not_accepting", "the job is not running");
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
		return hostd_fail(c, 400, "bad_request", e->msg);
	if (asprintf(&inbox, "%s/runs/%s/run/inbox", d->state, s->job) < 0)
		return MHD_NO;
	dfd = fs_open_nofollow(AT_FDCWD, inbox, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return hostd_fail(c, 409, "not_accepting", "the job has no inbox");
	if (!inbox_room(dfd, strlen(text)))
		return hostd_fail(c, 409, "not_accepting",
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
		return hostd_fail(c, 503, "sandbox_unavailable", "cannot signal the job");
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
		return hostd_fail(c, 503, "sandbox_unavailable", "cannot signal the job");
	return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", s->job, "signal",
					 s->stop_sig == SIGKILL ? "KILL" : "TERM"));
}

/* The job's log from ?offset= on, at most 1 MiB of it. */
/* A streaming log (?follow=1): what the log holds from the offset on,
 * then what is added, until the job has ended and all of it is sent. A
 * connection with nothing to send is suspended, and resumed by the loop
 * a few times a second to look again. */
struct follower {
	struct follower *next;
	struct hostd *d;
	struct MHD_Connection *c;
	char job[HOST_JOB_ID_MAX];
	char *path;
	int fd;			/* -1 until the log exists */
	uint64_t from;
	bool suspended;
};

#define FOLLOW_MS 200

static ssize_t follow_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct follower *f = cls;
	ssize_t n = 0;

	if (f->fd < 0)
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd >= 0 && (n = pread(f->fd, buf, max, (off_t)(f->from + pos))) > 0)
		return n;
	if (!hostd_job_live(f->d, f->job)) {
		/* ended: its wrapper is gone, so what it wrote is all there
		 * (read once more: it may have written since the read above) */
		if (f->fd >= 0 && (n = pread(f->fd, buf, max, (off_t)(f->from + pos))) > 0)
			return n;
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	MHD_suspend_connection(f->c);
	f->suspended = true;
	return 0;
}

static void follow_free(void *cls)
{
	struct follower *f = cls;

	for (struct follower **p = &f->d->followers; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

/* Look again at every suspended stream. */
static void follow_resume(struct hostd *d)
{
	for (struct follower *f = d->followers; f; f = f->next)
		if (f->suspended) {
			f->suspended = false;
			MHD_resume_connection(f->c);
		}
}

static enum MHD_Result follow_log(struct hostd *d, struct MHD_Connection *c, const char *job,
				  const char *path, unsigned long from)
{
	struct follower *f = calloc(1, sizeof(*f));
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!f || !(f->path = strdup(path))) {
		free(f);
		return MHD_NO;
	}
	f->d = d;
	f->c = c;
	f->fd = -1;
	f->from = from;
	snprintf(f->job, sizeof(f->job), "%s", job);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, (size_t)32 * 1024, follow_read, f,
					      follow_free);
	if (!r) {
		free(f->path);
		free(f);
		return MHD_NO;
	}
	f->next = d->followers;
	d->followers = f;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET a job's log, from ?offset; with ?follow=1, its stream. */
enum MHD_Result hostd_log_of(struct hostd *d, struct MHD_Connection *c, const char *job)
{
	const char *off = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	unsigned long from = 0;
	struct MHD_Response *r;
	struct stat st;
	char size[32];
	ssize_t n;
	enum MHD_Result ret;

	const char *fol = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "follow");

	if (off && num_parse_ulong(off, ~0UL, &from) < 0)
		return hostd_fail(c, 400, "bad_request", "offset: must be a number");
	if (fol && strcmp(fol, "1") != 0 && strcmp(fol, "0") != 0)
		return hostd_fail(c, 400, "bad_request", "follow: must be 1 or 0");
	if (asprintf(&path, "%s/runs/%s/log", d->state, job) < 0)
		return MHD_NO;
	{
		_cleanup_err_ struct err *e = NULL;
		json_t *j = host_db_job_json(d->db, job, &e);

		if (!j)
			return hostd_fail(c, 404, "not_found", "no such job");
		json_decref(j);
	}
	if (fol && strcmp(fol, "1") == 0)
		return follow_log(d, c, job, path, from);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	memset(&st, 0, sizeof(st));
	if (fd >= 0 && fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));
	buf = malloc(1 << 20);
	if (!buf)
		return MHD_NO;
	n = fd >= 0 && from < (unsigned long)st.st_size ? pread(fd, buf, 1 << 20, (off_t)from) : 0;
	if (n < 0)
		n = 0;
	r = MHD_create_response_from_buffer((size_t)n, buf, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	snprintf(size, sizeof(size), "%lld", (long long)st.st_size);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "X-Cordon-Log-Size", size);
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

/* Attaches are recorded as the job's segments from this number on: its
 * own segments never reach it. */
#define HOSTD_ATTACH_FIRST 900001u

/* An attach container being made (for a job that ran in a container):
 * the API connection that asked for it waits, suspended, for its
 * wrapper's answer; the entry goes once answered and reaped. */
struct attaching {
	struct attaching *next;
	struct MHD_Connection *c;	/* NULL once answered */
	char job[HOST_JOB_ID_MAX];
	unsigned int n;
	int ctl;			/* -1 once answered */
	pid_t pid;			/* 0 once reaped */
	struct watch w;
	unsigned int status;		/* 0 until the wrapper answered */
	json_t *answer;
	int64_t answered_ms;
};

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
	a->w = (struct watch){ .kind = W_ATTACH, .att = a };
	a->next = d->attaches;
	d->attaches = a;
	if (send(a->ctl, text, strlen(text), MSG_NOSIGNAL) < 0 || hostd_watch_add(d, a->ctl, &a->w) < 0) {
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
static void on_attach_answer(struct hostd *d, struct attaching *a)
{
	_cleanup_json_ json_t *ans = hostd_read_answer(d, a->ctl);
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
static void attaches_reap(struct hostd *d)
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
		if (!made) /* (attach_spawn makes it when it succeeds) */
			return hostd_fail(c, 500, "sandbox_unavailable", "the attach was not made");
		break;
	case 1:
		return hostd_fail(c, 409, "attach_sandboxed",
				  "the job ran in a container: it attaches only in one, and its "
				  "binding declares none now");
	case 2:
		return hostd_fail(c, 409, "nothing_to_attach",
				  "the job has no claude session to resume");
	case 3:
		return hostd_fail(c, 409, "job_running",
				  "the job is running, or an attach of it is being made: attach once "
				  "it has ended");
	case 4:
		return hostd_fail(c, 409, "sandbox_unavailable",
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
static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			 enum MHD_RequestTerminationCode why)
{
	struct hostd *d = cls;

	for (struct attaching *a = d->attaches; a; a = a->next)
		if (a->c == c)
			a->c = NULL;
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
		return hostd_fail(c, 404, "not_found", "no such job");
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
			       : hostd_fail(c, 409, "attach_sandboxed",
					    !ws ? "the job has no workspace to attach in"
						: e->msg);
	}
	if (!b || b->executor != HOST_EXEC_CLAUDE_CODE || !host_claude_session_ok(session)) {
		bool shell = b && b->executor == HOST_EXEC_SHELL;

		host_config_free(cfg);
		json_decref(j);
		return hostd_fail(c, 409, "nothing_to_attach",
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

/* --- reconcile ----------------------------------------------------------- */

#define RECONCILE_S 5
#define STRAY_WINDOW_MS 600000LL

/* A sandbox still running after its job ended (its wrapper gone, its
 * first process not): killed through a pidfd of that process, opened
 * before it is dated against its record (sandbox_root_open), so the
 * signal reaches the sandbox the record names or nothing. Never found by
 * a working directory, a path or a namespace's number: the operator's own
 * processes, another live job's (on the same directory by any spelling)
 * and a sandbox that took a number since are none of these. */
static int sweep_segment(void *ctx, const struct host_segment *s)
{
	int rfd = -1;

	(void)ctx;
	if (!s->provider || s->container || !s->record_dir ||
	    sandbox_root_open(s->record_dir, &rfd, NULL) <= 0)
		return 0;
	if (syscall(SYS_pidfd_send_signal, rfd, SIGKILL, NULL, 0) == 0)
		fprintf(stderr,
			"cordon: daemon: reconcile: killed the sandbox of segment %u of %s, still "
			"running after its job ended\n",
			s->n, s->job);
	close(rfd);
	return 0;
}

static void sweep_strays(struct hostd *d, char *const *finished)
{
	for (size_t i = 0; finished && finished[i]; i++) {
		struct err *e = NULL;

		if (host_db_segments(d->db, finished[i], sweep_segment, d, &e) < 0)
			err_print(stderr, e);
		err_free(e);
	}
}

/* Every few seconds and at start: sweep strays of finished jobs, and
 * remove the run dirs and scratch workspaces of jobs past retention (the
 * database keeps their history). Segments whose wrapper died are settled
 * by their pidfds, adopted ones too. */
/* Reconcile's part on the container daemons the bindings use: a child
 * (`cordon container sweep`) per place removes what carries this host's
 * label for a job that is not live; the loop never waits on a daemon. */
static void sweep_containers(struct hostd *d, const struct host_config *cfg, char *const *live)
{
	_cleanup_strv_ char **seen = NULL;
	size_t k = 0;

	for (size_t i = 0; i < HOSTD_SWEEPS_MAX; i++)
		if (d->sweeps[i] > 0 && waitpid(d->sweeps[i], NULL, WNOHANG) != 0)
			d->sweeps[i] = 0;
	for (size_t i = 0; i < HOSTD_SWEEPS_MAX; i++)
		if (d->sweeps[i] > 0)
			return; /* the last pass's still run */
	for (size_t i = 0; cfg && i < cfg->n && k < HOSTD_SWEEPS_MAX; i++) {
		const json_t *c = cfg->bindings[i].container;
		_cleanup_strv_ char **argv = NULL;
		_cleanup_free_ char *where = NULL;
		pid_t pid;

		_cleanup_free_ char *key = NULL;
		const char *ep = json_string_value(json_object_get(c, "endpoint"));
		const char *ctx = json_string_value(json_object_get(c, "context"));
		const char *rem = json_string_value(json_object_get(c, "remote"));
		const char *hk = json_string_value(json_object_get(c, "host_key"));

		/* one pass per place (a daemon; a remote's account as its key
		 * pins it: another key is another place, and fails alone) */
		if (!c || !(where = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS)) ||
		    asprintf(&key, "%s|%s|%s|%s|%s",
			     json_string_value(json_object_get(c, "provider")), ep ? ep : "",
			     ctx ? ctx : (ep || rem ? "" : "default"), rem ? rem : "",
			     hk ? hk : "") < 0)
			continue;
		bool dup = false;
		for (size_t s2 = 0; seen && seen[s2]; s2++)
			dup = dup || strcmp(seen[s2], key) == 0;
		if (dup || strv_push(&seen, key) < 0)
			continue;
		if (strv_push(&argv, d->self) < 0 || strv_push(&argv, "container") < 0 ||
		    strv_push(&argv, "sweep") < 0 || strv_push(&argv, "--state-dir") < 0 ||
		    strv_push(&argv, d->state) < 0 || strv_push(&argv, "--config-json") < 0 ||
		    strv_push(&argv, where) < 0)
			continue;
		for (size_t j = 0; live && live[j]; j++)
			if (strv_push(&argv, "--live") < 0 || strv_push(&argv, live[j]) < 0)
				break;
		if (posix_spawn(&pid, d->self, NULL, NULL, argv, environ) == 0)
			d->sweeps[k++] = pid;
	}
}

static void reconcile(struct hostd *d)
{
	_cleanup_err_ struct err *e = NULL, *ce = NULL;
	_cleanup_json_ json_t *jobs = host_db_jobs_json(d->db, &e);
	_cleanup_strv_ char **finished = NULL;
	unsigned long long keep = HOST_RETENTION_DEFAULT_DAYS * 86400000ULL;
	struct host_config *cfg = NULL;
	int64_t now = hostd_wall_ms();
	json_t *j;
	size_t i;

	if (!jobs)
		return;
	_cleanup_strv_ char **live = NULL;
	if (host_config_load(d->config, &cfg, &ce) == 0)
		keep = cfg->retention_ms;
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "id"));
		if (json_integer_value(json_object_get(j, "ended_ms")) != 0)
			continue;
		if (id)
			(void)strv_push(&live, id);
	}
	attaches_reap(d);
	for (struct attaching *a = d->attaches; a; a = a->next)
		(void)strv_push(&live, a->job);
	if (d->passes++ % HOSTD_SWEEP_EVERY == 0)
		sweep_containers(d, cfg, live);
	host_config_free(cfg);
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "id"));
		int64_t ended = json_integer_value(json_object_get(j, "ended_ms"));
		_cleanup_free_ char *runs = NULL;
		_cleanup_close_ int rfd = -1;
		char name[HOST_JOB_ID_MAX];

		if (!id || ended == 0)
			continue;
		if ((unsigned long long)(now - ended) > keep) {
			snprintf(name, sizeof(name), "%s", id);
			if (asprintf(&runs, "%s/runs", d->state) >= 0 &&
			    (rfd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
			    faccessat(rfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
			    fs_remove_tree(rfd, name, 256) < 0)
				fprintf(stderr, "cordon: daemon: reconcile: cannot remove runs/%s\n", name);
			hostd_remove_own_workspace(d, name);
			host_job_home_remove(d->state, name);
			continue;
		}
		if (now - ended < STRAY_WINDOW_MS)
			(void)strv_push(&finished, id);
	}
	sweep_strays(d, finished);
	hostd_sweep_toolbelts(d);
}

int hostd_daemon_main(const char *state_dir, const char *config_path)
{
	struct hostd d = { .epfd = -1, .sfd = -1, .lfd = -1, .rfd = -1, .lockfd = -1 };
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char *priv = NULL, *runs = NULL, *ws = NULL, *dbp = NULL;
	struct host_config *cfg = NULL;
	int64_t last_follow = 0;
	sigset_t set;
	int rc = 125;

	d.state = realpath(state_dir, NULL);
	if (!d.state && hostd_own_dir(state_dir, &e) == 0)
		d.state = realpath(state_dir, NULL);
	d.config = strdup(config_path);
	d.self = hostd_cordon_beside();
	if (!d.state || !d.config || !d.self) {
		if (!e)
			err_set(&e, ERR_UNAVAILABLE, errno, "state dir `%s`", state_dir);
		goto out;
	}
	if (asprintf(&priv, "%s/private", d.state) < 0 || asprintf(&runs, "%s/runs", d.state) < 0 ||
	    asprintf(&ws, "%s/workspaces", d.state) < 0 ||
	    asprintf(&dbp, "%s/%s", d.state, HOSTD_DB) < 0) {
		err_set(&e, ERR_INTERNAL, ENOMEM, "paths");
		goto out;
	}
	if (hostd_own_dir(d.state, &e) < 0 || hostd_own_dir(priv, &e) < 0 ||
	    hostd_own_dir(runs, &e) < 0 || hostd_own_dir(ws, &e) < 0 || hostd_lock_state(&d, &e) < 0 ||
	    hostd_token(&d, &e) < 0)
		goto out;
	/* the config is checked now; it is read again for each launch */
	if (host_config_load(d.config, &cfg, &e) < 0)
		goto out;
	host_config_free(cfg);
	/* the loop's epoll first: recovery watches the wrappers it adopts */
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epfd < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
		goto out;
	}
	/* the toolbelt first: a segment adopted takes its job's up again */
	if (toolbelt_new(d.state, hostd_tb_call, &d, &d.tb, &e) < 0)
		goto out;
	d.wtb = (struct watch){ .kind = W_TOOLBELT, .seg = NULL };
	if (hostd_watch_add(&d, toolbelt_fd(d.tb), &d.wtb) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the toolbelt");
		goto out;
	}
	if (host_db_open(dbp, &d.db, &e) < 0 || host_db_running(d.db, hostd_recover_one, &d, &e) < 0)
		goto out;
	hostd_settle_unlaunched(&d);
	hostd_sweep_toolbelts(&d);
	if (hostd_listen_socket(&d, &e) < 0)
		goto out;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.sfd = signalfd(-1, &set, SFD_CLOEXEC);
	d.mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, hostd_api_request, &d,
				 MHD_OPTION_LISTEN_SOCKET, d.lfd, MHD_OPTION_NOTIFY_COMPLETED,
				 on_completed, &d, MHD_OPTION_CONNECTION_LIMIT, 256U,
				 MHD_OPTION_CONNECTION_TIMEOUT, 60U, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				 (size_t)(128 * 1024), MHD_OPTION_END);
	if (d.sfd < 0 || !d.mhd) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the management API");
		goto out;
	}
	d.wapi = (struct watch){ .kind = W_API, .seg = NULL };
	d.wsig = (struct watch){ .kind = W_SIGNAL, .seg = NULL };
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d.mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di || hostd_watch_add(&d, di->epoll_fd, &d.wapi) < 0 || hostd_watch_add(&d, d.sfd, &d.wsig) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
		goto out;
	}
	d.rfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d.wrec = (struct watch){ .kind = W_RECONCILE, .seg = NULL };
	if (d.rfd < 0 ||
	    timerfd_settime(d.rfd, 0,
			    &(struct itimerspec){ .it_value = { RECONCILE_S, 0 },
						  .it_interval = { RECONCILE_S, 0 } },
			    NULL) < 0 ||
	    hostd_watch_add(&d, d.rfd, &d.wrec) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the reconcile timer");
		goto out;
	}
	reconcile(&d);
	fprintf(stderr, "cordon: daemon: serving %s/%s\n", d.state, HOSTD_SOCKET);
	for (;;) {
		struct epoll_event ev[16];
		MHD_UNSIGNED_LONG_LONG to = 0;
		int timeout = MHD_get_timeout(d.mhd, &to) == MHD_YES ? (int)(to > 1000 ? 1000 : to)
								   : 1000;
		int n;
		bool stop = false;

		if (d.followers && timeout > FOLLOW_MS)
			timeout = FOLLOW_MS;
		n = epoll_wait(d.epfd, ev, 16, timeout);
		if (d.followers && hostd_wall_ms() - last_follow >= FOLLOW_MS) {
			last_follow = hostd_wall_ms();
			follow_resume(&d);
		}

		if (n < 0 && errno != EINTR) {
			err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
			goto out;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = ev[i].data.ptr;

			if (w->kind == W_SIGNAL) {
				struct signalfd_siginfo si;

				if (read(d.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
				    si.ssi_signo != SIGHUP)
					stop = true;
			} else if (w->kind == W_CTL) {
				hostd_on_answer(&d, w->seg);
			} else if (w->kind == W_ATTACH) {
				on_attach_answer(&d, w->att);
			} else if (w->kind == W_GRACE) {
				hostd_on_grace(&d, w->seg);
			} else if (w->kind == W_TOOLBELT) {
				toolbelt_run(d.tb);
			} else if (w->kind == W_RECONCILE) {
				uint64_t ticks;

				(void)!read(d.rfd, &ticks, sizeof(ticks));
				reconcile(&d);
			} else if (w->kind == W_PIDFD) {
				hostd_on_exit_of(&d, w->seg);
				break; /* the segment (and its watches) may be gone */
			}
		}
		MHD_run(d.mhd);
		toolbelt_run(d.tb); /* (its connections' timeouts) */
		if (stop)
			break;
	}
	/* The wrappers (and the jobs under them) outlive the daemon. */
	rc = 0;
out:
	if (e)
		err_print(stderr, e);
	if (d.mhd) {
		/* a suspended connection is resumed before the server stops */
		follow_resume(&d);
		for (struct attaching *a = d.attaches; a; a = a->next)
			if (a->c && !a->status)
				MHD_resume_connection(a->c);
		MHD_stop_daemon(d.mhd);
	}
	toolbelt_free(d.tb);
	while (d.segs) {
		struct seg *s = d.segs;

		d.segs = s->next;
		if (s->ctl >= 0)
			close(s->ctl);
		if (s->pidfd >= 0)
			close(s->pidfd);
		free(s->record);
		free(s);
	}
	while (d.attaches) {
		struct attaching *a = d.attaches;

		d.attaches = a->next;
		if (a->ctl >= 0)
			close(a->ctl);
		json_decref(a->answer);
		free(a);
	}
	if (d.lfd >= 0)
		close(d.lfd);
	if (d.epfd >= 0)
		close(d.epfd);
	if (d.sfd >= 0)
		close(d.sfd);
	if (d.rfd >= 0)
		close(d.rfd);
	if (d.lockfd >= 0)
		close(d.lockfd);
	host_db_close(d.db);
	free(d.state);
	free(d.config);
	free(d.self);
	return rc;
}
