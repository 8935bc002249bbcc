/* provider.h: the one contract every provider keeps: no sandbox (none),
 * a process sandbox on this host (native, srt), a container here or on a
 * remote (docker, ssh). The host decides what is granted (the guard), builds
 * the plan, takes its digest, records and pins it; a provider turns the plan
 * into what runs, reports on it, and refuses whatever part of it it cannot
 * hold. It never decides what is granted.
 *
 * A launch, whatever the kind, in the segment's wrapper or `cordon run`:
 *   parse_config (when the config was read) -> plan (the host digests it)
 *   -> create (made, nothing of the command run) -> the host records and
 *   pins it -> start (the go) -> wait (its status) -> the host settles it.
 * A process provider's create clones the sandbox up to where it waits for
 * its filter; start hands it over (crun's create and start). A container
 * provider's create makes the container; its wait is the attached start
 * helper. What the daemon does on a pin, without the process that made it
 * (inspect, adopt or resume, stop, list, sweep), takes the provider the pin
 * names: never one guessed from the plan's shape.
 *
 * Adding a provider: its folder (the ops below, its config schema, its
 * doctor, its verbs), one row in its binary's registry, one conformance
 * run. */
#ifndef CORDON_PROVIDER_PROVIDER_H
#define CORDON_PROVIDER_PROVIDER_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "policy/policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

enum provider_kind {
	PROVIDER_NONE = 0,	/* no sandbox: the command runs as the operator */
	PROVIDER_PROCESS = 1,	/* a process sandbox on this host */
	PROVIDER_CONTAINER = 2,	/* a container, here or on a remote */
};

/* What a launch gives its provider beyond the grant. */
struct provider_launch {
	const json_t *config;		/* the binding's, as parse_config made it;
					 * NULL for `cordon run` */
	const char *state_dir;		/* canonical */
	const char *workspace;		/* canonical */
	const char *toolbelt_dir;	/* NULL: the job has no toolbelt */
	const char *home;		/* a container job's own home, or NULL */
	char *const *env_names;		/* none: the names the plan records */
	bool terminal;			/* an attach: made with a terminal, started
					 * by the operator's client */
	bool quiet;			/* no notes at exit */
};

/* A sandbox between create and wait: the provider's own. */
struct provider_run;

/* How a run ended (wait). */
struct provider_exit {
	int code;		/* the command's status (128+N for signal N),
				 * 126/127 when it could not be executed */
	bool interrupted;	/* it got a TERM the host did not send */
};

/* What inspect says of a pinned sandbox. */
enum provider_status {
	PROVIDER_GONE = 0,	/* the pinned place answered: no such sandbox */
	PROVIDER_CREATED = 1,	/* made, never started */
	PROVIDER_RUNNING = 2,
	PROVIDER_EXITED = 3,	/* started and ended: exit_code is its status */
};

/* What inspect found (filled for CREATED, RUNNING and EXITED). */
struct provider_state {
	char *started_at;	/* RFC 3339, NULL before a start */
	int exit_code;
};
void provider_state_clear(struct provider_state *st);

/* A subcommand of the provider's own (`cordon-host docker ...`). */
struct provider_verb {
	const char *name;
	int (*main)(int argc, char **argv);
};

struct provider {
	const char *name;
	enum provider_kind kind;

	/* The binding's section that names this provider ("sandbox" for a
	 * process provider, "container" for a container one) at path: its
	 * keys checked, *config what the binding keeps (and the launch is
	 * given), *policy the section's policy (the embedded default when it
	 * names none). ERR_CONFIG "<path>: <reason>"; ERR_UNAVAILABLE for what
	 * this build cannot run. */
	int (*parse_config)(const json_t *section, const char *path, json_t **config,
			    struct policy **policy, struct err **e);
	/* Optional: checks across every binding of this provider in one
	 * config (configs[i] is bindings[i]'s, as parse_config made it). */
	int (*check_bindings)(json_t *const *configs, const char *const *bindings, size_t n,
			      struct err **e);
	/* Optional: the config a launch of binding is given when it needs its
	 * peers' (the config's other bindings of this provider); NULL: no
	 * memory. Without it, the binding's own. */
	json_t *(*launch_config)(const json_t *config, const char *binding,
				 json_t *const *peers, const char *const *peer_names, size_t n);

