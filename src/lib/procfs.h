/* procfs.h: readers for /proc: mountinfo, a process's start time and its
 * namespace ids. Knows nothing of cordon. */
#ifndef CORDON_LIB_PROCFS_H
#define CORDON_LIB_PROCFS_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

struct mountinfo {
	int id, parent;
	unsigned int major, minor;
	char *root;		/* path of the mount's root within its filesystem */
	char *mountpoint;	/* where it is mounted (octal escapes decoded) */
	char *options;		/* per-mount options */
	char *fstype;
	char *source;
	char *superopts;	/* the filesystem's own options ("rw,pids") */
};

struct mountinfo_table {
	struct mountinfo *v;
	size_t n;
};

/* Parse mountinfo text (proc(5) format). Malformed lines fail the parse:
 * an alias check must not silently miss a mount. */
int procfs_mountinfo_parse(const char *text, size_t len,
			   struct mountinfo_table *out, struct err **e);
/* Read /proc/<pid>/mountinfo (pid 0: self). */
int procfs_mountinfo_read(pid_t pid, struct mountinfo_table *out,
			  struct err **e);
void procfs_mountinfo_free(struct mountinfo_table *t);

/* Field 22 of /proc/<pid>/stat: start time in clock ticks since boot;
 * an error for a zombie (it has ended). */
int procfs_start_ticks(pid_t pid, unsigned long long *ticks, struct err **e);
/* Start time as nanoseconds since the epoch (boot time from /proc/stat
 * btime plus ticks), for comparing with a file's mtime. Whole seconds of
 * precision from btime, so callers allow one second of slack. */
int procfs_start_epoch_ns(pid_t pid, long long *ns, struct err **e);

/* A pidfd (O_CLOEXEC) of pid, proven to be the process that started at
 * ticks: opened first and dated after, so the fd is the proven process
 * whatever becomes of the number later (a signal sent through it reaches
 * that process or nothing). 1 with *pidfd, 0 when that process has ended
 * (the number may be another's now), -1 with *e. */
int procfs_pidfd_proven(pid_t pid, unsigned long long ticks, int *pidfd, struct err **e);
/* Wait up to ms for the process of pidfd to end: true once it has. */
bool procfs_pidfd_wait(int pidfd, int ms);

/* Inode number of /proc/<pid>/ns/<ns> ("mnt", "net", "pid", "user", ...). */
int procfs_ns_id(pid_t pid, const char *ns, unsigned long long *id,
		 struct err **e);

#endif
