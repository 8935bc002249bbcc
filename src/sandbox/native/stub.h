/* stub.h: the namespaces, made while the host is still deciding.
 *
 * Making a network namespace is the slowest step of a launch, and it needs
 * nothing of the plan. So `cordon run` forks a stub first thing; the stub
 * makes the user, mount, pid, network, ipc, uts and cgroup namespaces and
 * writes its own id maps on the other core while the host loads the
 * policy, runs the guard and records the plan. The host then sends the
 * stub what the sandbox's pid 1 needs (the mount plan, the command, its
 * environment); the stub starts pid 1 as the host's own child
 * (CLONE_PARENT), reports its pid and leaves. The stub runs nothing of the
 * command and holds nothing the host does not: it is a copy of the host
 * made before any policy was read. */
#ifndef CORDON_SANDBOX_NATIVE_STUB_H
#define CORDON_SANDBOX_NATIVE_STUB_H

#include "lib/err.h"
#include "sandbox/native/child.h"

#include <stdbool.h>
#include <sys/types.h>

/* Fork the stub (once per process). Nothing is reported here: a stub that
 * could not be made, or failed, is reported by native_stub_launch. */
void native_stub_start(void);

/* Hand the stub the child's arguments and get pid 1 back: its pid and a
 * pidfd, in the root's own children. a->sync_fd, a->status_fd and, with
 * gateway, a->gw_fd are filled in with the ends that stay in the root
 * (pid 1 has the others). Starts a stub now when none was started. -1
 * with *e naming the step that failed; nothing of the command ran. */
int native_stub_launch(struct child_args *a, bool gateway, pid_t *pid, int *pidfd,
		       struct err **e);

#endif
