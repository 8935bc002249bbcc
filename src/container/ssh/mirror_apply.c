/* mirror_apply.c: mirror_apply (see mirror.h), a run's changes copied
 * back from the remote onto the host: the rules, the tar's entries, and
 * the apply's set-up (the removals and directory modes that end it are
 * mirror_remove.c's). The remote controls the listing
 * and every byte of the tar, so nothing it says is taken as a path to
 * follow: each entry is walked to from its write grant's root, one
 * element at a time, never through a link, and written beside its
 * target under a temporary name before it is renamed into place. Kept
 * paths and the directories above them (pinned) cannot be replaced,
 * removed or got round. */
#include "container/ssh/mirror_int.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#define APPLY_CHUNK ((size_t)64 * 1024)
#define TMP_TRIES 16

int mirror_nomem(struct err **e)
{
	return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: apply");
}

enum mirror_step mirror_refuse(struct mirror_state *ap, const char *path, const char *why,
			       struct err **e)
{
	if (mirror_note(ap->report, "refused", "refused_more", path, why) < 0)
		return mirror_nomem(e);
	return MIRROR_REFUSED;
}

enum mirror_step mirror_leave(struct mirror_state *ap, const char *path, const char *why,
			      struct err **e)
{
	if (mirror_note(ap->report, "left", "left_more", path, why) < 0)
		return mirror_nomem(e);
	return MIRROR_DONE;
}

bool mirror_errno_of_state(int err)
{
	switch (err) {
	case EACCES: case EPERM: case EEXIST: case ENOTEMPTY: case ENOTDIR: case EISDIR:
	case ELOOP: case ENOENT: case ENAMETOOLONG: case EBUSY: case EXDEV: case EROFS:
	case ETXTBSY: case EMLINK:
		return true;
	default:
		return false;
	}
}

int mirror_host_fail(const char *path, int err, const char *what, struct err **e)
{
	_cleanup_free_ char *shown = mirror_show(path);

	return err_set(e, ERR_UNAVAILABLE, err, "mirror: apply `%s`: %s", shown ? shown : "?",
		       what);
}

enum mirror_step mirror_host_error(struct mirror_state *ap, const char *path, int err,
				   const char *what, struct err **e)
{
	char why[128];

	if (!mirror_errno_of_state(err))
		return mirror_host_fail(path, err, what, e);
	snprintf(why, sizeof(why), "host: %s: %s", what, strerror(err));
	return mirror_refuse(ap, path, why, e);
}

/* The absolute path a tar entry's name stands for (out holds PATH_MAX):
 * one leading "/" dropped (GNU tar drops it too), "." elements dropped,
 * one trailing "/" allowed (a directory's). NULL with *why otherwise. */
static const char *entry_path(const char *name, char *out, const char **why)
{
	size_t o = 0;
	const char *p = name;

	if (!name || !*name)
		return *why = "no name", NULL;
	if (*p == '/')
		p++;
	while (*p) {
		const char *end = strchrnul(p, '/');
		size_t n = (size_t)(end - p);

		if (n == 0)
			return *why = "a name with an empty element", NULL;
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return *why = "a name with a \"..\" element", NULL;
		if (n > NAME_MAX)
			return *why = "a name with an element longer than NAME_MAX", NULL;
		if (!(n == 1 && p[0] == '.')) {
			if (o + 1 + n >= PATH_MAX)
				return *why = "a name longer than PATH_MAX", NULL;
			out[o++] = '/';
			memcpy(out + o, p, n);
			o += n;
		}
		if (!*end)
			break;
		p = end + 1;
	}
	if (o == 0)
		return *why = "a name for the root", NULL;
	out[o] = '\0';
	return out;
}

bool mirror_kept(const struct mirror_state *ap, const char *path)
{
	for (size_t i = 0; i < ap->kept.n; i++)
		if (fs_path_within(path, ap->kept.v[i]))
			return true;
	return false;
}

bool mirror_pinned(const struct mirror_state *ap, const char *path)
{
	return mirror_vec_has(&ap->pinned, path);
}

