/* mirror_int.h: what mirror.c (the pack, the listing helpers),
 * mirror_apply.c (the copy back's entries) and mirror_remove.c (its
 * removals and directory modes) share: path vectors that grow in
 * amortised constant time (a listing may hold a million paths), path
 * checks, the manifest's reading, the lists of a report, and an apply's
 * state with the rules every step of it goes through. */
#ifndef CORDON_CONTAINER_SSH_MIRROR_INT_H
#define CORDON_CONTAINER_SSH_MIRROR_INT_H

#include "container/ssh/mirror.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>

#define MIRROR_MANIFEST_VERSION 1

struct mirror_vec {
	char **v;
	size_t n, cap;
};

/* Append a copy of s: 0, or -1 (ENOMEM). */
int mirror_vec_push(struct mirror_vec *v, const char *s);
void mirror_vec_free(struct mirror_vec *v);
/* strcmp order (a directory before what it holds) */
void mirror_vec_sort(struct mirror_vec *v);
/* Is s in v, which is sorted? */
bool mirror_vec_has(const struct mirror_vec *v, const char *s);
/* v as a NULL-terminated vector, v emptied; NULL on ENOMEM (v kept). */
char **mirror_vec_steal(struct mirror_vec *v);

/* Absolute, shorter than PATH_MAX, no empty, "." or ".." element (not
 * ending in "/" unless it is "/"). */
bool mirror_path_ok(const char *p);
/* Every path of v is mirror_path_ok, and not "/" unless root_ok. */
int mirror_check_paths(char *const *v, const char *what, bool root_ok, struct err **e);
/* Valid UTF-8 as JSON takes it (no overlong form, surrogate or code
 * point past U+10FFFF). */
bool mirror_utf8_ok(const char *s);
/* s for showing (a report, an error): printable ASCII and UTF-8 but a
 * backslash (\\), C0 and C1 controls and bytes that are not UTF-8 as
 * \xNN, cut after a few hundred bytes. Caller frees; NULL on ENOMEM. */
char *mirror_show(const char *s);

/* One manifest path. */
struct mirror_stat {
	char type; /* 'd', 'f', 'l' */
	long long mode, size, mtime, ctime, dev, ino;
};

/* A time in nanoseconds, saturated: a file's times are anyone's to set. */
long long mirror_ts_ns(const struct timespec *t);

/* The manifest's "paths" object, every item of it checked. */
int mirror_manifest_paths(const json_t *manifest, const json_t **paths, struct err **e);
/* The path's record in a checked "paths" object: false when absent. */
bool mirror_manifest_get(const json_t *paths, const char *path, struct mirror_stat *st);

/* Append {"path", "why"} (path shown) to obj's array list, or once it
 * holds MIRROR_REPORT_MAX items count one more in obj's more: 0, or -1
 * (ENOMEM). */
int mirror_note(json_t *obj, const char *list, const char *more, const char *path,
		const char *why);

/* --- an apply (mirror_apply.c, mirror_remove.c) --------------------- */

/* A write grant; its root is opened once, without a link on its way. */
struct mirror_grant {
	const char *path;
	size_t len;
	int fd;	 /* O_PATH|O_DIRECTORY of its root, or -1 */
	int err; /* why fd is -1 */
};

/* A directory's mode and mtime, set once everything else is done. */
struct mirror_dirmode {
	char *path;
	mode_t mode;
	struct timespec mtime;
};

/* One apply: the rules, what the remote listed, what the tar did. */
struct mirror_state {
	const json_t *paths; /* the manifest's */
	struct mirror_grant *g;
	size_t ng;
	struct mirror_vec kept, pinned; /* pinned: sorted */
	struct mirror_vec remote;	/* sorted */
	struct mirror_vec written;	/* what the tar wrote (sorted once it is read) */
	struct mirror_vec dirs;		/* the tar's directories, made or kept as such */
	struct mirror_dirmode *modes;
	size_t nmodes, capmodes;
	unsigned long long bytes, max_bytes;
	size_t entries, max_entries;
	long long nwritten, ndirs, nremoved;
	json_t *report;
	unsigned char *in, *buf; /* the tar as read; a file's data */
	int tar_fd;
};

/* The outcome of one step: done, refused (why, noted; the apply goes
 * on), or the apply fails (*e set). */
enum mirror_step { MIRROR_DONE = 0, MIRROR_REFUSED = 1, MIRROR_FAIL = -1 };


int mirror_nomem(struct err **e);
/* Note path in the report's "refused" (MIRROR_REFUSED) or "left"
 * (MIRROR_DONE); MIRROR_FAIL on ENOMEM. */
enum mirror_step mirror_refuse(struct mirror_state *ap, const char *path, const char *why,
			       struct err **e);
enum mirror_step mirror_leave(struct mirror_state *ap, const char *path, const char *why,
			      struct err **e);
/* Errors that say what the host's path is (a refusal of that path)
 * rather than that the host failed (the apply fails). */
bool mirror_errno_of_state(int err);
/* The host failed: -1 with *e. */
int mirror_host_fail(const char *path, int err, const char *what, struct err **e);
/* A refusal ("host: what: strerror") for an error of the path's state,
 * else mirror_host_fail. */
enum mirror_step mirror_host_error(struct mirror_state *ap, const char *path, int err,
				   const char *what, struct err **e);
/* Is path kept or beneath a kept path? */
bool mirror_kept(const struct mirror_state *ap, const char *path);
/* Is path a directory that holds a kept path (from a grant's root
 * down)? */
bool mirror_pinned(const struct mirror_state *ap, const char *path);
/* The grant path is strictly beneath (the deepest), or NULL; *root when
 * path is a grant's root itself. */
const struct mirror_grant *mirror_grant_of(const struct mirror_state *ap, const char *path,
					   bool *root);
/* Open the directory holding path (strictly beneath g) from g's root,
 * one element at a time, no link followed; with create, a missing one
 * is made (0700). Returns the O_PATH fd and the last element in *last,
 * or -1 with *why (a refusal) or errno (from the host). */
int mirror_walk_parent(const struct mirror_grant *g, const char *path, bool create,
		       const char **last, const char **why);

/* Once the tar is applied (mirror_remove.c): the manifest's paths the
 * remote removed, then the directories' modes and mtimes. */
int mirror_apply_removals(struct mirror_state *ap, struct err **e);
int mirror_apply_modes(struct mirror_state *ap, struct err **e);

#endif
