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
#include "provider/provider.h"
#include "sandbox/adopt.h"

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

char *hostd_default_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	char *out = NULL;

	if (x && x[0] == '/')
		return asprintf(&out, "%s/cordon", x) < 0 ? NULL : out;
	if (h && h[0] == '/')
		return asprintf(&out, "%s/.local/state/cordon", h) < 0 ? NULL : out;
	return NULL;
}

char *hostd_default_config(void)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	char *out = NULL;

	if (x && x[0] == '/')
		return asprintf(&out, "%s/cordon/config.json", x) < 0 ? NULL : out;
	if (h && h[0] == '/')
		return asprintf(&out, "%s/.config/cordon/config.json", h) < 0 ? NULL : out;
	return NULL;
}

static int64_t wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* --- the state dir ------------------------------------------------------ */

static int own_dir(const char *path, struct err **e)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	if (lstat(path, &st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return err_set(e, ERR_UNAVAILABLE, 0, "state dir `%s`: not a directory of this user's",
			       path);
	if ((st.st_mode & 077) && chmod(path, 0700) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	return 0;
}

/* One daemon per state dir, for its whole life: a second would recover
 * (and stop) the first one's jobs and take its socket. */
static int lock_state(struct hostd *d, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/private/daemon.lock", d->state) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "lock");
	d->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->lockfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "lock `%s`", path);
	if (flock(d->lockfd, LOCK_EX | LOCK_NB) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno == EWOULDBLOCK ? 0 : errno,
			       "another daemon serves the state dir `%s`", d->state);
	return 0;
}

/* The operator's token: made once (0600), then read. */
static int token(struct hostd *d, struct err **e)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	unsigned char rnd[HOSTD_TOKEN_HEX / 2];
	size_t len = 0;

	if (asprintf(&path, "%s/%s", d->state, HOSTD_TOKEN_FILE) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "token");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return err_set(e, ERR_INTERNAL, errno, "getrandom");
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(d->token + 2 * i, 3, "%02x", rnd[i]);
		if (fs_write_exact(fd, d->token, HOSTD_TOKEN_HEX) < 0 || fsync(fd) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
		return 0;
	}
	if (errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fs_read_fd(fd, path, 256, &buf, &len, e) < 0)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
	if (len != HOSTD_TOKEN_HEX || strspn(buf, "0123456789abcdef") != HOSTD_TOKEN_HEX)
		return err_set(e, ERR_UNAVAILABLE, 0, "token `%s` is damaged", path);
	memcpy(d->token, buf, HOSTD_TOKEN_HEX + 1);
	return 0;
}

static int listen_socket(struct hostd *d, struct err **e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	mode_t old;
	int r;

	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", d->state, HOSTD_SOCKET) >=
	    sizeof(a.sun_path))
		return err_set(e, ERR_CONFIG, 0, "state dir `%s`: too long for a socket path",
			       d->state);
	d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->lfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "management socket");
	/* a socket left by a daemon that died; its state dir is ours */
	(void)unlink(a.sun_path);
	old = umask(077);
	r = bind(d->lfd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0 || chmod(a.sun_path, 0600) < 0 || listen(d->lfd, 64) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "management socket `%s`", a.sun_path);
	return 0;
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

/* What an unsandboxed command takes of the daemon's environment: who and
 * where it is, nothing more. The rest (the sources of other bindings'
 * secrets among it) stays with the daemon. */
static bool base_variable(const char *kv)
{
	static const char *const names[] = { "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG",
					     "TZ", "TMPDIR", "XDG_RUNTIME_DIR", NULL };
	size_t n = strcspn(kv, "=");

	if (kv[n] != '=')
		return false;
	if (strncmp(kv, "LC_", 3) == 0)
		return true;
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == n && strncmp(kv, names[i], n) == 0)
			return true;
	return false;
}

/* Does the binding's env, the executor's or a secret of the binding's
 * set the variable of kv? */
static bool env_set_by(const struct host_binding *b, const struct host_exec *x, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (int k = 0; k < 2; k++) {
		char *const *v = k == 0 ? b->env : x->env;

		for (size_t i = 0; v && v[i]; i++)
			if (strncmp(v[i], kv, n) == 0 && v[i][n] == '=')
				return true;
	}
	for (size_t i = 0; i < b->n_secrets; i++)
		if (!b->secrets[i].git_only && strlen(b->secrets[i].name) == n &&
		    strncmp(b->secrets[i].name, kv, n) == 0)
			return true;
	return false;
}

/* Is the variable of kv one that a binding's secret names, as its source
 * ({"env": NAME}) or as the name it is given (a git credential's too)?
 * Such a variable of the daemon's environment is a secret, of whichever
 * binding names it: it reaches a job only as that binding's secret, by
 * value, never as the daemon's variable, whatever the policy passes. */
static bool secret_variable(const struct host_config *cfg, const struct host_binding *b,
			    const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t k = 0; k <= (cfg ? cfg->n : 0); k++) {
		const struct host_binding *o = k < (cfg ? cfg->n : 0) ? &cfg->bindings[k] : b;

		for (size_t i = 0; i < o->n_secrets; i++) {
			const struct host_secret *s = &o->secrets[i];

			if ((s->env && strlen(s->env) == n && strncmp(s->env, kv, n) == 0) ||
			    (strlen(s->name) == n && strncmp(s->name, kv, n) == 0))
				return true;
		}
	}
	return false;
}

/* The wrapper's environment: the daemon's (under a sandbox, whose policy
 * says what passes; without one, only its base variables) less every
 * variable a binding of the config, as it is now, names as a secret
 * (secret_variable), the binding's env, and the values of its secrets
 * (read now; they go nowhere else). */
static char **env_of(const struct host_config *cfg, const struct host_binding *b,
		     const struct host_exec *x, struct err **e)
{
	char **env = NULL;

	/* (a variable the binding, the executor or a secret sets is theirs:
	 * the daemon's of that name is left out, never shadowing it) */
	for (size_t i = 0; environ[i]; i++)
		if ((b->provider || base_variable(environ[i])) && !env_set_by(b, x, environ[i]) &&
		    !secret_variable(cfg, b, environ[i]) && strv_push(&env, environ[i]) < 0)
			goto oom;
	for (size_t i = 0; b->env[i]; i++)
		if (strv_push(&env, b->env[i]) < 0)
			goto oom;
	for (size_t i = 0; x->env && x->env[i]; i++)
		if (strv_push(&env, x->env[i]) < 0)
			goto oom;
	for (size_t i = 0; i < b->n_secrets; i++) {
		_cleanup_free_ char *v = NULL;
		char *kv = NULL;

		/* (a git credential's is served to git alone, by the toolbelt) */
		if (b->secrets[i].git_only)
			continue;
		if (host_secret_value(&b->secrets[i], &v, e) < 0) {
			strv_free(env);
			return NULL;
		}
		if (asprintf(&kv, "%s=%s", b->secrets[i].name, v) < 0) {
			explicit_bzero(v, strlen(v));
			goto oom;
		}
		explicit_bzero(v, strlen(v));
		if (strv_push_take(&env, kv) < 0)
			goto oom;
	}
	if (!env && strv_push(&env, "PATH=/usr/bin:/bin") < 0)
		goto oom;
	return env;
oom:
	strv_free(env);
	err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	return NULL;
}

