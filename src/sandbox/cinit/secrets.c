/* secrets.c: see secrets.h. The file is removed as soon as it is known to
 * be the regular file that was opened, before any check that could
 * refuse it: a refused file must not stay behind for the command either.
 * What was read is wiped once it is copied into the environment. */
#include "sandbox/cinit/secrets.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool env_name(const char *s)
{
	if (!(*s == '_' || (*s >= 'A' && *s <= 'Z')))
		return false;
	for (s++; *s; s++)
		if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9')))
			return false;
	return true;
}

/* Wipe the values jansson holds before they are freed. */
static void wipe_values(json_t *obj)
{
	const char *k;
	json_t *v;

	json_object_foreach(obj, k, v)
		if (json_is_string(v))
			explicit_bzero((char *)json_string_value(v), json_string_length(v));
}

/* The object's entries as "NAME=value". Names that fail are not shown
 * (one may be a value put in the wrong place): their position is. */
static int entries(json_t *obj, const char *path, char ***out, struct err **e)
{
	const char *k;
	json_t *v;
	size_t i = 0;

	if (!json_is_object(obj))
		return err_set(e, ERR_CONFIG, 0, "`%s`: not a JSON object", path);
	json_object_foreach(obj, k, v) {
		char *entry;

		i++;
		if (!env_name(k))
			return err_set(e, ERR_CONFIG, 0,
				       "`%s`: name %zu is not an environment name ([A-Z_][A-Z0-9_]*)",
				       path, i);
		if (!json_is_string(v))
			return err_set(e, ERR_CONFIG, 0, "`%s`: the value of %s is not a string", path,
				       k);
		if (strlen(json_string_value(v)) != json_string_length(v))
			return err_set(e, ERR_CONFIG, 0, "`%s`: the value of %s holds a NUL", path, k);
		if (asprintf(&entry, "%s=%s", k, json_string_value(v)) < 0 ||
		    strv_push_take(out, entry) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "`%s`", path);
	}
	return 0;
}

/* Open and remove: -1 with *e, 0 with *fd -1 when there is no file. */
static int open_and_remove(int dirfd, const char *path, int *fd, struct stat *st,
			   struct err **e)
{
	struct stat named;

	*fd = fs_open_nofollow(dirfd, SECRETS_NAME, O_RDONLY | O_NONBLOCK | O_NOCTTY, 0);
	if (*fd < 0) {
		if (errno == ENOENT)
			return 0;
		if (errno == ELOOP)
			return err_set(e, ERR_CONFIG, 0, "`%s`: a symbolic link", path);
		return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", path);
	}
	if (fstat(*fd, st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "stat `%s`", path);
	if (!S_ISREG(st->st_mode))
		return err_set(e, ERR_CONFIG, 0, "`%s`: not a regular file", path);
	/* the name still the file that was opened, then gone */
	if (fstatat(dirfd, SECRETS_NAME, &named, AT_SYMLINK_NOFOLLOW) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "stat `%s`", path);
	if (named.st_dev != st->st_dev || named.st_ino != st->st_ino)
		return err_set(e, ERR_CONFIG, 0, "`%s`: replaced while it was opened", path);
	if (unlinkat(dirfd, SECRETS_NAME, 0) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "remove `%s`", path);
	/* another name would keep the secrets on disk after this one */
	if (fstat(*fd, st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "stat `%s`", path);
	if (st->st_nlink != 0)
		return err_set(e, ERR_CONFIG, 0, "`%s`: has another hard link", path);
	return 0;
}

int secrets_take(int dirfd, const char *dir, char ***out, struct err **e)
{
	_cleanup_free_ char *path = fs_path_join(dir, SECRETS_NAME);
	_cleanup_close_ int fd = -1;
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct err *inner = NULL;
	struct stat st;
	size_t len = 0;
	int r;

	*out = NULL;
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "secrets");
	if (open_and_remove(dirfd, path, &fd, &st, e) < 0)
		return -1;
	if (fd < 0)
		return 0;
	if (st.st_uid != getuid())
		return err_set(e, ERR_CONFIG, 0, "`%s`: owned by uid %u, not by uid %u", path,
			       (unsigned)st.st_uid, (unsigned)getuid());
	if (st.st_mode & 077)
		return err_set(e, ERR_CONFIG, 0, "`%s`: mode %04o: group or others may use it",
			       path, (unsigned)(st.st_mode & 07777));
	if ((size_t)st.st_size > SECRETS_MAX)
		return err_set(e, ERR_CONFIG, 0, "`%s`: larger than %zu bytes", path, SECRETS_MAX);
	if (fs_read_fd(fd, path, SECRETS_MAX, &buf, &len, e) < 0)
		return -1;
	/* json.h's message names the JSON path, which holds names of the
	 * document, and a malformed document's "name" may be a value: it is
	 * not passed on */
	j = json_parse_strict(buf, len, &inner);
	explicit_bzero(buf, len);
	if (!j) {
		err_free(inner);
		return err_set(e, ERR_CONFIG, 0,
			       "`%s`: not strict JSON (malformed, or a name given twice)", path);
	}
	r = entries(j, path, out, e);
	wipe_values(j);
	if (r < 0 && *out) {
		envfilter_scrub(*out);
		strv_free(*out);
		*out = NULL;
	}
	return r;
}
