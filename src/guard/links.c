/* links.c: the checks that catch one file reachable under two names (see
 * links.h): a walk of the workspace that accounts for every hard link,
 * and the mount-table search for bind mounts of protected paths. */
#include "guard/links.h"
#include "lib/cleanup.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <unistd.h>

/* --- paths --------------------------------------------------------------- */

/* What follows prefix in path (no leading '/'), or NULL when prefix is
 * neither path nor one of its ancestors: "/a/b" is not a prefix of
 * "/a/bc". */
static const char *path_below(const char *prefix, const char *path)
{
	size_t n = strlen(prefix);

	while (n > 0 && prefix[n - 1] == '/')
		n--;
	if (strncmp(prefix, path, n) != 0)
		return NULL;
	if (path[n] == '\0')
		return path + n;
	if (path[n] != '/')
		return NULL;
	return path + n + 1;
}

/* dir + "/" + rel with no doubled slash; rel "" gives dir itself. */
static char *path_join(const char *dir, const char *rel)
{
	size_t n = strlen(dir);
	char *out;

	if (!*rel)
		return strdup(dir);
	while (n > 0 && dir[n - 1] == '/')
		n--;
	if (asprintf(&out, "%.*s/%s", (int)n, dir, rel) < 0)
		return NULL;
	return out;
}

static int oom(struct err **e)
{
	return err_set(e, ERR_INTERNAL, ENOMEM,
		       "the hard-link and alias checks");
}

/* --- inode sets ---------------------------------------------------------- */

struct inode_rec {
	dev_t dev;
	ino_t ino;
	nlink_t nlink;	/* the largest link count seen: a race fails closed */
	size_t seen;	/* names found by the walk */
	size_t order;	/* walk position of the first name */
	char *path;	/* workspace-relative first name */
	bool used;
};

/* Open addressing, linear probing, kept at most half full. */
struct inode_set {
	struct inode_rec *v;
	size_t cap, n;
};

static size_t inode_hash(dev_t dev, ino_t ino, size_t cap)
{
	uint64_t h = (uint64_t)ino * 0x9e3779b97f4a7c15ULL ^ (uint64_t)dev;

	h ^= h >> 31;
	h *= 0xbf58476d1ce4e5b9ULL;
	h ^= h >> 29;
	return (size_t)h & (cap - 1);
}

static struct inode_rec *inode_slot(struct inode_rec *v, size_t cap, dev_t dev,
				    ino_t ino)
{
	size_t i = inode_hash(dev, ino, cap);

	while (v[i].used && (v[i].dev != dev || v[i].ino != ino))
		i = (i + 1) & (cap - 1);
	return &v[i];
}

static int inode_grow(struct inode_set *s)
{
	size_t cap = s->cap ? s->cap * 2 : 256;
	struct inode_rec *v = calloc(cap, sizeof(*v));

	if (!v)
		return -1;
	for (size_t i = 0; i < s->cap; i++)
		if (s->v[i].used)
			*inode_slot(v, cap, s->v[i].dev, s->v[i].ino) = s->v[i];
	free(s->v);
	s->v = v;
	s->cap = cap;
	return 0;
}

/* The record for (dev, ino), made if missing; NULL when out of memory. */
static struct inode_rec *inode_get(struct inode_set *s, dev_t dev, ino_t ino)
{
	struct inode_rec *r;

	if ((s->n + 1) * 2 > s->cap && inode_grow(s) < 0)
		return NULL;
	r = inode_slot(s->v, s->cap, dev, ino);
	if (!r->used) {
		*r = (struct inode_rec){ .dev = dev, .ino = ino, .used = true };
		s->n++;
	}
	return r;
}

static void inode_set_free(struct inode_set *s)
{
	for (size_t i = 0; i < s->cap; i++)
		free(s->v[i].path);
	free(s->v);
}

/* --- the walk ------------------------------------------------------------ */

/* A directory still to walk: its workspace-relative path ("" for the
 * workspace) and the identity it had when it was listed. */
struct pending {
	char *rel;
	dev_t dev;
	ino_t ino;
};

