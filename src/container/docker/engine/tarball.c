/* tarball.c: engine_tar_build (see engine.h), a tar of regular files made
 * in memory with libarchive, for the Engine's image import and archive
 * upload (and, later, the SSH provider's one stream). The same files
 * give the same bytes: every time in it is the one given, no user or
 * group name, no other header field of the host's. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define TAR_NAME_MAX 1024
#define TAR_MODE_MASK 07777U
#define TAR_MTIME_MAX 077777777777LL /* 11 octal digits */

/* The archive written into, bounded by ENGINE_TAR_MAX. */
struct tar_out {
	unsigned char *p;
	size_t n, cap;
};

static la_ssize_t tar_write(struct archive *a, void *arg, const void *buf, size_t len)
{
	struct tar_out *o = arg;

	if (len > ENGINE_TAR_MAX - o->n) {
		archive_set_error(a, EFBIG, "the tar is larger than %zu bytes", ENGINE_TAR_MAX);
		return -1;
	}
	if (o->n + len > o->cap) {
		size_t cap = o->cap ? o->cap : (size_t)64 * 1024;
		unsigned char *p;

		while (cap < o->n + len)
			cap = cap > ENGINE_TAR_MAX / 2 ? ENGINE_TAR_MAX : cap * 2;
		p = realloc(o->p, cap);
		if (!p) {
			archive_set_error(a, ENOMEM, "out of memory");
			return -1;
		}
		o->p = p;
		o->cap = cap;
	}
	memcpy(o->p + o->n, buf, len);
	o->n += len;
	return (la_ssize_t)len;
}

/* A relative name without an empty, "." or ".." element: what the
 * receiving side unpacks stays beneath where it unpacks. */
static bool tar_name_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;
	const char *p = s;

	if (n == 0 || n > TAR_NAME_MAX || s[0] == '/')
		return false;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	while (p) {
		const char *slash = strchr(p, '/');
		size_t len = slash ? (size_t)(slash - p) : strlen(p);

		if (len == 0 || (len == 1 && p[0] == '.') || (len == 2 && p[0] == '.' && p[1] == '.'))
			return false;
		p = slash ? slash + 1 : NULL;
	}
	return true;
}

static int tar_check(const struct engine_tar_file *files, size_t n, struct err **e)
{
	for (size_t i = 0; i < n; i++) {
		if (!tar_name_ok(files[i].name))
			return err_set(e, ERR_CONFIG, 0,
				       "tar: file %zu's name is not a relative path of printable "
				       "ASCII (no empty, \".\" or \"..\" element)",
				       i);
		if (files[i].mode & ~TAR_MODE_MASK)
			return err_set(e, ERR_CONFIG, 0, "tar: `%s`: mode %o is not permission bits",
				       files[i].name, files[i].mode);
		if (files[i].len > 0 && !files[i].data)
			return err_set(e, ERR_CONFIG, 0, "tar: `%s`: no data", files[i].name);
		/* a name twice: which one lands depends on the reader */
		for (size_t j = 0; j < i; j++)
			if (strcmp(files[i].name, files[j].name) == 0)
				return err_set(e, ERR_CONFIG, 0, "tar: `%s` is named twice",
					       files[i].name);
	}
	return 0;
}

/* libarchive's last words, never NULL */
static const char *tar_said(struct archive *a)
{
	const char *m = archive_error_string(a);

	return m ? m : "failed";
}

static int tar_add(struct archive *a, const struct engine_tar_file *f, long long mtime,
		   struct err **e)
{
	struct archive_entry *entry = archive_entry_new();
	const unsigned char *p = f->data;
	size_t left = f->len;
	int r;

	if (!entry)
		return err_set(e, ERR_INTERNAL, ENOMEM, "tar");
	archive_entry_set_pathname(entry, f->name);
	archive_entry_set_filetype(entry, AE_IFREG);
	archive_entry_set_perm(entry, (mode_t)f->mode);
	archive_entry_set_uid(entry, f->uid);
	archive_entry_set_gid(entry, f->gid);
	archive_entry_set_size(entry, (la_int64_t)f->len);
	archive_entry_set_mtime(entry, (time_t)mtime, 0);
	r = archive_write_header(a, entry);
	archive_entry_free(entry);
	if (r != ARCHIVE_OK)
		return err_set(e, ERR_INTERNAL, 0, "tar: `%s`: %s", f->name, tar_said(a));
	while (left > 0) {
		la_ssize_t w = archive_write_data(a, p, left);

		if (w <= 0)
			return err_set(e, ERR_INTERNAL, 0, "tar: `%s`: %s", f->name,
				       tar_said(a));
		p += w;
		left -= (size_t)w;
	}
	return 0;
}

int engine_tar_build(const struct engine_tar_file *files, size_t n, long long mtime, void **tar,
		     size_t *len, struct err **e)
{
	struct tar_out o = { 0 };
	struct archive *a;
	int r = 0;

	*tar = NULL;
	*len = 0;
	if (n > 0 && !files)
		return err_set(e, ERR_CONFIG, 0, "tar: no files");
	if (mtime < 0 || mtime > TAR_MTIME_MAX)
		return err_set(e, ERR_CONFIG, 0, "tar: mtime %lld is not one ustar holds", mtime);
	if (tar_check(files, n, e) < 0)
		return -1;
	a = archive_write_new();
	if (!a)
		return err_set(e, ERR_INTERNAL, ENOMEM, "tar");
	/* ustar headers; a pax header only where ustar cannot say it (a
	 * long name, a large id) */
	if (archive_write_set_format_pax_restricted(a) != ARCHIVE_OK ||
	    archive_write_add_filter_none(a) != ARCHIVE_OK ||
	    archive_write_open(a, &o, NULL, tar_write, NULL) != ARCHIVE_OK)
		r = err_set(e, ERR_INTERNAL, 0, "tar: %s", tar_said(a));
	for (size_t i = 0; r == 0 && i < n; i++)
		r = tar_add(a, &files[i], mtime, e);
	if (r == 0 && archive_write_close(a) != ARCHIVE_OK)
		r = err_set(e, ERR_INTERNAL, 0, "tar: %s", tar_said(a));
	archive_write_free(a);
	if (r < 0) {
		free(o.p);
		return -1;
	}
	*tar = o.p;
	*len = o.n;
	return 0;
}
