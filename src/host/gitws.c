/* gitws.c: git as the host runs it, distrusted (see gitws.h). */
#include "host/gitws.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"
#include "lib/text.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

const char *host_git_url_protocol(const char *url)
{
	static const char *const schemes[] = { "https", "http", "ssh", "git", "file", NULL };
	size_t n = strlen(url);

	if (n == 0 || n > HOST_GIT_URL_MAX || url[0] == '-')
		return NULL;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)url[i] <= 0x20 || url[i] == 0x7f)
			return NULL;
	/* ext::, fd:: and the other remote helpers' "<transport>::" */
	if (strstr(url, "::"))
		return NULL;
	if (url[0] == '/')
		return "file";
	for (size_t i = 0; schemes[i]; i++) {
		size_t k = strlen(schemes[i]);

		if (strncmp(url, schemes[i], k) == 0 && strncmp(url + k, "://", 3) == 0) {
			const char *auth = url + k + 3;
			size_t hostlen = strcspn(auth, "/");
			const char *at = memchr(auth, '@', hostlen);

			/* a password in the URL would be in every argv and
			 * log that names it: git.credentials holds it */
			if (at && memchr(auth, ':', (size_t)(at - auth)))
				return NULL;
			if (strcmp(schemes[i], "file") == 0 && auth[0] != '/')
				return NULL;
			return schemes[i];
		}
	}
	/* another scheme (a remote helper's: git-remote-<scheme>) */
	if (strstr(url, "://"))
		return NULL;
	/* scp-like: [user@]host:path (a ':' before any '/') */
	{
		size_t colon = strcspn(url, ":/");

		if (colon > 0 && url[colon] == ':' && url[colon + 1] != '\0')
			return "ssh";
	}
	return NULL;
}

bool host_git_branch_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > HOST_GIT_BRANCH_MAX || s[0] == '-' || s[0] == '.' || s[0] == '/' ||
	    s[n - 1] == '/' || s[n - 1] == '.' ||
	    (n >= 5 && strcmp(s + n - 5, ".lock") == 0) || strstr(s, "..") || strstr(s, "//") ||
	    strstr(s, "/.") || strstr(s, ".lock/") || strcmp(s, "HEAD") == 0)
		return false;
	return strspn(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._/-") == n;
}

/* The environment every git of the host's gets: who and where the
 * operator is, how their network is reached, and git told to trust
 * nothing it did not make. */
static char **git_env(void)
{
	static const char *const keep[] = { "PATH", "HOME", "USER", "LOGNAME", "LANG", "TZ",
					    "SSH_AUTH_SOCK", "http_proxy", "HTTP_PROXY",
					    "https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY",
					    "no_proxy", "NO_PROXY", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH",
					    NULL };
	static const char *const fixed[] = { "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null",
					     "GIT_TERMINAL_PROMPT=0",
					     "GIT_SSH_COMMAND=ssh -o BatchMode=yes",
					     "GIT_PROTOCOL_FROM_USER=0", NULL };
	char **env = NULL;

	for (size_t i = 0; environ[i]; i++) {
		size_t n = strcspn(environ[i], "=");
		bool ok = environ[i][n] == '=' && strncmp(environ[i], "LC_", 3) == 0;

		for (size_t k = 0; !ok && keep[k]; k++)
			ok = strlen(keep[k]) == n && strncmp(environ[i], keep[k], n) == 0 &&
			     environ[i][n] == '=';
		if (ok && strv_push(&env, environ[i]) < 0)
			goto oom;
	}
	for (size_t k = 0; fixed[k]; k++)
		if (strv_push(&env, fixed[k]) < 0)
			goto oom;
	if (!getenv("PATH") && strv_push(&env, "PATH=/usr/bin:/bin") < 0)
		goto oom;
	return env;
oom:
	strv_free(env);
	return NULL;
}

/* git's settings on every command line of the host's: no hook, no
 * fsmonitor, and only the protocol proto. */
static int git_argv(char ***argv, const char *proto)
{
	char *allow = NULL;

	if (strv_push(argv, "git") < 0 || strv_push(argv, "-c") < 0 ||
	    strv_push(argv, "core.hooksPath=/dev/null") < 0 || strv_push(argv, "-c") < 0 ||
	    strv_push(argv, "core.fsmonitor=false") < 0 || strv_push(argv, "-c") < 0 ||
	    strv_push(argv, "protocol.allow=never") < 0 || strv_push(argv, "-c") < 0 ||
	    /* a transfer that stalls (under 1 KB/s for a minute) fails */
	    strv_push(argv, "http.lowSpeedLimit=1000") < 0 || strv_push(argv, "-c") < 0 ||
	    strv_push(argv, "http.lowSpeedTime=60") < 0 || strv_push(argv, "-c") < 0 ||
	    asprintf(&allow, "protocol.%s.allow=always", proto) < 0)
		return -1;
	return strv_push_take(argv, allow);
}

