/* mounts.c: from a grant to the list of mount operations the child runs.
 * Decisions that need the host's view (does the path exist, is it a
 * directory, is it visible at all) are made here, before any namespace
 * exists, so that a refusal still has its full context. */
#include "sandbox/native/mounts.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"
#include "sandbox/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int push(struct mount_plan *mp, enum mop_kind kind, const char *path,
		bool dir, bool create, struct err **e)
{
	struct mop *n = realloc(mp->ops, (mp->n + 1) * sizeof(*n));

	if (!n)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mount plan");
	mp->ops = n;
	n[mp->n] = (struct mop){ .kind = kind, .path = strdup(path),
				 .source_dir = dir, .create = create };
	if (!n[mp->n].path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mount plan");
	mp->n++;
	return 0;
}

/* Beneath a private /tmp, a host path is visible only where a grant binds
 * it in; elsewhere the whole host tree shows through, read-only. */
static bool host_visible(const struct grant *g, const struct mount_plan *mp,
			 const char *path)
{
	if (!mp->tmp_private || !fs_path_within(path, "/tmp"))
		return true;
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		if (r->kind != GRANT_DENY && fs_path_within(r->path, "/tmp") &&
		    strcmp(r->path, "/tmp") != 0 && fs_path_within(path, r->path))
			return true;
	}
	return false;
}

/* Is the nearest existing ancestor of a missing path writable inside? */
static bool creatable(const struct grant *g, const char *path)
{
	_cleanup_free_ char *p = NULL;
	struct stat st;
	char *slash;

	/* No write grant holds it: no ancestor is writable, and the walk
	 * (a stat per level, for each of many missing default denies) is
	 * spared. */
	if (!grant_holder(g, path, GRANT_MASK(GRANT_WRITE)))
		return false;
	p = strdup(path);
	while (p && (slash = strrchr(p, '/')) && slash != p) {
		*slash = '\0';
		if (lstat(p, &st) == 0)
			return grant_decide(g, p) == GRANT_WRITE;
	}
	return false;
}

/* mkdir -p on the host without following links; record what was made so
 * it can be removed after the run. */
static int make_placeholder(struct mount_plan *mp, const char *path, struct err **e)
{
	_cleanup_free_ char *p = strdup(path);

	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "placeholder");
	for (char *c = p + 1;; c++) {
		bool last = *c == '\0';
		if (*c != '/' && !last)
			continue;
		*c = '\0';
		if (mkdir(p, last ? 0000 : 0755) == 0) {
			if (strv_push(&mp->placeholders, p) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "placeholder");
		} else if (errno != EEXIST) {
			return err_set(e, ERR_UNAVAILABLE, errno, "mask `%s`: mkdir `%s`", path, p);
		}
		if (last)
			break;
		*c = '/';
	}
	_cleanup_close_ int fd = fs_open_nofollow(AT_FDCWD, path, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "mask `%s`", path);
	return 0;
}

static int plan_deny(const struct grant *g, struct mount_plan *mp,
		     const char *path, struct err **e)
{
	struct stat st;

	if (lstat(path, &st) == 0)
		return push(mp, S_ISDIR(st.st_mode) ? MOP_MASK_DIR : MOP_MASK_FILE, path,
			    S_ISDIR(st.st_mode), false, e);
	if (errno != ENOENT)
		return err_set(e, ERR_UNAVAILABLE, errno, "deny `%s`", path);
	/* Missing: harmless where nothing can create it; elsewhere a
	 * placeholder directory is masked so the name stays taken. */
	if (!creatable(g, path))
		return 0;
	if (make_placeholder(mp, path, e) < 0)
		return -1;
	return push(mp, MOP_MASK_DIR, path, true, false, e);
}

