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
#include <stdint.h>

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
	/* For Landlock's read side (landlock.h): the denies outside every
	 * write grant (whether they exist or not), and the readable rules
	 * beneath a deny (exceptions). */
	char **read_denies;
	char **read_exceptions;
	/* mounts_sys_kept[i] is bound in when bit i is set: not when a deny
	 * holds it. */
	unsigned int sys_keep;
};

/* The word the child waits for on the sync pipe before it shows its
 * cgroups: the launcher decides the limits and makes the sandbox's
 * cgroups while the child builds its filesystem, and then sends this
 * header and len bytes of NUL-terminated paths: n_enter cgroup v1 dirs
 * the child joins itself, then n_view pairs of a cgroup dir and where it
 * shows inside, read-only (its hierarchy's mount point beneath
 * /sys/fs/cgroup). */
struct mounts_cgroups {
	uint32_t len, n_enter, n_view, pad;
	uint64_t nproc;		/* RLIMIT_NPROC for the sandbox; 0: none */
};
#define MOUNTS_CGROUPS_MAX 65536u

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
 * its cgroups it reads struct mounts_cgroups on sync_fd, joins them (or
 * is in them already) and enters a cgroup namespace of its own, so that
 * the command sees its own cgroup as the root; *nproc is the word's. */
int mounts_apply(const struct mount_plan *mp, int sync_fd, unsigned long *nproc,
		 const char **step);

#endif