/* Directories are kept as paths, not open fds, so the walk holds two fds
 * whatever the depth, and the heap stack cannot overflow like recursion. */
struct walk {
	const char *workspace;
	char *const *denied;	/* workspace-relative; not entered */
	int rootfd;
	size_t max, count;
	struct inode_set links;	/* non-directories with more than one link */
	struct inode_set dirs;	/* walked: a directory bound twice goes once */
	struct pending *stack;
	size_t depth, cap;
	struct err **e;
};

enum walk_why { CANNOT_READ, CHANGED };

/* Refuse naming the workspace-relative rel as a full path. */
static int walk_refuse(struct walk *w, int errnum, const char *rel,
		       enum walk_why why)
{
	_cleanup_free_ char *path = path_join(w->workspace, rel);

	if (!path)
		return oom(w->e);
	if (why == CHANGED)
		return err_set(w->e, ERR_DENIED, errnum,
			       "`%s` changed during the walk: the hard-link "
			       "check cannot cover it",
			       path);
	return err_set(w->e, ERR_DENIED, errnum,
		       "cannot read `%s`: the hard-link check cannot cover it",
		       path);
}

static int walk_push(struct walk *w, char *rel, dev_t dev, ino_t ino)
{
	if (!rel)
		return oom(w->e);
	if (w->depth == w->cap) {
		size_t cap = w->cap ? w->cap * 2 : 64;
		struct pending *v = reallocarray(w->stack, cap, sizeof(*v));

		if (!v) {
			free(rel);
			return oom(w->e);
		}
		w->stack = v;
		w->cap = cap;
	}
	w->stack[w->depth++] = (struct pending){ rel, dev, ino };
	return 0;
}

/* Open a directory of the workspace by its relative path. The kernel
 * refuses any symbolic link on the way and any escape from the root, so a
 * directory swapped for a link mid-walk cannot lead the walk outside. */
static int open_beneath(int rootfd, const char *rel)
{
	struct open_how how = {
		.flags = O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC,
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
			   RESOLVE_NO_MAGICLINKS,
	};
	long fd;

	do
		fd = syscall(SYS_openat2, rootfd, *rel ? rel : ".", &how,
			     sizeof(how));
	while (fd < 0 && (errno == EINTR || errno == EAGAIN));
	return (int)fd;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* All names of an open directory but . and .., sorted so that the walk,
 * and so the path a refusal names, does not depend on readdir order. */
static int list_names(struct walk *w, DIR *d, const char *rel, char ***names)
{
	struct dirent *de;

	*names = calloc(1, sizeof(**names));
	if (!*names)
		return oom(w->e);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de)
			break;
		if (strcmp(de->d_name, ".") == 0 ||
		    strcmp(de->d_name, "..") == 0)
			continue;
		if (++w->count > w->max)
			return err_set(w->e, ERR_DENIED, 0,
				       "workspace `%s` holds more than %zu "
				       "entries, the most the hard-link check "
				       "walks: raise \"limits\": "
				       "{\"workspace_entries\": N} in the policy "
				       "(or --limit workspace_entries=N), or "
				       "run in a smaller workspace",
				       w->workspace, w->max);
		if (strv_push(names, de->d_name) < 0)
			return oom(w->e);
	}
	if (errno)
		return walk_refuse(w, errno, rel, CANNOT_READ);
	qsort(*names, strv_len(*names), sizeof(**names), cmp_name);
	return 0;
}

static int note_link(struct walk *w, const char *child, const struct statx *sx,
		     size_t order)
{
	dev_t dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	struct inode_rec *r = inode_get(&w->links, dev, sx->stx_ino);

	if (!r)
		return oom(w->e);
	if (!r->path && !(r->path = strdup(child)))
		return oom(w->e);
	if (r->seen++ == 0)
		r->order = order;
	if (sx->stx_nlink > r->nlink)
		r->nlink = sx->stx_nlink;
	return 0;
}

/* A non-directory that is the root of a mount is a bind mount of a file,
 * not a name: counting it would let it stand in for a name outside. */
