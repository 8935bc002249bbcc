/* planted.c: the workspace's git metadata that git reads for settings and
 * programs (held read-only through the guard), the look before a launch,
 * and after it the move of what the run made appear there, the report and
 * its record (planted.h). The walk for other repositories is in
 * planted_walk.c.
 *
 * Which names matter, from gitrepository-layout(5), git-worktree(1),
 * gitsubmodules(7) and git-rebase(1), each tried with git itself:
 *   config, hooks          settings and programs (git-config(1), githooks(5))
 *   config.worktree        more settings once extensions.worktreeConfig is
 *                          set (git sparse-checkout sets it)
 *   commondir              git takes config, hooks and objects from where it
 *                          points; an empty file or a directory there stops
 *                          every git command, so a missing one cannot be
 *                          masked: it is moved out after the run instead
 *   worktrees/<id>         a linked worktree's git dir (its own commondir)
 *   modules/<name>         a submodule's repository, which `git submodule
 *                          update` takes as it finds it, config and hooks
 *   rebase-merge, rebase-apply, sequencer
 *                          an unfinished rebase, am, cherry-pick or revert:
 *                          `--continue` runs its todo's `exec` lines and
 *                          the merge strategy its options name
 *   info                   excludes and attributes (no program, but kept
 *                          read-only as before)
 *   .git                   a repository (or a gitdir file) inside the git
 *                          dir: git given the git dir's path (a fetch or
 *                          push to <ws>/.git, `git -C <ws>/.git`) tries
 *                          <path>/.git first, and takes its config, hooks
 *                          and refs instead
 *   objects/info/alternates, objects/info/http-alternates
 *                          object stores git reads from elsewhere (a fetch
 *                          from the workspace would serve their objects)
 * Not moved: remotes/ and branches/ (where a fetch or push goes, not what
 * runs), shallow (which commits are left out, not where they are). */
#include "guard/planted.h"
#include "guard/planted_int.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define MODULES_DEPTH_MAX 8
#define MODULES_ENTRIES_MAX 4096

/* Read-only where they exist, in every git dir of the workspace's. */
static const char *const git_ro[] = {
	"config", "config.worktree", "hooks", "info", "commondir", "worktrees",
	"rebase-merge", "rebase-apply", "sequencer", ".git", "objects/info/alternates",
	"objects/info/http-alternates",
};
/* Moved out when the run made them appear or changed them. */
static const char *const git_watch[] = {
	"config", "config.worktree", "hooks", "commondir", "worktrees",
	"rebase-merge", "rebase-apply", "sequencer", ".git", "objects/info/alternates",
	"objects/info/http-alternates",
};

/* A symbolic link anywhere in a guarded git dir sends the operator's git
 * to read or write wherever it leads, as the operator: refs and objects
 * (another repository's), and the files git writes through on an
 * ordinary command (FETCH_HEAD, COMMIT_EDITMSG, ORIG_HEAD, logs/HEAD and
 * logs/refs/..., whose reflog lines carry branch names the run chose).
 * git makes none there in normal use, but an old-style HEAD (and its
 * peers below, which a setup sharing a store may link) can be a link the
 * operator made: one of these that was there at launch, the same object,
 * is left. Every other link is moved out (the walk in undo_links). */
static const char *const git_links[] = {
	"objects", "objects/info", "objects/pack", "refs", "refs/heads", "refs/tags",
	"packed-refs", "HEAD", "index", "logs",
};
/* The walk of a git dir for links: how deep and how many entries (loose
 * objects are 256 directories of files; packs a few files each). Beyond,
 * the git dir is named as not looked at whole. */
#define LINKS_DEPTH_MAX 24
#define LINKS_ENTRIES_MAX ((size_t)1 << 20)
#define LINKS_MOVES_MAX 4096

/* Moved out when the run made them appear: an rr-cache turns rerere on,
 * and the resolutions in it are replayed into the operator's next merge. */
