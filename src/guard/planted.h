/* planted.h: what a command could leave in its workspace for a tool on
 * the host to run, before and after each launch.
 *
 * Before: the workspace's git metadata that git reads for settings and
 * programs is made read-only inside (planted_git_readonly, used by the
 * guard), and the host takes a look at what can still change git by
 * merely appearing (planted_before). After the command has ended
 * (planted_after): whatever of those the run created or changed is moved
 * out of the workspace into the run's record, and the workspace is walked
 * for what would make a host tool run a program: every other git
 * repository's config keys and hooks, and the agent and editor files
 * that run commands when a person opens the workspace. Each finding is a
 * line `cordon: planted: <path>: <key>` and an entry in
 * <record>/planted.json. Nothing here runs or follows what it reads. */
#ifndef CORDON_GUARD_PLANTED_H
#define CORDON_GUARD_PLANTED_H

#include "lib/err.h"

#include <stdio.h>

/* Bounds of the walk after a run; beyond them the rest is reported as not
 * looked at (the walk never refuses: the command has already run). */
#define PLANTED_WALK_MAX 1000000
#define PLANTED_DEPTH_MAX 64
/* Submodule repositories kept read-only one by one; a workspace with more
 * gets its whole .git/modules read-only. */
#define PLANTED_MODULES_MAX 64

/* The absolute paths of the workspace's git metadata to hold read-only
 * (those that exist): in .git and in each submodule repository under
 * .git/modules, config, config.worktree, hooks, info, commondir,
 * worktrees and an unfinished rebase, cherry-pick or revert; a .git that
 * is a file, whole. ERR_DENIED when .git or one of these is a symbolic
 * link (git would follow it out of reach of any mount). *out is
 * NULL-terminated (NULL when there is no .git). */
int planted_git_readonly(const char *workspace, char ***out, struct err **e);

struct planted_state;

/* The look before a launch: the time (as the workspace's filesystem
 * tells it), what stands at each name of the git metadata that matters
 * by existing, and at each agent and editor file. */
int planted_before(const char *workspace, struct planted_state **out,
		   struct err **e);

/* After the command has ended: move, report (each finding a line on f)
 * and, when record_dir holds a recorded plan, write planted.json there.
 * Returns the number of findings, or -1 with *e when the workspace could
 * not be looked at. */
int planted_after(struct planted_state *st, const char *record_dir, FILE *f,
		  struct err **e);

void planted_state_free(struct planted_state *st);

#endif
