/* mirror_remove.c: the end of an apply (see mirror.h): the manifest's
 * paths the remote no longer has are removed from the host, unless they
 * are kept, pinned, changed on the host since the pack, or beneath a
 * directory the remote lists (or a pinned one) that did not come back
 * as a directory; then the directories the tar brought get their modes
 * and mtimes, deepest first. Every path is reached from its grant's
 * root without following a link, as the entries were. */
#include "container/ssh/mirror_int.h"

#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool in_remote(const struct mirror_state *ap, const char *path)
{
	return mirror_vec_has(&ap->remote, path);
}

/* Has every directory above path (beneath its grant) that the remote
 * lists, or that is pinned, come back as a directory? Otherwise the
 * remote's one is not a directory (or was not sent), and that the
 * listing lacks path says nothing of what the remote did with it. */
static bool above_came_back(const struct mirror_state *ap, const struct mirror_grant *g,
			    const char *path)
{
	char buf[PATH_MAX];

	snprintf(buf, sizeof(buf), "%s", path);
	for (char *s = strrchr(buf, '/'); s && (size_t)(s - buf) > g->len; s = strrchr(buf, '/')) {
		*s = '\0';
		if ((in_remote(ap, buf) || mirror_pinned(ap, buf)) &&
		    !mirror_vec_has(&ap->dirs, buf))
			return false;
	}
	return true;
}

/* Has the host's path changed since the pack: its type, dev, inode,
 * size, mtime or ctime? A directory's size and times change with what
 * it holds, removals beneath it included: for one, they are read before
 * any removal, and a directory that changed is left. */
static bool same_inode(const struct stat *st, const struct mirror_stat *ms)
{
	char t = S_ISDIR(st->st_mode)	? 'd'
		 : S_ISREG(st->st_mode) ? 'f'
		 : S_ISLNK(st->st_mode) ? 'l'
					: '?';

	return t == ms->type && (long long)(uint64_t)st->st_dev == ms->dev &&
	       (long long)(uint64_t)st->st_ino == ms->ino;
}

static bool changed(const struct stat *st, const struct mirror_stat *ms)
{
	return !same_inode(st, ms) || (!S_ISDIR(st->st_mode) && st->st_size != ms->size) ||
	       mirror_ts_ns(&st->st_mtim) != ms->mtime || mirror_ts_ns(&st->st_ctim) != ms->ctime;
}

/* The host's path, reached from its grant's root without a link: 1; 0
 * when it is not there or not reachable so (the removal says why); -1
 * when the host fails. */
static int host_stat(const struct mirror_grant *g, const char *path, struct stat *st,
		     struct err **e)
{
	const char *why = NULL, *last = NULL;
	_cleanup_close_ int pfd = mirror_walk_parent(g, path, false, &last, &why);

	if (pfd < 0) {
		if (why || mirror_errno_of_state(errno))
			return 0;
		mirror_host_fail(path, errno, "open", e);
		return -1;
	}
	if (fstatat(pfd, last, st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (mirror_errno_of_state(errno))
			return 0;
		mirror_host_fail(path, errno, "stat", e);
		return -1;
	}
	return 1;
}

/* Remove path, which the remote no longer has; dir_changed: what
 * changed() said of it before the removals, when it is a directory. */
static enum mirror_step remove_one(struct mirror_state *ap, const char *path, bool dir_changed,
				   struct err **e)
{
	const char *why = NULL, *last = NULL;
	_cleanup_close_ int pfd = -1;
	const struct mirror_grant *g;
	struct mirror_stat ms;
	struct stat st;
	bool root;

