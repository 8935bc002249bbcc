/* inner.h: `cordon confine`, cordon's own layer inside another
 * provider's sandbox: srt's, and a container's (cinit). srt (bubblewrap
 * and a seccomp filter of its own) gives the mounts and namespaces; on
 * their own they leave gaps cordon does not accept (capabilities for a
 * root operator, /proc/sys writable, a denied directory writable, calls
 * such as ptrace, bpf and keyctl open, datagram socketpairs). So the srt
 * provider runs `cordon confine` as srt's command: in srt's sandbox it
 * joins the sandbox's cgroups (or sets its RLIMIT_NPROC), takes the same
 * steps the native child takes last (capabilities, the bounding set,
 * no_new_privs, Landlock, the seccomp filter) and then executes the real
 * command in its own place. */
#ifndef CORDON_SANDBOX_INNER_H
#define CORDON_SANDBOX_INNER_H

#include "lib/err.h"

#include <stdbool.h>
#include <stddef.h>

struct inner_layer {
	char *const *write;	/* paths writable beneath (must exist) */
	size_t n_write;
	char *const *deny;	/* paths never readable, whatever the host does
				 * to them during the run; NULL-terminated */
	char *const *read;	/* readable beneath a deny (exceptions) */
	bool unix_all;		/* socket(AF_UNIX) left open ("unix_sockets": "all") */
	bool scope;		/* scoping abstract sockets and signals is required */
	char *const *argv;	/* the command; argv[0] is looked up in PATH */
	char *const *cgroups;	/* the sandbox's cgroups, joined first */
	size_t n_cgroups;
	unsigned long pids;	/* RLIMIT_NPROC in srt's user namespace; 0: none */
	bool pids_strict;	/* refuse when that namespace cannot hold it */
};

/* Confine this process and execute c->argv. Returns only when that
 * failed: -1 with *e (ERR_UNAVAILABLE, the step that failed; nothing was
 * executed), or 127 (not found) / 126 (not executable) with *e saying so.
 * Every fd above 2 is closed first, whatever happens. */
int inner_layer_exec(const struct inner_layer *c, struct err **e);

#endif
