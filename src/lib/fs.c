/* fs.c: symlink-safe file helpers and canonical paths (see fs.h). */
#include "fs.h"
#include "strv.h"
#include "cleanup.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define SYMLINK_HOPS_MAX 40

bool fs_path_within(const char *b, const char *a)
{
	size_t n = strlen(a);

	if (strcmp(a, "/") == 0)
		return b[0] == '/';
	return strncmp(a, b, n) == 0 && (b[n] == '\0' || b[n] == '/');
}

char *fs_path_join(const char *a, const char *b)
{
	size_t la = strlen(a);
	char *out = NULL;

	while (la > 0 && a[la - 1] == '/')
		la--;
	while (*b == '/')
		b++;
	if (asprintf(&out, "%.*s/%s", (int)la, a, b) < 0)
		return NULL;
	if (*b == '\0' && la > 0)
		out[la] = '\0';
	return out;
}

/* Append component c (length n) to the resolved prefix buf. */
static int canon_push(char *buf, size_t *len, const char *c, size_t n)
{
	if (*len + 1 + n >= PATH_MAX)
		return -1;
	/* "/" already ends in a slash; anything else gets one */
	if (!(*len == 1 && buf[0] == '/'))
		buf[(*len)++] = '/';
	memcpy(buf + *len, c, n);
	*len += n;
	buf[*len] = '\0';
	return 0;
}

static void canon_pop(char *buf, size_t *len)
{
	while (*len > 1 && buf[*len - 1] != '/')
		(*len)--;
	if (*len > 1)
		(*len)--;
	buf[*len] = '\0';
}

static int fs_canonical_walk(const char *path, char **out, char ***links, struct err **e);

bool fs_path_normal(const char *p)
{
	if (p[0] != '/')
		return false;
	if (p[1] == '\0')
		return true;
	for (const char *c = p; *c; c++) {
		if (*c != '/')
			continue;
		if (c[1] == '/' || c[1] == '\0')
			return false;
		if (c[1] == '.' && (c[2] == '/' || c[2] == '\0' ||
				    (c[2] == '.' && (c[3] == '/' || c[3] == '\0'))))
			return false;
	}
	return true;
}

/* Does the path (or, when it is missing, its longest existing prefix)
 * resolve without a single symbolic link? Then it is its own canonical
 * form, found in a syscall or two rather than one per component. */
static bool no_links(const char *path)
{
	struct stat st;
	bool link;
	int fd = fs_open_nofollow(AT_FDCWD, path, O_PATH, 0);

	/* Missing: the kernel walked every component before the missing one
	 * and met no link (RESOLVE_NO_SYMLINKS would have said ELOOP), and
	 * the rest is taken as written, as the walk below would take it. */
	if (fd < 0)
		return errno == ENOENT;
	/* O_PATH|O_NOFOLLOW opens a final link itself */
	link = fstat(fd, &st) < 0 || S_ISLNK(st.st_mode);
	close(fd);
	return !link;
}

int fs_canonical(const char *path, char **out, struct err **e)
{
	return fs_canonical_links(path, out, NULL, e);
}

int fs_canonical_links(const char *path, char **out, char ***links, struct err **e)
{
	if (fs_path_normal(path) && no_links(path)) {
		*out = strdup(path);
		return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "canonical path");
	}
	return fs_canonical_walk(path, out, links, e);
}

/* One component at a time, following links the way the kernel would;
 * each link met is noted in *links (when links is not NULL) by where it
 * lies, its own directory resolved. */
static int fs_canonical_walk(const char *path, char **out, char ***links, struct err **e)
{
	char done[PATH_MAX] = "/", link[PATH_MAX];
	_cleanup_free_ char *todo = NULL;
	size_t dlen = 1;
	int hops = 0;
	bool exists = true;

	if (path[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "`%s` is not absolute", path);
	todo = strdup(path);
	if (!todo)
		return err_set(e, ERR_INTERNAL, ENOMEM, "canonical path");
	for (char *p = todo; *p;) {
		char *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n == 1 && p[0] == '.') {
			p = end;
			continue;
		}
		if (n == 2 && p[0] == '.' && p[1] == '.') {
			canon_pop(done, &dlen);
			p = end;
			continue;
		}
		if (canon_push(done, &dlen, p, n) < 0)
			return err_set(e, ERR_CONFIG, ENAMETOOLONG, "`%s`", path);
		p = end;
		if (!exists)
			continue;
		ssize_t ln = readlink(done, link, sizeof(link) - 1);
		if (ln < 0) {
			if (errno == ENOENT)
				exists = false; /* the rest is taken as given */
			else if (errno != EINVAL)
				return err_set(e, ERR_UNAVAILABLE, errno,
					       "resolve `%s`", path);
			continue;
		}
		if (++hops > SYMLINK_HOPS_MAX)
			return err_set(e, ERR_CONFIG, ELOOP, "resolve `%s`", path);
		if (links && strv_push(links, done) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "canonical path");
		link[ln] = '\0';
		/* Splice the link's target in front of what is left. */
		char *rest = NULL;
		if (asprintf(&rest, "%s/%s", link, p) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "canonical path");
		canon_pop(done, &dlen);
		if (link[0] == '/') {
			done[0] = '/';
			done[1] = '\0';
			dlen = 1;
		}
		free(todo);
		todo = rest;
		p = todo;
	}
	*out = strdup(done);
	if (!*out)
		return err_set(e, ERR_INTERNAL, ENOMEM, "canonical path");
	return 0;
}

