/* tools.c: srt and the helpers it runs, found and checked (srt.h); the
 * environment srt runs with; running srt for its version and for the
 * preflight, with its output captured and bounded in size and time. */
#include "sandbox/srt/srt.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/spawn.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

#define DEFAULT_PATH "/usr/local/bin:/usr/bin:/bin"
#define VERSION_TIMEOUT_MS 30000
#define PREFLIGHT_TIMEOUT_MS 60000
#define OUTPUT_MAX 4096

const char *const srt_wrapper_keys[] = { "PATH", "TMPDIR", "SRT_DEBUG", NULL };
const char *const srt_cleared_keys[] = { "SRT_DEBUG", "HTTP_PROXY", "HTTPS_PROXY",
					 "ALL_PROXY", "NO_PROXY", "http_proxy",
					 "https_proxy", "all_proxy", "no_proxy", NULL };

char *srt_run_sockdir(const struct plan_paths *paths)
{
	_cleanup_free_ char *state = strdup(paths->exec_dir);
	char base[PATH_MAX];
	char *slash;

	/* exec_dir is <state>/runs/<execution> */
	for (int i = 0; state && i < 2; i++)
		if ((slash = strrchr(state, '/')))
			*slash = '\0';
	if (!state)
		return NULL;
	(void)guard_srt_sockdir(state, (unsigned)getuid(), base, sizeof(base));
	return fs_path_join(base, paths->execution);
}

/* dir made (0700), or checked when it was there: a directory of this
 * user's, not a link, mode 0700. */
static int own_dir(const char *dir, struct err **e)
{
	struct stat st;

	if (mkdir(dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "srt: socket dir `%s`", dir);
	if (lstat(dir, &st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "srt: socket dir `%s`", dir);
	if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 07777) != 0700)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt: socket dir `%s` must be a directory of this user's, mode 0700",
			       dir);
	return 0;
}

int srt_sockdir_make(const char *run_dir, struct err **e)
{
	char base[PATH_MAX], *slash;

	if ((size_t)snprintf(base, sizeof(base), "%s", run_dir) >= sizeof(base) ||
	    !(slash = strrchr(base, '/')))
		return err_set(e, ERR_UNAVAILABLE, ENAMETOOLONG, "srt: socket dir `%s`", run_dir);
	*slash = '\0';
	if (strlen(base) > GUARD_SRT_SOCKDIR_MAX)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt: socket dir `%s` is too long for srt's sockets beneath it (at "
			       "most %d bytes): set XDG_RUNTIME_DIR to a shorter directory of this "
			       "user's, mode 0700", base, GUARD_SRT_SOCKDIR_MAX);
	if (own_dir(base, e) < 0)
		return -1;
	return own_dir(run_dir, e);
}

void srt_sockdir_remove(const char *run_dir)
{
	_cleanup_close_ int fd = run_dir ? fs_open_nofollow(AT_FDCWD, run_dir,
							    O_RDONLY | O_DIRECTORY, 0) : -1;
	DIR *d;
	struct dirent *de;

	if (fd < 0)
		return;
	d = fdopendir(fd);
	if (!d)
		return;
	(void)steal_fd(&fd);
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0)
			(void)unlinkat(dirfd(d), de->d_name, 0);
	closedir(d);
	(void)rmdir(run_dir);
}

static bool listed(const char *const *keys, const char *kv)
{
	for (size_t i = 0; keys[i]; i++) {
		size_t n = strlen(keys[i]);
		if (strncmp(kv, keys[i], n) == 0 && kv[n] == '=')
			return true;
	}
	return false;
}

static bool executable_file(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISREG(st.st_mode) && access(path, X_OK) == 0;
}

/* name in an absolute directory of path; relative entries are skipped,
 * so nothing is picked up from wherever cordon was started. */
static char *find_on_path(const char *path, const char *name)
{
	_cleanup_free_ char *copy = strdup(path);
	char *save = NULL;

	for (char *d = copy ? strtok_r(copy, ":", &save) : NULL; d;
	     d = strtok_r(NULL, ":", &save)) {
		char *cand;

		if (d[0] != '/')
			continue;
		cand = fs_path_join(d, name);
		if (cand && executable_file(cand))
			return cand;
		free(cand);
	}
	return NULL;
}

static int parse_version(const char *s, unsigned long v[3])
{
	for (int i = 0; i < 3; i++) {
		char *end = NULL;

		if (*s < '0' || *s > '9')
			return -1;
		errno = 0;
		v[i] = strtoul(s, &end, 10);
		if (errno || end == s)
			return -1;
		s = end;
		if (i < 2 && *s++ != '.')
			return -1;
	}
	return *s == '\0' || *s == '-' || *s == '+' ? 0 : -1;
}

