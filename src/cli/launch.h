/* launch.h: the host's steps every launching subcommand shares: choose
 * the policy and the paths, run the guard, build, record and pin the
 * plan. Nothing reaches a provider that did not pass through here. */
#ifndef CORDON_CLI_LAUNCH_H
#define CORDON_CLI_LAUNCH_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "sandbox/provider.h"

struct launch_opts {
	const char *policy_file;	/* NULL: the embedded default */
	const char *workspace;		/* NULL: the current directory */
	const char *state_dir;		/* NULL: $XDG_STATE_HOME/cordon */
	char **write;			/* --write */
	char **deny_read;		/* --deny-read */
	char **allow_host;		/* --allow-host */
	char **allow_range;		/* --allow-range */
	char **limit;			/* --limit KEY=VALUE */
	char **pass_env;		/* --pass-env NAME */
	char **argv;			/* the command */
	const char *provider;		/* --provider (native, srt); NULL: native */
	int quiet;			/* -q */
	int defer_record;		/* the launch records (launch_record) */
};

struct launch {
	const struct provider *prov;
	struct grant *grant;
	struct plan *plan;
	struct plan_paths paths;
	char *state_dir;
	char *workspace;
};

/* Parse the options launching subcommands share. Returns the index of
 * the first argument of the command, or -1 (usage error printed). */
int launch_parse_args(int argc, char **argv, const char *usage,
		      struct launch_opts *o, int *help);

int launch_prepare(const struct launch_opts *o, struct launch *l,
		   struct err **e);
/* Record and pin the plan with this process as its root, without fsync
 * (the launch syncs it while the sandbox builds). */
int launch_record(void *launch, struct err **e);
void launch_clear(struct launch *l);
void launch_opts_clear(struct launch_opts *o);

#endif
