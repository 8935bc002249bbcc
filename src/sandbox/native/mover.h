/* mover.h: pid 1 and the sandbox's cgroups, beside the launch
 * (launch.c): the word that tells pid 1 its cgroups, and the thread that
 * moves it into or out of a cgroup v2 one. */
#ifndef CORDON_SANDBOX_NATIVE_MOVER_H
#define CORDON_SANDBOX_NATIVE_MOVER_H

#include "lib/err.h"
#include "sandbox/limits.h"

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Moving a process between cgroups waits for an RCU grace period (the
 * kernel's threadgroup lock), which can take milliseconds. pid 1 moves
 * itself in and out of cgroup v1 hierarchies (a thread's own move needs
 * no such wait); into the sandbox's cgroup v2 the root moves it on a
 * thread of its own while it records the plan and compiles the filter
 * (the child is told once it is in), and back out once the command holds
 * it, while the command runs. */
struct mover {
	pthread_t thread;
	const struct limits_plan *lp;
	pid_t pid;
	int tell_fd;	/* -1, or where to write the word once moved */
	const void *word;
	size_t word_len;
	bool leave;	/* back to cordon's own cgroups */
	struct err *err;
	bool started;
};

/* The word for pid 1 (struct mounts_cgroups and what follows it) into
 * *out (the caller frees), its length into *len; -1 when out of memory
 * or too long. */
int mover_word(const struct limits_plan *lp, char **out, size_t *len);
/* Send pid 1 the word on sync_fd, then its way out of cordon's own v1
 * cgroups. */
int mover_tell(int sync_fd, const void *word, size_t len, const struct limits_plan *lp,
	       struct err **e);
/* Start the move (once; a started mover is left as it is). */
int mover_start(struct mover *m, struct err **e);
/* Wait for the move; r and *e are the caller's result so far, and the
 * move's failure becomes it when there was none. */
int mover_finish(struct mover *m, int r, struct err **e);

#endif
