/* links.h: the two checks that catch one file reachable under two names:
 * hard links out of a workspace, and bind mounts (aliases) of protected
 * paths found in mountinfo. */
#ifndef CORDON_GUARD_LINKS_H
#define CORDON_GUARD_LINKS_H

#include "lib/err.h"
#include "lib/procfs.h"

#include <stddef.h>

#define GUARD_WALK_MAX 1000000

/* Walk the workspace (never following symbolic links, crossing into
 * mounts beneath it) and refuse, as ERR_DENIED naming the path, any
 * regular file (or other non-directory) whose link count the workspace
 * cannot account for: some of its names are outside, or beneath one of
 * the denied paths in denied (absolute, inside the workspace; NULL for
 * none), which the walk does not enter: a name there is as good as one
 * outside. More than max_entries entries refuses the workspace too
 * (ERR_DENIED). */
int guard_check_hardlinks(const char *workspace, char *const *denied,
			  size_t max_entries, struct err **e);

/* Every other place in the mount table where part of a protected path is
 * visible: for each absolute canonical path in protected (NULL-terminated),
 * find the mount holding it and every other mount of the same device whose
 * root overlaps it; append the aliased path (or the whole mountpoint when
 * the mount shows a subtree of the protected path) to *aliases, each once.
 * The protected paths themselves are not added. */
int guard_mount_aliases(const struct mountinfo_table *mounts,
			char *const *protected, char ***aliases,
			struct err **e);

#endif
