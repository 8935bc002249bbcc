/* provider.h: what the process providers share below the contract
 * (provider/provider.h): the record step their run (native_run, srt_run)
 * calls before anything of the command can run, and, until their create
 * and start are split (crun's create/start: the sandbox cloned up to
 * where it waits for its filter, then the go), the ops that carry a
 * launch through the contract as one run: create holds the arguments,
 * wait runs the whole launch. */
#ifndef CORDON_SANDBOX_PROVIDER_H
#define CORDON_SANDBOX_PROVIDER_H

#include "lib/err.h"
#include "provider/provider.h"

#include <stdbool.h>

/* The host's recording and pinning of a plan, handed to a provider's run:
 * the provider calls it before anything of the command can run, and a
 * failure ends the launch with nothing run. */
struct provider_record {
	int (*fn)(void *ctx, struct err **e);
	void *ctx;
	bool quiet;	/* no notes at exit */
};

/* A process provider's launch from start to end: the command's status,
 * or -1 with *e when nothing ran (provider.h of old's run). */
typedef int (*sandbox_run_fn)(const struct grant *g, const struct plan *p,
			      const struct plan_paths *paths, const struct provider_record *rec,
			      struct err **e);

/* create: hold what the launch is given, for wait to run it with fn.
 * Nothing is made; the host records and pins the plan before wait (the
 * record step fn is handed is then empty). */
int sandbox_run_hold(sandbox_run_fn fn, const struct grant *g, const struct plan *p,
		     const struct plan_paths *paths, const struct provider_launch *pl,
		     struct provider_run **run, struct err **e);
/* wait: the held launch, run; frees run. */
int sandbox_run_wait(struct provider_run *run, struct provider_exit *x, struct err **e);
/* discard: nothing was made; frees run. */
void sandbox_run_discard(struct provider_run *run);

#endif
