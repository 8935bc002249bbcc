/* config.h: the daemon's configuration, its bindings. A binding names what
 * a job runs (the executor), where (a workspace: a directory used in
 * place, or a fresh one per job), under what (a sandbox: a provider and a
 * policy, or none), with which environment and secrets. Parsed as strictly
 * as a policy: unknown and duplicate keys refused, every refusal naming
 * the JSON path and never a value. A secret is named here by where its
 * value is (a file, a variable of the daemon's environment); the value is
 * read only at launch, for the child's environment. */
#ifndef CORDON_HOST_CONFIG_H
#define CORDON_HOST_CONFIG_H

#include "lib/err.h"
#include "policy/policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#define HOST_CONFIG_MAX ((size_t)1 << 20)
#define HOST_BINDING_NAME_MAX 64
#define HOST_RETRIES_MAX 100U
#define HOST_GRACE_MAX_MS 3600000U
#define HOST_GRACE_DEFAULT_MS 10000U
#define HOST_RETENTION_DEFAULT_DAYS 14U
#define HOST_RETENTION_MAX_DAYS 3650U

enum host_executor {
	HOST_EXEC_SHELL = 0,
	HOST_EXEC_CLAUDE_CODE,
};

/* The toolbelt's operations a binding may grant ("operations"). */
enum host_op {
	HOST_OP_JOB_STATUS = 1u << 0,	/* "job.status": its own job */
	HOST_OP_JOB_OUTPUT = 1u << 1,	/* "job.output": a named result */
	HOST_OP_NOTIFY = 1u << 2,	/* "notify": a line in the job's log */
	HOST_OP_GIT_CREDENTIAL = 1u << 3,	/* "git.credential" */
};

/* An operation's name to its bit, 0 when unknown; and back. */
unsigned int host_op_bit(const char *name);
const char *host_op_name(unsigned int bit);

struct host_secret {
	char *name;	/* the variable the child gets */
	char *file;	/* absolute path of a file holding the value, or NULL */
	char *env;	/* a variable of the daemon's environment, or NULL */
	bool git_only;	/* named by a git credential: served to git through the
			 * toolbelt, never put in the child's environment */
};

/* A git credential the toolbelt's git.credential serves: for https on
 * host (and path, when set), the secret's value as the password. */
struct host_git_cred {
	char *host;	/* as git sends it: lower case, ":port" when not 443 */
	char *path;	/* the repository's path without leading '/', or NULL: any */
	char *username;
	const struct host_secret *secret;
};

enum host_git_mode {
	HOST_GIT_CLONE = 0,	/* a clone of its own per job */
	HOST_GIT_WORKTREE,	/* (not built) */
	HOST_GIT_SHARED,	/* (not built) */
};

struct host_binding {
	char *name;
	enum host_executor executor;
	char **args;		/* shell: the argv; claude-code: the prompt (one
				 * string); NULL when the job must give them */
	char **extra_args;	/* claude-code: added to claude's argv */
	char *claude_config_dir;	/* claude-code with a sandbox: CLAUDE_CONFIG_DIR,
					 * normalised, checked */
	char *home;		/* HOME in the binding's env, or NULL */
	char *home_seed;	/* claude-code in a container: what its job's home
				 * is filled with when new (normalised); NULL: none */
	char *provider;		/* "native" or "srt"; "docker" with container;
				 * NULL: no sandbox */
	json_t *container;	/* a container binding's {"provider", "image",
				 * "context"?, "endpoint"?}; NULL: none */
	struct policy *policy;	/* with provider */
	char *workspace;	/* absolute, canonical at launch; NULL with scratch */
	bool scratch;		/* a fresh directory under the state dir per job */
	char *git_url;		/* a clone workspace: cloned from here per job,
				 * into <state>/workspaces/<job>; NULL: none */
	char *git_branch;	/* with git_url: the branch the work starts from */
	enum host_git_mode git_mode;
	char **git_setup;	/* with git_url: run in the clone once made, on
				 * the host (bindings without a sandbox only) */
	struct host_git_cred *git_creds;	/* "git": {"credentials"} */
	size_t n_git_creds;
	char **env;		/* KEY=VALUE, never NULL */
	struct host_secret *secrets;
	size_t n_secrets;
	unsigned int retries;
	unsigned int grace_ms;	/* stop: TERM, then KILL after this */
	unsigned int ops;	/* the toolbelt's operations granted (host_op
				 * bits); 0: the job has no toolbelt */
};

struct host_config {
	struct host_binding *bindings;	/* sorted by name */
	size_t n;
	/* how long a job's run dir (its records and log) and scratch
	 * workspace are kept after it ended; the database keeps it all */
	unsigned long long retention_ms;	/* "retention_days", a number */
};

/* Parse a config document. A refusal is ERR_CONFIG ("<json path>:
 * <reason>"), or ERR_UNAVAILABLE for what this build cannot run (a
 * container). */
int host_config_parse(const char *buf, size_t len, struct host_config **out, struct err **e);
/* Read and parse a config file (at most HOST_CONFIG_MAX bytes). */
int host_config_load(const char *path, struct host_config **out, struct err **e);
void host_config_free(struct host_config *c);
struct provider;
/* A binding's container config as its wrapper gets it when its provider
 * p takes its peers' (launch_config: ssh's, for the launch-time account
 * check, which learns the remote's keys as the load cannot): with the
 * config's other bindings of the same provider. NULL: no memory. */
json_t *host_config_launch_request(const struct host_config *c, const struct host_binding *b,
				   const struct provider *p);

const struct host_binding *host_config_find(const struct host_config *c, const char *name);
const char *host_executor_name(enum host_executor x);
/* The binding's git credential for a request git made (protocol, host,
 * path as git sends them), or NULL: only https, the host compared without
 * case, the path (when the credential names one) exactly. */
const struct host_git_cred *host_git_cred_find(const struct host_binding *b, const char *protocol,
					       const char *host, const char *path);

/* The value of a secret, read now (caller frees, and clears it before):
 * a file's whole content without one trailing newline, or the daemon's
 * variable. A refusal names the secret, never its value. */
int host_secret_value(const struct host_secret *s, char **out, struct err **e);

#endif
