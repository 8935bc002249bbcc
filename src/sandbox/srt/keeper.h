/* keeper.h: srt started beneath a keeper (run.c's start). The keeper is
 * the first process of a pid namespace (and IPC, UTS, cgroup and mount
 * namespaces, and a user namespace when the operator is not root) of
 * cordon's own around srt: every process of the sandbox ends when it
 * does, however it ends, and when the root dies it ends them and removes
 * what the root would have (keeper.c says how). */
#ifndef CORDON_SANDBOX_SRT_KEEPER_H
#define CORDON_SANDBOX_SRT_KEEPER_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "sandbox/limits.h"

#include <signal.h>
#include <stdbool.h>
#include <sys/types.h>

/* Start the keeper in its namespaces, srt beneath it with the command's
 * environment (the caller's mask restored in srt); its pid, with *pidfd
 * its pidfd and *go_keep the end of the pipe the root holds for its life
 * (the keeper sees the root gone by it). -1 with *e naming the step that
 * failed; nothing of the command ran. */
pid_t srt_keeper_spawn(const struct grant *g, const struct plan *p, bool quiet,
		       const sigset_t *mask, struct limits_plan *lp, const char *sockdir,
		       int *pidfd, int *go_keep, struct err **e);

#endif
