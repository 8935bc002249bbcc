/* launch.h: a native sandbox's life in the steps of provider/provider.h,
 * as crun's create and start split it:
 *
 *   native_create   the sandbox made up to where it waits for the host:
 *                   pid 1 started in the stub's namespaces as this
 *                   process's child, the cgroups made and pid 1 moved in.
 *                   Nothing of the command has run; pid 1 waits for its
 *                   filter, and dies when this process does (its parent
 *                   death signal) or closes the sync socket.
 *   (the host records and pins the plan here)
 *   native_start    the namespace and root recorded, the record made
 *                   durable on a thread, the filter and the Landlock
 *                   ruleset sent (pid 1's go), the gateway or the relay.
 *   native_wait     the loop until the command is gone; its status.
 *   native_discard  a created sandbox never started: pid 1 killed and
 *                   everything create made removed.
 *
 * A created run ends in exactly one of native_wait or native_discard,
 * which free it. A failed start has already ended the sandbox (pid 1
 * killed, as any failure before the go kills it); its run is still
 * freed by native_discard. The process that calls these is the sandbox
 * root: create blocks its forwarded signals and SIGCHLD, which stay
 * blocked. Only pointer types of provider/provider.h are named here, so
 * that native.h can hold these beside sandbox/provider.h's table. */
#ifndef CORDON_SANDBOX_NATIVE_LAUNCH_H
#define CORDON_SANDBOX_NATIVE_LAUNCH_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"

#include <jansson.h>
#include <stdbool.h>

struct provider_run;
struct provider_launch;
struct provider_exit;

/* The grant, the plan, paths and pl must outlive the run. *pin is left
 * NULL: the root's pid and its pid namespace are recorded by start in
 * the record dir, which adoption reads. */
int native_create(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		  const struct provider_launch *pl, struct provider_run **run, json_t **pin,
		  struct err **e);
/* The same with the sandbox's listeners relayed to the unix socket
 * channel (a gateway of the host's serves them: an SSH remote's run)
 * instead of a gateway of its own; channel NULL: native_create. channel
 * must outlive the run. */
int native_create_relayed(const struct grant *g, const struct plan *p,
			  const struct plan_paths *paths, const struct provider_launch *pl,
			  const char *channel, struct provider_run **run, json_t **pin,
			  struct err **e);
int native_start(struct provider_run *run, struct err **e);
/* x->code: the command's status (128+N for signal N), 126/127 when it
 * could not be executed; -1 with *e when the sandbox failed or could not
 * be waited for. */
int native_wait(struct provider_run *run, struct provider_exit *x, struct err **e);
void native_discard(struct provider_run *run);

/* sandbox/provider.h's run, as these steps: create, record (the host's
 * record(ctx, e)), start, wait. What native_run and native_run_relayed
 * are (native.h). */
int native_run_steps(const struct grant *g, const struct plan *p,
		     const struct plan_paths *paths, int (*record)(void *ctx, struct err **e),
		     void *ctx, bool quiet, const char *channel, struct err **e);

#endif
