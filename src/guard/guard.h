/* guard.h: the host's authority over every launch. It merges the needs of
 * the executor, the workspace and the host's protected set, checks them
 * against the policy (the policy is the whole grant), runs the path checks
 * (protected set, mount aliases, hard links, run dir) and returns the
 * merged grant a provider turns into a launch. Every provider's launch
 * goes through guard_launch(); nothing else decides what is granted. */
#ifndef CORDON_GUARD_GUARD_H
#define CORDON_GUARD_GUARD_H

#include "lib/err.h"
#include "policy/defaults.h"
#include "policy/host.h"
#include "policy/policy.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* What a launch needs. Paths are absolute; hosts parsed. */
struct needs {
	char **read;
	char **write;
	char **read_only;
	char **deny;
	char **sockets;
	struct host_pattern *hosts;
	size_t n_hosts;
};

enum grant_kind {
	GRANT_DENY,	/* neither readable nor writable */
	GRANT_READ,	/* readable: an exception beneath a deny */
	GRANT_READ_ONLY,/* readable, never writable, even beneath a write grant */
	GRANT_WRITE,	/* readable and writable */
};

struct grant_rule {
	char *path;		/* absolute, canonical */
	enum grant_kind kind;
	const char *origin;	/* static: "policy", "default", "protected", ... */
};

/* cordon's own per-user scratch directories, in the protected set of
 * every launch: the fallback toolbelt socket root, and the srt provider's
 * bridge sockets (each srt launch sees its own subdirectory, as an
 * exception). */
#define GUARD_TMP_FMT "/tmp/cordon-%u"

/* The srt provider's socket dir into buf (n bytes): only uid can make it,
 * so another local user cannot take its place first. It is
 * <dir>/cordon-srt for the first dir of $XDG_RUNTIME_DIR, /run/user/<uid>
 * and (for root) /run that is an absolute path to a directory of uid's,
 * not a link, that nobody else may write, and short enough; else
 * <state_dir>/srt. A unix socket's path must
 * fit in 108 bytes: the dir, the launch's execution id and srt's own
 * socket name (GUARD_SRT_SOCKDIR_MAX left for the dir). -1 when even the
 * state dir's is longer (buf holds it all the same). */
#define GUARD_SRT_SOCKDIR_MAX 38
int guard_srt_sockdir(const char *state_dir, unsigned int uid, char *buf, size_t n);

/* The pids limit a launch gets when its policy sets none. */
#define GRANT_DEFAULT_PIDS 4096UL

/* The merged grant. For any path the most specific rule decides; a path
 * beneath no rule is readable and not writable. */
struct grant {
	struct grant_rule *rules;	/* sorted by path */
	size_t n_rules;
	struct host_pattern *hosts;	/* network.allow */
	size_t n_hosts;
	struct host_pattern *deny_hosts;/* network.deny */
	size_t n_deny_hosts;
	char **sockets;			/* unix sockets granted by path */
	bool unix_sockets_all;
	struct net_range *allow_ranges;	/* network.allow_ranges */
	size_t n_allow_ranges;
	char **env_pass;		/* env.pass: names let through */
	/* The policy's limits; pids is GRANT_DEFAULT_PIDS when the policy
	 * set none, and then pids_default says so; workspace_entries is the
	 * walk's bound that applied. */
	struct policy_limits limits;
	bool pids_default;
	char *workspace;
	char *run_dir;
	/* The host's toolbelt socket, which the sandbox's gateway serves
	 * under its reserved name (gateway.h); NULL: none. */
	char *toolbelt;
};

/* Everything the guard needs to know of one launch. */
struct guard_input {
	const struct policy *policy;
	const struct needs *executor;	/* may be NULL */
	const char *home;
	const char *workspace;		/* canonical, exists */
	const char *state_dir;		/* canonical */
	const char *run_dir;		/* beneath <state>/runs/ */
	const char *toolbelt_dir;	/* may be NULL */
	const char *toolbelt_socket;	/* {toolbelt}; may be NULL */
	const char *provider_dir;	/* the provider's own, inside the protected
					 * set, readable by this launch; may be NULL */
	const char *config_path;	/* cordon's config dir; may be NULL */
	struct default_env defaults;
	/* Mount table text to search for aliases; NULL reads the live one. */
	const char *mountinfo;
	size_t walk_max;		/* 0: the policy's workspace_entries, else
					 * GUARD_WALK_MAX */
};

int guard_launch(const struct guard_input *in, struct grant **out,
		 struct err **e);

/* The kind the most specific rule gives path (GRANT_READ when no rule
 * holds it: readable, not writable). */
enum grant_kind grant_decide(const struct grant *g, const char *path);

/* The grant as JSON: read_deny, read_allow, write, read_only, hosts,
 * deny_hosts, allow_ranges, sockets, unix_sockets, env_pass, limits
 * ({pids, memory, cpus, pids_default}; 0 for none), workspace, run. */
json_t *grant_to_json(const struct grant *g);

/* Add a rule; on equal paths the stronger kind stays (deny, then
 * read-only, then write, then read). */
int grant_add(struct grant *g, const char *path, enum grant_kind kind,
	      const char *origin, struct err **e);
/* The most specific rule holding path whose kind is in mask (a bit per
 * kind), or NULL. */
const struct grant_rule *grant_holder(const struct grant *g, const char *path,
				      unsigned int mask);
#define GRANT_MASK(k) (1u << (k))
void grant_sort(struct grant *g);
const char *grant_kind_name(enum grant_kind k);

/* What a sandbox's read side (Landlock rules on what exists at launch)
 * needs: every deny that no write grant holds, and every readable rule
 * beneath a deny; none beneath /proc, /dev or (tmp_private) /tmp, which
 * a sandbox rebuilds. Both vectors are new (the caller frees). */
int grant_read_side(const struct grant *g, bool tmp_private, char ***denies,
		    char ***exceptions, struct err **e);

/* The grant back from its JSON (a recorded plan's data). */
int grant_from_json(const json_t *j, struct grant **out, struct err **e);

void grant_free(struct grant *g);
void needs_free(struct needs *n);

#endif
