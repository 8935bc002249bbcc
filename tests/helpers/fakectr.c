/* fakectr.c: a test double of a container provider, NOT a container
 * runtime: it confines nothing. The container conformance suite
 * (tests/container/conformance.sh) runs on it to show that it can pass,
 * and on its flawed variants to show that it can fail.
 *
 * A "container" is a directory under the config's root, named by its ID
 * (32 hex digits), holding state.json: its labels (host, job, segment,
 * digest, role, as Docker's carry them), its workspace, and what it is:
 * created; running, with the pid of its command (which leads its own
 * process group); exited, with its status and start time. Its command
 * runs on the host, as the operator, in the workspace. Start forks a shim
 * in a session of its own that runs the command and records its end, so
 * that a container outlives its start helper as a real one does.
 *
 * The binding's "container": {"provider": "fake", "root": ABSOLUTE DIR,
 * "flaw"?: one of flaws[] below}: a flaw breaks the contract in that one
 * way (the suite's negative controls).
 *
 * usage: fakectr container wrap|settle|inspect|list|stop|remove ...
 * exactly as `cordon-host container ...` (src/cli/container.c is linked in). */
#include "cli/cli.h"
#include "container/contract.h"
#include "cli/container.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STATE_FILE "state.json"
#define ID_HEX 32
#define STOP_WAIT_MS 30000

/* list-ignores-owner: list returns every container under the root,
 * whatever its host and job; removed-is-error: inspect of a removed one
 * fails instead of saying gone; created-reported-started: inspect of a
 * created one says running. */
static const char *const flaws[] = { "list-ignores-owner", "removed-is-error",
				     "created-reported-started", NULL };

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

static bool has_flaw(const json_t *o, const char *flaw)
{
	const char *f = str(o, "flaw");

	return f && strcmp(f, flaw) == 0;
}

/* The root a config, plan or pin names, opened without following a link. */
static int open_root(const json_t *o, struct err **e)
{
	const char *root = str(o, "root");
	int fd;

	if (!root || root[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "fake: \"root\" must be an absolute directory");
	fd = fs_open_nofollow(AT_FDCWD, root, O_RDONLY | O_DIRECTORY, 0);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: the root `%s`", root);
	return fd;
}

static bool id_ok(const char *id)
{
	return id && strlen(id) == ID_HEX && strspn(id, "0123456789abcdef") == ID_HEX;
}

/* A container's state: 1 and *st, 0 when there is none of that ID, or -1. */
static int read_state(int rootfd, const char *id, json_t **st, struct err **e)
{
	_cleanup_close_ int dfd = -1;
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;

	*st = NULL;
	if (!id_ok(id))
		return err_set(e, ERR_CONFIG, 0, "fake: not a container ID");
	dfd = fs_open_nofollow(rootfd, id, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0 && errno == ENOENT)
		return 0;
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: container `%s`", id);
	if (fs_read_file(dfd, STATE_FILE, 65536, &buf, &len, e) < 0 ||
	    !(*st = json_parse_strict(buf, len, e)))
		return err_wrap(e, "fake: container `%s`", id);
	if (!json_is_object(*st) || !json_is_object(json_object_get(*st, "labels")) ||
	    !str(*st, "status")) {
		json_decref(*st);
		*st = NULL;
		return err_set(e, ERR_UNAVAILABLE, 0, "fake: container `%s`: a malformed state", id);
	}
	return 1;
}

/* (name: the ID, or the name a container is made under) */
static int write_state(int rootfd, const char *name, const json_t *st, struct err **e)
{
	_cleanup_free_ char *text = json_dumps(st, JSON_COMPACT);
	_cleanup_close_ int dfd = fs_open_nofollow(rootfd, name, O_PATH | O_DIRECTORY, 0);

	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "fake: state");
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: container `%s`", name);
	return fs_write_atomic(dfd, STATE_FILE, text, strlen(text), 0600, false, e);
}

static bool is_status(const json_t *st, const char *s)
{
	return str(st, "status") && strcmp(str(st, "status"), s) == 0;
}

/* A running container's command and everything in its group. */
static void kill_running(const json_t *st, int sig)
{
	json_int_t pid = json_integer_value(json_object_get(st, "pid"));

	if (is_status(st, "running") && pid > 1)
		(void)kill(-(pid_t)pid, sig);
}

/* Out of every listing at once (renamed), then deleted; 0 when it was
 * gone already. */