static char **wrapper_env(struct hostd *d, const struct host_binding *b,
			  const struct host_exec *x, struct err **e)
{
	struct host_config *cfg = NULL;
	char **env;

	/* (read again: a binding added since b's config was read names its
	 * sources too; b's own are looked at whatever the file says now) */
	if (host_config_load(d->config, &cfg, e) < 0)
		return NULL;
	env = env_of(cfg, b, x, e);
	host_config_free(cfg);
	return env;
}

/* The wrapper's request: the binding's policy, its env and secrets passed
 * by name (their values are in the wrapper's environment only). */
/* The names of the variables the binding and the executor give the
 * command, and of its secrets: passed by name, never by value. */
static json_t *env_names(const struct host_binding *b, const struct host_exec *x)
{
	json_t *names = json_array();

	for (int k = 0; k < 2; k++) {
		char *const *v = k == 0 ? b->env : x->env;

		for (size_t i = 0; names && v && v[i]; i++) {
			_cleanup_free_ char *name = strndup(v[i], strcspn(v[i], "="));
			if (name)
				json_array_append_new(names, json_string(name));
		}
	}
	for (size_t i = 0; names && i < b->n_secrets; i++)
		if (!b->secrets[i].git_only)
			json_array_append_new(names, json_string(b->secrets[i].name));
	return names;
}