	g = mirror_grant_of(ap, path, &root);
	if (!g || root || in_remote(ap, path) || mirror_vec_has(&ap->written, path) ||
	    !mirror_manifest_get(ap->paths, path, &ms))
		return MIRROR_DONE;
	if (mirror_kept(ap, path))
		return mirror_refuse(ap, path, "a kept path, or beneath one: not removed", e);
	if (mirror_pinned(ap, path))
		return mirror_refuse(ap, path, "pinned (it holds a kept path): not removed", e);
	if (!above_came_back(ap, g, path))
		return mirror_leave(ap, path, "what holds it did not come back as a directory", e);
	pfd = mirror_walk_parent(g, path, false, &last, &why);
	if (pfd < 0)
		/* nothing of it there any more, or nothing of it reachable
		 * without a link */
		return why || errno == ENOENT ? MIRROR_DONE
					      : mirror_host_error(ap, path, errno, "open", e);
	if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? MIRROR_DONE
				       : mirror_host_error(ap, path, errno, "stat", e);
	/* a directory: its times as they were before the removals */
	if (S_ISDIR(st.st_mode) ? dir_changed || !same_inode(&st, &ms) : changed(&st, &ms))
		return mirror_leave(ap, path, "changed on the host since the copy", e);
	if (unlinkat(pfd, last, S_ISDIR(st.st_mode) ? AT_REMOVEDIR : 0) < 0) {
		if (errno == ENOTEMPTY || errno == EEXIST)
			return mirror_leave(ap, path, "not empty", e);
		return errno == ENOENT ? MIRROR_DONE
				       : mirror_host_error(ap, path, errno, "remove", e);
	}
	ap->nremoved++;
	return MIRROR_DONE;
}

int mirror_apply_removals(struct mirror_state *ap, struct err **e)
{
	struct mirror_vec todo = { 0 };
	_cleanup_free_ bool *dir_changed = NULL;
	const char *k;
	json_t *v;
	int r = 0;

	/* json_object_foreach wants a non-const object; nothing is changed */
	json_object_foreach((json_t *)ap->paths, k, v) {
		if (!in_remote(ap, k) && mirror_vec_push(&todo, k) < 0) {
			mirror_vec_free(&todo);
			return mirror_nomem(e);
		}
	}
	mirror_vec_sort(&todo);
	dir_changed = calloc(todo.n + 1, sizeof(*dir_changed));
	if (!dir_changed) {
		mirror_vec_free(&todo);
		return mirror_nomem(e);
	}
	/* directories' times before anything beneath them goes */
	for (size_t i = 0; r == 0 && i < todo.n; i++) {
		struct mirror_stat ms;
		struct stat st;
		const struct mirror_grant *g;
		bool root;
		int h;

		g = mirror_grant_of(ap, todo.v[i], &root);
		if (!g || root || !mirror_manifest_get(ap->paths, todo.v[i], &ms) || ms.type != 'd')
			continue;
		h = host_stat(g, todo.v[i], &st, e);
		if (h < 0)
			r = -1;
		dir_changed[i] = h == 1 && changed(&st, &ms);
	}
	/* backwards: what a directory holds before the directory */
	for (size_t i = todo.n; r == 0 && i-- > 0;)
		if (remove_one(ap, todo.v[i], dir_changed[i], e) == MIRROR_FAIL)
			r = -1;
	mirror_vec_free(&todo);
	return r;
}

static enum mirror_step set_mode(struct mirror_state *ap, const struct mirror_dirmode *m,
				 struct err **e)
{
	const struct timespec ts[2] = { { .tv_nsec = UTIME_OMIT }, m->mtime };
	const char *why = NULL, *last = NULL;
	_cleanup_close_ int pfd = -1, fd = -1;
	const struct mirror_grant *g;
	bool root;

	g = mirror_grant_of(ap, m->path, &root);
	if (!g || root)
		return MIRROR_DONE;
	pfd = mirror_walk_parent(g, m->path, false, &last, &why);
	if (pfd < 0)
		return why || errno == ENOENT ? MIRROR_DONE
					      : mirror_host_error(ap, m->path, errno, "open", e);
	fd = fs_open_nofollow(pfd, last, O_RDONLY | O_DIRECTORY, 0);
	/* replaced by a later entry, or gone with a removal */
	if (fd < 0 && (errno == ENOENT || errno == ENOTDIR || errno == ELOOP))
		return MIRROR_DONE;
	if (fd < 0)
		return mirror_host_error(ap, m->path, errno, "open", e);
	if (fchmod(fd, m->mode) < 0 || futimens(fd, ts) < 0)
		return mirror_host_error(ap, m->path, errno, "set its mode", e);
	return MIRROR_DONE;
}

static int cmp_mode_desc(const void *a, const void *b)
{
	const struct mirror_dirmode *x = a, *y = b;

	return strcmp(y->path, x->path);
}

/* Deepest first: a directory made unsearchable must not stop those
 * beneath it. */
int mirror_apply_modes(struct mirror_state *ap, struct err **e)
{
	if (ap->nmodes > 1)
		qsort(ap->modes, ap->nmodes, sizeof(*ap->modes), cmp_mode_desc);
	for (size_t i = 0; i < ap->nmodes; i++)
		if (set_mode(ap, &ap->modes[i], e) == MIRROR_FAIL)
			return -1;
	return 0;
}