static int remove_dir(int rootfd, const char *id, struct err **e)
{
	char tomb[ID_HEX + 8];

	snprintf(tomb, sizeof(tomb), ".gone-%s", id);
	if (renameat(rootfd, id, rootfd, tomb) < 0)
		return errno == ENOENT ? 0 : err_set(e, ERR_UNAVAILABLE, errno, "fake: remove `%s`", id);
	if (fs_remove_tree(rootfd, tomb, 4) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: remove `%s`", id);
	return 0;
}

/* The IDs under the root whose labels name this host and job (any job
 * when NULL); every one when any_owner (the flaw). A state that cannot be
 * read fails the listing: it is never read as "none". */
static int scan(int rootfd, const char *host, const char *job, bool any_owner, char ***ids,
		struct err **e)
{
	int fd = openat(rootfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *de;
	int r = 0;

	*ids = NULL;
	if (!d) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: list the root");
	}
	while (r == 0 && (de = readdir(d))) {
		_cleanup_json_ json_t *st = NULL;
		const json_t *l;
		int found;

		if (!id_ok(de->d_name))
			continue;
		if ((found = read_state(rootfd, de->d_name, &st, e)) < 0) {
			r = -1;
			break;
		}
		l = json_object_get(st, "labels");
		if (found == 0 ||
		    (!any_owner &&
		     (!str(l, CONTAINER_LABEL_HOST) || strcmp(str(l, CONTAINER_LABEL_HOST), host) != 0 ||
		      (job && (!str(l, CONTAINER_LABEL_JOB) || strcmp(str(l, CONTAINER_LABEL_JOB), job) != 0)))))
			continue;
		if (strv_push(ids, de->d_name) < 0)
			r = err_set(e, ERR_INTERNAL, ENOMEM, "fake: list");
	}
	closedir(d);
	if (r == 0 && !*ids && !(*ids = calloc(1, sizeof(char *))))
		r = err_set(e, ERR_INTERNAL, ENOMEM, "fake: list");
	if (r < 0) {
		strv_free(*ids);
		*ids = NULL;
	}
	return r;
}

static int fake_plan(const struct grant *g, const struct plan_paths *paths,
		     const struct provider_launch *cl, struct plan *p, struct err **e)
{
	json_t *cfg = (json_t *)cl->config, *v;
	const char *key, *flaw = str(cfg, "flaw");
	char *summary = NULL;
	size_t k = 0;
	int rootfd;

	json_object_foreach(cfg, key, v) {
		if (strcmp(key, "provider") != 0 && strcmp(key, "root") != 0 && strcmp(key, "flaw") != 0)
			return err_set(e, ERR_CONFIG, 0, "fake: container.%s: unknown key", key);
	}
	while (flaw && flaws[k] && strcmp(flaws[k], flaw) != 0)
		k++;
	if (flaw && !flaws[k])
		return err_set(e, ERR_CONFIG, 0, "fake: container.flaw: not one the fake knows");
	/* (a root that cannot be opened refuses the plan) */
	if ((rootfd = open_root(cfg, e)) < 0)
		return -1;
	close(rootfd);
	json_t *c = json_pack("{s:s, s:s, s:s}", "provider", "fake", "root", str(cfg, "root"),
			      "workspace", g->workspace);
	if (c && flaw)
		json_object_set_new(c, "flaw", json_string(flaw));
	if (!c || json_object_set_new(p->data, "container", c) < 0)
		return err_set(e, ERR_CONFIG, 0, "fake: the plan cannot be recorded (not UTF-8?)");
	if (asprintf(&summary, "fake container (no isolation) under %s: %s", str(cfg, "root"),
		     p->summary) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "fake: plan");
	free(p->summary);
	p->summary = summary;
	return 0;
}

/* No second container: a running one of the job refuses; stopped ones go. */
static int clear_job(int rootfd, const char *host, const char *job, struct err **e)
{
	_cleanup_strv_ char **ids = NULL;

	if (scan(rootfd, host, job, false, &ids, e) < 0)
		return err_wrap(e, "fake: list the job's containers");
	for (size_t i = 0; ids[i]; i++) {
		_cleanup_json_ json_t *st = NULL;
		int r = read_state(rootfd, ids[i], &st, e);

		if (r < 0)
			return -1;
		if (r > 0 && is_status(st, "running"))
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "container_running: the job's container `%.12s` is running; "
				       "a second one is never started beside it",
				       ids[i]);
	}
	for (size_t i = 0; ids[i]; i++)
		if (remove_dir(rootfd, ids[i], e) < 0)
			return -1;
	return 0;
}

