/* limits.h (srt): the sandbox's resource limits under srt. The root makes
 * the sandbox's cgroups (sandbox/limits.h) before srt starts; srt's
 * settings bind them writable into its sandbox, and `cordon confine`, the
 * first of cordon's code to run in there, moves itself in before it
 * confines itself (Landlock then leaves them read-only to the command),
 * so that the command and what it starts are limited, and srt's own
 * processes (node, bwrap, socat) are not. Where no cgroup holds pids, an
 * operator other than root gets RLIMIT_NPROC, which confine sets in srt's
 * user namespace after checking that it is one of the sandbox's own. */
#ifndef CORDON_SANDBOX_SRT_LIMITS_H
#define CORDON_SANDBOX_SRT_LIMITS_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "sandbox/limits.h"

#include <jansson.h>

/* confine's flags for lp, pushed onto argv: `--cgroup DIR` for each
 * cgroup, `--pids N` (and `--pids-strict` when the policy set the limit)
 * where RLIMIT_NPROC holds it. */
int srt_limits_args(const struct limits_plan *lp, const struct grant *g, char ***argv);
/* Does the plan's confine carry exactly these flags? A host whose
 * cgroups changed since the plan refuses the launch. */
int srt_limits_check_plan(const struct plan *p, const struct limits_plan *lp,
			  const struct grant *g, struct err **e);
/* Each cgroup the plan's confine joins, in the settings'
 * filesystem.allowWrite (srt binds it writable; confine's Landlock keeps
 * it read-only to the command). */
int srt_limits_settings(json_t *settings, const struct plan *p, struct err **e);

#endif
