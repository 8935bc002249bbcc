/* landlock.h: the native sandbox's Landlock layer: reading everywhere but
 * the denies, by rules on what exists as the sandbox starts (so a denied
 * path the host creates or replaces during the run stays unreadable),
 * writing only beneath the write grants (and the private /tmp and /dev
 * entries), with abstract unix sockets and signals scoped to the sandbox
 * where the kernel's ABI has scopes. The host builds the ruleset (it has
 * the host's paths, and a core to spare while the sandbox is made), the
 * sandbox adds its own mounts' rules and applies it after the pivot and
 * no_new_privs; `cordon confine` builds and applies it from lists of
 * paths. */
#ifndef CORDON_SANDBOX_NATIVE_LANDLOCK_H
#define CORDON_SANDBOX_NATIVE_LANDLOCK_H

#include "sandbox/native/mounts.h"

#include <stdbool.h>
#include <stddef.h>

/* The native sandbox's ruleset, built by the host while the sandbox
 * builds its filesystem: every rule on a host path (the write grants, the
 * read side, the standard streams). *out is the ruleset's fd. Returns 0,
 * or -1 with errno and *step set. */
int native_landlock_build(const struct mount_plan *mp, int abi, int *out, const char **step);
/* In the sandbox, after the pivot: the rules for what only it has (its
 * /dev, /proc, private /tmp) added to the host's ruleset fd, which is
 * then applied to this process and closed. 0, or -1 with errno and *step. */
int native_landlock_enforce(int fd, const struct mount_plan *mp, int abi, const char **step);

/* The same layer over a filesystem cordon did not build (another
 * provider's sandbox, for `cordon confine`): writing only beneath the n
 * paths in write, each of which must exist and be reached without a
 * symbolic link; reading everywhere but the denies (NULL-terminated, may
 * be NULL) and beneath them the exceptions, as for the native sandbox; scope: abstract unix sockets and
 * signals scoped where the ABI has scopes. Returns 0, or -1 with errno
 * and *step set, and *failed the index of a write path that could not be
 * granted. */
int native_landlock_apply_paths(char *const *write, size_t n, char *const *denies,
				char *const *exceptions, int abi, bool scope, size_t *failed,
				const char **step);

#endif