static int fake_create(const struct plan *p, const struct plan_paths *paths,
		       const struct provider_launch *cl, json_t **pin, struct err **e)
{
	const json_t *c = json_object_get(p->data, "container");
	_cleanup_close_ int rootfd = -1, rfd = -1;
	_cleanup_json_ json_t *st = NULL;
	_cleanup_free_ char *text = NULL;
	unsigned char rnd[ID_HEX / 2];
	char host[17], id[ID_HEX + 1], fresh[ID_HEX + 8], seg[16];

	*pin = NULL;
	if (!c || !str(c, "workspace"))
		return err_set(e, ERR_INTERNAL, 0, "fake: the plan holds no container");
	if ((rootfd = open_root(c, e)) < 0 || container_host_label(cl->state_dir, host, e) < 0 ||
	    clear_job(rootfd, host, paths->execution, e) < 0)
		return -1;
	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: getrandom");
	for (size_t i = 0; i < sizeof(rnd); i++)
		snprintf(id + 2 * i, 3, "%02x", rnd[i]);
	snprintf(fresh, sizeof(fresh), ".new-%s", id);
	snprintf(seg, sizeof(seg), "%u", paths->segment);
	st = json_pack("{s:s, s:{s:s, s:s, s:s, s:s, s:s}, s:s}", "status", "created", "labels",
		       CONTAINER_LABEL_HOST, host, CONTAINER_LABEL_JOB, paths->execution,
		       CONTAINER_LABEL_SEGMENT, seg, CONTAINER_LABEL_DIGEST, p->digest,
		       CONTAINER_LABEL_ROLE, "workload", "workspace", str(c, "workspace"));
	if (!st)
		return err_set(e, ERR_INTERNAL, ENOMEM, "fake: create");
	/* listed only once whole: made under another name, then renamed */
	if (mkdirat(rootfd, fresh, 0700) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: create");
	if (write_state(rootfd, fresh, st, e) < 0 || renameat(rootfd, fresh, rootfd, id) < 0) {
		if (!*e)
			err_set(e, ERR_UNAVAILABLE, errno, "fake: create");
		(void)fs_remove_tree(rootfd, fresh, 2);
		return -1;
	}
	*pin = json_pack("{s:s, s:s, s:s, s:s}", "provider", "fake", "root", str(c, "root"),
			 "container", id, "host", host);
	if (*pin && str(c, "flaw"))
		json_object_set_new(*pin, "flaw", json_string(str(c, "flaw")));
	/* the container record beside the plan's, as settle reads it */
	text = *pin ? json_dumps(*pin, JSON_COMPACT) : NULL;
	rfd = fs_open_nofollow(AT_FDCWD, paths->record_dir, O_PATH | O_DIRECTORY, 0);
	if (!text || rfd < 0 ||
	    fs_write_atomic(rfd, "container.json", text, strlen(text), 0444, true, e) < 0) {
		if (!*e)
			err_set(e, ERR_UNAVAILABLE, errno, "fake: container record");
		struct err *re = NULL;
		if (remove_dir(rootfd, id, &re) < 0)
			err_print(stderr, re);
		err_free(re);
		json_decref(*pin);
		*pin = NULL;
		return -1;
	}
	return 0;
}

static void rfc3339_now(char out[40])
{
	struct timespec ts;
	struct tm tm;

	clock_gettime(CLOCK_REALTIME, &ts);
	gmtime_r(&ts.tv_sec, &tm);
	strftime(out, 24, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(out + strlen(out), 16, ".%09ldZ", ts.tv_nsec);
}

/* The shim: in a session of its own (the start helper's end is not its
 * end), it runs the command, leading a process group of its own (what a
 * stop kills), records it running, waits, records its status. */
static _Noreturn void shim(int rootfd, const char *id, json_t *st, char *const *argv,
			   char *const *env, const sigset_t *mask)
{
	const char *ws = str(st, "workspace");
	struct err *e = NULL;
	char when[40];
	int status = 0;
	pid_t pid;

	(void)setsid();
	sigprocmask(SIG_SETMASK, mask, NULL);
	rfc3339_now(when);
	pid = fork();
	if (pid == 0) {
		(void)setpgid(0, 0);
		if (!ws || chdir(ws) < 0)
			_exit(EXIT_CORDON);
		execvpe(argv[0], argv, env);
		_exit(errno == ENOENT ? EXIT_NOTFOUND : EXIT_NOEXEC);
	}
	if (pid > 0) {
		(void)setpgid(pid, pid);
		json_object_set_new(st, "status", json_string("running"));
		json_object_set_new(st, "pid", json_integer(pid));
		json_object_set_new(st, "started_at", json_string(when));
		if (write_state(rootfd, id, st, &e) < 0)
			err_print(stderr, e);
		err_free(e);
		e = NULL;
		while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
			;
	}
	json_object_set_new(st, "status", json_string("exited"));
	json_object_del(st, "pid");
	json_object_set_new(st, "exit_code",
			    json_integer(pid < 0		 ? EXIT_CORDON
					 : WIFEXITED(status) ? WEXITSTATUS(status)
							     : 128 + WTERMSIG(status)));
	/* (a container removed meanwhile: nothing to record it in) */
	(void)write_state(rootfd, id, st, &e);
	err_free(e);
	_exit(0);
}

/* The start helper: the shim started, TERM, INT and HUP passed on to the
 * command's group (QUIT, the host's "grace is over", as KILL; none of
 * them recorded in the job's signals record, as a real provider's are),
 * the status once the shim has recorded it; then the container removed. */
static int fake_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		      bool *interrupted, struct err **e)
{
	_cleanup_close_ int rootfd = -1, sfd = -1, pidfd = -1;
	_cleanup_json_ json_t *st = NULL, *end = NULL;
	_cleanup_strv_ char **env = NULL;
	const char *id = str(pin, "container");
	sigset_t set, old;
	int r, code = -1;
	pid_t pid;

	(void)paths;
	*interrupted = false;
	if ((rootfd = open_root(pin, e)) < 0 || (r = read_state(rootfd, id, &st, e)) < 0)
		return -1;
	if (r == 0 || !is_status(st, "created"))
		return err_set(e, ERR_UNAVAILABLE, 0, "fake: the pinned container is %s",
			       r == 0 ? "gone" : "not a created one");
	for (size_t i = 0; environ[i]; i++)
		if (strv_push(&env, environ[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "fake: environment");
	for (size_t i = 0; p->env && p->env[i]; i++)
		if (strv_push(&env, p->env[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "fake: environment");
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigaddset(&set, SIGQUIT);
	if (sigprocmask(SIG_BLOCK, &set, &old) < 0 || (sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fake: signals");
	pid = fork();
	if (pid == 0) {
		close(sfd);
		shim(rootfd, id, st, p->argv, env, &old);
	}
	if (pid < 0 || (pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		err_set(e, ERR_UNAVAILABLE, errno, "fake: start");
		if (pid > 0)
			waitpid(pid, NULL, 0);
		goto out;
	}
	for (;;) {
		struct pollfd fds[2] = { { pidfd, POLLIN, 0 }, { sfd, POLLIN, 0 } };
		struct signalfd_siginfo si;

		if (poll(fds, 2, -1) < 0 && errno != EINTR) {
			err_set(e, ERR_UNAVAILABLE, errno, "fake: poll");
			goto out;
		}
		if (fds[0].revents)
			break;
		if ((fds[1].revents & POLLIN) && read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			_cleanup_json_ json_t *now = NULL;
			struct err *re = NULL;

			if (read_state(rootfd, id, &now, &re) > 0)
				kill_running(now, si.ssi_signo == SIGQUIT ? SIGKILL : (int)si.ssi_signo);
			err_free(re);
		}
	}
	while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
		;
	if ((r = read_state(rootfd, id, &end, e)) < 0)
		goto out;
	if (r == 0 || !is_status(end, "exited")) {
		err_set(e, ERR_UNAVAILABLE, 0, "fake: the container's status was not recorded");
		goto out;
	}
	code = (int)json_integer_value(json_object_get(end, "exit_code"));
out:
	sigprocmask(SIG_SETMASK, &old, NULL);
	/* what the segment made goes once its status is known */
	{
		struct err *re = NULL;

		if (code >= 0 && remove_dir(rootfd, id, &re) < 0)
			err_print(stderr, re);
		err_free(re);
	}
	return code;
}

static int fake_remove(const json_t *pin, struct err **e)
{
	_cleanup_close_ int rootfd = open_root(pin, e);
	_cleanup_json_ json_t *st = NULL;
	int r;

	if (rootfd < 0 || (r = read_state(rootfd, str(pin, "container"), &st, e)) < 0)
		return -1;
	if (r == 0)
		return 0;
	/* (a forced removal: a running one is killed first) */
	kill_running(st, SIGKILL);
	return remove_dir(rootfd, str(pin, "container"), e);
}

static void fake_discard(const struct plan_paths *paths, const json_t *pin)
{
	struct err *e = NULL;

	(void)paths;
	if (fake_remove(pin, &e) < 0)
		err_print(stderr, e);
	err_free(e);
}

static bool label_is(const json_t *labels, const char *k, const char *v)
{
	return str(labels, k) && v && strcmp(str(labels, k), v) == 0;
}

static int fake_inspect(const json_t *pin, const char *digest, const char *job, unsigned int seg,
			struct provider_state *st, struct err **e)
{
	_cleanup_close_ int rootfd = open_root(pin, e);
	_cleanup_json_ json_t *s = NULL;
	const json_t *l;
	char n[16];
	int r;

	if (rootfd < 0 || (r = read_state(rootfd, str(pin, "container"), &s, e)) < 0)
		return -1;
	if (r == 0)
		return has_flaw(pin, "removed-is-error")
			       ? err_set(e, ERR_UNAVAILABLE, 0, "fake: no such container")
			       : PROVIDER_GONE;
	l = json_object_get(s, "labels");
	snprintf(n, sizeof(n), "%u", seg);
	if (!label_is(l, CONTAINER_LABEL_HOST, str(pin, "host")) ||
	    (job && !label_is(l, CONTAINER_LABEL_JOB, job)) ||
	    (seg && !label_is(l, CONTAINER_LABEL_SEGMENT, n)) ||
	    (digest && !label_is(l, CONTAINER_LABEL_DIGEST, digest)))
		return err_set(e, ERR_DENIED, 0,
			       "fake: the container of the pinned ID is not the pinned one");
	if (is_status(s, "running"))
		r = PROVIDER_RUNNING;
	else if (is_status(s, "exited"))
		r = PROVIDER_EXITED;
	else if (is_status(s, "created"))
		r = has_flaw(pin, "created-reported-started") ? PROVIDER_RUNNING : PROVIDER_CREATED;
	else
		return err_set(e, ERR_UNAVAILABLE, 0, "fake: an unknown status");
	if (st) {
		st->exit_code = (int)json_integer_value(json_object_get(s, "exit_code"));
		st->started_at = str(s, "started_at") ? strdup(str(s, "started_at")) : NULL;
	}
	return r;
}

static int fake_list(const json_t *config, const char *state_dir, const char *host,
		     const char *job, char ***ids, struct err **e)
{
	_cleanup_close_ int rootfd = open_root(config, e);

	(void)state_dir;
	*ids = NULL;
	if (rootfd < 0)
		return -1;
	return scan(rootfd, host, job, has_flaw(config, "list-ignores-owner"), ids, e);
}

/* KILL the command's group; 0 once the shim has recorded it ended. */
static int fake_stop(const json_t *pin, struct err **e)
{
	_cleanup_close_ int rootfd = open_root(pin, e);
	const struct timespec tick = { 0, 20L * 1000 * 1000 };

	if (rootfd < 0)
		return -1;
	for (int waited = 0;; waited += 20) {
		_cleanup_json_ json_t *st = NULL;
		int r = read_state(rootfd, str(pin, "container"), &st, e);

		if (r <= 0 || !is_status(st, "running"))
			return r < 0 ? -1 : 0;
		if (waited >= STOP_WAIT_MS)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "container_stop_unverified: still running after KILL");
		if (waited % 1000 == 0)
			kill_running(st, SIGKILL);
		nanosleep(&tick, NULL);
	}
}

static int fake_create_op(const struct grant *g, const struct plan *p,
			  const struct plan_paths *paths, const struct provider_launch *pl,
			  struct provider_run **run, json_t **pin, struct err **e)
{
	return container_run_create(fake_create, fake_discard, p, paths, pl, run, pin, e);
}

static int fake_wait(struct provider_run *run, struct provider_exit *x, struct err **e)
{
	return container_run_wait(fake_start, run, x, e);
}

static void fake_discard_op(struct provider_run *run)
{
	container_run_discard(fake_discard, run);
}

static const struct provider fake_provider = {
	.name = "fake",
	.kind = PROVIDER_CONTAINER,
	.plan = fake_plan,
	.create = fake_create_op,
	.wait = fake_wait,
	.discard = fake_discard_op,
	.release = container_run_release,
	.inspect = fake_inspect,
	.list = fake_list,
	.stop = fake_stop,
	.remove = fake_remove,
};

/* This program's registry: the fake alone. */
const struct provider *const providers[] = { &fake_provider, NULL };

int main(int argc, char **argv)
{
	if (argc >= 2 && strcmp(argv[1], "container") == 0)
		return container_main(argc - 1, argv + 1);
	fputs("usage: fakectr container wrap|settle|inspect|list|stop|remove ... "
	      "(as cordon-host container; a test double: it confines nothing)\n",
	      stderr);
	return EXIT_CORDON;
}
