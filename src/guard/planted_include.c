/* planted_include.c: the files a guarded git config includes
 * (include.path, includeIf.<cond>.path, in git-config(1) "Includes") that
 * lie in the workspace. git reads them as part of the config, so they are
 * held read-only with it: a run that could write one (a work-tree
 * `.gitconfig` shared through `include.path = ../.gitconfig`) would set
 * core.fsmonitor or any other key that runs a program for the operator's
 * next git command. Every condition counts (what holds at launch may not
 * hold later); the included files' own includes too, as deep as git goes.
 * One in the workspace that is missing, or reached through a symbolic
 * link, refuses the launch: it cannot be held in place. One outside the
 * workspace (`~/...`, an absolute path, `..` out of it) is left to the
 * policy that grants or denies writing there. */
#include "guard/planted_int.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/gitconfig.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* git's own limit on nested includes (config.c MAX_INCLUDE_DEPTH) */
#define INCLUDE_DEPTH_MAX 10
#define INCLUDE_CONFIG_MAX ((size_t)1 << 20)
#define INCLUDES_MAX 256

struct inc_ctx {
	char **paths;
	size_t n;
	bool full;
};

static int inc_key(const char *key, const char *value, void *arg)
{
	struct inc_ctx *c = arg;
	size_t kl = strlen(key);
	bool inc = strcmp(key, "include.path") == 0 ||
		   (strncmp(key, "includeif.", 10) == 0 && kl > 15 &&
		    strcmp(key + kl - 5, ".path") == 0);

	if (!inc || !value || !*value)
		return 0;
	if (++c->n > INCLUDES_MAX || strv_push(&c->paths, value) < 0) {
		c->full = true;
		return 1;
	}
	return 0;
}

/* The part of an absolute include path beneath the workspace, or NULL
 * when it leads elsewhere: spelled in the workspace as given or as the
 * kernel names it, or leading there through a link outside it (where
 * the link's target, as it is now, is what is held). */
static const char *in_workspace(int ws_fd, const char *ws, const char *v)
{
	static char wsc[PATH_MAX], real[PATH_MAX];
	char proc[64];
	ssize_t n;

	if (fs_path_within(v, ws))
		return v[strlen(ws)] ? v + strlen(ws) + 1 : NULL;
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", ws_fd);
	n = readlink(proc, wsc, sizeof(wsc) - 1);
	if (n <= 0 || (size_t)n >= sizeof(wsc) - 1)
		return NULL;
	wsc[n] = '\0';
	if (fs_path_within(v, wsc))
		return v[n] ? v + n + 1 : NULL;
	if (!realpath(v, real) || !fs_path_within(real, wsc) || !real[n])
		return NULL;
	return real + n + 1;
}

static int included(int ws_fd, const char *ws, const char *cfgrel, const char *v, char ***ro,
		    size_t depth, struct err **e);

/* The includes of the config at cfgrel (beneath ws_fd, without a link). */
static int includes_of(int ws_fd, const char *ws, const char *cfgrel, char ***ro, size_t depth,
		       struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_strv_ char **paths = NULL;
	struct inc_ctx c = { 0 };
	size_t len = 0;
	int fd = planted_open_beneath(ws_fd, cfgrel, O_RDONLY | O_NONBLOCK);
	struct stat st;

	if (fd < 0) /* held where it is; not a file git reads more from */
		return 0;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	if (fs_read_fd(fd, cfgrel, INCLUDE_CONFIG_MAX, &buf, &len, e) < 0) {
		close(fd);
		return -1;
	}
	close(fd);
	(void)gitconfig_parse(buf, len, inc_key, &c, NULL);
	paths = c.paths;
	if (c.full)
		return err_set(e, ERR_DENIED, 0, "`%s/%s` includes more than %d files", ws, cfgrel,
			       INCLUDES_MAX);
	for (size_t i = 0; paths && paths[i]; i++)
		if (included(ws_fd, ws, cfgrel, paths[i], ro, depth, e) < 0)
			return -1;
	return 0;
}

static int included(int ws_fd, const char *ws, const char *cfgrel, const char *v, char ***ro,
		    size_t depth, struct err **e)
{
	char rel[PATH_MAX], abs[PATH_MAX], proc[64];
	const char *slash = strrchr(cfgrel, '/');
	_cleanup_close_ int fd = -1;
	ssize_t n;

	/* ~/ and %(prefix)/: the operator's home or git's own, not the
	 * workspace's; an absolute path is looked at only in it */
	if (v[0] == '~' || strncmp(v, "%(prefix)/", 10) == 0)
		return 0;
	if (v[0] == '/') {
		const char *in = in_workspace(ws_fd, ws, v);

		if (!in)
			return 0;
		if (snprintf(rel, sizeof(rel), "%s", in) >= (int)sizeof(rel))
			return err_set(e, ERR_DENIED, 0, "`%s/%s`: an include path too long", ws,
				       cfgrel);
	} else if (snprintf(rel, sizeof(rel), "%.*s%s%s", slash ? (int)(slash - cfgrel) : 0, cfgrel,
			    slash ? "/" : "", v) >= (int)sizeof(rel)) {
		return err_set(e, ERR_DENIED, 0, "`%s/%s`: an include path too long", ws, cfgrel);
	}
	fd = planted_open_beneath(ws_fd, rel, O_PATH);
	if (fd < 0 && errno == EXDEV) /* out of the workspace */
		return 0;
	if (fd < 0 && errno == ELOOP)
		return err_set(e, ERR_DENIED, 0,
			       "`%s/%s` includes `%s`, reached through a symbolic link; it must be "
			       "read-only in place", ws, cfgrel, v);
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR))
		return err_set(e, ERR_DENIED, 0,
			       "`%s/%s` includes `%s`, which is not there: the command could make it; "
			       "make it or remove the include", ws, cfgrel, v);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s/%s`: the include `%s`", ws, cfgrel,
			       v);
	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
	n = readlink(proc, abs, sizeof(abs) - 1);
	if (n <= 0 || (size_t)n >= sizeof(abs) - 1)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s/%s`: the include `%s`", ws, cfgrel,
			       v);
	abs[n] = '\0';
	if (!strv_contains(*ro, abs) && strv_push(ro, abs) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	if (depth + 1 >= INCLUDE_DEPTH_MAX)
		return 0;
	return includes_of(ws_fd, ws, rel, ro, depth + 1, e);
}

int planted_includes(int ws_fd, const char *ws, const char *cfgrel, char ***ro, struct err **e)
{
	return includes_of(ws_fd, ws, cfgrel, ro, 0, e);
}