/* What git prints may quote what a sandbox wrote (a fetch's fsck names
 * a .gitmodules URL): it reaches stderr through the one escaper, so no
 * control byte of the sandbox's reaches the operator's terminal. */
static void pass_output(int fd)
{
	struct text_term st = { .n = 0 };
	char buf[4096];
	ssize_t n;

	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		text_term_write(stderr, &st, buf, (size_t)n, true);
	}
	text_term_end(stderr, &st);
	fflush(stderr);
}

/* Run argv (git, from PATH) in cwd with env; stdin is /dev/null, its
 * output goes to stderr (escaped). Its exit status, or -1 with *e set. */
static int run(char *const *argv, char *const *env, const char *cwd, struct err **e)
{
	posix_spawn_file_actions_t fa;
	int rc, status = 0, out[2];
	pid_t pid = -1;

	if (pipe2(out, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "git: a pipe");
	if (posix_spawn_file_actions_init(&fa) != 0) {
		close(out[0]);
		close(out[1]);
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	}
	rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, out[1], 1);
	if (rc == 0)
		rc = posix_spawn_file_actions_adddup2(&fa, out[1], 2);
	if (rc == 0 && cwd)
		rc = posix_spawn_file_actions_addchdir_np(&fa, cwd);
	if (rc == 0)
		rc = posix_spawnp(&pid, argv[0], &fa, NULL, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	close(out[1]);
	if (rc != 0) {
		close(out[0]);
		return err_set(e, ERR_UNAVAILABLE, rc, "`%s`", argv[0]);
	}
	pass_output(out[0]);
	close(out[0]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", argv[0]);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* git with the host's settings, then extra: 0 when it exits 0. */
static int git(char **env, const char *proto, const char *cwd, const char *what,
	       const char *const *extra, struct err **e)
{
	_cleanup_strv_ char **argv = NULL;
	int r;

	if (git_argv(&argv, proto) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	for (size_t i = 0; extra[i]; i++)
		if (strv_push(&argv, extra[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	r = run(argv, env, cwd, e);
	if (r < 0)
		return -1;
	if (r != 0)
		return err_set(e, ERR_UNAVAILABLE, 0, "git: %s failed (git exited %d)", what, r);
	return 0;
}

static int push_kv(char ***env, const char *k, const char *v)
{
	char *kv = NULL;

	return asprintf(&kv, "%s=%s", k, v) < 0 ? -1 : strv_push_take(env, kv);
}

/* Remove what a failed clone left; the workspace dir's parent stays. */
static void remove_workspace(const char *ws)
{
	const char *slash = strrchr(ws, '/');
	_cleanup_free_ char *parent = NULL;
	_cleanup_close_ int pfd = -1;

	if (!slash || slash == ws || !(parent = strndup(ws, (size_t)(slash - ws))))
		return;
	pfd = fs_open_nofollow(AT_FDCWD, parent, O_PATH | O_DIRECTORY, 0);
	if (pfd >= 0)
		(void)fs_remove_tree(pfd, slash + 1, 256);
}

static int clone_steps(const struct host_git_clone *c, const char *proto, char **env,
		       struct err **e)
{
	_cleanup_free_ char *work = NULL, *remote_key = NULL, *merge_key = NULL, *merge = NULL;
	_cleanup_free_ char *gitdir = fs_path_join(c->workspace, ".git");
	_cleanup_strv_ char **penv = NULL;
	_cleanup_close_ int gfd = -1;

	if (!gitdir || asprintf(&work, HOST_GIT_WORK_PREFIX "%s", c->job) < 0 ||
	    asprintf(&remote_key, "branch.%s.remote", work) < 0 ||
	    asprintf(&merge_key, "branch.%s.merge", work) < 0 ||
	    asprintf(&merge, "refs/heads/%s", work) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "clone");
	{
		/* --no-local: a local repository's objects are copied, never
		 * hard-linked (a hard link out of the workspace is refused,
		 * and would let the sandbox write the original's objects) */
		const char *argv[] = { "clone",	   "--quiet",	   "--template=",  "--no-local",
				       "--no-recurse-submodules", "--single-branch", "--branch",
				       c->branch,  "--",	   c->url,
				       c->workspace, NULL };

		if (git(env, proto, NULL, "the workspace's clone", argv, e) < 0)
			return -1;
	}
	/* From here on git takes the repository from where it was made,
	 * whatever a file in it says. */
	penv = strv_dup(env);
	if (!penv || push_kv(&penv, "GIT_DIR", gitdir) < 0 ||
	    push_kv(&penv, "GIT_COMMON_DIR", gitdir) < 0 ||
	    push_kv(&penv, "GIT_WORK_TREE", c->workspace) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "clone");
	{
		const char *checkout[] = { "checkout", "--quiet", "-b", work, NULL };
		const char *drop[] = { "branch", "--quiet", "-D", "--", c->branch, NULL };
		/* a push from inside cannot write the config: the work
		 * branch's upstream is recorded now, and git push (its
		 * default, "simple") pushes it there */
		const char *remote[] = { "config", remote_key, "origin", NULL };
		const char *upstream[] = { "config", merge_key, merge, NULL };
		const char *simple[] = { "config", "push.default", "simple", NULL };

		if (git(penv, proto, c->workspace, "the work branch", checkout, e) < 0 ||
		    git(penv, proto, c->workspace, "the work branch", drop, e) < 0 ||
		    git(penv, proto, c->workspace, "the work branch's upstream", remote, e) < 0 ||
		    git(penv, proto, c->workspace, "the work branch's upstream", upstream, e) < 0 ||
		    git(penv, proto, c->workspace, "the push default", simple, e) < 0)
			return -1;
	}
	/* hooks/ and info/ exist, empty, so that a sandbox holds them
	 * read-only like the config */
	gfd = fs_open_nofollow(AT_FDCWD, gitdir, O_PATH | O_DIRECTORY, 0);
	if (gfd < 0 || (mkdirat(gfd, "hooks", 0755) < 0 && errno != EEXIST) ||
	    (mkdirat(gfd, "info", 0755) < 0 && errno != EEXIST))
		return err_set(e, ERR_UNAVAILABLE, errno, "clone: `%s`", gitdir);
	if (c->setup) {
		int r = run(c->setup, c->setup_env, c->workspace, e);

		if (r < 0)
			return -1;
		if (r != 0)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "the workspace's setup command failed (it exited %d)", r);
	}
	return 0;
}

int host_git_clone(const struct host_git_clone *c, struct err **e)
{
	const char *proto = host_git_url_protocol(c->url);
	_cleanup_strv_ char **env = NULL;
	struct stat st;
	int r;

	if (!proto)
		return err_set(e, ERR_CONFIG, 0, "git: the workspace's URL is not one cordon clones");
	if (!host_git_branch_ok(c->branch) || !host_git_branch_ok(c->job))
		return err_set(e, ERR_CONFIG, 0, "git: the branch `%s` is not a branch name cordon takes",
			       c->branch);
	if (lstat(c->workspace, &st) == 0 || errno != ENOENT)
		return err_set(e, ERR_UNAVAILABLE, errno ? errno : EEXIST,
			       "git: the workspace `%s` is there already", c->workspace);
	env = git_env();
	if (!env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	if (c->helper) {
		/* git's credential: asked of the job's toolbelt, on the host
		 * (the socket beside the token, whatever proxy is set) */
		_cleanup_free_ char *h = NULL;

		if (strchr(c->helper, '\'') || c->helper[0] != '/' || !c->toolbelt_token)
			return err_set(e, ERR_CONFIG, 0, "git: the credential helper's path");
		if (asprintf(&h, "!'%s' tb git-credential", c->helper) < 0 ||
		    push_kv(&env, "CORDON_TOOLBELT", c->toolbelt_token) < 0 ||
		    strv_push(&env, "CORDON_TOOLBELT_DIRECT=1") < 0 ||
		    strv_push(&env, "GIT_CONFIG_COUNT=2") < 0 ||
		    strv_push(&env, "GIT_CONFIG_KEY_0=credential.helper") < 0 ||
		    push_kv(&env, "GIT_CONFIG_VALUE_0", h) < 0 ||
		    strv_push(&env, "GIT_CONFIG_KEY_1=credential.useHttpPath") < 0 ||
		    strv_push(&env, "GIT_CONFIG_VALUE_1=true") < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	}
	r = clone_steps(c, proto, env, e);
	if (r < 0)
		remove_workspace(c->workspace);
	return r;
}

bool host_git_is_clone(const char *workspace)
{
	_cleanup_close_ int wfd = fs_open_nofollow(AT_FDCWD, workspace, O_PATH | O_DIRECTORY, 0);
	struct stat st;

	return wfd >= 0 && fstatat(wfd, ".git", &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	       S_ISDIR(st.st_mode);
}

/* The fetch reads refs and objects: through a link anywhere beneath them
 * (refs/heads/cordon/<job>, an objects fan-out directory) or in .git
 * itself, the host's git would read wherever it leads, as the operator. */
#define FETCH_LINKS_DEPTH_MAX 24
#define FETCH_LINKS_ENTRIES_MAX ((size_t)1 << 20)

static int fetch_link_seen(const char *rel, unsigned char type, void *arg)
{
	if (type == DT_DIR)
		return !strchr(rel, '/') && strcmp(rel, "refs") != 0 && strcmp(rel, "objects") != 0;
	snprintf(arg, PATH_MAX, "%s", rel);
	return -2;
}

static int no_links(int gfd, const char *gitdir, struct err **e)
{
	_cleanup_close_ int fd = openat(gfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char link[PATH_MAX] = "";
	int r;

	if (fd < 0)
		return err_set(e, ERR_DENIED, errno, "fetch: `%s`", gitdir);
	r = fs_find_links(fd, FETCH_LINKS_DEPTH_MAX, FETCH_LINKS_ENTRIES_MAX, fetch_link_seen,
			  link);
	if (r == -2)
		return err_set(e, ERR_DENIED, 0,
			       "fetch: `%s/%s` is a symbolic link: the repository is not the one "
			       "cordon made", gitdir, link);
	if (r < 0 && errno == E2BIG)
		return err_set(e, ERR_DENIED, 0,
			       "fetch: `%s` has too many entries or levels to check for symbolic links",
			       gitdir);
	if (r < 0)
		return err_set(e, ERR_DENIED, errno, "fetch: read `%s`", gitdir);
	return 0;
}

int host_git_fetch(const char *workspace, const char *job, const char *into, struct err **e)
{
	/* .git: git given a path tries <path>/.git before the path itself;
	 * commondir, alternates: config, hooks or objects from elsewhere */
	static const char *const elsewhere[] = { ".git", "commondir", "objects/info/alternates",
						 "objects/info/http-alternates", NULL };
	_cleanup_free_ char *gitdir = fs_path_join(workspace, ".git"), *spec = NULL;
	_cleanup_strv_ char **env = NULL;
	_cleanup_close_ int gfd = -1;
	struct stat st;

	if (!gitdir)
		return err_set(e, ERR_INTERNAL, ENOMEM, "fetch");
	if (!host_git_branch_ok(job))
		return err_set(e, ERR_CONFIG, 0, "fetch: not a job id");
	if (!host_git_is_clone(workspace))
		return err_set(e, ERR_CONFIG, 0,
			       "fetch: the job's workspace `%s` is not a clone (no .git directory)",
			       workspace);
	/* a repository that takes its config, refs or objects from
	 * elsewhere is not the one the host made (the look after each run
	 * moves these out; one it could not move is still refused here) */
	gfd = fs_open_nofollow(AT_FDCWD, gitdir, O_PATH | O_DIRECTORY, 0);
	if (gfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "fetch: `%s`", gitdir);
	for (size_t i = 0; elsewhere[i]; i++)
		if (fstatat(gfd, elsewhere[i], &st, AT_SYMLINK_NOFOLLOW) == 0 || errno != ENOENT)
			return err_set(e, ERR_DENIED, 0,
				       "fetch: `%s/%s` is there: the repository is not the one "
				       "cordon made", gitdir, elsewhere[i]);
	if (no_links(gfd, gitdir, e) < 0)
		return -1;
	env = git_env();
	if (!env || asprintf(&spec, "+refs/heads/" HOST_GIT_WORK_PREFIX "%s:refs/heads/"
				    HOST_GIT_WORK_PREFIX "%s", job, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "fetch");
	{
		/* objects checked as they come; that one ref, nothing else */
		/* upload-pack --strict: the path given is the repository, never
		 * <path>/.git or <path>.git */
		const char *argv[] = { "-c", "transfer.fsckObjects=true", "fetch", "--quiet",
				       "--no-tags", "--no-recurse-submodules",
				       "--no-write-fetch-head", "--upload-pack=git-upload-pack --strict",
				       "--", gitdir, spec, NULL };

		if (git(env, "file", into, "the fetch of the job's work branch", argv, e) < 0)
			return -1;
	}
	return 0;
}
