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

struct policy {
	char **write;		/* path templates, never NULL (may be empty) */
	char **read_deny;
	char **read_allow;
	char **sockets;
	struct host_pattern *net_allow;
	size_t n_net_allow;
	struct host_pattern *net_deny;
	size_t n_net_deny;
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

/* Host entries as a JSON array of their canonical texts. */
json_t *policy_hosts_json(const struct host_pattern *h, size_t n);

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

#endif
