/* landlock.h: the native sandbox's Landlock layer: reading everywhere,
 * writing only beneath the write grants (and the private /tmp and /dev
 * entries), with abstract unix sockets and signals scoped to the sandbox
 * where the kernel's ABI has scopes. Applied in the child after the
 * pivot, after no_new_privs. */
#ifndef CORDON_SANDBOX_NATIVE_LANDLOCK_H
#define CORDON_SANDBOX_NATIVE_LANDLOCK_H

#include "sandbox/native/mounts.h"

/* Returns 0, or -1 with errno and *step set. */
int native_landlock_apply(const struct mount_plan *mp, int abi, const char **step);

#endif
