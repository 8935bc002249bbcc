/* launch.h: the one sequence every launch goes through, whoever asks for
 * it (`cordon run`, `cordon plan`, the daemon): choose the paths, run the
 * guard, build the plan (the provider's part included), take its digest,
 * record and pin it. Nothing reaches a provider that did not pass through
 * here; a caller only says what it wants launched. */
#ifndef CORDON_HOST_LAUNCH_H
#define CORDON_HOST_LAUNCH_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "policy/policy.h"
#include "provider/provider.h"

#include <stdbool.h>
#include <stdio.h>

struct host_launch_req {
	const struct policy *policy;	/* the whole grant (the caller's) */
	const char *workspace;		/* NULL: the current directory */
	const char *state_dir;		/* NULL: $XDG_STATE_HOME/cordon */
	const char *execution;		/* NULL: a new execution id */
	unsigned int segment;		/* 0: segment 1 */
	char *const *argv;		/* the command */
	/* The provider (the caller's lookup in its registry): a process
	 * sandbox, a container, or none. */
	const struct provider *prov;
	bool defer_record;		/* the launch records (host_launch_record) */
	bool job_dirs;			/* a job's: inbox/, outputs/ and input in the
					 * run dir, named to the command by
					 * CORDON_RUN, CORDON_INBOX, CORDON_OUTPUTS,
					 * CORDON_INPUT */
	/* none's (a daemon binding without a sandbox): no policy, no guard;
	 * the command runs as the operator in the workspace, with the
	 * caller's environment. Its plan records what ran (argv, workspace,
	 * the names in env_names) so that the segment is still pinned and a
	 * restart can prove its wrapper. Never reachable from `cordon run`. */
	char *const *env_names;
	/* The executor's needs beyond the workspace (its config directory,
	 * the paths it must not see, the hosts it reaches), checked by the
	 * guard against the policy like every need; NULL: none. */
	const struct needs *needs;
	/* The job's toolbelt: its directory (read-only inside: the token)
	 * and socket (which the sandbox's gateway serves); NULL: none. */
	const char *toolbelt_dir, *toolbelt_socket;
	/* A container binding's: what its provider is given beyond the
	 * grant (the launch's state_dir and toolbelt_dir are filled here).
	 * NULL: a process sandbox or none. */
	const json_t *config;
	const char *home;
	bool terminal;			/* an attach's container (a terminal) */
};

struct host_launch {
	const struct provider *prov;
	struct provider_launch pl;	/* what the provider is given */
	struct provider_run *run;	/* between create and wait */
	json_t *pin;			/* what create made, pinned; may be NULL */
	bool interrupted;		/* it got a TERM the host did not send */
	struct grant *grant;
	struct plan *plan;
	struct plan_paths paths;
	char *state_dir;
	char *workspace;
};

/* Everything but the launch: on success the plan is built and digested,
 * and recorded (read-only, synced) unless defer_record; on failure
 * nothing of it is left on disk. */
int host_launch_prepare(const struct host_launch_req *r, struct host_launch *l,
			struct err **e);
/* Record and pin the plan with this process as its root, without fsync
 * (the launch syncs it while the sandbox builds). */
int host_launch_record(void *launch, struct err **e);
void host_launch_clear(struct host_launch *l);
/* Make the sandbox, not started (the provider's create; a container's
 * once the plan is recorded): l->pin is then what to pin with the
 * segment beside the plan's digest. */
int host_launch_create(struct host_launch *l, struct err **e);
/* A sandbox made and never started: removed, with what it was given. */
void host_launch_discard(struct host_launch *l);
/* A sandbox made for another to start (an attach's container, which the
 * operator's client starts): left as it is. */
void host_launch_release(struct host_launch *l);

/* cordon's own exit status when it refused or failed (env(1)'s). */
#define HOST_EXIT_CORDON 125

/* Launch a prepared plan from this process, which becomes the sandbox
 * root, with the look at the workspace before and after. The plan is
 * recorded as the launch starts, with this process pinned as its root,
 * unless recorded already says it was (host_launch_record). Returns the
 * command's status; on a refusal or failure, HOST_EXIT_CORDON with *e set
 * and printed on notes, where the look's lines go too. */
int host_launch_run(struct host_launch *l, bool quiet, bool recorded, FILE *notes,
		    struct err **e);

/* Does a recorded plan say it ran without a sandbox? */
bool host_plan_unsandboxed(const struct plan *p);

/* $HOME, else the password database's: absolute, or ERR_CONFIG. */
int host_home_dir(const char **out, struct err **e);

/* The same for a process whose HOME is h (NULL: unset): the home its
 * launch expands a policy's ~ with. */
int host_home_from(const char *h, const char **out, struct err **e);

#endif
