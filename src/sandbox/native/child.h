/* child.h: the sandbox's first process, from clone to exec. Everything it
 * does is in the order DESIGN.md gives; any failure is written to the
 * status pipe as the step and its errno, and nothing is executed. */
#ifndef CORDON_SANDBOX_NATIVE_CHILD_H
#define CORDON_SANDBOX_NATIVE_CHILD_H

#include "sandbox/native/mounts.h"
#include "sandbox/confine/seccomp.h"

#include <signal.h>
#include <stdbool.h>
#include <stdnoreturn.h>

#define CHILD_STEP_MAX 96

/* What the status pipe carries: a step that failed, or, once the command
 * and every other process of the sandbox are gone, the exit status; and
 * before either, once, that the command has started. */
struct child_status {
	char step[CHILD_STEP_MAX];
	int err;
	int exec;	/* 1: the command itself could not be executed */
	int done;	/* 1: the command ended with code (no failure) */
	int spawned;	/* 1: the command started (nothing else is said) */
	int code;
};

struct child_args {
	const struct mount_plan *mp;
	int landlock_abi;
	char *const *argv;
	bool sigpipe_ignored;	/* the caller's disposition, to hand on */
	bool foreground;	/* cordon held the terminal: the command takes it */
	sigset_t caller_mask;	/* the caller's blocked signals, to hand on */
	char *const *env;	/* the command's whole environment (KEY=value) */
	int gw_fd;		/* -1, or where to send the gateway's listeners */
	int sync_fd;	/* read: struct mounts_cgroups once the sandbox's
			 * cgroups are made; its way out of them; once the plan
			 * is recorded and pinned, the seccomp filter (length,
			 * instructions) with the Landlock ruleset's fd */
	int status_fd;	/* write: a struct child_status (close-on-exec) */
};

noreturn void native_child(const struct child_args *a);

#endif