static const char *const git_new[] = { "rr-cache" };

/* Files a person's tools run commands from when the workspace is opened
 * (or a session resumed) in it, with what runs them. */
static const struct {
	const char *path, *key;
} agent_files[] = {
	/* Claude Code: hooks, apiKeyHelper, statusLine, and MCP servers */
	{ ".claude/settings.json", "Claude Code settings (hooks, helpers)" },
	{ ".claude/settings.local.json", "Claude Code settings (hooks, helpers)" },
	{ ".mcp.json", "MCP servers" },
	/* direnv: .envrc runs on entering the directory (once allowed) */
	{ ".envrc", "direnv" },
	/* VS Code: tasks that run on folder open, terminal profiles and
	 * tool paths in settings, MCP servers */
	{ ".vscode/tasks.json", "VS Code tasks" },
	{ ".vscode/settings.json", "VS Code settings (terminal, tasks, tool paths)" },
	{ ".vscode/mcp.json", "MCP servers" },
	/* Dev Containers: initializeCommand runs on the host */
	{ ".devcontainer/devcontainer.json", "dev container commands" },
	{ ".devcontainer.json", "dev container commands" },
	/* Cursor and Gemini CLI project settings: MCP servers */
	{ ".cursor/mcp.json", "MCP servers" },
	{ ".gemini/settings.json", "Gemini CLI settings (MCP servers)" },
};
#define N_AGENT (sizeof(agent_files) / sizeof(*agent_files))

/* What stood at a name: nothing (err ENOENT), something (err 0), or a
 * symbolic link on the way to it (err ELOOP) or another failure. */
struct look {
	int err;
	dev_t dev;
	ino_t ino;
	mode_t mode;
	struct timespec ctime;
};

enum role { R_NAME, R_MODULES, R_GITDIR, R_CONTAINER, R_OTHER };

struct watch {
	char *rel;
	enum role role;
	struct look at;
};

/* The workspace, and the directory beneath it last looked into: names
 * are looked at in runs that share one. Forgotten whenever anything
 * there moves. */
struct ws {
	int fd;
	int dfd;	/* -1: none open; then derr says why, if dir is set */
	int derr;
	char dir[PATH_MAX];
};

static void ws_forget(struct ws *w)
{
	if (w->dfd >= 0)
		close(w->dfd);
	w->dfd = -1;
	w->derr = 0;
	w->dir[0] = '\0';
}

struct planted_state {
	char *workspace;
	struct ws ws;
	struct timespec since;
	bool top_git;		/* .git existed at launch: guarded, not walked */
	bool top_dir;		/* ... and was a directory: its names watched */
	bool modules_whole;	/* .git/modules read-only whole */
	struct watch *w;
	size_t n;
	struct look agent[N_AGENT];
};

