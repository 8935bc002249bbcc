/* planted_walk.c: the walk of a workspace after a run, for the git
 * repositories a host-side git would use there (a .git directory or
 * file, or a bare repository, which git finds by itself when a person
 * works in it) and for what in them runs a program: config keys
 * (lib/gitconfig) and hooks. A repository counts as left by the command
 * when its .git, its config or hooks, or a directory on the way to it
 * was changed during the run (a rename changes the moved directory, so a
 * repository moved in from elsewhere counts too). Symbolic links are
 * never followed: one where git would follow it is itself a finding.
 * Each directory costs an open, a stat and its reading; files are only
 * looked at by the type their directory gives. */
#include "guard/planted_int.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/gitconfig.h"

#include "guard/planted.h"

#include <dirent.h>
#include <stdint.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define CONFIG_MAX ((size_t)1 << 20)
#define LINK_FILE_MAX 4096

/* githooks(5): the names git runs from a hooks directory. */
static const char *const hook_names[] = {
	"applypatch-msg", "pre-applypatch", "post-applypatch", "pre-commit",
	"pre-merge-commit", "prepare-commit-msg", "commit-msg", "post-commit",
	"pre-rebase", "post-checkout", "post-merge", "pre-push", "pre-receive",
	"update", "proc-receive", "post-receive", "post-update",
	"reference-transaction", "push-to-checkout", "pre-auto-gc", "post-rewrite",
	"sendemail-validate", "fsmonitor-watchman", "p4-changelist",
	"p4-prepare-changelist", "p4-post-changelist", "p4-pre-submit",
	"post-index-change",
};

struct walker {
	int ws_fd;
	const char *ws;
	const struct timespec *since;
	struct findings *out;
	struct walk_stats *st;
	bool stop;
	char path[PATH_MAX];	/* of the directory being read, "" at the top */
	size_t plen;
	/* The open directories from the top down, and whether each changed
	 * during the run (0 not yet known, 1 yes, -1 no). */
	int anc[PLANTED_DEPTH_MAX + 1];
	signed char anc_fresh[PLANTED_DEPTH_MAX + 1];
	/* Subdirectory names of the directories being walked, a stack. */
	char *arena;
	size_t alen, acap;
	char dents[32768];
};

int planted_open_beneath(int dirfd, const char *rel, int flags)
{
	/* No O_NOFOLLOW: with O_PATH it would open a link itself; without
	 * it, a link anywhere on the way, the last name too, is ELOOP. */
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dirfd, rel, &how, sizeof(how));
}

int planted_join(char *out, size_t n, const char *rel, const char *name)
{
	int w;

	if (strcmp(rel, ".") == 0 || !rel[0])
		w = snprintf(out, n, "%s", name);
	else
		w = snprintf(out, n, "%s/%s", rel, name);
	return w < 0 || (size_t)w >= n ? -1 : 0;
}

static void add_at(struct walker *w, const char *rel, const char *name, const char *key)
{
	char p[PATH_MAX];

	planted_join(p, sizeof(p), rel, name);
	planted_add(w->out, p, key, NULL);
}

/* A path written in a gitfile or commondir (relative to the directory
 * rel), made relative to the workspace and lexically normal in out; -1
 * when it leads out of the workspace. */