const struct mirror_grant *mirror_grant_of(const struct mirror_state *ap, const char *path,
					   bool *root)
{
	const struct mirror_grant *best = NULL;

	*root = false;
	for (size_t i = 0; i < ap->ng; i++) {
		if (strcmp(path, ap->g[i].path) == 0)
			*root = true;
		else if (fs_path_within(path, ap->g[i].path) && (!best || ap->g[i].len > best->len))
			best = &ap->g[i];
	}
	return best;
}

int mirror_walk_parent(const struct mirror_grant *g, const char *path, bool create,
		       const char **last, const char **why)
{
	char rel[PATH_MAX];
	int cur;
	char *c = rel;

	*why = NULL;
	if (g->fd < 0)
		return errno = g->err, -1;
	snprintf(rel, sizeof(rel), "%s", path + g->len + 1);
	cur = fcntl(g->fd, F_DUPFD_CLOEXEC, 0);
	if (cur < 0)
		return -1;
	for (char *slash; (slash = strchr(c, '/')); c = slash + 1) {
		int next;

		*slash = '\0';
		next = fs_open_nofollow(cur, c, O_PATH | O_DIRECTORY, 0);
		if (next < 0 && errno == ENOENT && create) {
			if (mkdirat(cur, c, 0700) < 0 && errno != EEXIST) {
				int saved = errno;

				close(cur);
				return errno = saved, -1;
			}
			next = fs_open_nofollow(cur, c, O_PATH | O_DIRECTORY, 0);
		}
		if (next < 0) {
			int saved = errno;
			struct stat st;

			/* a link's O_PATH open is not a directory: say which */
			if (saved == ENOTDIR || saved == ELOOP)
				*why = fstatat(cur, c, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
						       S_ISLNK(st.st_mode)
					       ? "beneath a symbolic link on the host"
					       : "beneath a non-directory on the host";
			close(cur);
			return errno = saved, -1;
		}
		close(cur);
		cur = next;
	}
	*last = path + (size_t)(c - rel) + g->len + 1;
	return cur;
}

static int tmp_name(char *buf, size_t size)
{
	unsigned int rnd;

	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return -1;
	snprintf(buf, size, ".cordon-mirror-%08x.tmp", rnd);
	return 0;
}

/* Put tmp (beside it in pfd) in place of last: a directory in the way
 * is removed first (the caller refused a pinned one). */
static enum mirror_step replace(struct mirror_state *ap, int pfd, const char *tmp,
				const char *last, const char *path, struct err **e)
{
	struct stat st;

	if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && S_ISDIR(st.st_mode) &&
	    fs_remove_tree(pfd, last, MIRROR_DEPTH_MAX) < 0) {
		int saved = errno;

		unlinkat(pfd, tmp, 0);
		return mirror_host_error(ap, path, saved ? saved : ENOTEMPTY,
					 "remove the directory in the way", e);
	}
	if (renameat(pfd, tmp, pfd, last) < 0) {
		int saved = errno;

		unlinkat(pfd, tmp, 0);
		return mirror_host_error(ap, path, saved, "rename into place", e);
	}
	if (mirror_vec_push(&ap->written, path) < 0)
		return mirror_nomem(e);
	ap->nwritten++;
	return MIRROR_DONE;
}

