/* place.c: places compared by identity and containment (see place.h).
 * The canonical path answers links and spellings; the device and inode of
 * each existing directory on the way answer a second path to the same
 * tree (a bind mount), which no spelling shows. */
#include "lib/place.h"

#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct place {
	char *canon;		/* links followed */
	size_t plen;		/* canon[0, plen) exists */
	struct stat st;		/* of that part */
};

static void place_clear(struct place *p)
{
	free(p->canon);
	p->canon = NULL;
}

/* Where the existing part of canon ends once its last component is cut:
 * "/a/b" -> 2, "/a" -> 1 ("/"). */
static size_t parent_len(const char *canon, size_t len)
{
	while (len > 1 && canon[len - 1] != '/')
		len--;
	return len > 1 ? len - 1 : 1;
}

static int place_resolve(const char *path, struct place *out, struct err **e)
{
	_cleanup_free_ char *buf = NULL;

	/* (every failure returns -1 itself: the analyzer does not see
	 * err_set's value across files) */
	memset(out, 0, sizeof(*out));
	if (!path || path[0] != '/') {
		err_set(e, ERR_CONFIG, 0, "`%s` is not an absolute path", path ? path : "");
		return -1;
	}
	if (fs_canonical(path, &out->canon, e) < 0 || !out->canon)
		return -1;
	buf = strdup(out->canon);
	if (!buf) {
		place_clear(out);
		err_set(e, ERR_INTERNAL, ENOMEM, "place");
		return -1;
	}
	out->plen = strlen(buf);
	for (;;) {
		buf[out->plen] = '\0';
		if (lstat(buf, &out->st) == 0)
			return 0;
		/* a missing part is taken as written; anything else (a
		 * directory that cannot be searched) is not known */
		if ((errno != ENOENT && errno != ENOTDIR) || out->plen == 1) {
			int saved = errno;

			place_clear(out);
			err_set(e, ERR_UNAVAILABLE, saved, "look up `%s`", path);
			return -1;
		}
		out->plen = parent_len(buf, out->plen);
	}
}

/* The part of canon after its first len bytes, without a leading '/'. */
static const char *rest_of(const char *canon, size_t len)
{
	const char *r = canon + len;

	return *r == '/' ? r + 1 : r;
}

/* Does the relative path s start with the components of r? */
static bool starts_with(const char *s, const char *r)
{
	size_t n = strlen(r);

	return n == 0 || (strncmp(s, r, n) == 0 && (s[n] == '\0' || s[n] == '/'));
}

static int within(const struct place *a, const struct place *b, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	const char *r = rest_of(b->canon, b->plen);
	size_t len = a->plen;
	struct stat st = a->st;

	if (fs_path_within(a->canon, b->canon))
		return 1;
	buf = strdup(a->canon);
	if (!buf)
		return err_set(e, ERR_INTERNAL, ENOMEM, "place");
	/* Each existing directory from a up to "/": one that is b's existing
	 * part itself, whatever its path, holds a when the rest of a's path
	 * below it goes through the rest of b's. */
	for (;;) {
		if (st.st_dev == b->st.st_dev && st.st_ino == b->st.st_ino &&
		    starts_with(rest_of(a->canon, len), r))
			return 1;
		if (len == 1)
			return 0;
		len = parent_len(buf, len);
		buf[len] = '\0';
		if (lstat(buf, &st) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "look up `%s`", buf);
	}
}

/* a within b; with either, b within a as well. */
static int compare(const char *a, const char *b, bool either, struct err **e)
{
	struct place pa, pb;
	int r;

	if (place_resolve(a, &pa, e) < 0)
		return -1;
	if (place_resolve(b, &pb, e) < 0) {
		place_clear(&pa);
		return -1;
	}
	r = within(&pa, &pb, e);
	if (r == 0 && either)
		r = within(&pb, &pa, e);
	place_clear(&pa);
	place_clear(&pb);
	return r;
}

int place_within(const char *a, const char *b, struct err **e)
{
	return compare(a, b, false, e);
}

int place_overlap(const char *a, const char *b, struct err **e)
{
	return compare(a, b, true, e);
}
