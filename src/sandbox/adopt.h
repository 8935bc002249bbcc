/* adopt.h: the proof every process provider's adopt starts from, and the
 * /proc readings it is built of. A provider adds what its own sandbox
 * looks like beneath the root. */
#ifndef CORDON_SANDBOX_ADOPT_H
#define CORDON_SANDBOX_ADOPT_H

#include "lib/err.h"
#include "plan/plan.h"

#include <stdbool.h>
#include <sys/types.h>

/* The record is the pinned one; root is the pid pinned with it, with the
 * same start time, started no earlier than the record; it is parent's only
 * child. Returns 0 when root runs, 1 when it has exited and parent runs
 * nothing (adoptable, nothing left to prove), -1 when refused. parent 0:
 * the root's parent was the host that is gone (a daemon's wrapper, in a
 * session of its own): there is no parent to ask, the rest is proven. */
int adopt_check_root(const struct plan *p, const char *record_dir, pid_t parent,
		     pid_t root, struct err **e);

/* The children of pid (every thread's), at most max; -1 when pid is gone. */
int adopt_children(pid_t pid, pid_t *out, int max);

/* Is pid in mount, network, pid and user namespaces that all differ from
 * the caller's? */
bool adopt_namespaces_differ(pid_t pid);

/* The pid namespace that pid, the first process of the sandbox's own,
 * holds. Taken while that process may still be inspected: the native
 * sandbox's pid 1 makes itself undumpable early in its setup. */
int sandbox_ns_id(pid_t pid, unsigned long long *id, struct err **e);

/* Note it in the record dir (sandbox-ns, 0444): when the root has
 * exited, adoption looks for any process still in it. */
int sandbox_ns_record(const char *record_dir, unsigned long long id, struct err **e);

/* Note the sandbox's first process (pid 1 of its pid namespace: all of the
 * sandbox dies with it) by pid and start time, in the record dir
 * (sandbox-root, 0444), while it runs. */
int sandbox_root_record(const char *record_dir, pid_t pid, struct err **e);

/* A pidfd of the sandbox's first process the record dir names, proven
 * by its start time (procfs_pidfd_proven): 1 with *pidfd while it runs,
 * 0 when it has ended (nothing of that sandbox is left), -1 with *e when
 * the record names none. A signal sent through the fd reaches the sandbox
 * or nothing: never a process that took its number since. */
int sandbox_root_open(const char *record_dir, int *pidfd, struct err **e);

/* A process still in the pid namespace the record dir names (*left), or
 * 0 when none is; -1 when the record names none. */
int sandbox_ns_left(const char *record_dir, pid_t *left, struct err **e);

#endif