static bool is_mount_root(const struct statx *sx)
{
	return (sx->stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) &&
	       (sx->stx_attributes & STATX_ATTR_MOUNT_ROOT);
}

static int walk_entry(struct walk *w, int dfd, const char *rel,
		      const char *name, size_t order)
{
	_cleanup_free_ char *child = *rel ? path_join(rel, name) : strdup(name);
	struct statx sx;

	if (!child)
		return oom(w->e);
	/* A denied path's names are not the workspace's to count. */
	for (size_t i = 0; w->denied && w->denied[i]; i++)
		if (strcmp(child, w->denied[i]) == 0)
			return 0;
	if (statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
		  STATX_TYPE | STATX_INO | STATX_NLINK, &sx) < 0) {
		/* Gone since readdir: a missing name can only lower a count,
		 * which refuses rather than passes. */
		if (errno == ENOENT)
			return 0;
		return walk_refuse(w, errno, child, CANNOT_READ);
	}
	if (S_ISDIR(sx.stx_mode))
		return walk_push(w, steal_pointer(&child),
				 makedev(sx.stx_dev_major, sx.stx_dev_minor),
				 sx.stx_ino);
	if (sx.stx_nlink > 1 && !is_mount_root(&sx))
		return note_link(w, child, &sx, order);
	return 0;
}

/* Walk one directory: check its identity, list it, stat every entry and
 * queue its subdirectories so that they come off the stack in name order. */
static int walk_dir(struct walk *w, const struct pending *p)
{
	_cleanup_strv_ char **names = NULL;
	struct stat st;
	struct inode_rec *seen;
	DIR *d;
	_cleanup_close_ int fd = open_beneath(w->rootfd, p->rel);

	/* Gone since it was listed: as for a vanished entry, fails closed. */
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return walk_refuse(w, errno, p->rel, CANNOT_READ);
	if (fstat(fd, &st) < 0 || st.st_dev != p->dev || st.st_ino != p->ino)
		return walk_refuse(w, 0, p->rel, CHANGED);
	if (!(seen = inode_get(&w->dirs, st.st_dev, st.st_ino)))
		return oom(w->e);
	if (seen->seen++ > 0)
		return 0;
	if (!(d = fdopendir(fd)))
		return walk_refuse(w, errno, p->rel, CANNOT_READ);
	(void)steal_fd(&fd); /* the DIR owns it now */
	size_t first = w->count, base = w->depth, n;
	int r = list_names(w, d, p->rel, &names);
	n = strv_len(names);
	for (size_t i = 0; r == 0 && i < n; i++)
		r = walk_entry(w, dirfd(d), p->rel, names[i], first + i);
	closedir(d);
	/* Reverse the subdirectories just pushed: the stack pops the last. */
	for (size_t i = base, j = w->depth; r == 0 && i + 1 < j; i++, j--) {
		struct pending t = w->stack[i];

		w->stack[i] = w->stack[j - 1];
		w->stack[j - 1] = t;
	}
	return r;
}

/* The first name, in walk order, of an inode with names the walk did not
 * find. */
static const struct inode_rec *first_outsider(const struct inode_set *s)
{
	const struct inode_rec *best = NULL;

	for (size_t i = 0; i < s->cap; i++) {
		const struct inode_rec *r = &s->v[i];

		if (r->used && r->seen != r->nlink &&
		    (!best || r->order < best->order))
			best = r;
	}
	return best;
}

static int walk_run(struct walk *w)
{
	struct stat st;
	const struct inode_rec *bad;

	if (fstat(w->rootfd, &st) < 0)
		return walk_refuse(w, errno, "", CANNOT_READ);
	if (walk_push(w, strdup(""), st.st_dev, st.st_ino) < 0)
		return -1;
	while (w->depth > 0) {
		struct pending p = w->stack[--w->depth];
		int r = walk_dir(w, &p);

		free(p.rel);
		if (r < 0)
			return -1;
	}
	bad = first_outsider(&w->links);
	if (!bad)
		return 0;
	/* More names than links means the tree changed under the walk. */
	if (bad->seen > bad->nlink)
		return walk_refuse(w, 0, bad->path, CHANGED);
	_cleanup_free_ char *path = path_join(w->workspace, bad->path);
	if (!path)
		return oom(w->e);
	return err_set(w->e, ERR_DENIED, 0,
		       "`%s` is a hard link to a file outside the workspace or beneath "
		       "one of its denies",
		       path);
}