/* The executor's part of a request: its needs and its first input. */
static json_t *with_exec(json_t *req, const struct host_exec *x)
{
	if (req && x->needs && json_object_set(req, "needs", x->needs) < 0) {
		json_decref(req);
		return NULL;
	}
	if (req && x->stdin_text && json_object_set_new(req, "stdin", json_string(x->stdin_text)) < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

/* The binding's container config for its wrapper: with the config's
 * other bindings of its provider when the provider takes them (ssh's
 * account check; read again: one added since b's config was read
 * counts). NULL: the config cannot be read, or no memory. */
static json_t *container_request(struct hostd *d, const struct host_binding *b)
{
	const struct provider *p = provider_find_kind(b->provider, PROVIDER_CONTAINER);
	struct host_config *cfg = NULL;
	struct err *e = NULL;
	json_t *c;

	if (!b->provider || !p || !p->launch_config)
		return json_incref(b->container);
	if (host_config_load(d->config, &cfg, &e) < 0) {
		err_free(e);
		return NULL;
	}
	c = host_config_launch_request(cfg, b, p);
	host_config_free(cfg);
	return c;
}

static json_t *wrap_request(struct hostd *d, const struct host_binding *b, const char *job,
			    unsigned int n, const char *workspace, const struct host_exec *x)
{
	json_t *pol, *env, *pass, *argj = json_strv(x->argv);

	if (!b->provider) {
		/* no policy: the names of what its environment carries are
		 * recorded, never their values */
		json_t *names = env_names(b, x);

		return with_exec(argj && names
					 ? json_pack("{s:b, s:o, s:s, s:s, s:s, s:i, s:o, s:b, s:b}",
						     "unsandboxed", 1, "env_names", names, "workspace",
						     workspace, "state_dir", d->state, "execution", job,
						     "segment", (int)n, "argv", argj, "quiet", 1,
						     "job_dirs", 1)
					 : (json_decref(argj), json_decref(names), NULL),
				 x);
	}
	pol = policy_to_json(b->policy);

	if (!pol || !argj) {
		json_decref(pol);
		json_decref(argj);
		return NULL;
	}
	env = json_object_get(pol, "env");
	if (!env) {
		env = json_object();
		json_object_set_new(pol, "env", env);
	}
	pass = json_object_get(env, "pass");
	if (!pass) {
		pass = json_array();
		json_object_set_new(env, "pass", pass);
	}
	json_t *names = env_names(b, x);

	if (!names || json_array_extend(pass, names) < 0) {
		json_decref(names);
		json_decref(pol);
		json_decref(argj);
		return NULL;
	}
	json_decref(names);
	/* a container binding names its container, not a process provider */
	json_t *req = json_pack("{s:o, s:s, s:s, s:s, s:i, s:o, s:b, s:b}", "policy", pol,
				"workspace", workspace, "state_dir", d->state, "execution", job,
				"segment", (int)n, "argv", argj, "quiet", 1, "job_dirs", 1);
	if (req && (b->container ? json_object_set_new(req, "container", container_request(d, b))
				 : json_object_set_new(req, "provider", json_string(b->provider))) < 0) {
		json_decref(req);
		req = NULL;
	}
	return with_exec(req, x);
}

/* The job's run dir, with its input when it has one (the wrapper makes
 * the rest of the job's files). */
static int job_run_dir(struct hostd *d, const char *job, const char *input, struct err **e)
{
	_cleanup_free_ char *run = NULL;
	_cleanup_close_ int dfd = -1;

	if (asprintf(&run, "%s/runs/%s/run", d->state, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "run dir");
	if (mkdir(run, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run);
	dfd = fs_open_nofollow(AT_FDCWD, run, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run);
	return input ? fs_write_atomic(dfd, "input", input, strlen(input), 0600, false, e) : 0;
}

static int git_helper_env(struct hostd *d, struct host_exec *x)
{
	char *kv = NULL;

	if (strchr(d->self, '\'') ||
	    asprintf(&kv, "GIT_CONFIG_VALUE_1=!'%s' tb git-credential", d->self) < 0)
		return -1;
	if (strv_push_take(&x->env, kv) < 0)
		return -1;
	static const char *const fixed[] = { "GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=credential.helper",
					     "GIT_CONFIG_VALUE_0=", "GIT_CONFIG_KEY_1=credential.helper",
					     "GIT_CONFIG_KEY_2=credential.useHttpPath",
					     "GIT_CONFIG_VALUE_2=true", "GIT_TERMINAL_PROMPT=0", NULL };
	for (size_t i = 0; fixed[i]; i++)
		if (strv_push(&x->env, fixed[i]) < 0)
			return -1;
	return 0;
}

/* What the wrapper clones: {"url", "branch", "mode", "helper"?,
 * "setup"?}. */
static json_t *clone_request(struct hostd *d, const struct host_binding *b, bool toolbelt)
{
	static const char *const modes[] = { "clone", "worktree", "shared" };
	json_t *c = json_pack("{s:s, s:s, s:s}", "url", b->git_url, "branch", b->git_branch, "mode",
			      modes[b->git_mode]);

	if (c && toolbelt && b->n_git_creds > 0)
		json_object_set_new(c, "helper", json_string(d->self));
	if (c && b->git_setup)
		json_object_set_new(c, "setup", json_strv(b->git_setup));
	return c;
}

/* Where sandboxed runs wrote, as the history says: every workspace of a
 * job with a sandboxed (or container) segment, and every write grant such
 * a segment's plan had (read back against its pin). A record that
 * retention removed leaves its job's workspace only; the grants of the
 * bindings as the config says now are counted beside. */
struct wrote_walk {
	char ***written;
	struct err **e;
};

static int wrote_add(void *ctx, const char *ws, const char *record, const char *digest)
{
	struct wrote_walk *w = ctx;
	struct plan *p = NULL;
	struct stat st;
	json_t *v;
	size_t i;

	if (ws && !strv_contains(*w->written, ws) && strv_push(w->written, ws) < 0)
		return err_set(w->e, ERR_INTERNAL, ENOMEM, "history");
	if (!record || (lstat(record, &st) < 0 && errno == ENOENT))
		return 0;
	if (plan_read_record(record, digest, &p, w->e) < 0)
		return err_wrap(w->e, "a sandboxed run's record");
	json_array_foreach(json_object_get(p->data, "write"), i, v) {
		const char *g = json_string_value(v);

		if (g && !strv_contains(*w->written, g) && strv_push(w->written, g) < 0) {
			plan_free(p);
			return err_set(w->e, ERR_INTERNAL, ENOMEM, "history");
		}
	}
	plan_free(p);
	return 0;
}

/* What a live segment of another job may write: its job's workspace
 * and, sandboxed, the write grants its pinned record says it had (read
 * back against its pin), or, not pinned yet, its binding's as the config
 * says now. */
static int seg_writes(const struct seg *s, const json_t *job,
		      const struct host_binding *ob, char ***out, struct err **e)
{
	const char *ws = json_string_value(json_object_get(job, "workspace"));
	struct wrote_walk w = { out, e };
	json_t *g;
	size_t i;

	if (ws && !strv_contains(*out, ws) && strv_push(out, ws) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "places");
	if (!s->sandboxed)
		return 0;
	json_array_foreach(json_object_get(job, "segments"), i, g)
		if (json_integer_value(json_object_get(g, "n")) == (json_int_t)s->n &&
		    json_string_value(json_object_get(g, "provider")))
			return wrote_add(&w, NULL, json_string_value(json_object_get(g, "record")),
					 json_string_value(json_object_get(g, "digest")));
	return ob ? host_binding_writes(ob, out, e) : 0;
}

/* May this launch run beside the live segments of other jobs?
 * - A container's mounts (a copy back's targets) are resolved by their
 *   paths after cordon checked them: a sandbox writing there could swap
 *   one (a read-only cover, a nested grant) for a link in between. A
 *   container job starts only on a workspace no other live job runs on
 *   nor any of their sandboxes may write; and no other job starts on, or
 *   with a grant reaching, a live container job's workspace.
 * - The operator's claude outside any sandbox runs what it finds in its
 *   workspace and config as the operator: no sandboxed launch may write
 *   where a live unsandboxed claude job runs or takes its config from
 *   (operator_claude_check is the other order).
 * By identity and containment (lib/place.h). 0, or -1 with *e
 * (ERR_UNAVAILABLE for a container's workspace in use, ERR_DENIED for a
 * live operator's claude, naming the other job). */
static int live_places_check(struct hostd *d, const struct host_binding *b, const char *job,
			     const char *workspace, struct err **e)
{
	_cleanup_strv_ char **mine = NULL;
	struct host_config *cfg = NULL;
	int r = 0;

	if (workspace && strv_push(&mine, workspace) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "places");
	if (b->provider && host_binding_writes(b, &mine, e) < 0)
		return -1;
	for (struct seg *s = d->segs; r == 0 && s; s = s->next) {
		_cleanup_json_ json_t *j = NULL;
		_cleanup_strv_ char **theirs = NULL, **ows = NULL, **op = NULL;
		const struct host_binding *ob = NULL;
		const char *ws, *place = NULL, *wrote = NULL;
		bool op_claude = s->claude && !s->sandboxed;

		if (strcmp(s->job, job) == 0 || (!b->container && !s->container &&
						 !(b->provider && op_claude)))
			continue;
		if (!(j = host_db_job_json(d->db, s->job, e)) ||
		    (!cfg && host_config_load(d->config, &cfg, e) < 0)) {
			r = -1;
			break;
		}
		ob = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
		ws = json_string_value(json_object_get(j, "workspace"));
		if (ws && strv_push(&ows, ws) < 0) {
			r = err_set(e, ERR_INTERNAL, ENOMEM, "places");
			break;
		}
		if (b->container) {
			/* this container's workspace against all the other may write */
			char *const one[] = { (char *)workspace, NULL };

			r = seg_writes(s, j, ob, &theirs, e);
			if (r == 0 && workspace)
				r = host_places_meet(one, theirs, &place, &wrote, e);
		}
		if (r == 0 && s->container)
			/* the live container's workspace against all this may write */
			r = host_places_meet(ows, mine, &place, &wrote, e);
		if (r > 0) {
			r = err_set(e, ERR_UNAVAILABLE, 0,
				    "the workspace `%s` is in use by job %s: a container is made "
				    "only on a workspace no other job runs on or may write",
				    b->container ? workspace : place, s->job);
			break;
		}
		if (r == 0 && b->provider && op_claude) {
			r = ob && ob->executor == HOST_EXEC_CLAUDE_CODE && !ob->provider
				    ? host_claude_operator_places(ob, ws, &op, e)
				    : ws && strv_push(&op, ws) < 0 ? err_set(e, ERR_INTERNAL, ENOMEM, "places")
								    : 0;
			if (r == 0)
				r = host_places_meet(op, mine, &place, &wrote, e);
			if (r > 0)
				r = err_set(e, ERR_DENIED, 0,
					    "job %s runs claude without a sandbox in, or with its config "
					    "in, `%s`, and this sandboxed binding may write `%s`: what it "
					    "left there would run as the operator",
					    s->job, place, wrote);
		}
	}
	host_config_free(cfg);
	if (r < 0)
		return err_wrap(e, "the places of live jobs");
	return 0;
}

/* A wrapper's environment, its secrets' values wiped before it goes. */
static void env_scrub_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		explicit_bzero(env[i], strlen(env[i]));
	strv_free(env);
}

/* Start a wrapper (posix_spawn: a vfork, nothing of the daemon's memory
 * copied). The daemon's blocked and ignored signals are its own: the
 * wrapper hands an empty mask on to the command. fd 3 is the control
 * socket; 0 nothing, 1 and 2 the log; every other fd of the daemon is
 * close-on-exec. 0, or an errno with *pid -1. */
static int spawn_wrap(struct hostd *d, bool container, char **env, int logfd, int ctl, pid_t *pid)
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

static int spawn_wrapper(struct hostd *d, const struct host_binding *b, const char *job,
			 unsigned int attempt, unsigned int n, const char *workspace,
			 char *const *args, const char *input, const char *session,
			 struct err **e)
{
	_cleanup_json_ json_t *req = NULL;
	_cleanup_free_ char *text = NULL, *log = NULL, *dir = NULL, *run = NULL;
	struct host_exec x = { 0 };
	char **env = NULL;
	int sv[2] = { -1, -1 }, logfd, spawn_errno = 0;
	struct seg *s;
	pid_t pid = -1;

	if (live_places_check(d, b, job, workspace, e) < 0)
		return -1;
	if (asprintf(&dir, "%s/runs/%s", d->state, job) < 0 ||
	    asprintf(&log, "%s/runs/%s/log", d->state, job) < 0 ||
	    asprintf(&run, "%s/runs/%s/run", d->state, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "log");
	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", dir);
	if (job_run_dir(d, job, input, e) < 0)
		return -1;
	/* the job's toolbelt: its token's path for the command (the token
	 * itself is read inside), its socket for the sandbox's gateway */
	_cleanup_free_ char *tbdir = toolbelt_dir_of(d->tb, job);
	_cleanup_free_ char *tbsock = toolbelt_socket_of(d->tb, job);
	/* claude-code in a container: the job's own home, made (and
	 * seeded) on first use */
	_cleanup_free_ char *home = NULL;
	if (b->container && b->executor == HOST_EXEC_CLAUDE_CODE &&
	    host_job_home(d->state, job, b->home_seed, &home, e) < 0)
		return -1;
	/* what the executor runs, with what it needs */
	if (host_exec_build(b, args, run, session, home, tbdir ? d->self : NULL, &x, e) < 0)
		return -1;
	char *tbkv = NULL;
	if (tbdir && (asprintf(&tbkv, "CORDON_TOOLBELT=%s/%s", tbdir, TOOLBELT_TOKEN) < 0 ||
		      strv_push_take(&x.env, tbkv) < 0)) {
		host_exec_clear(&x);
		return err_set(e, ERR_INTERNAL, ENOMEM, "toolbelt");
	}
	/* git asks the toolbelt for its credential: the helper set through
	 * git's GIT_CONFIG_* variables (after an empty one that drops any a
	 * config file named) */
	if (tbdir && b->n_git_creds > 0 && git_helper_env(d, &x) < 0) {
		host_exec_clear(&x);
		return err_set(e, ERR_INTERNAL, ENOMEM, "git's credential helper");
	}
	req = wrap_request(d, b, job, n, workspace, &x);
	/* a clone workspace is made by the wrapper, before its first
	 * segment is planned */
	if (req && b->git_url && n == 1 && attempt == 1 &&
	    json_object_set_new(req, "clone", clone_request(d, b, tbdir != NULL)) < 0) {
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
		host_exec_clear(&x);
		return err_set(e, ERR_INTERNAL, ENOMEM, "request");
	}
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0) {
		host_exec_clear(&x);
		return err_set(e, ERR_UNAVAILABLE, errno, "log `%s`", log);
	}
	struct stat lst;
	off_t log_start = fstat(logfd, &lst) == 0 ? lst.st_size : 0;
	env = wrapper_env(d, b, &x, e);
	host_exec_clear(&x);
	if (!env) {
		close(logfd);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		strv_free(env);
		close(logfd);
		return err_set(e, ERR_UNAVAILABLE, errno, "wrapper");
	}
	spawn_errno = spawn_wrap(d, b->container != NULL, env, logfd, sv[1], &pid);
	env_scrub_free(env);
	close(logfd);
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return err_set(e, ERR_UNAVAILABLE, spawn_errno, "wrapper");
	}
	s = calloc(1, sizeof(*s));
	if (!s) {
		kill(pid, SIGKILL);
		close(sv[0]);
		return err_set(e, ERR_INTERNAL, ENOMEM, "segment");
	}
	snprintf(s->job, sizeof(s->job), "%s", job);
	s->attempt = attempt;
	s->n = n;
	s->retries = b->retries;
	s->pid = pid;
	s->ctl = sv[0];
	s->grace_fd = -1;
	s->grace_ms = b->grace_ms;
	s->sandboxed = b->provider != NULL;
	s->claude = b->executor == HOST_EXEC_CLAUDE_CODE;
	s->container = b->container != NULL;
	s->log_start = log_start;
	s->pidfd = (int)syscall(SYS_pidfd_open, pid, 0);
	s->wctl = (struct watch){ .kind = W_CTL, .seg = s };
	s->wpid = (struct watch){ .kind = W_PIDFD, .seg = s };
	s->next = d->segs;
	d->segs = s;
	if (s->pidfd < 0 || send(s->ctl, text, strlen(text), MSG_NOSIGNAL) < 0 ||
	    hostd_watch_add(d, s->ctl, &s->wctl) < 0 || hostd_watch_add(d, s->pidfd, &s->wpid) < 0) {
		int saved = errno;

		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		hostd_seg_free(d, s);
		return err_set(e, ERR_UNAVAILABLE, saved, "wrapper");
	}
	return 0;
}

/* The wrapper's answer: the pin goes into the database with the segment,
 * then the word; a refusal ends the job. */
/* A wrapper's answer on its control socket, no longer watched: NULL when
 * it ended without one or sent something that is not JSON. */
static json_t *read_answer(struct hostd *d, int ctl)
{
	_cleanup_free_ char *buf = malloc(ANSWER_MAX);
	struct err *e = NULL;
	ssize_t n = buf ? recv(ctl, buf, ANSWER_MAX, 0) : -1;
	json_t *a = NULL;

	epoll_ctl(d->epfd, EPOLL_CTL_DEL, ctl, NULL);
	if (n > 0)
		a = json_parse_strict(buf, (size_t)n, &e);
	err_free(e);
	return a;
}

static void on_answer(struct hostd *d, struct seg *s)
{
	_cleanup_json_ json_t *a = read_answer(d, s->ctl);
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

/* A claude that runs as the operator (an unsandboxed claude-code job's,
 * or an attach's) never starts in, nor takes its config from, a place a
 * sandboxed run wrote or a sandboxed binding of cfg may write: it would
 * run the hooks and servers left there as the operator. By identity and
 * containment: `ws/`, a link, a subdirectory and a grant holding it are
 * that place. b NULL (or not an unsandboxed claude-code binding): the
 * workspace alone. 0, or -1 with *e (ERR_DENIED naming both places). */
static int operator_claude_check(struct hostd *d, const struct host_config *cfg,
				 const struct host_binding *b, const char *ws, struct err **e)
{
	_cleanup_strv_ char **places = NULL, **written = NULL;
	struct wrote_walk w = { &written, e };
	const char *place = NULL, *wrote = NULL;
	int r;

	if (b && (b->provider || b->executor != HOST_EXEC_CLAUDE_CODE))
		b = NULL; /* (its workspace is all there is to compare) */
	if (!b && !ws)
		return 0;
	if ((b ? host_claude_operator_places(b, ws, &places, e)
	       : strv_push(&places, ws) < 0 ? err_set(e, ERR_INTERNAL, ENOMEM, "places") : 0) < 0 ||
	    host_db_sandboxed(d->db, wrote_add, &w, e) < 0)
		return -1;
	for (size_t i = 0; b && cfg && i < cfg->n; i++)
		if (host_binding_writes(&cfg->bindings[i], &written, e) < 0)
			return -1;
	r = host_places_meet(places, written, &place, &wrote, e);
	if (r < 0)
		return err_wrap(e, "claude without a sandbox: where it runs");
	if (r > 0)
		return err_set(e, ERR_DENIED, 0,
			       "claude runs here without a sandbox, in or with its config in `%s`, "
			       "and a sandboxed run wrote (or a sandboxed binding may write) `%s`: "
			       "what it left there would run as the operator",
			       place, wrote);
	return 0;
}

/* Another attempt of a job: its binding as the config says now, the
 * job's own args and workspace, the next segment. */
static int retry(struct hostd *d, const char *job, unsigned int n, struct err **e)
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
		r = operator_claude_check(d, cfg, b, json_string_value(json_object_get(j, "workspace")), e);
	if (r == 0)
		r = spawn_wrapper(d, b, job, attempt, n,
				  json_string_value(json_object_get(j, "workspace")), argv, NULL,
				  json_string_value(json_object_get(j, "session")), e);
	host_config_free(cfg);
	return r;
}

/* Has the job a segment this daemon runs or is starting (a retry's is
 * started before the last one is let go)? */
static bool job_live(struct hostd *d, const char *job)
{
	for (struct seg *s = d->segs; s; s = s->next)
		if (strcmp(s->job, job) == 0)
			return true;
	return false;
}

/* The toolbelt's operations the job's binding grants now. */
unsigned int hostd_binding_ops(struct hostd *d, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	unsigned int ops;

	if (!j || host_config_load(d->config, &cfg, &e) < 0)
		return 0;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	ops = b ? b->ops : 0;
	host_config_free(cfg);
	return ops;
}

/* Toolbelt directories of jobs that no longer run: revoked. */
static void sweep_toolbelts(struct hostd *d)
{
	_cleanup_free_ char *root = fs_path_join(d->state, TOOLBELT_DIR);
	DIR *dir = root ? opendir(root) : NULL;
	_cleanup_strv_ char **gone = NULL;
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.' && !job_live(d, de->d_name))
			(void)strv_push(&gone, de->d_name);
	closedir(dir);
	for (size_t i = 0; gone && gone[i]; i++)
		toolbelt_close(d->tb, gone[i]);
}

/* Is the job's binding (as the config says now) claude-code's? */
bool hostd_job_is_claude(struct hostd *d, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	bool r;

	if (!j || host_config_load(d->config, &cfg, &e) < 0)
		return false;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	r = b && b->executor == HOST_EXEC_CLAUDE_CODE;
	host_config_free(cfg);
	return r;
}

/* A session id as claude writes it; anything else (the log is the
 * sandboxed command's to write) is not kept. */
static bool session_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n > 0 && n <= 128 &&
	       strspn(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") == n;
}

/* A failed turn's text for people: printable ASCII, at most 200 bytes
 * (it is the sandboxed command's to write). */
static char *turn_error(const char *v)
{
	char *out = NULL;
	size_t n = 0;

	if (!v)
		v = "(no message)";
	out = malloc(201);
	for (; out && *v && n < 200; v++)
		out[n++] = (*v >= 0x20 && *v < 0x7f) ? *v : '?';
	if (out)
		out[n] = '\0';
	return out;
}

/* How much of a log the daemon reads at a segment's end: its output is
 * the sandboxed command's to make as large as it likes, and the daemon's
 * loop serves every job. */
#define SESSION_SCAN_MAX ((off_t)16 << 20)

/* What a claude-code job's log says, in the segment's part of it (from
 * from, at most its last SESSION_SCAN_MAX bytes): the last session its
 * stream's init message announced, kept with the job for the next
 * segment to resume; and, when its last turn failed, why (*failed, the
 * caller frees). */
void hostd_keep_session(struct hostd *d, const char *job, off_t from, char **failed)
{
	_cleanup_free_ char *path = NULL, *line = NULL, *last = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	struct stat st;
	off_t at, end;
	size_t cap = 0;
	ssize_t n;
	struct err *e = NULL;

	if (asprintf(&path, "%s/runs/%s/log", d->state, job) < 0)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	end = st.st_size;
	at = end - from > SESSION_SCAN_MAX ? end - SESSION_SCAN_MAX : from;
	if (at < 0 || at > end || fseeko(f, at, SEEK_SET) < 0)
		return;
	/* (in the middle of a line: from the next one) */
	if (at > from && getline(&line, &cap, f) > 0)
		at = ftello(f);
	while (at < end && (n = getline(&line, &cap, f)) > 0) {
		at += n;
		json_t *j;
		const char *v;

		if (line[0] != '{' || (!strstr(line, "\"init\"") && !strstr(line, "\"result\"")))
			continue;
		/* (the command's words: strict, a duplicate key is no line of
		 * claude's) */
		j = json_parse_strict(line, (size_t)n, NULL);
		if (failed && json_is_object(j) && json_string_value(json_object_get(j, "type")) &&
		    strcmp(json_string_value(json_object_get(j, "type")), "result") == 0) {
			free(*failed);
			*failed = json_is_true(json_object_get(j, "is_error"))
					  ? turn_error(json_string_value(json_object_get(j, "result")))
					  : NULL;
		}
		v = json_string_value(json_object_get(j, "session_id"));
		if (json_is_object(j) && json_string_value(json_object_get(j, "subtype")) &&
		    strcmp(json_string_value(json_object_get(j, "subtype")), "init") == 0 &&
		    session_ok(v)) {
			free(last);
			last = strdup(v);
		}
		json_decref(j);
	}
	if (last && host_db_job_session(d->db, job, last, &e) < 0)
		err_print(stderr, e);
	err_free(e);
}

/* The wrapper ended: what its exit file says, or lost without one. */
static void remove_own_workspace(struct hostd *d, const char *job)
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
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->pidfd, NULL);
	close(s->pidfd);
	s->pidfd = pidfd;
	s->pid = pid;
	s->settling = true;
	if (hostd_watch_add(d, s->pidfd, &s->wpid) < 0) {
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

static void on_exit_of(struct hostd *d, struct seg *s)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *x = NULL;
	_cleanup_close_ int dfd = -1;
	struct host_segment seg = { .attempt = s->attempt, .n = s->n };
	_cleanup_free_ char *failed_turn = NULL, *turn_reason = NULL;
	struct err *e = NULL;
	siginfo_t info = { 0 };

	(void)waitid(P_PIDFD, (id_t)s->pidfd, &info, WEXITED);
	if (s->ctl >= 0)
		on_answer(d, s); /* died before (or while) answering */
	if (!s->pinned) {
		char job[HOST_JOB_ID_MAX];
		bool first = s->n == 1 && s->attempt == 1;

		snprintf(job, sizeof(job), "%s", s->job);
		hostd_seg_free(d, s);
		/* a job refused or stopped before its first launch: what its
		 * wrapper made of a workspace of its own (a clone cut short)
		 * goes, nothing having run in it */
		if (first)
			remove_own_workspace(d, job);
		if (!job_live(d, job))
			toolbelt_close(d->tb, job);
		return;
	}
	snprintf(seg.job, sizeof(seg.job), "%s", s->job);
	if (s->claude)
		hostd_keep_session(d, s->job, s->log_start, &failed_turn);
	dfd = s->record ? fs_open_nofollow(AT_FDCWD, s->record, O_PATH | O_DIRECTORY, 0) : -1;
	if (dfd >= 0 && fs_read_file(dfd, HOST_WRAPPER_EXIT, 4096, &buf, NULL, &e) == 0)
		x = json_parse_strict(buf, strlen(buf), &e);
	err_free(e);
	e = NULL;
	if (s->stop_sig) {
		pid_t left = 0;

		/* a stop is confirmed once nothing of the segment is left: the
		 * sandbox dies with its first process (pid 1 of its pid
		 * namespace), a moment after the wrapper. That process is
		 * found by the pid and start time its record names, through a
		 * pidfd opened before it is dated: a number (a pid, a pid
		 * namespace's) used again since names another's, never
		 * signalled. */
		for (int i = 0; !s->sandboxed && i < 500; i++) {
			/* without a sandbox, the wrapper's process group: its
			 * number stays taken while a member lives */
			if (kill(-s->pid, SIGKILL) < 0) {
				left = 0;
				break;
			}
			left = s->pid;
			usleep(10000);
		}
		int rfd = -1;

		/* (a record naming no first process, a container's, has its
		 * stop confirmed by its start helper) */
		if (s->sandboxed && s->record && sandbox_root_open(s->record, &rfd, NULL) > 0) {
			(void)syscall(SYS_pidfd_send_signal, rfd, SIGKILL, NULL, 0);
			left = procfs_pidfd_wait(rfd, 5000) ? 0 : s->pid;
			close(rfd);
		}
		seg.result = HOST_STOPPED;
		seg.signal = s->stop_sig;
		seg.code = x && json_is_integer(json_object_get(x, "code"))
				   ? (int)json_integer_value(json_object_get(x, "code"))
				   : 128 + s->stop_sig;
		seg.reason = !left	    ? NULL
			     : s->sandboxed ? "stopped, but a process of the sandbox was still left"
					    : "stopped, but a process of its group was still left";
	} else if (x && json_is_integer(json_object_get(x, "code"))) {
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
	/* A container whose start helper ended without its exit file may
	 * still run: stopped and confirmed before anything runs again, and
	 * what it made removed, by a child (the Engine's calls are never the
	 * loop's); the segment ends once it has. Unconfirmed, the job is not
	 * tried again. */
	bool unverified = false;
	if (s->container && !x) {
		if (!s->settling && spawn_settle(d, s) == 0)
			return;
		unverified = !s->settling || !settle_verified(dfd);
		if (unverified)
			seg.reason = "container_stop_unverified: its start helper ended and its "
				     "container could not be confirmed stopped";
	}
	/* a failed attempt is tried again while the binding allows; a stop
	 * is the operator's and final */
	bool failed = seg.result == HOST_REFUSED || seg.result == HOST_LOST ||
		      (seg.result == HOST_EXITED &&
		       (seg.code != 0 || (seg.reason && !s->interrupted &&
					  strncmp(seg.reason, "interrupted:", 12) == 0)));
	bool again = failed && !s->stop_sig && !unverified && s->attempt <= s->retries;
	if (host_db_segment_end(d->db, &seg, !again, &e) < 0) {
		err_print(stderr, e);
		again = false;
	}
	err_free(e);
	e = NULL;
	if (again && (host_db_attempt_end(d->db, s->job, s->attempt, seg.result, seg.code,
					  seg.reason, &e) < 0 ||
		      retry(d, s->job, s->n + 1, &e) < 0)) {
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
	if (!job_live(d, job))
		toolbelt_close(d->tb, job);
}

/* The grace is over: KILL to the wrapper's process group (the sandbox
 * dies with its root). */
static void on_grace(struct hostd *d, struct seg *s)
{
	uint64_t n;

	(void)!read(s->grace_fd, &n, sizeof(n));
	epoll_ctl(d->epfd, EPOLL_CTL_DEL, s->grace_fd, NULL);
	close(s->grace_fd);
	s->grace_fd = -1;
	/* (its helper is gone: the settle child does the rest) */
	if (s->settling)
		return;
	/* A container does not die with its start helper: the helper is
	 * asked (QUIT) to kill it and to return once the daemon says it is
	 * not running, and has a last grace to do so. */
	if (s->container && !s->quit_sent) {
		struct itimerspec it = { .it_value = { .tv_sec = HOSTD_CONTAINER_KILL_S } };

		s->quit_sent = true;
		s->grace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (s->grace_fd >= 0 && timerfd_settime(s->grace_fd, 0, &it, NULL) == 0 &&
		    hostd_watch_add(d, s->grace_fd, &s->wgrace) == 0) {
			kill(s->pid, SIGQUIT);
			return;
		}
		if (s->grace_fd >= 0)
			close(s->grace_fd);
		s->grace_fd = -1;
	}
	s->stop_sig = SIGKILL;
	kill(-s->pid, SIGKILL);
}

/* Stop: TERM to the wrapper's process group, which forwards it into the
 * sandbox; KILL once the binding's grace is over. */
static int stop_segment(struct hostd *d, struct seg *s)
{
	struct itimerspec it = { .it_value = { .tv_sec = s->grace_ms / 1000,
					       .tv_nsec = (long)(s->grace_ms % 1000) * 1000000L } };

	if (s->stop_sig || s->settling)
		return 0; /* stopping already, or ended and being settled */
	s->stop_sig = SIGTERM;
	if (s->grace_ms == 0 && !s->container) {
		s->stop_sig = SIGKILL;
		return kill(-s->pid, SIGKILL);
	}
	/* (a container's helper needs a moment to pass a KILL on) */
	if (s->grace_ms == 0)
		it.it_value.tv_nsec = 1000000L;
	s->grace_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	s->wgrace = (struct watch){ .kind = W_GRACE, .seg = s };
	if (s->grace_fd < 0 || timerfd_settime(s->grace_fd, 0, &it, NULL) < 0 ||
	    hostd_watch_add(d, s->grace_fd, &s->wgrace) < 0) {
		s->stop_sig = SIGKILL;
		return kill(-s->pid, SIGKILL);
	}
	return kill(-s->pid, SIGTERM);
}

/* --- the toolbelt's operations ---------------------------------------- */

/* A string argument: present, at most max bytes, no NUL. */
static const char *arg_string(json_t *args, const char *key, size_t max)
{
	json_t *v = json_object_get(args, key);

	return json_is_string(v) && json_string_length(v) <= max &&
		       strlen(json_string_value(v)) == json_string_length(v)
		       ? json_string_value(v)
		       : NULL;
}

/* One line in the job's log, as the daemon writes it: printable ASCII,
 * anything else shown as '?'. -2 when the log is at its bound
 * (HOST_LOG_MAX, which the wrapper holds the command's output to). */
static int log_line(struct hostd *d, const char *job, const char *prefix, const char *text)
{
	_cleanup_free_ char *path = NULL, *line = NULL;
	_cleanup_close_ int fd = -1;
	size_t n;

	if (asprintf(&path, "%s/runs/%s/log", d->state, job) < 0 ||
	    asprintf(&line, "%s%s\n", prefix, text) < 0)
		return -1;
	n = strlen(line);
	for (size_t i = 0; i + 1 < n; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
			line[i] = '?';
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	if (st.st_size >= HOST_LOG_MAX)
		return -2;
	return fs_write_exact(fd, line, n) == 0 ? 0 : -1;
}

/* git's credential for what git asked (its protocol, host and path):
 * only https, only a host (and path) the job's binding names, as its
 * config says now. The value goes into this answer alone. */
static json_t *git_credential(struct hostd *d, const char *job, json_t *args, int *status,
			      const char **why)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	const char *protocol = arg_string(args, "protocol", 64), *host = arg_string(args, "host", 512);
	const char *path = arg_string(args, "path", 4096);
	const struct host_git_cred *cred;
	const struct host_binding *b;
	struct host_config *cfg = NULL;
	char *value = NULL;
	json_t *ans;

	if (!protocol || !host || (json_object_get(args, "path") && !path)) {
		*status = 400;
		*why = "git.credential takes {\"protocol\", \"host\", \"path\"?} as git sends them";
		return NULL;
	}
	if (!j || host_config_load(d->config, &cfg, &e) < 0) {
		*status = 503;
		*why = "the job or the config cannot be read";
		return NULL;
	}
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	cred = b ? host_git_cred_find(b, protocol, host, path) : NULL;
	if (!cred) {
		host_config_free(cfg);
		*status = 403;
		*why = "no git credential of this binding's is for that protocol, host and path";
		return NULL;
	}
	if (host_secret_value(cred->secret, &value, &e) < 0) {
		host_config_free(cfg);
		*status = 503;
		*why = "the credential's secret cannot be read";
		return NULL;
	}
	ans = json_pack("{s:s, s:s}", "username", cred->username, "password", value);
	explicit_bzero(value, strlen(value));
	free(value);
	host_config_free(cfg);
	if (!ans) {
		*status = 503;
		*why = "the credential is not valid UTF-8";
	}
	return ans;
}

_Static_assert(HOST_OUTPUTS_MAX == 256 && HOST_OUTPUTS_BYTES_MAX == 1048576 &&
		       HOST_LOG_MAX == 268435456,
	       "tb_call's refusals name the bounds");

static json_t *tb_call(void *ctx, const char *job, const char *op, json_t *args, int *status,
		       const char **why)
{
	struct hostd *d = ctx;
	_cleanup_err_ struct err *e = NULL;

	*status = 400;
	if (strcmp(op, "job.status") == 0) {
		_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);

		if (!j) {
			*status = 503;
			*why = "the job cannot be read";
			return NULL;
		}
		return json_pack("{s:O, s:O, s:O, s:O, s:O}", "id", json_object_get(j, "id"),
				 "binding", json_object_get(j, "binding"), "result",
				 json_object_get(j, "result"), "segments",
				 json_integer((json_int_t)json_array_size(json_object_get(j, "segments"))),
				 "outputs", json_object_get(j, "outputs"));
	}
	if (strcmp(op, "job.output") == 0) {
		const char *name = arg_string(args, "name", 64), *value = arg_string(args, "value", 16384);

		if (!name || !name[0] ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
			    strlen(name) ||
		    !value) {
			*why = "job.output takes {\"name\": 1 to 64 letters, digits, '.', '_' or '-', "
			       "\"value\": a string of at most 16 KiB}";
			return NULL;
		}
		if (host_db_job_output(d->db, job, name, value, &e) < 0) {
			bool denied = e && e->reason == ERR_DENIED;

			*status = denied ? 403 : 503;
			*why = denied ? "job.output: the job has saved all it may (256 outputs, "
					"1 MiB of them in all); this one is not saved"
				      : "the output cannot be saved";
			return NULL;
		}
		return json_pack("{s:s}", "saved", name);
	}
	if (strcmp(op, "notify") == 0) {
		const char *text = arg_string(args, "text", 1024);

		if (!text) {
			*why = "notify takes {\"text\": a string of at most 1 KiB}";
			return NULL;
		}
		int r = log_line(d, job, "cordon: notify: ", text);

		if (r < 0) {
			*status = r == -2 ? 403 : 503;
			*why = r == -2 ? "notify: the job's log is at its bound (256 MiB); the line "
					 "is not written"
				       : "the job's log cannot be written";
			return NULL;
		}
		return json_pack("{s:b}", "logged", 1);
	}
	if (strcmp(op, "git.credential") == 0)
		return git_credential(d, job, args, status, why);
	*status = 404;
	*why = "no such operation";
	return NULL;
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
	     operator_claude_check(d, cfg, bind, workspace, &e) < 0) ||
	    (bind->ops && toolbelt_open(d->tb, id, bind->ops, false, &e) < 0) ||
	    spawn_wrapper(d, bind, id, 1, 1, workspace, argv, input, NULL, &e) < 0) {
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
		(void)log_line(d, job, "cordon: daemon: ",
			       "stopped before anything was launched (the workspace was being made)");
		return hostd_answer(c, 202, json_pack("{s:s, s:s}", "id", job, "signal", "KILL"));
	}
	if (!s)
		return hostd_not_running(d, c, job);
	if (stop_segment(d, s) < 0 && errno != ESRCH)
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
	if (!job_live(f->d, f->job)) {
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
	req = wrap_request(d, b, job, n, ws, &x);
	if (!req || json_object_set_new(req, "home", json_string(home)) < 0 ||
	    json_object_set_new(req, "attach", json_true()) < 0 ||
	    !(text = json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII)) ||
	    asprintf(&log, "%s/runs/%s/log", d->state, job) < 0) {
		host_exec_clear(&x);
		return err_set(e, ERR_INTERNAL, ENOMEM, "attach");
	}
	env = wrapper_env(d, b, &x, e);
	host_exec_clear(&x);
	if (!env)
		return -1;
	logfd = open(log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (logfd < 0 || socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		rc = errno;
		if (logfd >= 0)
			close(logfd);
		env_scrub_free(env);
		return err_set(e, ERR_UNAVAILABLE, rc, "attach");
	}
	rc = spawn_wrap(d, true, env, logfd, sv[1], &pid);
	env_scrub_free(env);
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
	_cleanup_json_ json_t *ans = read_answer(d, a->ctl);
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
	a->answered_ms = wall_ms();
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
		    wall_ms() - a->answered_ms > HOSTD_ATTACH_HOLD_MS) {
			/* a container the client never started left its secrets
			 * file (the runtime takes it at its start): it goes */
			if (!job_live(d, a->job))
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
	} else if (job_live(d, job) || attach_being_made(d, job)) {
		r = 3;
	} else if (b->executor != HOST_EXEC_CLAUDE_CODE || !session_ok(session) || !ws) {
		r = 2;
	} else if (live_places_check(d, b, job, ws, &e) < 0) {
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
	if (!ws || operator_claude_check(d, cfg, b, ws, &e) < 0) {
		bool denied = !ws || e->reason == ERR_DENIED;

		host_config_free(cfg);
		json_decref(j);
		return !denied ? hostd_refuse(c, e)
			       : hostd_fail(c, 409, "attach_sandboxed",
					    !ws ? "the job has no workspace to attach in"
						: e->msg);
	}
	if (!b || b->executor != HOST_EXEC_CLAUDE_CODE || !session_ok(session)) {
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
	int64_t now = wall_ms();
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
			remove_own_workspace(d, name);
			host_job_home_remove(d->state, name);
			continue;
		}
		if (now - ended < STRAY_WINDOW_MS)
			(void)strv_push(&finished, id);
	}
	sweep_strays(d, finished);
	sweep_toolbelts(d);
}

