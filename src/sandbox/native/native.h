/* native.h: cordon's own Linux sandbox, the native process provider.
 *
 * A native plan's argv is the command itself: cordon builds the sandbox in
 * process, from the grant it recorded, and the process that does so is
 * the sandbox root. It writes its identity (pid and start time) into the
 * record dir, which the sandbox cannot write, for adoption. */
#ifndef CORDON_SANDBOX_NATIVE_NATIVE_H
#define CORDON_SANDBOX_NATIVE_NATIVE_H

#include "sandbox/provider.h"
#include "sandbox/native/launch.h"

extern const struct provider native_provider;

/* The provider's run (see provider.h): native_create, the host's record,
 * native_start, native_wait (launch.h). */
static inline int native_run(const struct grant *g, const struct plan *p,
			     const struct plan_paths *paths, const struct provider_record *rec,
			     struct err **e)
{
	return native_run_steps(g, p, paths, rec->fn, rec->ctx, rec->quiet, NULL, e);
}

/* The same with the sandbox's listeners relayed to the unix socket
 * channel, where a gateway of the host's serves them (an SSH remote's
 * run: the socket is forwarded back to the host), instead of a gateway
 * of its own (native_create_relayed); channel NULL: native_run. */
static inline int native_run_relayed(const struct grant *g, const struct plan *p,
				     const struct plan_paths *paths,
				     const struct provider_record *rec, const char *channel,
				     struct err **e)
{
	return native_run_steps(g, p, paths, rec->fn, rec->ctx, rec->quiet, channel, e);
}

/* The provider's adopt (see provider.h). */
int native_adopt(const struct plan *p, const char *record_dir, pid_t parent,
		 pid_t root, struct err **e);

#endif