static int resolve_rel(const struct walker *w, const char *rel, const char *target,
		       char *out, size_t n)
{
	char buf[PATH_MAX * 2];
	size_t wl = strlen(w->ws), len = 0;
	char *save = NULL;

	if (target[0] == '/') {
		if (strncmp(target, w->ws, wl) != 0 || (target[wl] != '/' && target[wl] != '\0'))
			return -1;
		snprintf(buf, sizeof(buf), "%s", target + wl);
	} else {
		snprintf(buf, sizeof(buf), "%s/%s", rel, target);
	}
	out[0] = '\0';
	for (char *c = strtok_r(buf, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		if (strcmp(c, ".") == 0)
			continue;
		if (strcmp(c, "..") == 0) {
			char *slash;
			if (len == 0)
				return -1;
			slash = strrchr(out, '/');
			len = slash ? (size_t)(slash - out) : 0;
			out[len] = '\0';
			continue;
		}
		if (len + strlen(c) + 2 > n)
			return -1;
		len += (size_t)sprintf(out + len, "%s%s", len ? "/" : "", c);
	}
	if (len == 0)
		snprintf(out, n, ".");
	return 0;
}

/* The first line of a small file git reads a path from, trailing
 * whitespace gone. */
static int read_link_file(int dfd, const char *name, char *buf, size_t n)
{
	_cleanup_close_ int fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	ssize_t r;

	if (fd < 0)
		return -1;
	r = read(fd, buf, n - 1);
	if (r <= 0)
		return -1;
	buf[r] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	for (size_t l = strlen(buf); l > 0 && (buf[l - 1] == '\r' || buf[l - 1] == ' ' ||
					       buf[l - 1] == '\t'); l--)
		buf[l - 1] = '\0';
	return 0;
}

struct config_ctx {
	struct walker *w;
	const char *path;
};

static int config_key(const char *key, const char *value, void *ctx)
{
	struct config_ctx *c = ctx;

	if (gitconfig_key_runs(key, value))
		planted_add(c->w->out, c->path, key, NULL);
	return 0;
}

/* A config file git would read: its keys that run something. Not read
 * at all when neither it nor the repository changed. */
static void check_config(struct walker *w, int dfd, const char *rel, const char *name,
			 bool fresh)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	char path[PATH_MAX];
	struct config_ctx c = { w, path };
	_cleanup_err_ struct err *ignored = NULL;
	struct stat st;
	size_t len = 0;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	fresh |= planted_newer(&st, w->since);
	planted_join(path, sizeof(path), rel, name);
	if (!fresh)
		return;
	if (S_ISLNK(st.st_mode)) {
		planted_add(w->out, path, "symbolic link", NULL);
		return;
	}
	if (!S_ISREG(st.st_mode))
		return;
	if ((unsigned long long)st.st_size > CONFIG_MAX) {
		planted_add(w->out, path, "too large to look at", NULL);
		return;
	}
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fs_read_fd(fd, path, CONFIG_MAX, &buf, &len, &ignored) < 0) {
		planted_add(w->out, path, "unreadable", NULL);
		return;
	}
	/* A file git refuses makes git stop before it runs anything; the
	 * keys before the fault are reported all the same. */
	gitconfig_parse(buf, len, config_key, &c, NULL);
}

static bool is_hook_name(const char *name)
{
	for (size_t i = 0; i < sizeof(hook_names) / sizeof(*hook_names); i++)
		if (strcmp(name, hook_names[i]) == 0)
			return true;
	return false;
}