	/* Optional: start what needs nothing of the plan (native: the
	 * namespaces) while the host loads the policy and runs the guard. */
	void (*prestart)(void);
	/* Optional: a directory of the provider's own, in cordon's protected
	 * set, that this launch's sandbox must see; NULL when none or out of
	 * memory. The caller frees. */
	char *(*own_dir)(const struct plan_paths *paths);
	/* Wrap p->argv (and set p->env, p->data's part, p->signals,
	 * p->summary) for this provider, or refuse. g is NULL for none. The
	 * host takes the digest afterwards. */
	int (*plan)(const struct grant *g, const struct plan_paths *paths,
		    const struct provider_launch *pl, struct plan *p, struct err **e);
	/* Optional: write the provider's own files beside a plan recorded
	 * without a launch (`cordon plan`). */
	int (*record)(const struct grant *g, const struct plan *p, const char *record_dir,
		      struct err **e);

	/* Make the sandbox for a recorded plan; nothing of the command runs
	 * before start. *pin (may be left NULL) is what the host pins with
	 * the segment beside the plan's digest. On failure nothing it made is
	 * left. */
	int (*create)(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
		      const struct provider_launch *pl, struct provider_run **run, json_t **pin,
		      struct err **e);
	/* The host's go, once it recorded and pinned the plan. NULL: wait
	 * starts it. */
	int (*start)(struct provider_run *run, struct err **e);
	/* 0 with *x once it ended; -1 with *e when it never ran. Frees run. */
	int (*wait)(struct provider_run *run, struct provider_exit *x, struct err **e);
	/* A sandbox made and never started: removed; frees run. */
	void (*discard)(struct provider_run *run);
	/* Optional: a sandbox made for another to start (an attach's
	 * container, which the operator's client starts): frees run and
	 * removes nothing. NULL: the kind makes none such. */
	void (*release)(struct provider_run *run);

	/* On a pin, by the daemon (reconcile, recovery, a stop to confirm);
	 * each optional where the kind has no such thing. */
	/* Prove that root (a child of parent) runs this plan, sandboxed; an
	 * exited root is adopted, anything unproven refused. */
	int (*adopt)(const struct plan *p, const char *record_dir, pid_t parent, pid_t root,
		     struct err **e);
	/* What the pinned sandbox is: a PROVIDER_* (st filled, may be NULL),
	 * or -1 when the place it was made cannot be asked or answers as
	 * another. */
	int (*inspect)(const json_t *pin, const char *digest, const char *job, unsigned int seg,
		       struct provider_state *st, struct err **e);
	/* Taken up in a dead start helper's place (as wait would have gone
	 * on); -1 with *e when it cannot be (the host then stops it). */
	int (*resume)(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		      struct provider_exit *x, struct err **e);
	/* KILL it (its whole group); 0 once the place says it is not
	 * running. */
	int (*stop)(const json_t *pin, struct err **e);
	/* Remove what create made; a gone one is 0. */
	int (*remove)(const json_t *pin, struct err **e);
	/* The pins' IDs this host (label) holds on the place config names,
	 * of one job (NULL: all); a listing that cannot be made is -1. */
	int (*list)(const json_t *config, const char *state_dir, const char *host, const char *job,
		    char ***ids, struct err **e);
	/* Remove what carries this host's label for a job not in live. */
	int (*sweep)(const json_t *config, const char *state_dir, const char *host,
		     char *const *live, unsigned int *removed, struct err **e);

	/* Its checks as JSON, {"ready": bool, "checks": [...]}, for config
	 * (NULL: this machine's, as `cordon doctor --provider` asks). A
	 * daemon's (state_dir not NULL) never waits on a remote: a container
	 * provider answers the last pass of the checks a launch ran. NULL
	 * when it cannot be said. */
	json_t *(*doctor)(const json_t *config, const char *state_dir);
	/* Optional: what one doctor report covers, for config (a daemon's
	 * doctor runs each once: ssh's is per remote and key); NULL: the
	 * provider's name. The caller frees. */
	char *(*doctor_key)(const json_t *config);
	/* Its subcommands, NULL-terminated by name; NULL: none. */
	const struct provider_verb *verbs;
};

/* The providers of the program that runs (its registry, one row each;
 * NULL-terminated), defined beside its main(). */
extern const struct provider *const providers[];

/* A provider by name among the program's; NULL names the default (the
 * registry's first row: native). NULL when unknown. */
const struct provider *provider_find(const char *name);
/* The same, of one kind only: NULL for a name of another kind. */
const struct provider *provider_find_kind(const char *name, enum provider_kind kind);
/* The program's providers of one kind, by name, for messages
 * ("native, srt"); into buf, truncated to size. */
const char *provider_names(enum provider_kind kind, char *buf, size_t size);
/* The provider of kind a pin or config object names ("provider"), or
 * NULL with *e (ERR_UNAVAILABLE, naming it): a pin that names no
 * provider, one of another kind, or one this program does not have,
 * fails closed. */
const struct provider *provider_of(const json_t *obj, enum provider_kind kind, struct err **e);

#endif