static void look_at(struct ws *w, const char *rel, struct look *l)
{
	const char *slash = strrchr(rel, '/'), *base = slash ? slash + 1 : rel;
	size_t dl = slash ? (size_t)(slash - rel) : 0;
	struct stat st;

	memset(l, 0, sizeof(*l));
	if (slash && (dl >= sizeof(w->dir) || strncmp(w->dir, rel, dl) != 0 || w->dir[dl])) {
		ws_forget(w);
		if (dl >= sizeof(w->dir)) {
			l->err = ENAMETOOLONG;
			return;
		}
		memcpy(w->dir, rel, dl);
		w->dir[dl] = '\0';
		w->dfd = planted_open_beneath(w->fd, w->dir, O_PATH | O_DIRECTORY);
		w->derr = w->dfd < 0 ? (errno == ENOTDIR ? ENOENT : errno) : 0;
	}
	if (slash && w->dfd < 0) {
		l->err = w->derr;
		return;
	}
	if (fstatat(slash ? w->dfd : w->fd, base, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		l->err = errno;
		return;
	}
	*l = (struct look){ 0, st.st_dev, st.st_ino, st.st_mode, st.st_ctim };
}

static bool same_object(const struct look *a, const struct look *b)
{
	return a->err == b->err && a->dev == b->dev && a->ino == b->ino &&
	       (a->mode & S_IFMT) == (b->mode & S_IFMT);
}

static bool same(const struct look *a, const struct look *b)
{
	return same_object(a, b) && a->ctime.tv_sec == b->ctime.tv_sec &&
	       a->ctime.tv_nsec == b->ctime.tv_nsec;
}

/* The git dirs, containers and other entries beneath a git dir's
 * modules, as (rel, role) pairs; *whole when there are too many. */
struct meta {
	char **rel;
	enum role *role;
	size_t n, gitdirs, entries;
	bool whole;
};

static int meta_push(struct meta *m, const char *rel, enum role r)
{
	enum role *nr = realloc(m->role, (m->n + 1) * sizeof(*nr));

	if (!nr)
		return -1;
	m->role = nr;
	if (strv_push(&m->rel, rel) < 0)
		return -1;
	m->role[m->n++] = r;
	return 0;
}

static void meta_clear(struct meta *m)
{
	strv_free(m->rel);
	free(m->role);
	memset(m, 0, sizeof(*m));
}

static int refuse_link(const char *ws, const char *rel, struct err **e)
{
	return err_set(e, ERR_DENIED, 0,
		       "`%s/%s` is a symbolic link; it must be read-only in place", ws, rel);
}

static int scan_modules(struct ws *w, const char *ws, const char *gitdir, struct meta *m,
			size_t depth, struct err **e);

/* A directory beneath modules: git dirs (they hold HEAD) and what leads to
 * them. */
static int scan_container(struct ws *w, const char *ws, const char *crel, struct meta *m,
			  size_t depth, struct err **e)
{
	_cleanup_strv_ char **names = NULL;
	int fd = planted_open_beneath(w->fd, crel, O_RDONLY | O_DIRECTORY);
	struct dirent *d;
	DIR *dir;

	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, errno, "read `%s/%s`", ws, crel);
	}
	while ((d = readdir(dir)))
		if (strcmp(d->d_name, ".") != 0 && strcmp(d->d_name, "..") != 0 &&
		    strv_push(&names, d->d_name) < 0) {
			m->whole = true;
			break;
		}
	closedir(dir);
	for (size_t i = 0; names && names[i] && !m->whole; i++) {
		char rel[PATH_MAX];
		struct look l, head;

		/* A name too long for the joins below gives up on the
		 * submodules one by one. */
		if (strlen(crel) + strlen(names[i]) > PATH_MAX - 64 ||
		    planted_join(rel, sizeof(rel), crel, names[i]) < 0 ||
		    ++m->entries > MODULES_ENTRIES_MAX) {
			m->whole = true;
			break;
		}
		look_at(w, rel, &l);
		if (l.err == 0 && S_ISLNK(l.mode))
			return refuse_link(ws, rel, e);
		if (l.err != 0 || !S_ISDIR(l.mode) || depth >= MODULES_DEPTH_MAX) {
			if (meta_push(m, rel, R_OTHER) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "modules");
			continue;
		}
		char headrel[PATH_MAX];
		(void)planted_join(headrel, sizeof(headrel), rel, "HEAD");
		look_at(w, headrel, &head);
		if (head.err == 0) {
			if (++m->gitdirs > PLANTED_MODULES_MAX) {
				m->whole = true;
				break;
			}
			if (meta_push(m, rel, R_GITDIR) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "modules");
			if (scan_modules(w, ws, rel, m, depth + 1, e) < 0)
				return -1;
		} else {
			if (meta_push(m, rel, R_CONTAINER) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "modules");
			if (scan_container(w, ws, rel, m, depth + 1, e) < 0)
				return -1;
		}
	}
	return 0;
}