int srt_version_cmp(const char *a, const char *b)
{
	unsigned long x[3], y[3];

	if (parse_version(a, x) < 0 || parse_version(b, y) < 0)
		return -2;
	for (int i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

char **srt_environ(const struct srt_env *t, const char *tmpdir)
{
	char **env = NULL;
	char *kv = NULL;
	/* without one of the launch's own (a version check), srt makes no
	 * socket */
	const char *dir = tmpdir ? tmpdir : SRT_SCRATCH;

	for (char **p = environ; p && *p; p++)
		if (!listed(srt_wrapper_keys, *p) && !listed(srt_cleared_keys, *p) &&
		    strv_push(&env, *p) < 0)
			goto fail;
	if (asprintf(&kv, "PATH=%s", t->path) < 0 || strv_push_take(&env, kv) < 0 ||
	    asprintf(&kv, "TMPDIR=%s", dir) < 0 || strv_push_take(&env, kv) < 0)
		goto fail;
	return env;
fail:
	strv_free(env);
	return NULL;
}

/* srt as the host runs it to ask: stdin from /dev/null, stdout and
 * stderr captured together (the first max bytes kept, *len counting
 * all), killed after timeout_ms and when cordon dies. *status: the exit
 * status, 128+N for signal N. */
static int capture(char *const argv[], char *const envp[], size_t max, int timeout_ms,
		   char **out, size_t *len, int *status, struct err **e)
{
	struct spawn_req q = { .argv = argv, .envp = envp, .max = max, .timeout_ms = timeout_ms,
			       .merge_err = true, .die_with_parent = true };
	struct spawn_out o;

	if (spawn_capture(&q, &o, e) < 0)
		return -1;
	*status = o.status;
	*len = o.total;
	*out = o.out;
	return 0;
}

static int locate_srt(struct srt_env *t, struct err **e)
{
	const char *conf = getenv("CORDON_SRT");

	if (conf) {
		if (conf[0] != '/')
			return err_set(e, ERR_CONFIG, 0, "CORDON_SRT must be an absolute path");
		if (!executable_file(conf))
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "srt_unavailable: CORDON_SRT `%s` is not an executable file",
				       conf);
		t->srt = strdup(conf);
	} else {
		t->srt = find_on_path(t->path, "srt");
		if (!t->srt)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "srt_unavailable: srt is not on PATH (install "
				       "@anthropic-ai/sandbox-runtime@" SRT_VERSION_TESTED
				       " with npm, or set CORDON_SRT to its absolute path)");
	}
	return t->srt ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "srt");
}

static int ask_version(struct srt_env *t, struct err **e)
{
	char *argv[] = { t->srt, (char *)"--version", NULL };
	_cleanup_strv_ char **env = srt_environ(t, NULL);
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	int status = 0;

	if (!env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt");
	if (capture(argv, env, 64, VERSION_TIMEOUT_MS, &out, &len, &status, e) < 0)
		return err_wrap(e, "srt_unavailable: srt --version");
	if (len > 0 && out[len - 1] == '\n' && len <= 64)
		out[len - 1] = '\0';
	if (status != 0 || len > 64 || srt_version_cmp(out, "0.0.0") == -2)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt_unavailable: `%s --version` did not print a version "
			       "(exit status %d)", t->srt, status);
	if (srt_version_cmp(out, SRT_VERSION_MIN) < 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt_unavailable: srt %s at `%s` is older than " SRT_VERSION_MIN
			       " (install @anthropic-ai/sandbox-runtime@" SRT_VERSION_TESTED ")",
			       out, t->srt);
	t->vs_tested = srt_version_cmp(out, SRT_VERSION_TESTED);
	t->version = steal_pointer(&out);
	return 0;
}

int srt_locate(struct srt_env *t, bool version, struct err **e)
{
	static const char *const helpers[] = { "bwrap", "socat", "rg" };
	char **slot[] = { &t->bwrap, &t->socat, &t->rg };
	const char *path = getenv("PATH");

	memset(t, 0, sizeof(*t));
	t->path = strdup(path && path[0] ? path : DEFAULT_PATH);
	if (!t->path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt");
	if (locate_srt(t, e) < 0)
		return -1;
	for (size_t i = 0; i < sizeof(helpers) / sizeof(*helpers); i++) {
		*slot[i] = find_on_path(t->path, helpers[i]);
		if (!*slot[i])
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "srt_unavailable: %s is not on PATH (srt needs bwrap, "
				       "socat and rg)", helpers[i]);
	}
	return version ? ask_version(t, e) : 0;
}

void srt_env_clear(struct srt_env *t)
{
	free(t->srt);
	free(t->version);
	free(t->bwrap);
	free(t->socat);
	free(t->rg);
	free(t->path);
	memset(t, 0, sizeof(*t));
}

/* srt's output where the operator can read it and the sandbox cannot. */
static void keep_log(const char *dir, const char *text, size_t len)
{
	_cleanup_close_ int fd = -1;
	struct err *e = NULL;

	fd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	if (fd >= 0 && fs_write_atomic(fd, SRT_PREFLIGHT_LOG, text, len, 0400, false, &e) < 0)
		err_free(e);
}

int srt_preflight(const struct srt_env *t, const char *settings, const char *cwd,
		  const char *log_dir, const char *tmpdir, struct err **e)
{
	char *argv[] = { (char *)"/usr/bin/env", (char *)"-C", (char *)cwd, t->srt,
			 (char *)"--settings", (char *)settings, (char *)"--",
			 (char *)"/usr/bin/true", NULL };
	_cleanup_strv_ char **env = srt_environ(t, tmpdir);
	_cleanup_free_ char *out = NULL;
	size_t len = 0;
	int status = 0;

	if (!env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt");
	if (capture(argv, env, OUTPUT_MAX, PREFLIGHT_TIMEOUT_MS, &out, &len, &status, e) < 0)
		return err_wrap(e, "preflight_failed");
	if (log_dir && len > 0)
		keep_log(log_dir, out, strlen(out));
	/* srt's words are not repeated: they may quote the settings or the
	 * environment it was given. */
	if (status != 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "preflight_failed: srt exited with status %d running /usr/bin/true "
			       "under the plan's settings%s", status,
			       log_dir && len ? " (its output is in the record dir, "
						SRT_PREFLIGHT_LOG ")" : "");
	if (len > 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "preflight_failed: srt printed %zu bytes running /usr/bin/true under "
			       "the plan's settings; a warning is a refusal%s", len,
			       log_dir ? " (its output is in the record dir, " SRT_PREFLIGHT_LOG ")"
				       : "");
	return 0;
}