/* The wrappers are `cordon wrap`: cordon is beside this binary. */
static char *cordon_beside(void)
{
	char *self = realpath("/proc/self/exe", NULL), *slash, *out = NULL;

	if (!self || !(slash = strrchr(self, '/'))) {
		free(self);
		return NULL;
	}
	*slash = '\0';
	if (asprintf(&out, "%s/cordon", self) < 0)
		out = NULL;
	free(self);
	return out;
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
	if (!d.state && own_dir(state_dir, &e) == 0)
		d.state = realpath(state_dir, NULL);
	d.config = strdup(config_path);
	d.self = cordon_beside();
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
	if (own_dir(d.state, &e) < 0 || own_dir(priv, &e) < 0 || own_dir(runs, &e) < 0 ||
	    own_dir(ws, &e) < 0 || lock_state(&d, &e) < 0 || token(&d, &e) < 0)
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
	if (toolbelt_new(d.state, tb_call, &d, &d.tb, &e) < 0)
		goto out;
	d.wtb = (struct watch){ .kind = W_TOOLBELT, .seg = NULL };
	if (hostd_watch_add(&d, toolbelt_fd(d.tb), &d.wtb) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the toolbelt");
		goto out;
	}
	if (host_db_open(dbp, &d.db, &e) < 0 || host_db_running(d.db, hostd_recover_one, &d, &e) < 0)
		goto out;
	hostd_settle_unlaunched(&d);
	sweep_toolbelts(&d);
	if (listen_socket(&d, &e) < 0)
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
		if (d.followers && wall_ms() - last_follow >= FOLLOW_MS) {
			last_follow = wall_ms();
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
				on_answer(&d, w->seg);
			} else if (w->kind == W_ATTACH) {
				on_attach_answer(&d, w->att);
			} else if (w->kind == W_GRACE) {
				on_grace(&d, w->seg);
			} else if (w->kind == W_TOOLBELT) {
				toolbelt_run(d.tb);
			} else if (w->kind == W_RECONCILE) {
				uint64_t ticks;

				(void)!read(d.rfd, &ticks, sizeof(ticks));
				reconcile(&d);
			} else if (w->kind == W_PIDFD) {
				on_exit_of(&d, w->seg);
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
