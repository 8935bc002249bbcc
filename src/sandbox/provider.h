/* provider.h: the process-provider contract. A provider receives a grant
 * the host merged and checked (guard_launch) and a plan built from it; it
 * turns the plan into what will run (plan), proves after a restart that a
 * running process is the sandbox it launched (adopt), and reports whether
 * it can work on this machine (doctor). It never decides what is granted,
 * and it refuses whatever part of a plan it cannot enforce. */
#ifndef CORDON_SANDBOX_PROVIDER_H
#define CORDON_SANDBOX_PROVIDER_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"

#include <jansson.h>
#include <sys/types.h>

/* The host's recording and pinning of a plan, handed to a provider's run:
 * the provider calls it before anything of the command can run, and a
 * failure ends the launch with nothing run. */
struct provider_record {
	int (*fn)(void *ctx, struct err **e);
	void *ctx;
	bool quiet;	/* no notes at exit */
};

struct provider {
	const char *name;
	/* Optional: start what needs nothing of the plan (native: the
	 * namespaces) while the host loads the policy and runs the guard.
	 * It reports nothing; run reports what went wrong. */
	void (*prestart)(void);
	/* Wrap p->argv (and set p->env, p->signals, p->summary) for this
	 * provider, or refuse. The host recomputes the digest afterwards. */
	int (*plan)(const struct grant *g, const struct plan_paths *paths,
		    struct plan *p, struct err **e);
	/* Launch the plan and wait for it (rec records it first): the command's exit
	 * status (128+N for signal N), 126/127 when it could not be executed;
	 * -1 with *e when the sandbox could not be made (nothing ran). The
	 * calling process is the sandbox root. */
	int (*run)(const struct grant *g, const struct plan *p,
		   const struct plan_paths *paths, const struct provider_record *rec,
		   struct err **e);
	/* Prove that root (a child of parent) runs this plan, sandboxed. An
	 * exited root is adopted; anything unproven is refused. */
	int (*adopt)(const struct plan *p, const char *record_dir, pid_t parent,
		     pid_t root, struct err **e);
	/* The provider's checks as JSON: {"ready": bool, "checks": [...]}. */
	json_t *(*doctor)(void);
	/* Optional: a directory of the provider's own, in cordon's protected
	 * set, that this launch's sandbox must see (srt: its socket dir for
	 * the launch); NULL when none or out of memory. The caller frees. */
	char *(*own_dir)(const struct plan_paths *paths);
	/* Optional: write the provider's own files beside a plan recorded
	 * without a launch (`cordon plan`); a launch writes its own in run. */
	int (*record)(const struct grant *g, const struct plan *p, const char *record_dir,
		      struct err **e);
};

/* A provider by name; NULL names the default (native). NULL when unknown. */
const struct provider *provider_find(const char *name);
/* The known providers' names, for messages: "native, srt". */
extern const char provider_names[];

#endif