static int scan_modules(struct ws *w, const char *ws, const char *gitdir, struct meta *m,
			size_t depth, struct err **e)
{
	char rel[PATH_MAX];
	struct look l;

	(void)planted_join(rel, sizeof(rel), gitdir, "modules");
	look_at(w, rel, &l);
	if (l.err != 0 || !S_ISDIR(l.mode)) {
		if (l.err == 0 && S_ISLNK(l.mode))
			return refuse_link(ws, rel, e);
		return 0;
	}
	return scan_container(w, ws, rel, m, depth, e);
}

/* What .git is at launch: 0 none, 1 a directory, 2 a file. */
static int top_git(struct ws *w, const char *ws, struct err **e)
{
	struct look l;

	look_at(w, ".git", &l);
	if (l.err == ENOENT)
		return 0;
	if (l.err != 0)
		return err_set(e, ERR_DENIED, l.err, "`%s/.git`", ws);
	/* host-side git would follow it anywhere */
	if (S_ISLNK(l.mode))
		return err_set(e, ERR_DENIED, 0,
			       "`%s/.git` is a symbolic link; a workspace's .git must be its own", ws);
	return S_ISDIR(l.mode) ? 1 : 2;
}

static int open_ws(const char *workspace, struct err **e)
{
	int fd = fs_open_nofollow(AT_FDCWD, workspace, O_RDONLY | O_DIRECTORY, 0);

	if (fd < 0)
		err_set(e, ERR_UNAVAILABLE, errno, "open workspace `%s`", workspace);
	return fd;
}

