/* limits.h: a sandbox's resource limits (the grant's "limits": pids,
 * memory, cpus), shared by the process providers.
 *
 * The main mechanism is a cgroup of the sandbox's own, `cordon-<execution>`:
 *   cgroup v2: beneath the nearest cgroup, from cordon's own up, that this
 *     user may write and whose children can have every controller needed
 *     (in its cgroup.subtree_control, or enabled there when it holds no
 *     process: the "no internal processes" rule); a delegated subtree when
 *     the operator is not root.
 *   cgroup v1: a child of cordon's own cgroup in each hierarchy that holds
 *     a controller needed (pids, memory, cpu), where this user may write it.
 * A controller goes where the host has it: in the v2 hierarchy when it is
 * bound there, else in its v1 hierarchy. Files written: pids.max;
 * memory.max, memory.swap.max 0, memory.oom.group 1 (v2) or
 * memory.limit_in_bytes and memory.memsw.limit_in_bytes (v1); cpu.max (v2)
 * or cpu.cfs_period_us and cpu.cfs_quota_us (v1).
 *
 * Without a cgroup's pids controller, an operator other than root gets the
 * pids limit as RLIMIT_NPROC in the sandbox's own user namespace, where the
 * kernel counts only the sandbox's tasks (it exempts global uid 0, so for
 * root it does nothing). Memory and cpus need a cgroup. What cannot be
 * enforced is refused (sandbox_unavailable), but for the default pids limit
 * (the policy set none), which then goes unenforced with a note.
 *
 * Every path is read and written beneath a prefix ("" on the live system),
 * so the unit tests run this against a fake cgroupfs tree. */
#ifndef CORDON_SANDBOX_LIMITS_H
#define CORDON_SANDBOX_LIMITS_H

#include "guard/guard.h"
#include "lib/err.h"
#include "sandbox/prereq.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

enum limits_ctrl { LIMITS_PIDS, LIMITS_MEMORY, LIMITS_CPU, LIMITS_NCTRL };
#define LIMITS_BIT(c) (1u << (c))

/* A cgroup cordon-* this old and empty was left by a launch that did not
 * end (its root killed): the next launch beside it removes it. */
#define LIMITS_STALE_SECS 600
/* cpu.max's and cfs_period_us's period: 100 ms. */
#define LIMITS_CPU_PERIOD_US 100000u
/* The sandbox's private /tmp without a memory limit, and its /dev/shm:
 * the smaller of these and a quarter of the RAM (a memory limit, when
 * set, caps both). */
#define LIMITS_TMP_DEFAULT (2ULL << 30)
#define LIMITS_SHM_DEFAULT (64ULL << 20)

/* Where the host is read. NULL texts read the live /proc/self files. */
struct limits_host {
	const char *prefix;	/* prepended to every cgroupfs path; NULL: none */
	const char *mountinfo;	/* /proc/self/mountinfo's text */
	const char *cgroup;	/* /proc/self/cgroup's text */
	uid_t uid;		/* the operator */
	bool fake;		/* a test's tree: the files written are created */
};

/* One hierarchy the sandbox gets a cgroup in. Paths are the host's
 * (without the prefix). */
struct limits_dir {
	char *mount;		/* the hierarchy's mount point */
	char *parent;		/* the cgroup beneath which the sandbox's goes */
	char *self;		/* cordon's own cgroup in this hierarchy */
	char *dir;		/* parent/cordon-<execution> */
	unsigned int ctrls;	/* LIMITS_BIT()s it holds for the sandbox */
	unsigned int enable;	/* v2: to enable in parent's subtree_control */
	bool v2;
	bool made;		/* created by limits_create, not yet removed */
	bool left;		/* still busy when removed: left behind */
};

struct limits_plan {
	struct limits_dir dirs[LIMITS_NCTRL];
	size_t n;
	unsigned int have;	/* the controllers a dir holds */
	char why[LIMITS_NCTRL][224];	/* why a controller has none */
	struct policy_limits limits;	/* what is written */
	unsigned long nproc;	/* RLIMIT_NPROC for the sandbox; 0: none */
	bool pids_unenforced;	/* the default pids limit is not enforced */
	char *prefix;
	bool fake;
};

/* Find, for each controller in want, a cgroup this user may make the
 * sandbox's beneath, or say why there is none. Never fails: a host it
 * cannot read has no cgroup. */
void limits_find(const struct limits_host *h, unsigned int want, struct limits_plan *lp);

/* Decide how g's limits are enforced: the controllers g needs (pids
 * always; memory and cpu when set), each in a cgroup named
 * cordon-<execution>, or pids as RLIMIT_NPROC for an operator other than
 * root. ERR_UNAVAILABLE naming the limit when one that was set cannot be.
 * h NULL: this host, this user. Nothing is created yet. */
int limits_decide(const struct limits_host *h, const struct grant *g, const char *execution,
		  struct limits_plan *lp, struct err **e);

/* Make the cgroups and write the limits; on failure nothing made stays. */
int limits_create(struct limits_plan *lp, struct err **e);
/* Move pid (0: the caller) into every cgroup made (v2_only: the cgroup
 * v2 one; the process joins its v1 ones itself, limits_join_dir). */
int limits_join(const struct limits_plan *lp, pid_t pid, bool v2_only, struct err **e);
/* Move pid back to cordon's own cgroups (v2_only: from the v2 one): the
 * native sandbox's pid 1, once the command it started holds them. pid
 * 1's exit takes the sandbox's namespaces down (about a millisecond)
 * before it leaves its cgroups; out of them, it does not hold their
 * removal up. */
int limits_leave(const struct limits_plan *lp, pid_t pid, bool v2_only, struct err **e);
/* The `tasks` files of cordon's own v1 cgroups, opened for writing into
 * fds (at most max): a process holding them moves itself back, cheaply,
 * by writing "0" (see limits_join_dir). How many, or -1. */
int limits_leave_files(const struct limits_plan *lp, int *fds, size_t max, struct err **e);
/* Move the caller, a process of one thread, into dir, a cgroup (checked:
 * on a cgroup filesystem): 0 or -1 with errno. Allocates nothing (the
 * native sandbox's pid 1 calls it before it runs anything). */
int limits_join_dir(const char *dir);
/* Remove the cgroups made, waiting briefly (about a second at most)
 * while the sandbox's last processes leave them. */
void limits_remove(struct limits_plan *lp);
void limits_clear(struct limits_plan *lp);

/* One line on f for each cgroup left behind, and one when the default
 * pids limit goes unenforced. */
void limits_note(const struct limits_plan *lp, FILE *f);

/* The provider's doctor checks for this host and user: "pids" (how the
 * pids limit is enforced, or warn when the default goes unenforced) and
 * "cgroup" (whether memory and cpus limits can be, or warn). */
void limits_doctor(const struct limits_host *h, struct prereq_check *pids,
		   struct prereq_check *cgroup);

/* The size of the sandbox's private /tmp and /dev/shm, in bytes. */
unsigned long long limits_tmp_bytes(const struct policy_limits *l);
unsigned long long limits_shm_bytes(const struct policy_limits *l);

/* Is the caller in a user namespace other than the initial one, as a
 * user other than global root? There RLIMIT_NPROC counts only the
 * namespace's tasks. *why says why not. */
bool limits_nproc_usable(const char **why);

#endif
