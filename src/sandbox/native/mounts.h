/* mounts.h: the native sandbox's filesystem. The launcher turns a grant
 * into a list of mount operations (host side, where errors can still be
 * reported with context); the child carries them out in its own mount
 * namespace and pivots into the result. */
#ifndef CORDON_SANDBOX_NATIVE_MOUNTS_H
#define CORDON_SANDBOX_NATIVE_MOUNTS_H

#include "guard/guard.h"
#include "lib/err.h"

#include <stdbool.h>
#include <stddef.h>

enum mop_kind {
	MOP_WRITE,	/* the host path, read-write */
	MOP_READ,	/* the host path, read-only */
	MOP_PIN,	/* the host dir over itself: it cannot be renamed away */
	MOP_MASK_DIR,	/* an empty tmpfs, mode 000 (111 with exceptions), read-only */
	MOP_MASK_FILE,	/* an empty file, mode 000, read-only */
};

struct mop {
	enum mop_kind kind;
	char *path;		/* absolute; the same path inside and outside */
	bool source_dir;	/* the host path is a directory */
	bool create;		/* the target may be created (a mount point) */
	bool holds_exceptions;	/* MOP_MASK_DIR: something is bound inside */
};

struct mount_plan {
	struct mop *ops;	/* parents before children */
	size_t n;
	bool tmp_private;	/* /tmp is a fresh tmpfs */
	char **placeholders;	/* host dirs made to mask a missing deny */
	char *workspace;
	/* For Landlock's read side (landlock.h): the denies outside every
	 * write grant (whether they exist or not), and the readable rules
	 * beneath a deny (exceptions). */
	char **read_denies;
	char **read_exceptions;
};

/* Build the operations for a grant. Refuses (ERR_UNAVAILABLE) what cannot
 * be held: a write grant or read-only path that does not exist, a path
 * through a symbolic link. */
int mounts_plan(const struct grant *g, struct mount_plan *mp, struct err **e);
void mounts_plan_clear(struct mount_plan *mp);

/* The child's steps, in its own user and mount namespace: returns 0 or
 * -1 with errno set and *step naming what failed. On success the process
 * has pivoted into the new root, the old one detached. */
int mounts_apply(const struct mount_plan *mp, const char **step);

#endif
