/* provider.h: what the process providers share below the contract
 * (provider/provider.h): the record step a launch run as one call
 * (native_run, native_run_relayed, srt_run: create, this step, start,
 * wait) takes before anything of the command can run. The host's own
 * launches go through the contract's create, start and wait, and record
 * between create and start themselves. */
#ifndef CORDON_SANDBOX_PROVIDER_H
#define CORDON_SANDBOX_PROVIDER_H

#include "lib/err.h"
#include "provider/provider.h"

#include <stdbool.h>

/* The host's recording and pinning of a plan, handed to a launch run as
 * one call: the provider calls it before anything of the command can
 * run, and a failure ends the launch with nothing run. */
struct provider_record {
	int (*fn)(void *ctx, struct err **e);
	void *ctx;
	bool quiet;	/* no notes at exit */
};

#endif
