/* mirror.c: the pack (mirror_pack: the roots as one tar to the remote,
 * and the manifest of what went), the helpers the caller uses to read the
 * remote's listing and choose what to fetch back, and what mirror.c and
 * mirror_apply.c share (see mirror_int.h). The walk follows no link:
 * every name is opened beneath its directory's fd, with no symbolic
 * link on the way, and checked to be the inode the walk saw. */
#include "container/ssh/mirror_int.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"

#include <archive.h>
#include <archive_entry.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define PACK_CHUNK ((size_t)64 * 1024)
#define SHOW_MAX 400

/* --- shared helpers -------------------------------------------------- */

int mirror_vec_push(struct mirror_vec *v, const char *s)
{
	char *copy = strdup(s);

	if (!copy)
		return errno = ENOMEM, -1;
	if (v->n + 1 >= v->cap) {
		size_t cap = v->cap ? v->cap * 2 : 64;
		char **nv = realloc(v->v, cap * sizeof(*nv));

		if (!nv) {
			free(copy);
			return errno = ENOMEM, -1;
		}
		v->v = nv;
		v->cap = cap;
	}
	v->v[v->n++] = copy;
	v->v[v->n] = NULL;
	return 0;
}

void mirror_vec_free(struct mirror_vec *v)
{
	for (size_t i = 0; i < v->n; i++)
		free(v->v[i]);
	free(v->v);
	*v = (struct mirror_vec){ 0 };
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void mirror_vec_sort(struct mirror_vec *v)
{
	if (v->n > 1)
		qsort(v->v, v->n, sizeof(*v->v), cmp_str);
}

bool mirror_vec_has(const struct mirror_vec *v, const char *s)
{
	return v->n > 0 && bsearch(&s, v->v, v->n, sizeof(*v->v), cmp_str);
}

char **mirror_vec_steal(struct mirror_vec *v)
{
	char **out = v->v;

	if (!out) {
		out = calloc(1, sizeof(*out));
		if (!out)
			return NULL;
	}
	*v = (struct mirror_vec){ 0 };
	return out;
}

bool mirror_path_ok(const char *p)
{
	return strlen(p) < PATH_MAX && fs_path_normal(p);
}

int mirror_check_paths(char *const *v, const char *what, bool root_ok, struct err **e)
{
	for (size_t i = 0; v && v[i]; i++) {
		if (!mirror_path_ok(v[i]))
			return err_set(e, ERR_CONFIG, 0,
				       "mirror: %s %zu is not an absolute path without empty, "
				       "\".\" or \"..\" elements",
				       what, i);
		if (!root_ok && strcmp(v[i], "/") == 0)
			return err_set(e, ERR_CONFIG, 0, "mirror: %s %zu is \"/\"", what, i);
	}
	return 0;
}

/* Length of the valid UTF-8 sequence at p (its code point in *cp), or 0. */
static size_t utf8_seq(const unsigned char *p, unsigned int *cp)
{
	unsigned int c = p[0], min;
	size_t n;

	if (c < 0x80) {
		*cp = c;
		return c ? 1 : 0;
	}
	if ((c & 0xe0) == 0xc0) {
		n = 2, min = 0x80, c &= 0x1f;
	} else if ((c & 0xf0) == 0xe0) {
		n = 3, min = 0x800, c &= 0x0f;
	} else if ((c & 0xf8) == 0xf0) {
		n = 4, min = 0x10000, c &= 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = (c << 6) | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

bool mirror_utf8_ok(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	unsigned int cp;

	while (*p) {
		size_t n = utf8_seq(p, &cp);

		if (n == 0)
			return false;
		p += n;
	}
	return true;
}

char *mirror_show(const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	/* at most 4 bytes out ("\xNN") for each of SHOW_MAX bytes in, or 4
	 * for the sequence that starts last; then "..." and the NUL */
	char *out = malloc(SHOW_MAX * 4 + 8), *o = out;
	unsigned int cp;

	if (!out)
		return NULL;
	for (size_t i = 0; i < SHOW_MAX && p[i];) {
		size_t n = utf8_seq(p + i, &cp);

		if (n == 1 && cp >= 0x20 && cp < 0x7f && cp != '\\') {
			*o++ = (char)cp;
		} else if (n == 1 && cp == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (n > 1 && cp >= 0xa0) {
			memcpy(o, p + i, n);
			o += n;
		} else {
			static const char hex[] = "0123456789abcdef";

			n = 1;
			*o++ = '\\';
			*o++ = 'x';
			*o++ = hex[p[i] >> 4];
			*o++ = hex[p[i] & 15];
		}
		i += n;
		if (i >= SHOW_MAX && p[i]) {
			memcpy(o, "...", 3);
			o += 3;
		}
	}
	*o = '\0';
	return out;
}

int mirror_note(json_t *obj, const char *list, const char *more, const char *path,
		const char *why)
{
	json_t *arr = json_object_get(obj, list), *item;
	_cleanup_free_ char *shown = NULL;

	if (!arr) {
		arr = json_array();
		if (!arr || json_object_set_new(obj, list, arr) < 0)
			return errno = ENOMEM, -1;
	}
	if (json_array_size(arr) >= MIRROR_REPORT_MAX) {
		json_int_t n = json_integer_value(json_object_get(obj, more));

		if (json_object_set_new(obj, more, json_integer(n + 1)) < 0)
			return errno = ENOMEM, -1;
		return 0;
	}
	shown = mirror_show(path);
	if (!shown)
		return errno = ENOMEM, -1;
	item = json_pack("{s:s, s:s}", "path", shown, "why", why);
	if (!item || json_array_append_new(arr, item) < 0)
		return errno = ENOMEM, -1;
	return 0;
}

/* --- the manifest ---------------------------------------------------- */

static bool manifest_item_ok(const json_t *v)
{
	const char *t;

	if (!json_is_array(v) || json_array_size(v) != 7)
		return false;
	t = json_string_value(json_array_get(v, 0));
	if (!t || (strcmp(t, "d") != 0 && strcmp(t, "f") != 0 && strcmp(t, "l") != 0))
		return false;
	for (size_t i = 1; i < 7; i++)
		if (!json_is_integer(json_array_get(v, i)))
			return false;
	return true;
}

int mirror_manifest_paths(const json_t *manifest, const json_t **paths, struct err **e)
{
	const json_t *p = json_object_get(manifest, "paths"), *v;
	const char *k;

	if (!json_is_object(manifest) ||
	    json_integer_value(json_object_get(manifest, "version")) != MIRROR_MANIFEST_VERSION ||
	    !json_is_object(p))
		return err_set(e, ERR_CONFIG, 0, "mirror: the manifest is not one of version %d",
			       MIRROR_MANIFEST_VERSION);
	/* json_object_foreach wants a non-const object; nothing is changed */
	json_object_foreach((json_t *)p, k, v) {
		if (!mirror_path_ok(k) || !manifest_item_ok(v))
			return err_set(e, ERR_CONFIG, 0, "mirror: the manifest's paths are malformed");
	}
	*paths = p;
	return 0;
}

bool mirror_manifest_get(const json_t *paths, const char *path, struct mirror_stat *st)
{
	const json_t *v = json_object_get(paths, path);

	if (!v)
		return false;
	st->type = json_string_value(json_array_get(v, 0))[0];
	st->mode = json_integer_value(json_array_get(v, 1));
	st->size = json_integer_value(json_array_get(v, 2));
	st->mtime = json_integer_value(json_array_get(v, 3));
	st->ctime = json_integer_value(json_array_get(v, 4));
	st->dev = json_integer_value(json_array_get(v, 5));
	st->ino = json_integer_value(json_array_get(v, 6));
	return true;
}

long long mirror_ts_ns(const struct timespec *t)
{
	long long ns;

	if (__builtin_mul_overflow((long long)t->tv_sec, 1000000000LL, &ns) ||
	    __builtin_add_overflow(ns, (long long)t->tv_nsec, &ns))
		return t->tv_sec < 0 ? LLONG_MIN : LLONG_MAX;
	return ns;
}

/* --- the pack -------------------------------------------------------- */

struct pack {
	struct archive *a;
	int out_fd;
	char *const *skip;
	json_t *manifest, *paths;
	unsigned char *buf;
	long long bytes;
	char path[PATH_MAX]; /* the entry being packed */
	size_t len;
};

static const char *said(struct archive *a)
{
	const char *m = archive_error_string(a);

	return m ? m : "failed";
}

static la_ssize_t pack_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	const struct pack *pk = arg;

	if (fs_write_exact(pk->out_fd, buf, len) < 0) {
		archive_set_error(a, errno, "write");
		return -1;
	}
	return (la_ssize_t)len;
}

/* An error naming the entry being packed, shown. */
static int pack_fail(const struct pack *pk, int errnum, const char *what, struct err **e)
{
	_cleanup_free_ char *shown = mirror_show(pk->path);

	return err_set(e, ERR_UNAVAILABLE, errnum, "mirror: pack `%s`: %s",
		       shown ? shown : "?", what);
}

static int pack_skipped(struct pack *pk, const char *why, struct err **e)
{
	if (mirror_note(pk->manifest, "skipped", "skipped_more", pk->path, why) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	return 0;
}

static bool pack_skips(const struct pack *pk, const char *path)
{
	for (size_t i = 0; pk->skip && pk->skip[i]; i++)
		if (fs_path_within(path, pk->skip[i]))
			return true;
	return false;
}

static int pack_record(struct pack *pk, const char *type, const struct stat *st, struct err **e)
{
	json_t *v = json_pack("[s,I,I,I,I,I,I]", type, (json_int_t)(st->st_mode & 0777),
			      (json_int_t)st->st_size, (json_int_t)mirror_ts_ns(&st->st_mtim),
			      (json_int_t)mirror_ts_ns(&st->st_ctim), (json_int_t)(uint64_t)st->st_dev,
			      (json_int_t)(uint64_t)st->st_ino);

	if (!v || json_object_set_new(pk->paths, pk->path, v) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	return 0;
}

static int pack_header(struct pack *pk, const struct stat *st, const char *target,
		       struct err **e)
{
	struct archive_entry *en = archive_entry_new();
	int r;

	if (!en)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	archive_entry_set_pathname(en, pk->path + 1);
	archive_entry_set_filetype(en, st->st_mode & S_IFMT);
	archive_entry_set_perm(en, st->st_mode & 0777);
	archive_entry_set_uid(en, 0);
	archive_entry_set_gid(en, 0);
	archive_entry_set_mtime(en, st->st_mtim.tv_sec, st->st_mtim.tv_nsec);
	archive_entry_set_size(en, S_ISREG(st->st_mode) ? (la_int64_t)st->st_size : 0);
	if (target)
		archive_entry_set_symlink(en, target);
	r = archive_write_header(pk->a, en);
	archive_entry_free(en);
	/* ARCHIVE_WARN: a name that is not ASCII, written as raw bytes */
	if (r < ARCHIVE_WARN)
		return pack_fail(pk, 0, said(pk->a), e);
	return 0;
}

/* The same inode as the walk's lstat saw, of the same type. */
static bool same_inode(const struct stat *a, const struct stat *b)
{
	return a->st_dev == b->st_dev && a->st_ino == b->st_ino &&
	       (a->st_mode & S_IFMT) == (b->st_mode & S_IFMT);
}

/* The entry at name beneath dfd, opened as fd was (fd < 0: errno),
 * checked to be the inode the walk saw: 1 gone since it was listed (not
 * copied), 0 with *st, or -1. */
static int opened_as_seen(struct pack *pk, int fd, const struct stat *seen, struct stat *st,
			  struct err **e)
{
	if (fd < 0 && errno == ENOENT)
		return 1;
	if (fd < 0)
		(void)pack_fail(pk, errno, "open", e);
	else if (fstat(fd, st) < 0)
		(void)pack_fail(pk, errno, "stat", e);
	else if (!same_inode(st, seen))
		(void)pack_fail(pk, 0, "replaced while it was copied", e);
	else
		return 0;
	return -1;
}

static int pack_file(struct pack *pk, int dfd, const char *name, const struct stat *seen,
		     struct err **e)
{
	/* O_NONBLOCK: a fifo swapped in after the lstat must not hang us */
	_cleanup_close_ int fd = fs_open_nofollow(dfd, name, O_RDONLY | O_NONBLOCK, 0);
	struct stat st;
	off_t left;

	int o = opened_as_seen(pk, fd, seen, &st, e);
	if (o != 0)
		return o > 0 ? 0 : -1; /* gone since it was listed: not copied */
	if (pack_record(pk, "f", &st, e) < 0 || pack_header(pk, &st, NULL, e) < 0)
		return -1;
	for (left = st.st_size; left > 0;) {
		size_t want = (unsigned long long)left < PACK_CHUNK ? (size_t)left : PACK_CHUNK;
		ssize_t n = read(fd, pk->buf, want);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pack_fail(pk, errno, "read", e);
		if (n == 0)
			return pack_fail(pk, 0, "shrank while it was copied", e);
		if (archive_write_data(pk->a, pk->buf, (size_t)n) != n)
			return pack_fail(pk, 0, said(pk->a), e);
		left -= n;
	}
	for (;;) {
		ssize_t n = read(fd, pk->buf, 1);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return pack_fail(pk, errno, "read", e);
		if (n > 0)
			return pack_fail(pk, 0, "grew while it was copied", e);
		break;
	}
	pk->bytes += st.st_size;
	return 0;
}

static int pack_link(struct pack *pk, int dfd, const char *name, const struct stat *seen,
		     struct err **e)
{
	_cleanup_close_ int fd = openat(dfd, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	char target[PATH_MAX];
	struct stat st;
	ssize_t n;

	int o = opened_as_seen(pk, fd, seen, &st, e);
	if (o != 0)
		return o > 0 ? 0 : -1; /* gone since it was listed: not copied */
	/* an O_PATH fd of the link itself: its own target, no other's */
	n = readlinkat(fd, "", target, sizeof(target));
	if (n < 0)
		return pack_fail(pk, errno, "read the link", e);
	if ((size_t)n >= sizeof(target))
		return pack_fail(pk, ENAMETOOLONG, "read the link", e);
	target[n] = '\0';
	if (pack_record(pk, "l", &st, e) < 0)
		return -1;
	return pack_header(pk, &st, target, e);
}

static int pack_at(struct pack *pk, int dfd, const char *name, int depth, struct err **e);

/* The names in the directory fd, sorted (the same tree, the same tar). */
static int pack_list(struct pack *pk, int fd, struct mirror_vec *names, struct err **e)
{
	int dup = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	struct dirent *de;
	DIR *d;

	if (dup < 0)
		return pack_fail(pk, errno, "list", e);
	d = fdopendir(dup);
	if (!d) {
		close(dup);
		return pack_fail(pk, errno, "list", e);
	}
	for (errno = 0; (de = readdir(d)); errno = 0) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (mirror_vec_push(names, de->d_name) < 0)
			break;
	}
	if (errno) {
		int saved = errno;

		closedir(d);
		return pack_fail(pk, saved, "list", e);
	}
	closedir(d);
	mirror_vec_sort(names);
	return 0;
}

static int pack_dir(struct pack *pk, int dfd, const char *name, const struct stat *seen,
		    int depth, struct err **e)
{
	_cleanup_close_ int fd = fs_open_nofollow(dfd, name, O_RDONLY | O_DIRECTORY, 0);
	struct mirror_vec names = { 0 };
	size_t len = pk->len;
	struct stat st;
	int r = 0;

	int o = opened_as_seen(pk, fd, seen, &st, e);
	if (o != 0)
		return o > 0 ? 0 : -1; /* gone since it was listed: not copied */
	if (depth >= MIRROR_DEPTH_MAX)
		return pack_fail(pk, ELOOP, "deeper than the pack goes", e);
	if (pack_record(pk, "d", &st, e) < 0 || pack_header(pk, &st, NULL, e) < 0 ||
	    pack_list(pk, fd, &names, e) < 0) {
		mirror_vec_free(&names);
		return -1;
	}
	for (size_t i = 0; r == 0 && i < names.n; i++) {
		size_t n = strlen(names.v[i]);

		if (len + 1 + n >= sizeof(pk->path)) {
			r = pack_fail(pk, ENAMETOOLONG, "a name in it", e);
			break;
		}
		pk->path[len] = '/';
		memcpy(pk->path + len + 1, names.v[i], n + 1);
		pk->len = len + 1 + n;
		if (!pack_skips(pk, pk->path))
			r = pack_at(pk, fd, names.v[i], depth + 1, e);
		pk->path[len] = '\0';
		pk->len = len;
	}
	mirror_vec_free(&names);
	return r;
}

/* Pack name beneath dfd, whose path is pk->path. */
static int pack_at(struct pack *pk, int dfd, const char *name, int depth, struct err **e)
{
	struct stat st;

	if (fstatat(dfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0)
		return errno == ENOENT ? 0 : pack_fail(pk, errno, "stat", e);
	if (!mirror_utf8_ok(pk->path))
		return pack_skipped(pk, "a name that is not UTF-8", e);
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		return pack_dir(pk, dfd, name, &st, depth, e);
	case S_IFREG:
		return pack_file(pk, dfd, name, &st, e);
	case S_IFLNK:
		return pack_link(pk, dfd, name, &st, e);
	case S_IFIFO:
		return pack_skipped(pk, "a fifo", e);
	case S_IFSOCK:
		return pack_skipped(pk, "a socket", e);
	case S_IFCHR:
		return pack_skipped(pk, "a character device", e);
	case S_IFBLK:
		return pack_skipped(pk, "a block device", e);
	default:
		return pack_skipped(pk, "of an unknown type", e);
	}
}

static int pack_root(struct pack *pk, const char *root, json_t *roots, struct err **e)
{
	const char *slash = strrchr(root, '/');
	_cleanup_free_ char *parent = strndup(root, slash == root ? 1 : (size_t)(slash - root));
	_cleanup_close_ int dfd = -1;
	size_t before = json_object_size(pk->paths);

	if (!parent)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	pk->len = strlen(root);
	memcpy(pk->path, root, pk->len + 1);
	/* the parent is canonical: no link on its way */
	dfd = fs_open_nofollow(AT_FDCWD, parent, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0 && errno == ENOENT)
		return pack_skipped(pk, "missing", e);
	if (dfd < 0)
		return pack_fail(pk, errno, "open its directory", e);
	if (pack_at(pk, dfd, slash + 1, 0, e) < 0)
		return -1;
	if (json_object_size(pk->paths) == before)
		return pack_skipped(pk, "missing", e);
	if (json_array_push_string(roots, root) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	return 0;
}

/* Roots sorted, without one beneath another (it is packed with it). */
static int pack_roots(char *const *roots, struct mirror_vec *out, struct err **e)
{
	size_t keep = 0;

	for (size_t i = 0; roots && roots[i]; i++)
		if (mirror_vec_push(out, roots[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
	mirror_vec_sort(out);
	for (size_t i = 0; i < out->n; i++) {
		bool inside = false;

		for (size_t j = 0; j < keep && !inside; j++)
			inside = fs_path_within(out->v[i], out->v[j]);
		if (inside)
			free(out->v[i]);
		else
			out->v[keep++] = out->v[i];
	}
	out->n = keep;
	if (out->v)
		out->v[keep] = NULL;
	return 0;
}

int mirror_pack(char *const *roots, char *const *skip, int out_fd, json_t **manifest,
		struct err **e)
{
	struct pack pk = { .out_fd = out_fd, .skip = skip };
	struct mirror_vec todo = { 0 };
	json_t *rootlist;
	int r = 0;

	*manifest = NULL;
	if (mirror_check_paths(roots, "root", false, e) < 0 ||
	    mirror_check_paths(skip, "skip path", true, e) < 0)
		return -1;
	pk.manifest = json_pack("{s:i, s:[], s:{}}", "version", MIRROR_MANIFEST_VERSION, "roots",
				"paths");
	pk.buf = malloc(PACK_CHUNK);
	pk.a = archive_write_new();
	if (!pk.manifest || !pk.buf || !pk.a) {
		r = err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
		goto out;
	}
	pk.paths = json_object_get(pk.manifest, "paths");
	rootlist = json_object_get(pk.manifest, "roots");
	if (archive_write_set_format_pax_restricted(pk.a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(pk.a) != ARCHIVE_OK ||
	    archive_write_open(pk.a, &pk, NULL, pack_write, NULL) != ARCHIVE_OK) {
		r = err_set(e, ERR_UNAVAILABLE, 0, "mirror: pack: %s", said(pk.a));
		goto out;
	}
	if (pack_roots(roots, &todo, e) < 0) {
		r = -1;
		goto out;
	}
	for (size_t i = 0; r == 0 && i < todo.n; i++)
		if (!pack_skips(&pk, todo.v[i]))
			r = pack_root(&pk, todo.v[i], rootlist, e);
	if (r == 0 && archive_write_close(pk.a) != ARCHIVE_OK)
		r = err_set(e, ERR_UNAVAILABLE, 0, "mirror: pack: %s", said(pk.a));
	if (r == 0 && json_object_set_new(pk.manifest, "bytes", json_integer(pk.bytes)) < 0)
		r = err_set(e, ERR_INTERNAL, ENOMEM, "mirror: pack");
out:
	mirror_vec_free(&todo);
	if (pk.a)
		archive_write_free(pk.a);
	free(pk.buf);
	if (r < 0) {
		json_decref(pk.manifest);
		return -1;
	}
	*manifest = pk.manifest;
	return 0;
}

/* --- the remote's listing ------------------------------------------- */

int mirror_paths_split(const char *buf, size_t len, char ***paths, struct err **e)
{
	struct mirror_vec v = { 0 };

	*paths = NULL;
	for (size_t i = 0; i < len;) {
		const char *end = memchr(buf + i, '\0', len - i);
		size_t n = end ? (size_t)(end - (buf + i)) : len - i;
		_cleanup_free_ char *p = NULL;

		if (v.n >= MIRROR_APPLY_ENTRIES_MAX) {
			mirror_vec_free(&v);
			return err_set(e, ERR_DENIED, 0,
				       "mirror: the remote's listing holds more than %zu paths",
				       MIRROR_APPLY_ENTRIES_MAX);
		}
		p = strndup(buf + i, n);
		if (p && !mirror_path_ok(p)) {
			mirror_vec_free(&v);
			return err_set(e, ERR_DENIED, 0,
				       "mirror: the remote's listing holds a path that is not "
				       "absolute, or has an empty, \".\" or \"..\" element");
		}
		if (!p || mirror_vec_push(&v, p) < 0) {
			mirror_vec_free(&v);
			return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: the remote's listing");
		}
		i += n + 1;
	}
	*paths = mirror_vec_steal(&v);
	if (!*paths)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: the remote's listing");
	return 0;
}

int mirror_unknown_paths(const json_t *manifest, char *const *remote_paths, char ***unknown,
			 struct err **e)
{
	struct mirror_vec v = { 0 };
	const json_t *paths = NULL;

	*unknown = NULL;
	if (mirror_manifest_paths(manifest, &paths, e) < 0)
		return -1;
	for (size_t i = 0; remote_paths && remote_paths[i]; i++) {
		if (json_object_get(paths, remote_paths[i]))
			continue;
		if (mirror_vec_push(&v, remote_paths[i]) < 0) {
			mirror_vec_free(&v);
			return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: unknown paths");
		}
	}
	*unknown = mirror_vec_steal(&v);
	if (!*unknown)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: unknown paths");
	return 0;
}

/* Would an apply consider path at all: strictly beneath a grant, not
 * kept? */
/* 1: strictly beneath a write grant and not kept; 2: beneath one and
 * kept; 0: neither. */
static int fetch_wanted(const struct mirror_rules *r, const char *path)
{
	bool in = false;

	for (size_t i = 0; r->grants && r->grants[i]; i++)
		if (fs_path_within(path, r->grants[i]) && strcmp(path, r->grants[i]) != 0)
			in = true;
	for (size_t i = 0; in && r->kept && r->kept[i]; i++)
		if (fs_path_within(path, r->kept[i]))
			return 2;
	return in ? 1 : 0;
}

int mirror_fetch_choice(const struct mirror_rules *r, const json_t *manifest,
			const struct mirror_remote_entry *ent, size_t n, long long stamp_ns,
			char ***fetch, char ***dropped, struct err **e)
{
	struct mirror_vec v = { 0 }, k = { 0 };
	const json_t *paths = NULL;

	*fetch = NULL;
	if (dropped)
		*dropped = NULL;
	if (mirror_manifest_paths(manifest, &paths, e) < 0 ||
	    mirror_check_paths(r->grants, "write grant", false, e) < 0 ||
	    mirror_check_paths(r->kept, "kept path", true, e) < 0)
		return -1;
	for (size_t i = 0; i < n; i++) {
		struct mirror_stat st;
		bool known;
		int want;

		if (!ent[i].path || !mirror_path_ok(ent[i].path) ||
		    !(want = fetch_wanted(r, ent[i].path)))
			continue;
		known = mirror_manifest_get(paths, ent[i].path, &st);
		if (known && st.type == ent[i].type && ent[i].mtime_ns <= stamp_ns &&
		    ent[i].ctime_ns <= stamp_ns && (ent[i].type != 'd' || want == 2))
			continue;
		/* a kept path the run changed: not fetched, but said */
		if (want == 2 && (ent[i].type == 'd' || !dropped))
			continue;
		if (mirror_vec_push(want == 2 ? &k : &v, ent[i].path) < 0) {
			mirror_vec_free(&v);
			mirror_vec_free(&k);
			return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: fetch choice");
		}
	}
	if (dropped) {
		mirror_vec_sort(&k);
		if (!(*dropped = mirror_vec_steal(&k))) {
			mirror_vec_free(&v);
			return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: fetch choice");
		}
	}
	mirror_vec_sort(&v);
	*fetch = mirror_vec_steal(&v);
	if (!*fetch)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mirror: fetch choice");
	return 0;
}
