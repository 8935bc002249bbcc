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
	unsigned long long tmp_size;	/* its size in bytes, and /dev/shm's */
	unsigned long long shm_size;
	char **placeholders;	/* host dirs made to mask a missing deny */
	char *workspace;
	/* The sandbox's own cgroups (host dirs, made by the launcher while
	 * the child builds its filesystem) and where each shows inside,
	 * read-only: its hierarchy's mount point beneath /sys/fs/cgroup. */
	char **cgroups;
	char **cgroup_views;
	char **cgroup_enter;	/* the v1 ones, which pid 1 joins itself */
	/* mounts_sys_kept[i] is bound in when bit i is set: not when a deny
	 * holds it. */
	unsigned int sys_keep;
};

/* What the sandbox's /sys shows of the host's, read-only: what common
 * tools read (CPU counts, NUMA nodes, transparent huge pages) and the
 * sandbox's own cgroups beneath /sys/fs/cgroup. Everything else (network
 * interfaces and their addresses, devices, firmware, the host's cgroup
 * tree) is hidden beneath an empty read-only tmpfs. */
extern const char *const mounts_sys_kept[];

/* Build the operations for a grant. Refuses (ERR_UNAVAILABLE) what cannot
 * be held: a write grant or read-only path that does not exist, a path
 * through a symbolic link. */
int mounts_plan(const struct grant *g, struct mount_plan *mp, struct err **e);
void mounts_plan_clear(struct mount_plan *mp);

/* The child's steps, in its own user and mount namespace: returns 0 or
 * -1 with errno set and *step naming what failed. On success the process
 * has pivoted into the new root, the old one detached. Before it shows
 * its cgroups it waits for one byte on sync_fd (the launcher has made
 * them and moved this process in) and enters a cgroup namespace of its
 * own, so that the command sees its own cgroup as the root. */
int mounts_apply(const struct mount_plan *mp, int sync_fd, const char **step);

#endif
