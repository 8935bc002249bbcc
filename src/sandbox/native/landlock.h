/* landlock.h: the native sandbox's Landlock layer: reading everywhere,
 * writing only beneath the write grants (and the private /tmp and /dev
 * entries), with abstract unix sockets and signals scoped to the sandbox
 * where the kernel's ABI has scopes. Applied in the child after the
 * pivot, after no_new_privs; `cordon confine` applies it from a list of
 * write paths. */
#ifndef CORDON_SANDBOX_NATIVE_LANDLOCK_H
#define CORDON_SANDBOX_NATIVE_LANDLOCK_H

#include "sandbox/native/mounts.h"

#include <stdbool.h>
#include <stddef.h>

/* Returns 0, or -1 with errno and *step set. */
int native_landlock_apply(const struct mount_plan *mp, int abi, const char **step);

/* The same layer over a filesystem cordon did not build (another
 * provider's sandbox, for `cordon confine`): writing only beneath the n
 * paths in write, each of which must exist and be reached without a
 * symbolic link; scope: abstract unix sockets and signals scoped where
 * the ABI has scopes. Returns 0, or -1 with errno and *step set, and
 * *failed the index of a write path that could not be granted. */
int native_landlock_apply_paths(char *const *write, size_t n, int abi, bool scope,
				size_t *failed, const char **step);

#endif
