/* container.c: a container's mounts from the guard's grant (container.h).
 * One pass over every path that matters, parents first, so that the
 * mount holding a path is always known when the path is decided. */
#include "plan/container.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum item_kind {
	IT_WRITE,	/* a write grant, or the job's home */
	IT_READ,	/* readable (an exception, a read need) */
	IT_READ_ONLY,	/* never writable */
	IT_DENY,	/* never readable */
	IT_EXTRA,	/* the host's: records, the toolbelt's token dir */
};

struct item {
	const char *path;
	enum item_kind kind;
	const char *why;
};

struct mount {
	const char *target;
	const char *source;
	bool ro;
	bool cover;	/* an empty dir or file over a deny: nothing beneath is seen */
	const char *why;
};

static int by_path(const void *a, const void *b)
{
	const struct item *x = a, *y = b;
	int c = strcmp(x->path, y->path);

	/* (equal paths: the stronger kind first; the rest are dropped) */
	return c ? c : (int)y->kind - (int)x->kind;
}

/* The innermost mount holding path (path itself excluded), or NULL. */
static const struct mount *holder(const struct mount *m, size_t n, const char *path)
{
	for (size_t i = n; i-- > 0;)
		if (strcmp(m[i].target, path) != 0 && fs_path_within(path, m[i].target))
			return &m[i];
	return NULL;
}

/* What is at path, never following a link: 'd' directory, 'f' regular
 * file, 'l' a link, 's' anything else, 0 nothing (or not reachable). */
static char what_is(const char *path)
{
	struct stat st;

	if (lstat(path, &st) < 0)
		return 0;
	return S_ISDIR(st.st_mode) ? 'd' : S_ISREG(st.st_mode) ? 'f' : S_ISLNK(st.st_mode) ? 'l' : 's';
}

static int add(struct mount **m, size_t *n, struct mount one, struct err **e)
{
	struct mount *v = realloc(*m, (*n + 1) * sizeof(**m));

	if (!v)
		return err_set(e, ERR_INTERNAL, ENOMEM, "container mounts");
	v[(*n)++] = one;
	*m = v;
	return 0;
}

static const char *item_why(enum grant_kind k)
{
	return k == GRANT_WRITE ? "write" : k == GRANT_READ ? "read"
		: k == GRANT_READ_ONLY ? "read_only" : "deny";
}

static int collect(const struct container_mount_input *in, struct item **out, size_t *n,
		   struct err **e)
{
	const struct grant *g = in->g;
	struct item *v = calloc(g->n_rules + 3, sizeof(*v));
	size_t k = 0;

	if (!v)
		return err_set(e, ERR_INTERNAL, ENOMEM, "container mounts");
	for (size_t i = 0; i < g->n_rules; i++) {
		static const enum item_kind kinds[] = { [GRANT_DENY] = IT_DENY,
							[GRANT_READ] = IT_READ,
							[GRANT_READ_ONLY] = IT_READ_ONLY,
							[GRANT_WRITE] = IT_WRITE };

		v[k++] = (struct item){ g->rules[i].path, kinds[g->rules[i].kind],
					item_why(g->rules[i].kind) };
	}
	if (in->home)
		v[k++] = (struct item){ in->home, IT_WRITE, "home" };
	if (in->record_dir)
		v[k++] = (struct item){ in->record_dir, IT_EXTRA, "record" };
	if (in->toolbelt_dir)
		v[k++] = (struct item){ in->toolbelt_dir, IT_EXTRA, "toolbelt" };
	qsort(v, k, sizeof(*v), by_path);
	*out = v;
	*n = k;
	return 0;
}

/* Decide one path, given the mounts made for its parents. */
static int decide(const struct container_mount_input *in, const struct item *it,
		  struct mount **m, size_t *n, struct err **e)
{
	const struct mount *h = holder(*m, *n, it->path);
	char w = what_is(it->path);

