/* provider.c: a process provider's create and wait as one run, until its
 * create and start are split (sandbox/provider.h): create holds the
 * arguments, wait runs the whole launch with the plan recorded already. */
#include "sandbox/provider.h"

#include <errno.h>
#include <stdlib.h>

struct provider_run {
	sandbox_run_fn fn;
	const struct grant *g;
	const struct plan *p;
	const struct plan_paths *paths;
	const struct provider_launch *pl;	/* its quiet read at wait */
};

int sandbox_run_hold(sandbox_run_fn fn, const struct grant *g, const struct plan *p,
		     const struct plan_paths *paths, const struct provider_launch *pl,
		     struct provider_run **run, struct err **e)
{
	struct provider_run *r = calloc(1, sizeof(*r));

	if (!r)
		return err_set(e, ERR_INTERNAL, ENOMEM, "launch");
	*r = (struct provider_run){ fn, g, p, paths, pl };
	*run = r;
	return 0;
}

/* The host recorded and pinned the plan before the go. */
static int recorded_already(void *ctx, struct err **e)
{
	return 0;
}

int sandbox_run_wait(struct provider_run *run, struct provider_exit *x, struct err **e)
{
	struct provider_record rec = { recorded_already, NULL, run->pl && run->pl->quiet };
	int code = run->fn(run->g, run->p, run->paths, &rec, e);

	free(run);
	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code };
	return 0;
}

void sandbox_run_discard(struct provider_run *run)
{
	free(run);
}