int fs_open_nofollow(int dirfd, const char *path, int flags, mode_t mode)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
		.mode = (flags & (O_CREAT | O_TMPFILE)) ? mode : 0,
		.resolve = RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};

	return (int)syscall(SYS_openat2, dirfd, path, &how, sizeof(how));
}

int fs_mkdirs_beneath(int dirfd, const char *rel, mode_t mode, struct err **e)
{
	_cleanup_free_ char *copy = strdup(rel);
	_cleanup_close_ int cur = -1;
	char *save = NULL;

	if (!copy)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mkdir");
	cur = fs_open_nofollow(dirfd, ".", O_PATH | O_DIRECTORY, 0);
	if (cur < 0)
		/* cppcheck-suppress memleak ; copy is freed by its cleanup attribute */
		return err_set(e, ERR_UNAVAILABLE, errno, "open directory");
	for (char *c = strtok_r(copy, "/", &save); c; c = strtok_r(NULL, "/", &save)) {
		int next;

		if (strcmp(c, ".") == 0 || strcmp(c, "..") == 0)
			return err_set(e, ERR_UNAVAILABLE, EINVAL, "mkdir `%s`", rel);
		if (mkdirat(cur, c, mode) < 0 && errno != EEXIST)
			return err_set(e, ERR_UNAVAILABLE, errno, "mkdir `%s`", rel);
		next = fs_open_nofollow(cur, c, O_PATH | O_DIRECTORY, 0);
		if (next < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", rel);
		close(cur);
		cur = next;
	}
	return steal_fd(&cur);
}

int fs_write_atomic(int dirfd, const char *name, const void *buf, size_t len,
		    mode_t mode, bool durable, struct err **e)
{
	_cleanup_close_ int fd = -1, dfd = -1;
	char tmp[NAME_MAX + 1];
	unsigned int rnd = 0;
	const char *p = buf;

	dfd = fs_open_nofollow(dirfd, ".", O_RDONLY | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "open directory for `%s`", name);
	if (getrandom(&rnd, sizeof(rnd), 0) != sizeof(rnd))
		return err_set(e, ERR_UNAVAILABLE, errno, "getrandom");
	if (snprintf(tmp, sizeof(tmp), ".%s.%08x.tmp", name, rnd) >= (int)sizeof(tmp))
		return err_set(e, ERR_INTERNAL, ENAMETOOLONG, "`%s`", name);
	fd = fs_open_nofollow(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL, 0600);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "create `%s`", tmp);
	while (len > 0) {
		ssize_t w = write(fd, p, len);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			goto fail;
		p += w;
		len -= (size_t)w;
	}
	if (fchmod(fd, mode) < 0 || (durable && fsync(fd) < 0))
		goto fail;
	if (renameat(dfd, tmp, dfd, name) < 0)
		goto fail;
	return 0;
fail:
	err_set(e, ERR_UNAVAILABLE, errno, "write `%s`", name);
	unlinkat(dfd, tmp, 0);
	return -1;
}

int fs_read_fd(int fd, const char *what, size_t max, char **buf, size_t *len,
	       struct err **e)
{
	_cleanup_free_ char *data = NULL;
	size_t n = 0, cap = 4096;
	struct stat st;

	if (fstat(fd, &st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "stat `%s`", what);
	if (!S_ISREG(st.st_mode))
		return err_set(e, ERR_UNAVAILABLE, 0, "`%s` is not a regular file", what);
	data = malloc(cap);
	if (!data)
		return err_set(e, ERR_INTERNAL, ENOMEM, "read `%s`", what);
	for (;;) {
		ssize_t r;

		if (n + 1 >= cap) {
			char *nd;
			if (cap > max + 1)
				return err_set(e, ERR_UNAVAILABLE, EFBIG, "read `%s`", what);
			nd = realloc(data, cap * 2);
			if (!nd)
				return err_set(e, ERR_INTERNAL, ENOMEM, "read `%s`", what);
			data = nd;
			cap *= 2;
		}
		r = read(fd, data + n, cap - n - 1);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "read `%s`", what);
		if (r == 0)
			break;
		n += (size_t)r;
		if (n > max)
			return err_set(e, ERR_UNAVAILABLE, EFBIG, "read `%s`", what);
	}
	data[n] = '\0';
	*buf = steal_pointer(&data);
	if (len)
		*len = n;
	return 0;
}