/* The hooks git would run: known names, executable or links. */
static void check_hooks(struct walker *w, int cfd, const char *crel, bool fresh)
{
	char rel[PATH_MAX];
	struct stat st;
	struct dirent *d;
	DIR *dir;
	int hfd;

	if (fstatat(cfd, "hooks", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	fresh |= planted_newer(&st, w->since);
	planted_join(rel, sizeof(rel), crel, "hooks");
	if (S_ISLNK(st.st_mode)) {
		if (fresh)
			planted_add(w->out, rel, "symbolic link", NULL);
		return;
	}
	hfd = openat(cfd, "hooks", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (hfd < 0)
		return;
	if (!(dir = fdopendir(hfd))) {
		close(hfd);
		return;
	}
	while ((d = readdir(dir))) {
		struct stat hs;

		if (!is_hook_name(d->d_name) ||
		    fstatat(dirfd(dir), d->d_name, &hs, AT_SYMLINK_NOFOLLOW) < 0)
			continue;
		if (!fresh && !planted_newer(&hs, w->since))
			continue;
		if (S_ISLNK(hs.st_mode) || (S_ISREG(hs.st_mode) && (hs.st_mode & 0111)))
			add_at(w, rel, d->d_name, "hook");
	}
	closedir(dir);
}

/* A directory that may be somewhere else, named in a file git reads
 * (gitfile, commondir): opened beneath the workspace, or reported. */
static int open_named(struct walker *w, int dfd, const char *rel, const char *name,
		      const char *what, bool fresh, char *orel, size_t n)
{
	char target[LINK_FILE_MAX], at[PATH_MAX];
	int fd;

	planted_join(at, sizeof(at), rel, name);
	if (read_link_file(dfd, name, target, sizeof(target)) < 0)
		return -1; /* git stops at a file it cannot read */
	if (strcmp(what, "gitdir") == 0) {
		if (strncmp(target, "gitdir: ", 8) != 0)
			return -1;
		memmove(target, target + 8, strlen(target + 8) + 1);
	}
	if (!target[0])
		return -1;
	/* Relative to the directory holding the file. */
	if (resolve_rel(w, rel, target, orel, n) < 0) {
		if (fresh)
			planted_add(w->out, at, strcmp(what, "gitdir") == 0
						? "gitdir outside the workspace"
						: "commondir outside the workspace", NULL);
		return -1;
	}
	fd = planted_open_beneath(w->ws_fd, orel, O_RDONLY | O_DIRECTORY);
	if (fd < 0 && errno == ELOOP && fresh)
		planted_add(w->out, at, "leads through a symbolic link", NULL);
	return fd;
}

/* Names in a git directory that make git take a repository or objects
 * from elsewhere (planted.c says which): named when new. */
static void check_elsewhere(struct walker *w, int gfd, const char *rel, bool fresh)
{
	static const struct {
		const char *name, *key;
	} names[] = {
		{ ".git", "a repository git takes first when given this git directory's path" },
		{ "objects/info/alternates", "objects taken from elsewhere" },
		{ "objects/info/http-alternates", "objects taken from elsewhere" },
	};
	struct stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (fstatat(gfd, names[i].name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
		    (fresh || planted_newer(&st, w->since)))
			add_at(w, rel, names[i].name, names[i].key);
}

/* A symbolic link made in a git directory is one the operator's git
 * would write through (a reflog, FETCH_HEAD, a fan-out directory of
 * objects): each one newer than the launch is named. Bounded as the
 * guarded .git's walk is, but per repository. */
#define NESTED_LINKS_DEPTH 24
#define NESTED_LINKS_ENTRIES ((size_t)1 << 18)
#define NESTED_LINKS_NAMED 64

struct nested_links {
	struct walker *w;
	int gfd;
	const char *rel;
	size_t named;
};

static int nested_link_seen(const char *lrel, unsigned char type, void *arg)
{
	struct nested_links *nl = arg;
	struct stat st;

	if (type == DT_DIR)
		return 0;
	if (fstatat(nl->gfd, lrel, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(st.st_mode) &&
	    planted_newer(&st, nl->w->since)) {
		if (++nl->named > NESTED_LINKS_NAMED)
			return errno = E2BIG, -1;
		add_at(nl->w, nl->rel, lrel,
		       "symbolic link (the operator's git would write through it)");
	}
	return 0;
}

static void check_links(struct walker *w, int gfd, const char *rel)
{
	struct nested_links nl = { .w = w, .gfd = gfd, .rel = rel };

	if (fs_find_links(gfd, NESTED_LINKS_DEPTH, NESTED_LINKS_ENTRIES, nested_link_seen, &nl) < 0)
		planted_add(w->out, rel,
			    errno == E2BIG ? "not looked at whole for symbolic links: too many "
					     "entries, links or levels"
					   : "not looked at whole for symbolic links: it cannot be read",
			    NULL);
}

/* A git directory: its common directory's config and hooks, its own
 * config.worktree, what leads elsewhere, the links made in it. */
static void check_gitdir(struct walker *w, int gfd, const char *rel, bool fresh)
{
	_cleanup_close_ int cfd = -1;
	char crel[PATH_MAX];
	struct stat st;

	if (fstat(gfd, &st) == 0)
		fresh |= planted_newer(&st, w->since);
	if (fstatat(gfd, "commondir", &st, AT_SYMLINK_NOFOLLOW) == 0) {
		fresh |= planted_newer(&st, w->since);
		if (S_ISLNK(st.st_mode)) {
			if (fresh)
				add_at(w, rel, "commondir", "symbolic link");
			return;
		}
		cfd = open_named(w, gfd, rel, "commondir", "commondir", fresh, crel, sizeof(crel));
		if (cfd < 0)
			return;
	} else {
		snprintf(crel, sizeof(crel), "%s", rel);
	}
	check_config(w, cfd >= 0 ? cfd : gfd, crel, "config", fresh);
	check_config(w, gfd, rel, "config.worktree", fresh);
	check_hooks(w, cfd >= 0 ? cfd : gfd, crel, fresh);
	check_elsewhere(w, gfd, rel, fresh);
	check_links(w, gfd, rel);
}

/* The .git in the directory being read (dfd, w->path). */
static void check_repo(struct walker *w, int dfd, bool fresh)
{
	_cleanup_close_ int gfd = -1;
	char rel[PATH_MAX], grel[PATH_MAX];
	struct stat st;

	if (fstatat(dfd, ".git", &st, AT_SYMLINK_NOFOLLOW) < 0)
		return;
	fresh |= planted_newer(&st, w->since);
	planted_join(rel, sizeof(rel), w->path, ".git");
	if (S_ISLNK(st.st_mode)) {
		if (fresh)
			planted_add(w->out, rel, "symbolic link", NULL);
	} else if (S_ISDIR(st.st_mode)) {
		gfd = openat(dfd, ".git", O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (gfd >= 0)
			check_gitdir(w, gfd, rel, fresh);
	} else if (S_ISREG(st.st_mode)) {
		gfd = open_named(w, dfd, w->plen ? w->path : ".", ".git", "gitdir", fresh, grel,
				 sizeof(grel));
		if (gfd >= 0)
			check_gitdir(w, gfd, grel, fresh);
	}
}

/* What one directory holds, from its entries' names and types; its
 * subdirectories' names go on the walker's arena. */
struct dir_scan {
	size_t from;		/* where its names start on the arena */
	bool git, head, objects, refs, commondir;
};

static int arena_push(struct walker *w, const char *name)
{
	size_t l = strlen(name) + 1;

	if (w->alen + l > w->acap) {
		size_t cap = w->acap ? w->acap * 2 : 65536;
		char *n;
		while (cap < w->alen + l)
			cap *= 2;
		n = realloc(w->arena, cap);
		if (!n)
			return -1;
		w->arena = n;
		w->acap = cap;
	}
	memcpy(w->arena + w->alen, name, l);
	w->alen += l;
	return 0;
}

struct linux_dirent64 {
	ino_t d_ino;
	off_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* One directory's entries, read with getdents64 (a DIR would cost two
 * more calls per directory, and directories are most of the cost). */
static int scan_dir(struct walker *w, int dfd, struct dir_scan *s)
{
	for (;;) {
		long n = syscall(SYS_getdents64, dfd, w->dents, sizeof(w->dents));

		if (n < 0)
			return -1;
		if (n == 0)
			return 0;
		for (long off = 0; off < n;) {
			const struct linux_dirent64 *d = (const void *)(w->dents + off);
			unsigned char type = d->d_type;
			const char *name = d->d_name;

			off += d->d_reclen;
			if (name[0] == '.' && (!name[1] || (name[1] == '.' && !name[2])))
				continue;
			if (++w->st->entries > PLANTED_WALK_MAX) {
				w->stop = true;
				return -1;
			}
			if (type == DT_UNKNOWN) {
				struct stat st;
				type = fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0 ? DT_UNKNOWN
				       : S_ISDIR(st.st_mode) ? DT_DIR
				       : S_ISREG(st.st_mode) ? DT_REG
				       : S_ISLNK(st.st_mode) ? DT_LNK : DT_UNKNOWN;
			}
			if (strcmp(name, ".git") == 0) {
				s->git = true;
				continue; /* never walked: looked at as a repository */
			}
			s->head |= strcmp(name, "HEAD") == 0 && (type == DT_REG || type == DT_LNK);
			s->objects |= strcmp(name, "objects") == 0 && type == DT_DIR;
			s->refs |= strcmp(name, "refs") == 0 && type == DT_DIR;
			s->commondir |= strcmp(name, "commondir") == 0 && type == DT_REG;
			if (type == DT_DIR && arena_push(w, name) < 0)
				return -1;
		}
	}
}

static void stop_at(struct walker *w)
{
	char p[PATH_MAX + 64];

	if (w->st->stopped)
		return;
	snprintf(p, sizeof(p), "%s", w->plen ? w->path : ".");
	w->st->stopped = strdup(p);
	w->st->complete = false;
}

/* Did any directory from the top's child down to depth change during the
 * run? Asked only where a repository is found: each directory's change
 * time is read then, once, through the descriptor the walk holds. */
static bool chain_fresh(struct walker *w, size_t depth)
{
	for (size_t l = 1; l <= depth; l++) {
		if (w->anc_fresh[l] == 0) {
			struct stat st;
			w->anc_fresh[l] = fstat(w->anc[l], &st) == 0 && planted_newer(&st, w->since)
						  ? 1 : -1;
		}
		if (w->anc_fresh[l] > 0)
			return true;
	}
	return false;
}

/* Walk the directory open at fd (taken, and closed). */
static void walk_dir(struct walker *w, int fd, size_t depth, bool skip_git)
{
	struct dir_scan s = { .from = w->alen };

	w->anc[depth] = fd;
	w->anc_fresh[depth] = 0;
	w->st->dirs++;
	if (scan_dir(w, fd, &s) < 0) {
		if (w->stop)
			stop_at(w);
		goto out;
	}
	if (s.git && !skip_git)
		check_repo(w, fd, chain_fresh(w, depth));
	/* A bare repository (or a linked worktree's git directory): git
	 * takes it for one when a person works in it or beneath it. */
	if (s.head && ((s.objects && s.refs) || s.commondir)) {
		check_gitdir(w, fd, w->plen ? w->path : ".", chain_fresh(w, depth));
		goto out;
	}
	for (size_t off = s.from; off < w->alen && !w->stop;) {
		size_t saved = w->plen, nl = strlen(w->arena + off);
		int sub;

		if (depth + 1 > PLANTED_DEPTH_MAX || saved + nl + 2 > sizeof(w->path)) {
			stop_at(w);
			off += nl + 1;
			continue;
		}
		sub = openat(fd, w->arena + off, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (sub >= 0) {
			w->plen += (size_t)sprintf(w->path + saved, "%s%s", saved ? "/" : "",
						   w->arena + off);
			walk_dir(w, sub, depth + 1, false);
			w->plen = saved;
			w->path[saved] = '\0';
		}
		off += nl + 1;
	}
out:
	w->alen = s.from;
	close(fd);
}

int planted_walk(int ws_fd, const char *ws, bool skip_top, const struct timespec *since,
		 struct findings *out, struct walk_stats *stats)
{
	struct walker *w = calloc(1, sizeof(*w));
	/* Its own open directory: the walk reads it. */
	int fd = openat(ws_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	stats->complete = true;
	if (!w || fd < 0) {
		int saved = w ? errno : ENOMEM;
		if (fd >= 0)
			close(fd);
		free(w);
		errno = saved;
		return -1;
	}
	*w = (struct walker){ .ws_fd = ws_fd, .ws = ws, .since = since, .out = out, .st = stats };
	walk_dir(w, fd, 0, skip_top);
	if (w->stop)
		stop_at(w);
	free(w->arena);
	free(w);
	return 0;
}
