/* home.h: a container job's own home, <state>/homes/<job>/, the HOME and
 * config directory of claude-code in the job's containers (and only
 * theirs: no process sandbox and no other job's container mounts it). It
 * is made empty on first use and filled, in one step, with a copy of the
 * binding's home_seed (never a .credentials.json; links copied as links)
 * and a .claude.json that marks onboarding done unless the seed has one.
 * A home that exists is the agent's and is never seeded again: it holds
 * the sessions a later segment and an attach resume. It goes with the
 * job's records. */
#ifndef CORDON_HOST_HOME_H
#define CORDON_HOST_HOME_H

#include "lib/err.h"

/* The job's home (made and seeded when missing): *out its path. A seed
 * that is not a directory is ERR_CONFIG. */
int host_job_home(const char *state_dir, const char *job, const char *seed, char **out,
		  struct err **e);

/* Remove it (nothing when there is none). */
void host_job_home_remove(const char *state_dir, const char *job);

#endif