static enum mirror_step put_file(struct mirror_state *ap, struct archive *a,
				 struct archive_entry *en, int pfd, const char *last,
				 const char *path, struct err **e)
{
	const struct timespec ts[2] = {
		{ .tv_nsec = UTIME_OMIT },
		{ .tv_sec = archive_entry_mtime(en), .tv_nsec = archive_entry_mtime_nsec(en) },
	};
	la_int64_t size = archive_entry_size_is_set(en) ? archive_entry_size(en) : 0;
	_cleanup_close_ int fd = -1;
	char tmp[64];

	if (size < 0 || (unsigned long long)size > ap->max_bytes - ap->bytes)
		return err_set(e, ERR_DENIED, EFBIG, "mirror: apply: more than %llu bytes",
			       ap->max_bytes);
	for (int i = 0; fd < 0 && i < TMP_TRIES; i++) {
		if (tmp_name(tmp, sizeof(tmp)) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "mirror: apply: getrandom");
		fd = fs_open_nofollow(pfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
		if (fd < 0 && errno != EEXIST)
			return mirror_host_error(ap, path, errno, "create", e);
	}
	if (fd < 0)
		return mirror_host_error(ap, path, EEXIST, "create", e);
	for (;;) {
		la_ssize_t n = archive_read_data(a, ap->buf, APPLY_CHUNK);
		_cleanup_free_ char *shown = NULL;

		if (n == 0)
			break;
		if (n > 0 && (unsigned long long)n <= ap->max_bytes - ap->bytes &&
		    fs_write_exact(fd, ap->buf, (size_t)n) == 0) {
			ap->bytes += (unsigned long long)n;
			continue;
		}
		shown = mirror_show(path);
		if (n > 0 && (unsigned long long)n <= ap->max_bytes - ap->bytes)
			err_set(e, ERR_UNAVAILABLE, errno, "mirror: apply `%s`: write",
				shown ? shown : "?");
		else if (n > 0)
			err_set(e, ERR_DENIED, EFBIG, "mirror: apply: more than %llu bytes",
				ap->max_bytes);
		else
			err_set(e, ERR_DENIED, 0, "mirror: apply `%s`: the tar stream: %s",
				shown ? shown : "?",
				archive_error_string(a) ? archive_error_string(a) : "corrupt");
		unlinkat(pfd, tmp, 0);
		return MIRROR_FAIL;
	}
	if (fchmod(fd, archive_entry_perm(en) & 0777) < 0 || futimens(fd, ts) < 0 ||
	    close(steal_fd(&fd)) < 0) {
		int saved = errno;

		unlinkat(pfd, tmp, 0);
		return mirror_host_error(ap, path, saved, "write", e);
	}
	return replace(ap, pfd, tmp, last, path, e);
}

static enum mirror_step put_link(struct mirror_state *ap, struct archive_entry *en, int pfd,
				 const char *last, const char *path, struct err **e)
{
	const struct timespec ts[2] = {
		{ .tv_nsec = UTIME_OMIT },
		{ .tv_sec = archive_entry_mtime(en), .tv_nsec = archive_entry_mtime_nsec(en) },
	};
	const char *target = archive_entry_symlink(en);
	char tmp[64];
	int r = -1;

	if (!target || !*target || strlen(target) >= PATH_MAX)
		return mirror_refuse(ap, path, "a link whose target is empty or too long", e);
	for (int i = 0; r < 0 && i < TMP_TRIES; i++) {
		if (tmp_name(tmp, sizeof(tmp)) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "mirror: apply: getrandom");
		r = symlinkat(target, pfd, tmp);
		if (r < 0 && errno != EEXIST)
			return mirror_host_error(ap, path, errno, "create", e);
	}
	if (r < 0)
		return mirror_host_error(ap, path, EEXIST, "create", e);
	/* a link's own time; AT_SYMLINK_NOFOLLOW: never its target's */
	if (utimensat(pfd, tmp, ts, AT_SYMLINK_NOFOLLOW) < 0) {
		int saved = errno;

		unlinkat(pfd, tmp, 0);
		return mirror_host_error(ap, path, saved, "set its time", e);
	}
	return replace(ap, pfd, tmp, last, path, e);
}

static enum mirror_step put_dir(struct mirror_state *ap, struct archive_entry *en, int pfd,
				const char *last, const char *path, struct err **e)
{
	struct stat st;

	if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
		/* a link or file where the remote has a directory */
		if (mirror_pinned(ap, path))
			return mirror_refuse(ap, path,
					     "pinned (it holds a kept path), and not a directory "
					     "on the host", e);
		if (unlinkat(pfd, last, 0) < 0)
			return mirror_host_error(ap, path, errno, "remove what is in the way", e);
	}
	if (mkdirat(pfd, last, 0700) < 0 && errno != EEXIST)
		return mirror_host_error(ap, path, errno, "make the directory", e);
	if (fstatat(pfd, last, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return mirror_host_error(ap, path, errno, "make the directory", e);
	if (!S_ISDIR(st.st_mode)) /* something else made it meanwhile */
		return mirror_host_error(ap, path, ENOTDIR, "make the directory", e);
	if (mirror_vec_push(&ap->dirs, path) < 0)
		return mirror_nomem(e);
	ap->ndirs++;
	/* a pinned directory keeps its mode: nobody else gets to write in
	 * what holds a kept path */
	if (mirror_pinned(ap, path))
		return MIRROR_DONE;
	if (ap->nmodes == ap->capmodes) {
		size_t cap = ap->capmodes ? ap->capmodes * 2 : 64;
		struct mirror_dirmode *m = realloc(ap->modes, cap * sizeof(*m));

		if (!m)
			return mirror_nomem(e);
		ap->modes = m;
		ap->capmodes = cap;
	}
	ap->modes[ap->nmodes].path = strdup(path);
	if (!ap->modes[ap->nmodes].path)
		return mirror_nomem(e);
	ap->modes[ap->nmodes].mode = archive_entry_perm(en) & 0777;
	ap->modes[ap->nmodes].mtime = (struct timespec){ .tv_sec = archive_entry_mtime(en),
							 .tv_nsec = archive_entry_mtime_nsec(en) };
	ap->nmodes++;
	return MIRROR_DONE;
}

/* Why an entry of this type is refused, or NULL. */
static const char *type_refused(struct archive_entry *en)
{
	if (archive_entry_hardlink(en))
		return "a hard link";
	switch (archive_entry_filetype(en)) {
	case AE_IFDIR: case AE_IFREG: case AE_IFLNK:
		return NULL;
	case AE_IFIFO:
		return "a fifo";
	case AE_IFCHR:
		return "a character device";
	case AE_IFBLK:
		return "a block device";
	case AE_IFSOCK:
		return "a socket";
	default:
		return "of an unknown type";
	}
}

static enum mirror_step apply_entry(struct mirror_state *ap, struct archive *a,
				    struct archive_entry *en, struct err **e)
{
	char buf[PATH_MAX];
	const char *why = NULL, *last = NULL, *name = archive_entry_pathname(en);
	const char *path = entry_path(name, buf, &why);
	unsigned int type = archive_entry_filetype(en);
	const struct mirror_grant *g;
	_cleanup_close_ int pfd = -1;
	bool root;

	if (!path)
		return mirror_refuse(ap, name ? name : "", why, e);
	if ((why = type_refused(en)))
		return mirror_refuse(ap, path, why, e);
	g = mirror_grant_of(ap, path, &root);
	if (root) {
		/* a grant's root stays the directory it is, as it is */
		if (type != AE_IFDIR)
			return mirror_refuse(ap, path,
					     "a write grant's root, which stays a directory", e);
		return mirror_vec_push(&ap->dirs, path) < 0 ? mirror_nomem(e) : MIRROR_DONE;
	}
	if (!g)
		return mirror_refuse(ap, path, "outside the write grants", e);
	if (mirror_kept(ap, path))
		return mirror_refuse(ap, path, "a kept path, or beneath one", e);
	if (type != AE_IFDIR && mirror_pinned(ap, path))
		return mirror_refuse(ap, path,
				     "pinned (it holds a kept path): it stays a directory", e);
	pfd = mirror_walk_parent(g, path, true, &last, &why);
	if (pfd < 0)
		return why ? mirror_refuse(ap, path, why, e)
			   : mirror_host_error(ap, path, errno, "open", e);
	/* what the pack skipped on the host (a fifo, a socket, a device)
	 * stays: the remote never had it, so nothing there replaces it */
	struct stat hst;
	if (fstatat(pfd, last, &hst, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(hst.st_mode) &&
	    !S_ISREG(hst.st_mode) && !S_ISLNK(hst.st_mode))
		return mirror_refuse(ap, path,
				     "a fifo, socket or device on the host, which is never replaced",
				     e);
	if (type == AE_IFDIR)
		return put_dir(ap, en, pfd, last, path, e);
	if (type == AE_IFLNK)
		return put_link(ap, en, pfd, last, path, e);
	return put_file(ap, a, en, pfd, last, path, e);
}

static la_ssize_t tar_read(struct archive *a, void *arg, const void **buf)
{
	const struct mirror_state *ap = arg;

	for (;;) {
		ssize_t n = read(ap->tar_fd, ap->in, APPLY_CHUNK);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			archive_set_error(a, errno, "read");
		*buf = ap->in;
		return n;
	}
}

static const char *said(struct archive *a)
{
	const char *m = archive_error_string(a);

	return m ? m : "corrupt";
}

static int apply_tar(struct mirror_state *ap, struct err **e)
{
	struct archive *a = archive_read_new();
	struct archive_entry *en;
	int r = 0;

	if (!a)
		return mirror_nomem(e);
	/* tar only (ustar, pax, GNU): no other format, no decompression */
	if (archive_read_support_format_tar(a) != ARCHIVE_OK ||
	    archive_read_support_format_empty(a) != ARCHIVE_OK)
		r = err_set(e, ERR_INTERNAL, 0, "mirror: apply: %s", said(a));
	else if (archive_read_open(a, ap, NULL, tar_read, NULL) != ARCHIVE_OK)
		r = err_set(e, ERR_DENIED, 0, "mirror: apply: the tar stream: %s", said(a));
	while (r == 0) {
		int h = archive_read_next_header(a, &en);

		if (h == ARCHIVE_EOF)
			break;
		/* ARCHIVE_WARN: a name not in the locale's charset, as its bytes */
		if (h != ARCHIVE_OK && h != ARCHIVE_WARN)
			r = err_set(e, ERR_DENIED, 0, "mirror: apply: the tar stream: %s", said(a));
		else if (++ap->entries > ap->max_entries)
			r = err_set(e, ERR_DENIED, 0, "mirror: apply: more than %zu entries",
				    ap->max_entries);
		else if (apply_entry(ap, a, en, e) == MIRROR_FAIL)
			r = -1;
	}
	archive_read_free(a);
	return r;
}

/* --- setting up ------------------------------------------------------ */

static int open_grants(struct mirror_state *ap, char *const *grants, struct err **e)
{
	ap->ng = 0;
	ap->g = calloc(strv_len(grants) + 1, sizeof(*ap->g));
	if (!ap->g)
		return mirror_nomem(e);
	for (size_t i = 0; grants && grants[i]; i++) {
		struct mirror_grant *g = &ap->g[ap->ng++];

		g->path = grants[i];
		g->len = strlen(grants[i]);
		/* canonical: no link on its way, and it is a directory */
		g->fd = fs_open_nofollow(AT_FDCWD, grants[i], O_PATH | O_DIRECTORY, 0);
		g->err = g->fd < 0 ? errno : 0;
		if (g->fd < 0 && !mirror_errno_of_state(g->err))
			return err_set(e, ERR_UNAVAILABLE, g->err,
				       "mirror: apply: open write grant %zu", i);
	}
	return 0;
}

/* The kept paths as given and as the host resolves them, and every
 * directory from a grant's root down to each kept path's parent. */
static int keep_and_pin(struct mirror_state *ap, char *const *keep, struct err **e)
{
	for (size_t i = 0; keep && keep[i]; i++) {
		_cleanup_err_ struct err *ignored = NULL;
		_cleanup_free_ char *canon = NULL;

		if (mirror_vec_push(&ap->kept, keep[i]) < 0)
			return mirror_nomem(e);
		/* best effort: the given form is kept whatever happens here */
		if (fs_canonical(keep[i], &canon, &ignored) == 0 && strcmp(canon, keep[i]) != 0 &&
		    mirror_path_ok(canon) && mirror_vec_push(&ap->kept, canon) < 0)
			return mirror_nomem(e);
	}
	for (size_t i = 0; i < ap->kept.n; i++) {
		const char *k = ap->kept.v[i];
		size_t n = strlen(k);

		for (size_t j = 0; j < ap->ng; j++) {
			const struct mirror_grant *g = &ap->g[j];

			if (!fs_path_within(k, g->path) || n == g->len)
				continue;
			for (size_t at = g->len; at < n; at++) {
				_cleanup_free_ char *dir = NULL;

				if (k[at] != '/')
					continue;
				dir = strndup(k, at);
				if (!dir || mirror_vec_push(&ap->pinned, dir) < 0)
					return mirror_nomem(e);
			}
		}
	}
	mirror_vec_sort(&ap->pinned);
	return 0;
}

static int finish_report(struct mirror_state *ap, struct err **e)
{
	json_t *rep = ap->report;

	if ((!json_object_get(rep, "refused") &&
	     json_object_set_new(rep, "refused", json_array()) < 0) ||
	    (!json_object_get(rep, "left") && json_object_set_new(rep, "left", json_array()) < 0) ||
	    json_object_set_new(rep, "written", json_integer(ap->nwritten)) < 0 ||
	    json_object_set_new(rep, "dirs", json_integer(ap->ndirs)) < 0 ||
	    json_object_set_new(rep, "removed", json_integer(ap->nremoved)) < 0 ||
	    json_object_set_new(rep, "bytes", json_integer((json_int_t)ap->bytes)) < 0)
		return mirror_nomem(e);
	return 0;
}

static void apply_free(struct mirror_state *ap)
{
	for (size_t i = 0; i < ap->ng; i++)
		if (ap->g[i].fd >= 0)
			close(ap->g[i].fd);
	free(ap->g);
	mirror_vec_free(&ap->kept);
	mirror_vec_free(&ap->pinned);
	mirror_vec_free(&ap->remote);
	mirror_vec_free(&ap->written);
	mirror_vec_free(&ap->dirs);
	for (size_t i = 0; i < ap->nmodes; i++)
		free(ap->modes[i].path);
	free(ap->modes);
	free(ap->in);
	free(ap->buf);
	json_decref(ap->report);
}

int mirror_apply(const struct mirror_rules *r, const json_t *manifest, char *const *remote_paths,
		 int tar_fd, json_t **report, struct err **e)
{
	struct mirror_state ap = {
		.tar_fd = tar_fd,
		.max_bytes = r->max_bytes ? r->max_bytes : MIRROR_APPLY_BYTES_MAX,
		.max_entries = r->max_entries ? r->max_entries : MIRROR_APPLY_ENTRIES_MAX,
	};
	int rc = -1;

	*report = NULL;
	if (mirror_check_paths(r->grants, "write grant", false, e) < 0 ||
	    mirror_check_paths(r->kept, "kept path", true, e) < 0 ||
	    mirror_manifest_paths(manifest, &ap.paths, e) < 0)
		return -1;
	if (mirror_check_paths(remote_paths, "remote path", true, e) < 0)
		return err_reclass(e, ERR_DENIED);
	if (strv_len(remote_paths) > MIRROR_APPLY_ENTRIES_MAX)
		return err_set(e, ERR_DENIED, 0, "mirror: apply: the remote lists more than %zu paths",
			       MIRROR_APPLY_ENTRIES_MAX);
	ap.report = json_object();
	ap.in = malloc(APPLY_CHUNK);
	ap.buf = malloc(APPLY_CHUNK);
	if (!ap.report || !ap.in || !ap.buf) {
		mirror_nomem(e);
		goto out;
	}
	for (size_t i = 0; remote_paths && remote_paths[i]; i++)
		if (mirror_vec_push(&ap.remote, remote_paths[i]) < 0) {
			mirror_nomem(e);
			goto out;
		}
	mirror_vec_sort(&ap.remote);
	if (open_grants(&ap, r->grants, e) < 0 || keep_and_pin(&ap, r->kept, e) < 0 ||
	    apply_tar(&ap, e) < 0)
		goto out;
	mirror_vec_sort(&ap.written);
	mirror_vec_sort(&ap.dirs);
	if (mirror_apply_removals(&ap, e) < 0 || mirror_apply_modes(&ap, e) < 0 ||
	    finish_report(&ap, e) < 0)
		goto out;
	*report = steal_pointer(&ap.report);
	rc = 0;
out:
	apply_free(&ap);
	return rc;
}
