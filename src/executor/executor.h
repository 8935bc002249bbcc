/* executor.h: what a binding's executor runs for a job and what it needs,
 * decided by the host before a launch. The shell executor runs the job's
 * argv; under any provider (a container's too: its grants are host paths)
 * it needs the operator's ~/.claude and
 * ~/.claude.json denied (the operator's own claude reads them). The
 * claude-code executor runs `claude -p` speaking stream-json,
 * with the job's prompt as its first message on stdin, in a config
 * directory of the binding's own: its needs write that directory, deny
 * the operator's ~/.claude and ~/.claude.json, and reach the API host;
 * its temporary files go in the segment's run dir. */
#ifndef CORDON_EXECUTOR_EXECUTOR_H
#define CORDON_EXECUTOR_EXECUTOR_H

#include "host/config.h"
#include "lib/err.h"

#include <jansson.h>

#define HOST_CLAUDE_API_HOST "api.anthropic.com"

struct host_exec {
	char **argv;		/* the command */
	json_t *needs;		/* {"write", "deny", "hosts"}: arrays of strings; NULL: none */
	char **env;		/* KEY=VALUE the executor adds to the command's environment */
	char *stdin_text;	/* the command's first input; NULL: none (stdin is /dev/null) */
};

/* Build what b runs for a job: job_args replace the binding's args (for
 * claude-code they are the prompt's words); run_dir is the segment's;
 * session, when not NULL, is the claude session to resume; home, for
 * claude-code in a container, the job's home (its HOME and config
 * directory, which the container mounts; claude is the image's);
 * toolbelt_cordon, when the job has a toolbelt, the cordon whose `tb mcp`
 * claude gets as its MCP server (its config in run_dir/mcp.json; in a
 * container, the container's own cordon). A config
 * directory that resolves into the operator's ~/.claude is refused as
 * ERR_DENIED; a claude that cannot be found as ERR_UNAVAILABLE. */
int host_exec_build(const struct host_binding *b, char *const *job_args, const char *run_dir,
		    const char *session, const char *home, const char *toolbelt_cordon,
		    struct host_exec *out, struct err **e);
/* What an attach to a claude-code job that ran in a container runs in
 * its attach container: claude --resume session, interactive, on the
 * operator's terminal, with the job's home (as host_exec_build's). */
int host_exec_attach(const struct host_binding *b, const char *session, const char *home,
		     struct host_exec *out, struct err **e);
void host_exec_clear(struct host_exec *x);

/* name on the daemon's PATH, as an absolute path: 0, or -1 when there is
 * none (or no memory). */
int host_find_program(const char *name, char **out);

/* `claude` on the daemon's PATH, as an absolute path (ERR_UNAVAILABLE
 * when there is none). */
int host_claude_path(char **out, struct err **e);

#endif