static int plan_bind(struct mount_plan *mp, const struct grant_rule *r,
		     bool inside_tmp, struct err **e)
{
	_cleanup_close_ int fd = fs_open_nofollow(AT_FDCWD, r->path, O_PATH, 0);
	enum mop_kind kind = r->kind == GRANT_WRITE ? MOP_WRITE : MOP_READ;
	struct stat st;

	if (fd < 0 && errno == ENOENT && r->kind == GRANT_READ)
		return 0; /* an exception with nothing to show */
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno,
			       "%s `%s` cannot be bound (it must exist, reached without symbolic links)",
			       grant_kind_name(r->kind), r->path);
	if (fstat(fd, &st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", r->path);
	return push(mp, kind, r->path, S_ISDIR(st.st_mode),
		    inside_tmp || r->kind == GRANT_READ, e);
}

/* Every directory between a write grant and a rule inside it that is not
 * writable (a deny's mask, a read-only path, an exception) is bound over
 * itself: a mount point cannot be renamed or removed, so the command can
 * neither move such a path away nor put one of its own making in its
 * place, in this launch or for a later one under the same policy (with
 * `secrets` denied in `config`, `mv config moved` would otherwise leave
 * `moved/secrets` for the next run to read). The write grant itself is a
 * bind already. */
static int plan_pins(const struct grant *g, struct mount_plan *mp, struct err **e)
{
	for (size_t i = 0; i < g->n_rules; i++) {
		_cleanup_free_ char *dir = NULL;
		char *slash;

		if (g->rules[i].kind == GRANT_WRITE)
			continue;
		dir = strdup(g->rules[i].path);
		if (!dir)
			return err_set(e, ERR_INTERNAL, ENOMEM, "mount plan");
		while ((slash = strrchr(dir, '/')) && slash != dir) {
			struct stat st;
			bool have = false;

			*slash = '\0';
			if (grant_decide(g, dir) != GRANT_WRITE)
				break;
			for (size_t k = 0; k < mp->n; k++)
				have |= strcmp(mp->ops[k].path, dir) == 0;
			if (have) /* a bind of its own already: a write grant, a pin */
				continue;
			/* nothing there to rename; a link is not a directory to pin */
			if (lstat(dir, &st) < 0 || !S_ISDIR(st.st_mode))
				continue;
			if (push(mp, MOP_PIN, dir, true, false, e) < 0)
				return -1;
		}
	}
	return 0;
}

static int mop_cmp(const void *a, const void *b)
{
	return strcmp(((const struct mop *)a)->path, ((const struct mop *)b)->path);
}

static void mark_exceptions(struct mount_plan *mp)
{
	for (size_t i = 0; i < mp->n; i++) {
		if (mp->ops[i].kind != MOP_MASK_DIR)
			continue;
		for (size_t j = i + 1; j < mp->n; j++)
			if (fs_path_within(mp->ops[j].path, mp->ops[i].path))
				mp->ops[i].holds_exceptions = true;
	}
	/* A bind beneath a mask needs its mount point made in the mask. */
	for (size_t i = 0; i < mp->n; i++)
		for (size_t j = 0; j < i; j++)
			if (mp->ops[j].kind == MOP_MASK_DIR &&
			    fs_path_within(mp->ops[i].path, mp->ops[j].path))
				mp->ops[i].create = true;
}

const char *const mounts_sys_kept[] = {
	"/sys/devices/system/cpu",
	"/sys/devices/system/node",
	"/sys/kernel/mm/transparent_hugepage",
	NULL,
};

/* A rule beneath what /sys keeps of the host's still applies there. */
static bool sys_kept(const char *path)
{
	for (size_t i = 0; mounts_sys_kept[i]; i++)
		if (fs_path_within(path, mounts_sys_kept[i]))
			return true;
	return false;
}

int mounts_plan(const struct grant *g, struct mount_plan *mp, struct err **e)
{
	memset(mp, 0, sizeof(*mp));
	mp->tmp_size = limits_tmp_bytes(&g->limits);
	mp->shm_size = limits_shm_bytes(&g->limits);
	for (size_t i = 0; mounts_sys_kept[i]; i++)
		if (grant_decide(g, mounts_sys_kept[i]) != GRANT_DENY)
			mp->sys_keep |= 1u << i;
	/* /tmp is the host's only when it is granted by name */
	mp->tmp_private = true;
	for (size_t i = 0; i < g->n_rules; i++)
		if (g->rules[i].kind == GRANT_WRITE && strcmp(g->rules[i].path, "/tmp") == 0)
			mp->tmp_private = false;
	mp->workspace = strdup(g->workspace ? g->workspace : "/");
	if (!mp->workspace)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mount plan");
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		bool in_tmp = mp->tmp_private && fs_path_within(r->path, "/tmp");
		int rc;

		if (fs_path_within(r->path, "/proc") || fs_path_within(r->path, "/dev") ||
		    (fs_path_within(r->path, "/sys") && !sys_kept(r->path)))
			continue; /* rebuilt from scratch inside */
		if (r->kind == GRANT_DENY) {
			rc = host_visible(g, mp, r->path) ? plan_deny(g, mp, r->path, e) : 0;
		} else if (in_tmp && strcmp(r->path, "/tmp") != 0 &&
			   r->kind != GRANT_WRITE && !host_visible(g, mp, r->path)) {
			rc = 0;
		} else {
			rc = plan_bind(mp, r, in_tmp, e);
		}
		if (rc < 0)
			return -1;
	}
	if (plan_pins(g, mp, e) < 0 ||
	    grant_read_side(g, mp->tmp_private, &mp->read_denies, &mp->read_exceptions, e) < 0)
		return -1;
	if (mp->n > 1)
		qsort(mp->ops, mp->n, sizeof(*mp->ops), mop_cmp);
	mark_exceptions(mp);
	return 0;
}

void mounts_plan_clear(struct mount_plan *mp)
{
	for (size_t i = 0; i < mp->n; i++)
		free(mp->ops[i].path);
	free(mp->ops);
	/* placeholders go deepest first, and only while empty */
	for (size_t i = strv_len(mp->placeholders); i > 0; i--)
		rmdir(mp->placeholders[i - 1]);
	strv_free(mp->placeholders);
	strv_free(mp->read_denies);
	strv_free(mp->read_exceptions);
	free(mp->workspace);
	memset(mp, 0, sizeof(*mp));
}