/* The git dirs whose names are held: .git and the submodules'. */
static int git_dirs(struct ws *w, const char *ws, struct meta *m, struct err **e)
{
	if (meta_push(m, ".git", R_GITDIR) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	return scan_modules(w, ws, ".git", m, 0, e);
}

static int push_abs(char ***out, const char *ws, const char *rel, struct err **e)
{
	_cleanup_free_ char *p = fs_path_join(ws, rel);

	if (!p || strv_push(out, p) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "git");
	return 0;
}

int planted_git_readonly(const char *workspace, char ***out, struct err **e)
{
	struct ws w = { .fd = open_ws(workspace, e), .dfd = -1 };
	_cleanup_strv_ char **ro = NULL;
	struct meta m = { 0 };
	int kind = -1, rc = 0;

	*out = NULL;
	if (w.fd < 0 || (kind = top_git(&w, workspace, e)) <= 0) {
		/* kind 0: no .git, nothing to hold */
		rc = w.fd < 0 || kind < 0 ? -1 : 0;
		goto out;
	}
	if (kind == 2) { /* a gitdir link file: keep it pointing home */
		rc = push_abs(&ro, workspace, ".git", e);
		goto out;
	}
	if (git_dirs(&w, workspace, &m, e) < 0) {
		rc = -1;
		goto out;
	}
	if (m.whole)
		rc = push_abs(&ro, workspace, ".git/modules", e);
	for (size_t i = 0; rc == 0 && i < m.n; i++) {
		if (m.role[i] != R_GITDIR || (m.whole && i > 0))
			continue;
		for (size_t j = 0; rc == 0 && j < sizeof(git_ro) / sizeof(*git_ro); j++) {
			char rel[PATH_MAX];
			struct look l;

			(void)planted_join(rel, sizeof(rel), m.rel[i], git_ro[j]);
			look_at(&w, rel, &l);
			if (l.err == 0 && S_ISLNK(l.mode))
				rc = refuse_link(workspace, rel, e);
			else if (l.err == 0)
				rc = push_abs(&ro, workspace, rel, e);
			/* and the files it includes, which git reads with it */
			if (rc == 0 && l.err == 0 && S_ISREG(l.mode) &&
			    strncmp(git_ro[j], "config", 6) == 0)
				rc = planted_includes(w.fd, workspace, rel, &ro, e);
		}
	}
out:
	meta_clear(&m);
	ws_forget(&w);
	if (w.fd >= 0)
		close(w.fd);
	if (rc < 0)
		return -1;
	*out = steal_pointer(&ro);
	return 0;
}

static int watch_push(struct planted_state *st, const char *rel, enum role r)
{
	struct watch *n = realloc(st->w, (st->n + 1) * sizeof(*n));

	if (!n)
		return -1;
	st->w = n;
	n[st->n].rel = strdup(rel);
	if (!n[st->n].rel)
		return -1;
	n[st->n].role = r;
	look_at(&st->ws, rel, &n[st->n].at);
	st->n++;
	return 0;
}

/* "Now" as the workspace's filesystem stamps it: the change time of a
 * file made there and never named (a server's clock may differ from
 * ours); this host's coarse clock, which stamps local files, where no
 * such file can be made. */
static void fs_now(int ws_fd, struct timespec *out)
{
	_cleanup_close_ int fd = openat(ws_fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	struct stat st;

	if (fd >= 0 && fstat(fd, &st) == 0) {
		*out = st.st_ctim;
		return;
	}
	clock_gettime(CLOCK_REALTIME_COARSE, out);
}

int planted_before(const char *workspace, struct planted_state **out, struct err **e)
{
	struct planted_state *st = calloc(1, sizeof(*st));
	struct meta m = { 0 };
	int kind, rc = 0;

	*out = NULL;
	if (!st || !(st->workspace = strdup(workspace))) {
		free(st);
		return err_set(e, ERR_INTERNAL, ENOMEM, "planted");
	}
	st->ws = (struct ws){ .fd = open_ws(workspace, e), .dfd = -1 };
	if (st->ws.fd < 0 || (kind = top_git(&st->ws, workspace, e)) < 0) {
		planted_state_free(st);
		return -1;
	}
	fs_now(st->ws.fd, &st->since);
	st->top_git = kind != 0;
	st->top_dir = kind == 1;
	if (st->top_dir && git_dirs(&st->ws, workspace, &m, e) < 0)
		rc = -1;
	st->modules_whole = m.whole;
	for (size_t i = 0; rc == 0 && i < m.n; i++) {
		char rel[PATH_MAX];

		if (watch_push(st, m.rel[i], m.role[i]) < 0)
			rc = -1;
		if (m.role[i] != R_GITDIR)
			continue;
		for (size_t j = 0; rc == 0 && j < sizeof(git_watch) / sizeof(*git_watch); j++) {
			(void)planted_join(rel, sizeof(rel), m.rel[i], git_watch[j]);
			rc = watch_push(st, rel, R_NAME);
		}
		for (size_t j = 0; rc == 0 && j < sizeof(git_links) / sizeof(*git_links); j++) {
			(void)planted_join(rel, sizeof(rel), m.rel[i], git_links[j]);
			rc = watch_push(st, rel, R_NAME);
		}
		for (size_t j = 0; rc == 0 && j < sizeof(git_new) / sizeof(*git_new); j++) {
			(void)planted_join(rel, sizeof(rel), m.rel[i], git_new[j]);
			rc = watch_push(st, rel, R_NAME);
		}
		(void)planted_join(rel, sizeof(rel), m.rel[i], "modules");
		if (rc == 0)
			rc = watch_push(st, rel, R_MODULES);
	}
	meta_clear(&m);
	for (size_t i = 0; i < N_AGENT; i++)
		look_at(&st->ws, agent_files[i].path, &st->agent[i]);
	ws_forget(&st->ws);
	if (rc < 0) {
		planted_state_free(st);
		return e && *e ? -1 : err_set(e, ERR_INTERNAL, ENOMEM, "planted");
	}
	*out = st;
	return 0;
}

void planted_state_free(struct planted_state *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free(st->w[i].rel);
	free(st->w);
	ws_forget(&st->ws);
	if (st->ws.fd >= 0)
		close(st->ws.fd);
	free(st->workspace);
	free(st);
}

struct mover {
	struct planted_state *st;
	const char *record_dir;
	int rec_fd;		/* the record dir, or -1 */
	int q_fd;		/* .git/cordon-planted.<random>, made when needed */
	char q_name[64];
	struct findings *out;
};

static const struct watch *find(const struct planted_state *st, const char *rel)
{
	for (size_t i = 0; i < st->n; i++)
		if (strcmp(st->w[i].rel, rel) == 0)
			return &st->w[i];
	return NULL;
}

/* Where a move goes when the record dir is on another filesystem (or
 * missing): a directory of its own in .git, which git never reads. */
static int quarantine(struct mover *mv)
{
	_cleanup_close_ int git = -1;

	if (mv->q_fd >= 0)
		return mv->q_fd;
	git = planted_open_beneath(mv->st->ws.fd, ".git", O_PATH | O_DIRECTORY);
	for (int tries = 0; git >= 0 && tries < 8; tries++) {
		unsigned int r = 0;

		if (getrandom(&r, sizeof(r), 0) != sizeof(r))
			break;
		snprintf(mv->q_name, sizeof(mv->q_name), "cordon-planted.%08x", r);
		if (mkdirat(git, mv->q_name, 0700) == 0) {
			mv->q_fd = planted_open_beneath(git, mv->q_name, O_PATH | O_DIRECTORY);
			return mv->q_fd;
		}
		if (errno != EEXIST)
			break;
	}
	return -1;
}

/* Move rel (beneath the guarded .git) out of git's way: into
 * <record>/planted/<rel>, else into .git's quarantine; report it. */
static void move_out(struct mover *mv, const char *rel, const char *key)
{
	_cleanup_err_ struct err *ignored = NULL;
	_cleanup_free_ char *parent = strdup(rel);
	_cleanup_close_ int sfd = -1, dfd = -1;
	char sub[PATH_MAX], dest[PATH_MAX * 2], note[PATH_MAX];
	const char *base;
	char *slash;
	int err = 0;

	/* What is looked at next must not be taken from before the move. */
	ws_forget(&mv->st->ws);
	if (!parent || !(slash = strrchr(parent, '/'))) {
		mv->out->oom = true;
		return;
	}
	*slash = '\0';
	base = slash + 1;
	sfd = planted_open_beneath(mv->st->ws.fd, parent, O_PATH | O_DIRECTORY);
	if (sfd < 0) {
		err = errno;
		goto fail;
	}
	if (mv->rec_fd >= 0) {
		snprintf(sub, sizeof(sub), "planted/%s", parent);
		dfd = fs_mkdirs_beneath(mv->rec_fd, sub, 0700, &ignored);
		if (dfd >= 0 && renameat(sfd, base, dfd, base) == 0) {
			snprintf(dest, sizeof(dest), "%s/planted/%s", mv->record_dir, rel);
			planted_add(mv->out, rel, key, dest);
			return;
		}
		err = errno;
	}
	/* rel is ".git/<...>": the quarantine keeps the part after .git/. */
	if (quarantine(mv) >= 0) {
		if (dfd >= 0)
			close(dfd);
		err_free(ignored);
		ignored = NULL;
		if (strcmp(parent, ".git") == 0)
			dfd = fcntl(mv->q_fd, F_DUPFD_CLOEXEC, 3);
		else
			dfd = fs_mkdirs_beneath(mv->q_fd, parent + 5, 0700, &ignored);
		if (dfd >= 0 && renameat(sfd, base, dfd, base) == 0) {
			snprintf(dest, sizeof(dest), "%s/.git/%s/%s", mv->st->workspace, mv->q_name,
				 rel + 5);
			planted_add(mv->out, rel, key, dest);
			return;
		}
		err = errno;
	}
fail:
	snprintf(note, sizeof(note), "%s (left in place: it could not be moved: %s)", key,
		 strerror(err));
	planted_add(mv->out, rel, note, NULL);
}

static void undo_gitdir(struct mover *mv, const char *g, size_t depth);

/* Read a directory's names (at most MODULES_ENTRIES_MAX; -1 beyond). */
static int names_of(int ws_fd, const char *rel, char ***out)
{
	int fd = planted_open_beneath(ws_fd, rel, O_RDONLY | O_DIRECTORY);
	struct dirent *d;
	size_t n = 0;
	DIR *dir;

	*out = NULL;
	if (fd < 0 || !(dir = fdopendir(fd))) {
		if (fd >= 0)
			close(fd);
		return 0;
	}
	while ((d = readdir(dir))) {
		if (strcmp(d->d_name, ".") == 0 || strcmp(d->d_name, "..") == 0)
			continue;
		if (++n > MODULES_ENTRIES_MAX || strv_push(out, d->d_name) < 0) {
			closedir(dir);
			return -1;
		}
	}
	closedir(dir);
	return 0;
}

/* A directory beneath modules: every entry must be one recorded at
 * launch, the same object; a git dir among them is checked in turn. */
static void undo_container(struct mover *mv, const char *crel, size_t depth)
{
	_cleanup_strv_ char **names = NULL;

	if (names_of(mv->st->ws.fd, crel, &names) < 0) {
		move_out(mv, crel, "submodule repositories");
		return;
	}
	for (size_t i = 0; names && names[i]; i++) {
		char rel[PATH_MAX];
		const struct watch *w;
		struct look now;

		if (planted_join(rel, sizeof(rel), crel, names[i]) < 0) {
			move_out(mv, crel, "submodule repositories");
			return;
		}
		w = find(mv->st, rel);
		look_at(&mv->st->ws, rel, &now);
		if (!w || w->role == R_NAME || w->role == R_MODULES || !same_object(&w->at, &now) ||
		    (w->role == R_OTHER && !same(&w->at, &now)) || depth > 2UL * MODULES_DEPTH_MAX)
			move_out(mv, rel, "submodule repository");
		else if (w->role == R_GITDIR)
			undo_gitdir(mv, rel, depth + 1);
		else if (w->role == R_CONTAINER)
			undo_container(mv, rel, depth + 1);
	}
}

/* A guarded git dir: each watched name as it was at launch, or moved. */
static void undo_gitdir(struct mover *mv, const char *g, size_t depth)
{
	const struct watch *w;
	char rel[PATH_MAX];
	struct look now;

	for (size_t j = 0; j < sizeof(git_watch) / sizeof(*git_watch); j++) {
		(void)planted_join(rel, sizeof(rel), g, git_watch[j]);
		look_at(&mv->st->ws, rel, &now);
		w = find(mv->st, rel);
		if (now.err != ENOENT && (!w || !same(&w->at, &now)))
			move_out(mv, rel, git_watch[j]);
	}
	for (size_t j = 0; j < sizeof(git_new) / sizeof(*git_new); j++) {
		(void)planted_join(rel, sizeof(rel), g, git_new[j]);
		look_at(&mv->st->ws, rel, &now);
		w = find(mv->st, rel);
		if (now.err != ENOENT && (!w || !same_object(&w->at, &now)))
			move_out(mv, rel, git_new[j]);
	}
	(void)planted_join(rel, sizeof(rel), g, "modules");
	look_at(&mv->st->ws, rel, &now);
	w = find(mv->st, rel);
	if (now.err == ENOENT)
		return;
	if (!w || !same_object(&w->at, &now))
		move_out(mv, rel, "modules");
	else if (!mv->st->modules_whole)
		undo_container(mv, rel, depth);
}

struct links_found {
	char **rel;
	size_t n;
	bool oom;
};

static int link_seen(const char *rel, unsigned char type, void *arg)
{
	struct links_found *lf = arg;

	/* the quarantine holds what earlier looks moved */
	if (type == DT_DIR)
		return !strchr(rel, '/') && strncmp(rel, "cordon-planted.", 15) == 0;
	if (++lf->n > LINKS_MOVES_MAX)
		return errno = E2BIG, -1;
	if (strv_push(&lf->rel, rel) < 0) {
		lf->oom = true;
		return -1;
	}
	return 0;
}

/* Every symbolic link in the guarded .git (submodules' git dirs
 * included), none followed: moved out unless it is one of git_links that
 * was there at launch. Read whole first, moved after. */
static void undo_links(struct mover *mv)
{
	_cleanup_close_ int git = planted_open_beneath(mv->st->ws.fd, ".git",
						       O_RDONLY | O_DIRECTORY);
	struct links_found lf = { 0 };
	int r, err;

	if (git < 0) {
		planted_add(mv->out, ".git", "not looked at for symbolic links: it cannot be opened",
			    NULL);
		return;
	}
	r = fs_find_links(git, LINKS_DEPTH_MAX, LINKS_ENTRIES_MAX, link_seen, &lf);
	err = errno;
	for (size_t i = 0; i < lf.n && lf.rel && lf.rel[i]; i++) {
		char rel[PATH_MAX];
		const struct watch *w;
		struct look now;

		if (planted_join(rel, sizeof(rel), ".git", lf.rel[i]) < 0)
			continue;
		w = find(mv->st, rel);
		look_at(&mv->st->ws, rel, &now);
		if (now.err == 0 && S_ISLNK(now.mode) && (!w || !same_object(&w->at, &now)))
			move_out(mv, rel, "symbolic link");
	}
	if (lf.oom)
		mv->out->oom = true;
	else if (r < 0)
		planted_add(mv->out, ".git",
			    err == E2BIG ? "not looked at whole for symbolic links: too many "
					     "entries, links or levels"
					   : "not looked at whole for symbolic links: it cannot be read",
			    NULL);
	strv_free(lf.rel);
}

int planted_after(struct planted_state *st, const char *record_dir, FILE *f, struct err **e)
{
	struct findings fs = { 0 };
	struct walk_stats ws = { 0 };
	struct mover mv = { .st = st, .record_dir = record_dir, .rec_fd = -1, .q_fd = -1,
			    .out = &fs };
	int rc;

	if (record_dir)
		mv.rec_fd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	/* Only a launch that was recorded has run anything, and only its
	 * record is kept. */
	if (mv.rec_fd >= 0 && faccessat(mv.rec_fd, "plan.json", F_OK, AT_SYMLINK_NOFOLLOW) < 0) {
		close(mv.rec_fd);
		mv.rec_fd = -1;
	}
	if (st->top_dir) {
		undo_gitdir(&mv, ".git", 0);
		undo_links(&mv);
	}
	if (planted_walk(st->ws.fd, st->workspace, st->top_git, &st->since, &fs, &ws) < 0)
		err_set(e, ERR_UNAVAILABLE, errno, "walk the workspace `%s`", st->workspace);
	for (size_t i = 0; i < N_AGENT; i++) {
		struct look now;

		look_at(&st->ws, agent_files[i].path, &now);
		if (now.err != ENOENT && !same(&st->agent[i], &now))
			planted_add(&fs, agent_files[i].path,
				    now.err == ELOOP ? "a symbolic link on the way" : agent_files[i].key,
				    NULL);
	}
	ws_forget(&st->ws);
	planted_report(f, &fs, &ws);
	rc = *e ? -1 : (int)fs.n;
	if (mv.rec_fd >= 0) {
		_cleanup_err_ struct err *late = NULL;

		if (planted_write_record(mv.rec_fd, &fs, &ws, &late) < 0 && rc >= 0) {
			*e = steal_pointer(&late);
			rc = -1;
		}
	}
	if (mv.rec_fd >= 0)
		close(mv.rec_fd);
	if (mv.q_fd >= 0)
		close(mv.q_fd);
	free(ws.stopped);
	planted_findings_clear(&fs);
	return rc;
}