	if (strcmp(it->path, "/") == 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "a container cannot be given the host's `/` (%s)", it->why);
	switch (it->kind) {
	case IT_WRITE:
		/* writable already through its holder: a mount of its own would
		 * be one more source the daemon resolves by path, inside what a
		 * sandbox writes */
		if (h && !h->ro && !h->cover && w == 'd')
			return 0;
		if (w != 'd' && w != 'f')
			return err_set(e, ERR_UNAVAILABLE, w ? 0 : ENOENT,
				       "%s `%s`: %s, so it cannot be mounted", it->why, it->path,
				       w == 'l' ? "a symbolic link" : w ? "not a file or directory"
									 : "does not exist");
		return add(m, n, (struct mount){ it->path, it->path, false, false, it->why }, e);
	case IT_EXTRA:
		if (w != 'd')
			return err_set(e, ERR_UNAVAILABLE, w ? 0 : ENOENT,
				       "%s `%s`: not a directory, so it cannot be mounted", it->why,
				       it->path);
		return add(m, n, (struct mount){ it->path, it->path, true, false, it->why }, e);
	case IT_READ:
	case IT_READ_ONLY:
		/* seen already, read-only, through its holder: nothing to do */
		if (h && h->ro && !h->cover)
			return 0;
		/* a read-only path beneath a deny stays hidden with it */
		if (h && h->cover && it->kind == IT_READ_ONLY)
			return 0;
		if (w == 'd' || w == 'f')
			return add(m, n,
				   (struct mount){ it->path, it->path, true, false,
						   h && h->cover ? "exception" : it->why },
				   e);
		/* beneath a writable mount, what must stay read-only has to
		 * be there to be covered; anything else missing is left out */
		if (h && !h->ro && it->kind == IT_READ_ONLY)
			return err_set(e, ERR_UNAVAILABLE, w ? 0 : ENOENT,
				       "read-only `%s` inside the writable `%s`: %s, so it "
				       "cannot be covered",
				       it->path, h->target,
				       w == 'l' ? "a symbolic link" : w ? "not a file or directory"
									 : "does not exist");
		if (w == 'l' && h)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "`%s` inside `%s` is a symbolic link, so it cannot be mounted",
				       it->path, h->target);
		return 0;
	case IT_DENY:
		/* outside every mount, or beneath a cover: never seen */
		if (!h || h->cover)
			return 0;
		if (w == 'd' || w == 'f' || w == 's')
			return add(m, n,
				   (struct mount){ it->path, w == 'd' ? in->empty_dir : in->empty_file,
						   true, true, "deny" },
				   e);
		if (w == 'l' || !h->ro)
			return err_set(e, ERR_UNAVAILABLE, w ? 0 : ENOENT,
				       "denied `%s` inside the %s `%s`: %s, so it cannot be covered",
				       it->path, h->ro ? "read-only" : "writable", h->target,
				       w == 'l' ? "a symbolic link" : "does not exist");
		return 0;
	}
	return 0;
}

int container_mounts(const struct container_mount_input *in, json_t **out, struct err **e)
{
	_cleanup_free_ struct item *items = NULL;
	_cleanup_free_ struct mount *m = NULL;
	_cleanup_json_ json_t *arr = NULL;
	size_t n_items = 0, n = 0;

	if (!in->empty_dir || !in->empty_file)
		return err_set(e, ERR_INTERNAL, 0, "container mounts: no empty dir or file");
	if (strv_len(in->g->sockets) > 0)
		return err_set(e, ERR_DENIED, 0,
			       "sockets: `%s`: a container reaches no unix socket of the host "
			       "(its toolbelt goes through its gateway)",
			       in->g->sockets[0]);
	if (collect(in, &items, &n_items, e) < 0)
		return -1;
	for (size_t i = 0; i < n_items; i++) {
		/* one decision per path: the strongest kind sorted first */
		if (i > 0 && strcmp(items[i].path, items[i - 1].path) == 0)
			continue;
		if (decide(in, &items[i], &m, &n, e) < 0)
			return -1;
	}
	if (!(arr = json_array()))
		return err_set(e, ERR_INTERNAL, ENOMEM, "container mounts");
	for (size_t i = 0; i < n; i++) {
		json_t *one = json_pack("{s:s, s:s, s:b, s:s}", "source", m[i].source, "target",
					m[i].target, "read_only", m[i].ro, "why", m[i].why);

		if (!one || json_array_append_new(arr, one) < 0)
			return err_set(e, ERR_CONFIG, 0,
				       "a mount's path is not valid UTF-8; a plan records it as text");
	}
	*out = steal_pointer(&arr);
	return 0;
}
