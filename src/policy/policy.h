/* policy.h: the operator's policy, parsed strictly and normalised. It is
 * the whole grant: nothing a launch needs may fall outside it.
 *
 * Paths are kept as normalised templates ("~/.ssh", "{workspace}/out",
 * "/etc"); policy_path_resolve() turns one into an absolute canonical path
 * for a given launch. */
#ifndef CORDON_POLICY_POLICY_H
#define CORDON_POLICY_POLICY_H

#include "lib/err.h"
#include "policy/host.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Resource limits ("limits"); 0 where the policy sets none. */
struct policy_limits {
	unsigned long pids;		/* tasks (processes and threads) */
	unsigned long long memory;	/* bytes */
	unsigned int cpu_millis;	/* CPU time: 1000 is one CPU */
	/* the most entries the launch's hard-link check walks in the
	 * workspace; a larger workspace is refused */
	unsigned long workspace_entries;
};

/* The limits' bounds, checked at parse time. */
#define POLICY_PIDS_MAX 4194304UL		/* the kernel's PID_MAX_LIMIT */
#define POLICY_MEMORY_MIN (1ULL << 20)		/* 1 MiB */
#define POLICY_MEMORY_MAX (1ULL << 50)		/* 1 PiB */
#define POLICY_CPU_MILLIS_MIN 10U		/* 0.01 CPU */
#define POLICY_CPU_MILLIS_MAX 1024000U		/* 1024 CPUs */
#define POLICY_WORKSPACE_ENTRIES_MAX 1000000000UL
/* Environment variable names ("env.pass"): at most this long. */
#define POLICY_ENV_NAME_MAX 256

struct policy {
	char **write;		/* path templates, never NULL (may be empty) */
	char **read_deny;
	char **read_allow;
	char **sockets;
	struct host_pattern *net_allow;
	size_t n_net_allow;
	struct host_pattern *net_deny;
	size_t n_net_deny;
	struct net_range *allow_ranges;	/* network.allow_ranges */
	size_t n_allow_ranges;
	char **env_pass;	/* env.pass: names, never NULL (may be empty) */
	struct policy_limits limits;
	bool unix_sockets_all;
};

/* The paths a template may name for one launch. home is required;
 * toolbelt may be NULL when the launch has none. */
struct path_ctx {
	const char *home;
	const char *workspace;
	const char *run;
	const char *toolbelt;
};

/* Parse a policy document. Every refusal is ERR_CONFIG with the message
 * "<json path>: <reason>"; the offending value is never echoed. */
int policy_parse(const char *buf, size_t len, struct policy **out,
		 struct err **e);
/* A policy that is part of a larger document (a binding's): v checked as
 * policy_parse checks a whole document; a refusal's message is prefixed
 * with where, the JSON path of v ("bindings.b.sandbox.policy"). */
int policy_from_value(json_t *v, const char *where, struct policy **out, struct err **e);
/* Read and parse a policy file (at most 1 MiB). */
int policy_load_file(const char *path, struct policy **out, struct err **e);
/* The embedded default policy. */
int policy_default(struct policy **out, struct err **e);
extern const char policy_default_json[];

/* Add one path template or host to a policy, checked as policy_parse
 * checks it; what names the item in an error ("--write"). */
int policy_add_path(char ***list, const char *tmpl, const char *what,
		    struct err **e);
int policy_add_host(struct host_pattern **list, size_t *n, const char *host,
		    const char *what, struct err **e);

/* Add a range ("10.20.0.0/16"), an env.pass name, or one limit as the
 * command line gives it ("pids=50", "memory=64m", "cpus=1.5"), checked as
 * policy_parse checks the document's. */
int policy_add_range(struct net_range **list, size_t *n, const char *text,
		     const char *what, struct err **e);
int policy_add_env_pass(char ***list, const char *name, const char *what,
			struct err **e);
int policy_set_limit(struct policy_limits *l, const char *assignment,
		     const char *what, struct err **e);

/* A size in bytes: digits, then k, m, g or t (powers of 1024, either
 * case), or nothing. -1 with *why a fixed reason when it is not one. */
int policy_parse_size(const char *s, unsigned long long *out, const char **why);
/* CPUs as a decimal (2, 0.5, 1.25: at most two decimals) into
 * milli-CPUs. -1 with *why when it is not one, or out of bounds. */
int policy_parse_cpus(const char *s, unsigned int *millis, const char **why);

/* Host entries as a JSON array of their canonical texts. */
json_t *policy_hosts_json(const struct host_pattern *h, size_t n);
/* Ranges as a JSON array of their canonical texts. */
json_t *policy_ranges_json(const struct net_range *r, size_t n);
/* Limits as a JSON object of the ones set. */
json_t *policy_limits_json(const struct policy_limits *l);

/* The normalised policy, in the document's own shape. */
json_t *policy_to_json(const struct policy *p);

void policy_free(struct policy *p);
static inline void cleanup_policyp(struct policy **p)
{
	policy_free(*p);
}
#define _cleanup_policy_ __attribute__((cleanup(cleanup_policyp)))

/* Check and normalise one path template: absolute, "~" or "~/...", or a
 * leading placeholder; no "..", no patterns, no "~user". On failure *why
 * is a fixed reason. Caller frees *out. */
int policy_path_normalise(const char *in, size_t len, char **out,
			  const char **why);
/* Expand a normalised template for a launch and resolve symbolic links in
 * its longest existing prefix. */
int policy_path_resolve(const char *tmpl, const struct path_ctx *ctx,
			char **out, struct err **e);
/* The same, noting where each symbolic link met lies (fs_canonical_links). */
int policy_path_resolve_links(const char *tmpl, const struct path_ctx *ctx, char **out,
			      char ***links, struct err **e);

#endif
