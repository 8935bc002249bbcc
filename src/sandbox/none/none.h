/* none.h: the provider of no sandbox. A daemon binding without a sandbox
 * runs its command as the operator, in the workspace, with the caller's
 * environment; its plan records what ran (argv, workspace, the names its
 * environment carries, "sandbox": "none") so that the segment is still
 * pinned and a restart can prove its wrapper. Never `cordon run`'s: a
 * launch reaches it only as a daemon's binding without a sandbox. */
#ifndef CORDON_SANDBOX_NONE_NONE_H
#define CORDON_SANDBOX_NONE_NONE_H

#include "provider/provider.h"

extern const struct provider none_provider;

/* Does a recorded plan say it ran without a sandbox? */
bool none_plan_is_none(const struct plan *p);

#endif
