/* links.c: the checks that catch one file reachable under two names (see
 * links.h): a walk of the workspace that accounts for every hard link,
 * and the mount-table search for bind mounts of protected paths. */
#include "guard/links.h"
#include "lib/cleanup.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <liburing.h>
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
	char *path;	/* workspace-relative name, the first in walk order */
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

/* --- the walk ------------------------------------------------------------ *
 *
 * Every launch pays for it, so it is lean: each directory is read with
 * getdents64 into one buffer, a symbolic link is skipped by its type
 * alone, a directory is opened from its parent's descriptor, and only the
 * other entries are stat'ed, for their link counts. Nothing is sorted:
 * which name a refusal gives is settled at the end, by walk order
 * (walk_before), whatever order the directories listed their entries in. */

/* The order the names would be walked in, directories read in name order
 * with their files before their subdirectories: is a before b? */
static bool walk_before(const char *a, const char *b)
{
	for (;;) {
		const char *ea = strchrnul(a, '/'), *eb = strchrnul(b, '/');
		size_t la = (size_t)(ea - a), lb = (size_t)(eb - b);
		int c;

		if (la != lb || memcmp(a, b, la) != 0) {
			/* a file of this directory comes before a subdirectory */
			if (!*ea != !*eb)
				return !*ea;
			c = memcmp(a, b, la < lb ? la : lb);
			return c < 0 || (c == 0 && la < lb);
		}
		if (!*ea || !*eb)
			return !*ea && *eb;
		a = ea + 1;
		b = eb + 1;
	}
}

/* Directories deeper than this are opened again from the workspace by
 * their path instead of keeping every ancestor's descriptor open. */
#define WALK_FD_DEPTH 64
#define WALK_BUF ((size_t)32 * 1024)
/* The stat calls a directory's listing asks for go to the kernel in
 * batches through io_uring, one system call for up to this many, which is
 * most of what the walk saves (each call crossing into the kernel is the
 * cost, above all in a virtual machine); without io_uring (a container's
 * filter refuses it) they are made one by one. */
#define WALK_BATCH 1024

struct pending_stat {
	const char *name;	/* in the listing's buffer */
	unsigned char type;
	struct statx sx;
};