int guard_check_hardlinks(const char *workspace, char *const *denied,
			  size_t max_entries, struct err **e)
{
	struct walk w = { .workspace = workspace, .max = max_entries, .e = e };
	_cleanup_strv_ char **rel = calloc(1, sizeof(char *));
	int r;

	if (!rel)
		return oom(e);
	for (size_t i = 0; denied && denied[i]; i++) {
		const char *below = path_below(workspace, denied[i]);
		if (below && *below && strv_push(&rel, below) < 0)
			return oom(e);
	}
	w.denied = rel;

	w.rootfd = open(workspace,
			O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w.rootfd < 0)
		return walk_refuse(&w, errno, "", CANNOT_READ);
	r = walk_run(&w);
	while (w.depth > 0)
		free(w.stack[--w.depth].rel);
	free(w.stack);
	inode_set_free(&w.links);
	inode_set_free(&w.dirs);
	close(w.rootfd);
	return r;
}

/* --- mount aliases ------------------------------------------------------- */

/* The visible mount holding path: the longest mount point that is path
 * or an ancestor of it; of several at that mount point the last, since
 * later mounts cover earlier ones. -1 when none does. */
static ssize_t mount_holding(const struct mountinfo_table *t, const char *path)
{
	ssize_t best = -1;
	size_t best_len = 0;

	for (size_t i = 0; i < t->n; i++) {
		const char *mp = t->v[i].mountpoint;
		size_t len = strlen(mp);

		if (!path_below(mp, path))
			continue;
		if (best < 0 || len >= best_len) {
			best = (ssize_t)i;
			best_len = len;
		}
	}
	return best;
}

static int alias_add(char ***aliases, char *alias, const char *protected_path,
		     struct err **e)
{
	if (!alias)
		return oom(e);
	if (strcmp(alias, protected_path) == 0 ||
	    strv_contains(*aliases, alias)) {
		free(alias);
		return 0;
	}
	if (strv_push_take(aliases, alias) < 0)
		return oom(e);
	return 0;
}

/* Other mounts of the holding mount's device whose root overlaps rel, the
 * protected path as a path within that filesystem. */
static int aliases_of(const struct mountinfo_table *t, size_t holder,
		      const char *rel, const char *protected_path,
		      char ***aliases, struct err **e)
{
	const struct mountinfo *h = &t->v[holder];

	for (size_t i = 0; i < t->n; i++) {
		const struct mountinfo *x = &t->v[i];
		const char *rest;
		char *alias;

		if (i == holder || x->major != h->major || x->minor != h->minor)
			continue;
		if ((rest = path_below(x->root, rel)))
			alias = path_join(x->mountpoint, rest);
		else if (path_below(rel, x->root))
			alias = strdup(x->mountpoint);
		else
			continue;
		if (alias_add(aliases, alias, protected_path, e) < 0)
			return -1;
	}
	return 0;
}

int guard_mount_aliases(const struct mountinfo_table *mounts,
			char *const *protected, char ***aliases,
			struct err **e)
{
	for (size_t i = 0; protected && protected[i]; i++) {
		const char *p = protected[i];
		ssize_t h;

		if (p[0] != '/')
			return err_set(e, ERR_INTERNAL, 0,
				       "protected path `%s` is not absolute",
				       p);
		h = mount_holding(mounts, p);
		if (h < 0)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "no mount in the mount table holds "
				       "`%s`",
				       p);
		const struct mountinfo *m = &mounts->v[h];
		_cleanup_free_ char *rel =
			path_join(m->root, path_below(m->mountpoint, p));
		if (!rel)
			return oom(e);
		if (aliases_of(mounts, (size_t)h, rel, p, aliases, e) < 0)
			return -1;
	}
	return 0;
}
