/* landlock.h: the native sandbox's Landlock layer (the pieces are
 * sandbox/confine/landlock.h's): reading everywhere but the denies,
 * writing only beneath the write grants (and the private /tmp and /dev
 * entries), with abstract unix sockets and signals scoped to the sandbox
 * where the kernel's ABI has scopes. The host builds the ruleset (it has
 * the host's paths, and a core to spare while the sandbox is made), the
 * sandbox adds its own mounts' rules and applies it after the pivot and
 * no_new_privs. */
#ifndef CORDON_SANDBOX_NATIVE_LANDLOCK_H
#define CORDON_SANDBOX_NATIVE_LANDLOCK_H

#include "sandbox/native/mounts.h"

/* The native sandbox's ruleset, built by the host while the sandbox
 * builds its filesystem: every rule on a host path (the write grants, the
 * read side, the standard streams). *out is the ruleset's fd. Returns 0,
 * or -1 with errno and *step set. */
int native_landlock_build(const struct mount_plan *mp, int abi, int *out, const char **step);
/* In the sandbox, after the pivot: the rules for what only it has (its
 * /dev, /proc, private /tmp) added to the host's ruleset fd, which is
 * then applied to this process and closed. 0, or -1 with errno and *step. */
int native_landlock_enforce(int fd, const struct mount_plan *mp, int abi, const char **step);

#endif