struct walk {
	const char *workspace;
	char *const *denied;	/* workspace-relative; not entered */
	int rootfd;
	size_t max, count;
	struct inode_set links;	/* non-directories with more than one link */
	struct inode_set dirs;	/* walked: a directory bound twice goes once */
	char rel[PATH_MAX];	/* the current workspace-relative path */
	size_t len;
	bool uring;		/* ring below is set up */
	struct io_uring ring;
	struct pending_stat *pend;	/* WALK_BATCH of them */
	size_t n_pend;
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

/* Append name to the current path; -1 when it would not fit. */
static int rel_push(struct walk *w, const char *name, size_t *saved)
{
	size_t n = strlen(name), sep = w->len ? 1 : 0;

	*saved = w->len;
	if (w->len + sep + n >= sizeof(w->rel))
		return -1;
	if (sep)
		w->rel[w->len++] = '/';
	memcpy(w->rel + w->len, name, n + 1);
	w->len += n;
	return 0;
}

static void rel_pop(struct walk *w, size_t saved)
{
	w->len = saved;
	w->rel[saved] = '\0';
}

static bool rel_denied(const struct walk *w)
{
	for (size_t i = 0; w->denied && w->denied[i]; i++)
		if (strcmp(w->rel, w->denied[i]) == 0)
			return true;
	return false;
}

static int note_link(struct walk *w, const struct statx *sx)
{
	dev_t dev = makedev(sx->stx_dev_major, sx->stx_dev_minor);
	struct inode_rec *r = inode_get(&w->links, dev, sx->stx_ino);

	if (!r)
		return oom(w->e);
	if (!r->path || walk_before(w->rel, r->path)) {
		char *p = strdup(w->rel);
		if (!p)
			return oom(w->e);
		free(r->path);
		r->path = p;
	}
	r->seen++;
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

static int walk_dir(struct walk *w, int dfd, size_t depth);

/* A subdirectory, by its name in dfd (the current path ends in it); d_ino
 * is what the listing said it was. */
static int walk_sub(struct walk *w, int dfd, unsigned long long d_ino, size_t depth)
{
	_cleanup_close_ int fd = -1;
	struct statx sx;
	struct inode_rec *seen;
	const char *name = strrchr(w->rel, '/') ? strrchr(w->rel, '/') + 1 : w->rel;

	fd = dfd >= 0 ? openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
		      : open_beneath(w->rootfd, w->rel);
	/* Gone since it was listed: a vanished name can only lower a count,
	 * which refuses rather than passes. */
	if (fd < 0 && errno == ENOENT)
		return 0;
	if (fd < 0)
		return walk_refuse(w, errno, w->rel,
				   errno == ELOOP || errno == ENOTDIR ? CHANGED : CANNOT_READ);
	if (statx(fd, "", AT_EMPTY_PATH, STATX_INO | STATX_TYPE, &sx) < 0)
		return walk_refuse(w, errno, w->rel, CANNOT_READ);
	/* The one listed, unless a mount covers the name (then the listing
	 * shows what lies beneath it) */
	if (!is_mount_root(&sx) && d_ino && sx.stx_ino != d_ino)
		return walk_refuse(w, 0, w->rel, CHANGED);
	seen = inode_get(&w->dirs, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino);
	if (!seen)
		return oom(w->e);
	if (seen->seen++ > 0)
		return 0;
	return walk_dir(w, steal_fd(&fd), depth + 1);
}

/* The subdirectories a listing found, to walk once it is read: each name
 * with the inode the listing (or a stat) gave it, 0 when unknown. */
struct subdirs {
	char **names;
	unsigned long long *inos;
	size_t n;
};

static int sub_push(struct walk *w, struct subdirs *s, const char *name,
		    unsigned long long ino)
{
	unsigned long long *v = realloc(s->inos, (s->n + 1) * sizeof(*v));

	if (!v)
		return oom(w->e);
	s->inos = v;
	if (strv_push(&s->names, name) < 0)
		return oom(w->e);
	s->inos[s->n++] = ino;
	return 0;
}

/* What a stat of an entry (the current path ending in it) found. */
static int stat_result(struct walk *w, int err, const struct pending_stat *p,
		       struct subdirs *subdirs)
{
	if (err == ENOENT)
		return 0; /* gone since it was listed: a count can only drop */
	if (err)
		return walk_refuse(w, err, w->rel, CANNOT_READ);
	if (S_ISDIR(p->sx.stx_mode)) {
		/* a directory the listing gave no type for, unless it was
		 * swapped for one since */
		if (p->type != DT_UNKNOWN)
			return walk_refuse(w, 0, w->rel, CHANGED);
		return sub_push(w, subdirs, p->name, p->sx.stx_ino);
	}
	if (p->sx.stx_nlink > 1 && !S_ISLNK(p->sx.stx_mode) && !is_mount_root(&p->sx))
		return note_link(w, &p->sx);
	return 0;
}

/* The stats queued for dfd, answered: the batch goes to the kernel in one
 * call and each answer is looked at with its name on the current path. */
static int flush_stats(struct walk *w, struct subdirs *subdirs)
{
	size_t n = w->n_pend, done = 0;
	int r = 0;

	w->n_pend = 0;
	if (n == 0)
		return 0;
	int *res = calloc(n, sizeof(*res));
	if (!res)
		return oom(w->e);
	while (done < n) {
		struct io_uring_cqe *cqe;
		int ret = io_uring_submit_and_wait(&w->ring, 1);

		if (ret < 0 && ret != -EINTR) {
			r = walk_refuse(w, -ret, w->rel, CANNOT_READ);
			break;
		}
		while (io_uring_peek_cqe(&w->ring, &cqe) == 0) {
			res[cqe->user_data] = cqe->res < 0 ? -cqe->res : 0;
			io_uring_cqe_seen(&w->ring, cqe);
			done++;
		}
	}
	for (size_t i = 0; r == 0 && i < n; i++) {
		size_t saved;

		if (rel_push(w, w->pend[i].name, &saved) < 0) {
			r = walk_refuse(w, ENAMETOOLONG, w->rel, CANNOT_READ);
			break;
		}
		r = stat_result(w, res[i], &w->pend[i], subdirs);
		rel_pop(w, saved);
	}
	free(res);
	return r;
}

/* One entry of a directory being read, the current path ending in it:
 * a subdirectory to walk later, a link to pass over, anything else to
 * stat for its link count (queued, or at once without io_uring). */
static int walk_entry(struct walk *w, int dfd, const char *name, unsigned char type,
		      unsigned long long ino, struct subdirs *subdirs)
{
	struct pending_stat *p;

	if (type == DT_LNK)
		return 0; /* a link is a name for a path, not for a file */
	if (type == DT_DIR)
		return sub_push(w, subdirs, name, ino);
	if (!w->uring) {
		struct pending_stat one = { .name = name, .type = type };
		int err = statx(dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
				STATX_TYPE | STATX_INO | STATX_NLINK, &one.sx) < 0 ? errno : 0;
		size_t saved;
		int r;

		if (rel_push(w, name, &saved) < 0)
			return walk_refuse(w, ENAMETOOLONG, w->rel, CANNOT_READ);
		r = stat_result(w, err, &one, subdirs);
		rel_pop(w, saved);
		return r;
	}
	p = &w->pend[w->n_pend];
	*p = (struct pending_stat){ .name = name, .type = type };
	struct io_uring_sqe *sqe = io_uring_get_sqe(&w->ring);
	if (!sqe)
		return walk_refuse(w, EBUSY, w->rel, CANNOT_READ);
	io_uring_prep_statx(sqe, dfd, name, AT_SYMLINK_NOFOLLOW | AT_NO_AUTOMOUNT,
			    STATX_TYPE | STATX_INO | STATX_NLINK, &p->sx);
	sqe->user_data = w->n_pend++;
	return 0;
}

struct linux_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

/* Read the directory dfd (the current path), counting its entries against
 * the bound and stat'ing what is not a directory or a link; then walk its
 * subdirectories. dfd is closed here. */
static int walk_dir(struct walk *w, int dfd, size_t depth)
{
	_cleanup_close_ int fd = dfd;
	_cleanup_free_ char *buf = malloc(WALK_BUF);
	struct subdirs subdirs = { calloc(1, sizeof(char *)), NULL, 0 };
	long got = 0;
	int r = 0;

	if (!buf || !subdirs.names) {
		strv_free(subdirs.names);
		return oom(w->e);
	}
	while (r == 0 && (got = syscall(SYS_getdents64, fd, buf, WALK_BUF)) > 0) {
		for (long off = 0; r == 0 && off < got;) {
			const struct linux_dirent64 *de = (const void *)(buf + off);
			size_t saved;

			off += de->d_reclen;
			if (de->d_name[0] == '.' && (!de->d_name[1] ||
						     (de->d_name[1] == '.' && !de->d_name[2])))
				continue;
			if (++w->count > w->max) {
				r = err_set(w->e, ERR_DENIED, 0,
					       "workspace `%s` holds more than %zu "
					       "entries, the most the hard-link check "
					       "walks: raise \"limits\": "
					       "{\"workspace_entries\": N} in the policy "
					       "(or --limit workspace_entries=N), or "
					       "run in a smaller workspace",
					       w->workspace, w->max);
				break;
			}
			if (rel_push(w, de->d_name, &saved) < 0) {
				r = walk_refuse(w, ENAMETOOLONG, w->rel, CANNOT_READ);
				break;
			}
			/* A denied path's names are not the workspace's to count. */
			bool denied = rel_denied(w);
			rel_pop(w, saved);
			if (!denied)
				r = walk_entry(w, fd, de->d_name, de->d_type, de->d_ino, &subdirs);
			if (r == 0 && w->n_pend == WALK_BATCH)
				r = flush_stats(w, &subdirs);
		}
		/* the names are in buf, which the next read overwrites */
		if (r == 0)
			r = flush_stats(w, &subdirs);
	}
	if (r == 0 && got < 0)
		r = walk_refuse(w, errno, w->rel, CANNOT_READ);
	/* Deep down, the descriptor goes before the subdirectories are
	 * walked; they are opened again by path from the workspace. */
	if (depth > WALK_FD_DEPTH)
		fd = (close(fd), -1);
	for (size_t i = 0; r == 0 && i < subdirs.n; i++) {
		size_t saved;

		if (rel_push(w, subdirs.names[i], &saved) < 0) {
			r = walk_refuse(w, ENAMETOOLONG, w->rel, CANNOT_READ);
			break;
		}
		r = walk_sub(w, fd, subdirs.inos[i], depth);
		rel_pop(w, saved);
	}
	strv_free(subdirs.names);
	free(subdirs.inos);
	return r;
}

/* The inode with names the walk did not find whose first name comes
 * first in walk order. */
static const struct inode_rec *first_outsider(const struct inode_set *s)
{
	const struct inode_rec *best = NULL;

	for (size_t i = 0; i < s->cap; i++) {
		const struct inode_rec *r = &s->v[i];

		if (r->used && r->seen != r->nlink &&
		    (!best || walk_before(r->path, best->path)))
			best = r;
	}
	return best;
}

static int walk_run(struct walk *w)
{
	struct statx sx;
	struct inode_rec *root;
	const struct inode_rec *bad;
	int fd;

	if (statx(w->rootfd, "", AT_EMPTY_PATH, STATX_INO, &sx) < 0)
		return walk_refuse(w, errno, "", CANNOT_READ);
	root = inode_get(&w->dirs, makedev(sx.stx_dev_major, sx.stx_dev_minor), sx.stx_ino);
	if (!root)
		return oom(w->e);
	root->seen++;
	fd = fcntl(w->rootfd, F_DUPFD_CLOEXEC, 3);
	if (fd < 0)
		return walk_refuse(w, errno, "", CANNOT_READ);
	if (walk_dir(w, fd, 0) < 0)
		return -1;
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
	struct walk *w = calloc(1, sizeof(*w));
	_cleanup_strv_ char **rel = calloc(1, sizeof(char *));
	int r;

	if (!w || !rel) {
		free(w);
		return oom(e);
	}
	for (size_t i = 0; denied && denied[i]; i++) {
		const char *below = path_below(workspace, denied[i]);
		if (below && *below && strv_push(&rel, below) < 0) {
			free(w);
			return oom(e);
		}
	}
	*w = (struct walk){ .workspace = workspace, .denied = rel, .max = max_entries, .e = e };
	w->pend = calloc(WALK_BATCH, sizeof(*w->pend));
	/* no io_uring (a filter refuses it, or the kernel has it off): one
	 * stat at a time */
	w->uring = w->pend && io_uring_queue_init(WALK_BATCH, &w->ring, 0) == 0;
	w->rootfd = open(workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (w->rootfd < 0)
		r = walk_refuse(w, errno, "", CANNOT_READ);
	else
		r = walk_run(w);
	inode_set_free(&w->links);
	inode_set_free(&w->dirs);
	if (w->uring)
		io_uring_queue_exit(&w->ring);
	free(w->pend);
	if (w->rootfd >= 0)
		close(w->rootfd);
	free(w);
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
