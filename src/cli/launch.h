/* launch.h: the options every launching subcommand shares (the policy,
 * the workspace, the flags that add to the policy), parsed and turned into
 * a request for the host's launch sequence (host/launch.h). */
#ifndef CORDON_CLI_LAUNCH_H
#define CORDON_CLI_LAUNCH_H

#include "host/launch.h"
#include "lib/err.h"

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
	int defer_record;		/* the launch records (host_launch_record) */
};

/* Parse the options launching subcommands share. Returns the index of
 * the first argument of the command, or -1 (usage error printed). */
int launch_parse_args(int argc, char **argv, const char *usage,
		      struct launch_opts *o, int *help);

/* The policy the options name (the file or the default, with the flags'
 * additions), then the host's launch sequence (host/launch.h). */
int launch_prepare(const struct launch_opts *o, struct host_launch *l, struct err **e);
void launch_opts_clear(struct launch_opts *o);

#endif
