/* container.h: what a container sees of the host, from the guard's
 * grant. A container's filesystem is its image: nothing of the host is
 * in it unless a mount puts it there, at the host's own path. Every
 * container provider takes its mounts from here, so the rules are one:
 *
 * - a write grant (the workspace, the run dir, the policy's write paths)
 *   is mounted read-write and must exist, unless a writable mount holds
 *   it already (the daemon resolves a mount's source by its path: one
 *   inside what a sandbox writes could be swapped for a link);
 * - a readable rule (read.allow, an executor's read need) and a
 *   read-only rule outside every mount are mounted read-only when they
 *   exist, and left out when not;
 * - inside a mount, a read-only rule is covered by a read-only bind of
 *   itself, a denied path by an empty directory or file bound read-only
 *   over it, and a readable exception beneath such a deny is bound
 *   read-only again; a path that must be covered and cannot be (it does
 *   not exist beneath a writable mount, or it is a symbolic link or a
 *   special file) refuses the launch: left as it is, the container could
 *   write it or make it;
 * - the host's extras (the segment's records, the toolbelt's token
 *   directory) are mounted read-only.
 * A unix socket granted by path is refused: a container's only socket is
 * its toolbelt, reached through its gateway. */
#ifndef CORDON_PLAN_CONTAINER_H
#define CORDON_PLAN_CONTAINER_H

#include "guard/guard.h"
#include "lib/err.h"

#include <jansson.h>

struct container_mount_input {
	const struct grant *g;
	const char *record_dir;		/* read-only; may be NULL */
	const char *toolbelt_dir;	/* read-only; may be NULL */
	const char *home;		/* a job's own home, read-write; may be NULL */
	const char *empty_dir;		/* the host's empty, read-only directory */
	const char *empty_file;		/* and empty file: what covers a deny */
};

/* The mounts, in an order where a mount comes after every mount holding
 * it: a JSON array of {"source", "target", "read_only", "why"} (target is
 * the host's path; source is it, or the empty dir or file of a cover;
 * why: "write", "read", "read_only", "deny", "exception", "record",
 * "toolbelt", "home"). Refusals: ERR_UNAVAILABLE naming the path, or
 * ERR_DENIED for a socket. */
int container_mounts(const struct container_mount_input *in, json_t **out, struct err **e);

#endif