int fs_read_file(int dirfd, const char *path, size_t max, char **buf,
		 size_t *len, struct err **e)
{
	_cleanup_close_ int fd = fs_open_nofollow(dirfd, path, O_RDONLY, 0);

	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", path);
	return fs_read_fd(fd, path, max, buf, len, e);
}

int fs_read_exact(int fd, void *buf, size_t n)
{
	char *p = buf;

	while (n > 0) {
		ssize_t r = read(fd, p, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r == 0)
			errno = 0;
		if (r <= 0)
			return -1;
		p += r;
		n -= (size_t)r;
	}
	return 0;
}

int fs_write_exact(int fd, const void *buf, size_t n)
{
	const char *p = buf;

	while (n > 0) {
		ssize_t w = write(fd, p, n);
		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return -1;
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

int fs_remove_tree(int at, const char *name, int max_depth)
{
	int fd, r = 0;
	DIR *d;
	struct dirent *de;

	if (unlinkat(at, name, 0) == 0)
		return 0;
	if (errno == ENOENT)
		return 0;
	if (errno != EISDIR && errno != EPERM)
		return -1;
	if (max_depth <= 0)
		return errno = ELOOP, -1;
	fd = openat(at, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return -1;
	d = fdopendir(fd);
	if (!d) {
		close(fd);
		return -1;
	}
	/* a listing that loses entries while it is read may skip some: a
	 * few passes, until the directory can go */
	for (int pass = 0; pass < 3; pass++) {
		r = 0;
		while ((de = readdir(d)))
			if (strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0 &&
			    fs_remove_tree(dirfd(d), de->d_name, max_depth - 1) < 0)
				r = -1;
		if (r < 0 || unlinkat(at, name, AT_REMOVEDIR) == 0 || errno != ENOTEMPTY)
			break;
		rewinddir(d);
	}
	closedir(d);
	if (r == 0 && faccessat(at, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		r = -1;
	return r;
}

struct links_walk {
	size_t depth_max, entries_max, entries;
	int (*visit)(const char *rel, unsigned char type, void *arg);
	void *arg;
	char rel[PATH_MAX];
};

/* One directory (fd, taken), its path in lw->rel of length len. */
static int links_dir(struct links_walk *lw, int fd, size_t len, size_t depth)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	int r = 0;

	if (!d) {
		close(fd);
		return -1;
	}
	while (r == 0 && (errno = 0, de = readdir(d))) {
		unsigned char type = de->d_type;
		size_t n = strlen(de->d_name);
		struct stat st;

		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (++lw->entries > lw->entries_max || len + n + 2 > sizeof(lw->rel)) {
			errno = E2BIG;
			r = -1;
			break;
		}
		if (type == DT_UNKNOWN) {
			if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
				r = -1;
				break;
			}
			type = S_ISLNK(st.st_mode) ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR : DT_REG;
		}
		if (type != DT_LNK && type != DT_DIR)
			continue;
		if (len)
			lw->rel[len] = '/';
		memcpy(lw->rel + len + (len ? 1 : 0), de->d_name, n + 1);
		r = lw->visit(lw->rel, type, lw->arg);
		if (r == 0 && type == DT_DIR) {
			int sub;

			if (depth >= lw->depth_max) {
				errno = E2BIG;
				r = -1;
				break;
			}
			sub = openat(dirfd(d), de->d_name,
				     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
			/* gone since it was listed: nothing to look at */
			if (sub < 0 && errno == ENOENT)
				continue;
			r = sub < 0 ? -1 : links_dir(lw, sub, len + n + (len ? 1 : 0), depth + 1);
		} else if (r == 1) {
			r = 0;	/* a directory the caller skips */
		}
		lw->rel[len] = '\0';
	}
	if (r == 0 && errno != 0)
		r = -1;
	{
		int saved = errno;

		closedir(d);
		errno = saved;
	}
	return r;
}

int fs_find_links(int dirfd, size_t depth_max, size_t entries_max,
		  int (*visit)(const char *rel, unsigned char type, void *arg), void *arg)
{
	struct links_walk lw = { .depth_max = depth_max, .entries_max = entries_max,
				 .visit = visit, .arg = arg };
	int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	return links_dir(&lw, fd, 0, 0);
}
