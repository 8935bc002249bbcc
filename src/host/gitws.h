/* gitws.h: git run by the host, distrusted. A clone workspace is made by
 * the host (the segment's wrapper, before anything is planned or run) and
 * its commits are brought home by `cordon job fetch`. Every git the host
 * runs reads no system or global config, runs no hook and no fsmonitor,
 * speaks only the protocol its URL needs, never prompts, and takes its
 * repository from the path it is given (GIT_DIR and GIT_COMMON_DIR
 * pinned), never from what a sandboxed run may have left in it. */
#ifndef CORDON_HOST_GITWS_H
#define CORDON_HOST_GITWS_H

#include "lib/err.h"

#include <stdbool.h>

#define HOST_GIT_BRANCH_MAX 200
#define HOST_GIT_URL_MAX 4096
/* the work branch of a job: "cordon/<job>" */
#define HOST_GIT_WORK_PREFIX "cordon/"

/* The transport a URL takes ("https", "http", "ssh", "git", "file"), or
 * NULL when it is none cordon clones from (ext::, a relative path, a URL
 * carrying a password). */
const char *host_git_url_protocol(const char *url);

/* A branch name cordon passes to git: letters, digits and "._/-", no
 * "..", "//" or "@{", not starting with '-', '.' or '/', not ending with
 * '/', ".lock" or '.'. */
bool host_git_branch_ok(const char *name);

struct host_git_clone {
	const char *url;
	const char *branch;	/* the branch cloned; the work branch starts there */
	const char *job;	/* the work branch is cordon/<job> */
	const char *workspace;	/* made by the clone; must not exist */
	const char *helper;	/* an absolute cordon whose `tb git-credential`
				 * git asks, or NULL: no credential */
	const char *toolbelt_token;	/* with helper: the job's token file */
	char *const *setup;	/* run in the clone once made, or NULL */
	char *const *setup_env;	/* the setup command's environment */
};

/* Clone c->url's c->branch into c->workspace (which must not exist),
 * make the work branch with its upstream (origin's branch of the same
 * name) recorded now, empty hooks and info directories, and run the
 * setup command there. Nothing is left of a clone that failed. git's
 * output goes to stderr. ERR_UNAVAILABLE when git fails. */
int host_git_clone(const struct host_git_clone *c, struct err **e);

/* Is workspace a clone the host made (a .git directory, not a link)? */
bool host_git_is_clone(const char *workspace);

/* Fetch the work branch of job from workspace's repository into the
 * repository at into (its objects and refs/heads/cordon/<job>, nothing
 * else: no tags, no submodules, no other ref), with git distrusted on
 * both sides. */
int host_git_fetch(const char *workspace, const char *job, const char *into, struct err **e);

#endif
