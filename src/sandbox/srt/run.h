/* run.h: an srt launch in the steps of provider/provider.h. srt has no
 * point where its sandbox is made and waits: srt builds it and runs the
 * command in one go. So the split is where the host's record has always
 * been:
 *
 *   srt_create    the preparation, nothing started: the limits decided
 *                 (and checked against the plan's), the gateway's
 *                 loopback listeners bound, srt and its helpers found
 *                 again (the plan's), the settings built.
 *   (the host records and pins the plan here)
 *   srt_start     the gateway over the listeners, the settings written
 *                 and the record made durable, the socket dir and the
 *                 cgroups made, the preflight, then srt started beneath
 *                 the keeper and the keeper's namespace and pid recorded.
 *   srt_wait      the loop until the keeper is reaped; its status.
 *   srt_discard   a run created and never started (or whose start
 *                 failed): what create made, removed.
 *
 * A created run ends in exactly one of srt_wait or srt_discard, which
 * free it; a failed start has already ended whatever it started. Only
 * pointer types of provider/provider.h are named here, so that srt.h can
 * hold these beside sandbox/provider.h's table. */
#ifndef CORDON_SANDBOX_SRT_RUN_H
#define CORDON_SANDBOX_SRT_RUN_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"

#include <jansson.h>
#include <stdbool.h>

struct provider_run;
struct provider_launch;
struct provider_exit;

/* The grant, the plan, paths and pl must outlive the run; *pin is left
 * NULL (the keeper's pid and namespace are recorded by start in the
 * record dir). */
int srt_create(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
	       const struct provider_launch *pl, struct provider_run **run, json_t **pin,
	       struct err **e);
int srt_start(struct provider_run *run, struct err **e);
/* x->code: srt's status, as the keeper ends with it; -1 with *e when it
 * could not be waited for. */
int srt_wait(struct provider_run *run, struct provider_exit *x, struct err **e);
void srt_discard(struct provider_run *run);

/* sandbox/provider.h's run, as these steps with the host's
 * record(ctx, e) between create and start: what srt_run is (srt.h). */
int srt_run_steps(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		  int (*record)(void *ctx, struct err **e), void *ctx, bool quiet,
		  struct err **e);

#endif
