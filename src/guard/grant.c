/* grant.c: the merged grant as a set of path rules, and the one question
 * asked of it: which rule is the most specific for a path. */
#include "guard/guard.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* Higher wins when two rules name the same path. */
static int kind_strength(enum grant_kind k)
{
	switch (k) {
	case GRANT_DENY:
		return 3;
	case GRANT_READ_ONLY:
		return 2;
	case GRANT_WRITE:
		return 1;
	case GRANT_READ:
		break;
	}
	return 0;
}

const char *grant_kind_name(enum grant_kind k)
{
	switch (k) {
	case GRANT_DENY:
		return "deny";
	case GRANT_READ_ONLY:
		return "read-only";
	case GRANT_WRITE:
		return "write";
	case GRANT_READ:
		break;
	}
	return "read";
}

int grant_add(struct grant *g, const char *path, enum grant_kind kind,
	      const char *origin, struct err **e)
{
	struct grant_rule *nr;

	for (size_t i = 0; i < g->n_rules; i++) {
		if (strcmp(g->rules[i].path, path) != 0)
			continue;
		if (kind_strength(kind) > kind_strength(g->rules[i].kind)) {
			g->rules[i].kind = kind;
			g->rules[i].origin = origin;
		}
		return 0;
	}
	nr = realloc(g->rules, (g->n_rules + 1) * sizeof(*nr));
	if (!nr)
		return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	g->rules = nr;
	nr[g->n_rules].path = strdup(path);
	if (!nr[g->n_rules].path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	nr[g->n_rules].kind = kind;
	nr[g->n_rules].origin = origin;
	g->n_rules++;
	return 0;
}

const struct grant_rule *grant_holder(const struct grant *g, const char *path,
				      unsigned int mask)
{
	const struct grant_rule *best = NULL;

	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		if (!(mask & GRANT_MASK(r->kind)) || !fs_path_within(path, r->path))
			continue;
		if (!best || strlen(r->path) > strlen(best->path))
			best = r;
	}
	return best;
}

enum grant_kind grant_decide(const struct grant *g, const char *path)
{
	const struct grant_rule *r = grant_holder(g, path, ~0u);

	return r ? r->kind : GRANT_READ;
}

static int rule_cmp(const void *a, const void *b)
{
	return strcmp(((const struct grant_rule *)a)->path,
		      ((const struct grant_rule *)b)->path);
}

void grant_sort(struct grant *g)
{
	if (g->n_rules > 1)
		qsort(g->rules, g->n_rules, sizeof(*g->rules), rule_cmp);
}

/* NULL when a path is not valid UTF-8: a record never drops a rule. */
static json_t *rules_json(const struct grant *g, enum grant_kind kind)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < g->n_rules; i++) {
		if (g->rules[i].kind == kind &&
		    json_array_push_string(arr, g->rules[i].path) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

static json_t *limits_json(const struct grant *g)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:b}", "pids", (json_int_t)g->limits.pids,
			 "memory", (json_int_t)g->limits.memory,
			 "cpu_millis", (json_int_t)g->limits.cpu_millis,
			 "workspace_entries", (json_int_t)g->limits.workspace_entries,
			 "pids_default", g->pids_default);
}

json_t *grant_to_json(const struct grant *g)
{
	return json_pack("{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:s, s:s, s:s?}",
			 "read_deny", rules_json(g, GRANT_DENY),
			 "read_allow", rules_json(g, GRANT_READ),
			 "write", rules_json(g, GRANT_WRITE),
			 "read_only", rules_json(g, GRANT_READ_ONLY),
			 "hosts", policy_hosts_json(g->hosts, g->n_hosts),
			 "deny_hosts", policy_hosts_json(g->deny_hosts, g->n_deny_hosts),
			 "allow_ranges", policy_ranges_json(g->allow_ranges, g->n_allow_ranges),
			 "sockets", json_strv(g->sockets),
			 "unix_sockets", g->unix_sockets_all ? "all" : "none",
			 "env_pass", json_strv(g->env_pass),
			 "limits", limits_json(g),
			 "workspace", g->workspace ? g->workspace : "",
			 "run", g->run_dir ? g->run_dir : "", "toolbelt", g->toolbelt);
}

static int rules_from_json(struct grant *g, const json_t *arr, enum grant_kind kind,
			   struct err **e)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(arr))
		return err_set(e, ERR_DENIED, 0, "recorded grant: %s is not a list",
			       grant_kind_name(kind));
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || json_string_value(v)[0] != '/')
			return err_set(e, ERR_DENIED, 0, "recorded grant: bad path");
		if (grant_add(g, json_string_value(v), kind, "record", e) < 0)
			return -1;
	}
	return 0;
}

static int hosts_from_json(const json_t *arr, struct host_pattern **out, size_t *n,
			   struct err **e)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		const char *why = NULL;
		struct host_pattern *nv = realloc(*out, (*n + 1) * sizeof(*nv));
		if (!nv)
			return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
		*out = nv;
		if (!json_is_string(v) ||
		    host_parse(json_string_value(v), json_string_length(v), &nv[*n], &why) < 0)
			return err_set(e, ERR_DENIED, 0, "recorded grant: bad host");
		(*n)++;
	}
	return 0;
}

static int ranges_from_json(const json_t *arr, struct grant *g, struct err **e)
{
	const json_t *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		const char *why = NULL;
		struct net_range *nv = realloc(g->allow_ranges,
					       (g->n_allow_ranges + 1) * sizeof(*nv));
		if (!nv)
			return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
		g->allow_ranges = nv;
		if (!json_is_string(v) ||
		    range_parse(json_string_value(v), json_string_length(v),
				&nv[g->n_allow_ranges], &why) < 0)
			return err_set(e, ERR_DENIED, 0, "recorded grant: bad range");
		g->n_allow_ranges++;
	}
	return 0;
}

static int limits_from_json(json_t *lim, struct grant *g, struct err **e)
{
	json_int_t pids, memory, cpu, entries;
	int dflt;

	if (json_unpack(lim, "{s:I, s:I, s:I, s:I, s:b !}", "pids", &pids, "memory", &memory,
			"cpu_millis", &cpu, "workspace_entries", &entries,
			"pids_default", &dflt) < 0 ||
	    pids < 1 || (unsigned long long)pids > POLICY_PIDS_MAX || memory < 0 ||
	    cpu < 0 || cpu > (json_int_t)POLICY_CPU_MILLIS_MAX || entries < 0)
		return err_set(e, ERR_DENIED, 0, "recorded grant: bad limits");
	g->limits.pids = (unsigned long)pids;
	g->limits.memory = (unsigned long long)memory;
	g->limits.cpu_millis = (unsigned int)cpu;
	g->limits.workspace_entries = (unsigned long)entries;
	g->pids_default = dflt;
	return 0;
}

int grant_from_json(const json_t *j, struct grant **out, struct err **e)
{
	json_t *deny, *allow, *write, *ro, *hosts, *dhosts, *ranges, *sockets, *pass, *lim;
	json_t *tb = NULL;
	const char *unix_sockets, *ws, *run;
	struct grant *g;
	int r;

	if (json_unpack((json_t *)j,
			"{s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:o, s:s, s:o, s:o, s:s, s:s, s?o !}",
			"read_deny", &deny, "read_allow", &allow, "write", &write,
			"read_only", &ro, "hosts", &hosts, "deny_hosts", &dhosts,
			"allow_ranges", &ranges, "sockets", &sockets,
			"unix_sockets", &unix_sockets, "env_pass", &pass, "limits", &lim,
			"workspace", &ws, "run", &run, "toolbelt", &tb) < 0 ||
	    (tb && !json_is_null(tb) && !json_is_string(tb)) ||
	    !json_is_array(hosts) || !json_is_array(dhosts) || !json_is_array(sockets) ||
	    !json_is_array(ranges) || !json_is_array(pass))
		return err_set(e, ERR_DENIED, 0, "recorded grant is malformed");
	g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	g->unix_sockets_all = strcmp(unix_sockets, "all") == 0;
	g->workspace = strdup(ws);
	g->run_dir = strdup(run);
	bool tb_lost = json_is_string(tb) && !(g->toolbelt = strdup(json_string_value(tb)));
	g->sockets = calloc(1, sizeof(char *));
	g->env_pass = calloc(1, sizeof(char *));
	r = (!g->workspace || !g->run_dir || !g->sockets || !g->env_pass || tb_lost)
		    ? err_set(e, ERR_INTERNAL, ENOMEM, "grant") : 0;
	if (r == 0)
		r = rules_from_json(g, deny, GRANT_DENY, e);
	if (r == 0)
		r = rules_from_json(g, allow, GRANT_READ, e);
	if (r == 0)
		r = rules_from_json(g, write, GRANT_WRITE, e);
	if (r == 0)
		r = rules_from_json(g, ro, GRANT_READ_ONLY, e);
	if (r == 0)
		r = hosts_from_json(hosts, &g->hosts, &g->n_hosts, e);
	if (r == 0)
		r = hosts_from_json(dhosts, &g->deny_hosts, &g->n_deny_hosts, e);
	if (r == 0)
		r = ranges_from_json(ranges, g, e);
	if (r == 0)
		r = limits_from_json(lim, g, e);
	for (size_t i = 0; r == 0 && i < json_array_size(sockets); i++) {
		const json_t *v = json_array_get(sockets, i);
		if (!json_is_string(v) || strv_push(&g->sockets, json_string_value(v)) < 0)
			r = err_set(e, ERR_DENIED, 0, "recorded grant: bad socket");
	}
	for (size_t i = 0; r == 0 && i < json_array_size(pass); i++) {
		const json_t *v = json_array_get(pass, i);
		if (!json_is_string(v) || strv_push(&g->env_pass, json_string_value(v)) < 0)
			r = err_set(e, ERR_DENIED, 0, "recorded grant: bad env name");
	}
	if (r < 0) {
		grant_free(g);
		return -1;
	}
	grant_sort(g);
	*out = g;
	return 0;
}

int grant_read_side(const struct grant *g, bool tmp_private, char ***denies,
		    char ***exceptions, struct err **e)
{
	*denies = calloc(1, sizeof(char *));
	*exceptions = calloc(1, sizeof(char *));
	if (!*denies || !*exceptions)
		return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		int rc = 0;

		if (fs_path_within(r->path, "/proc") || fs_path_within(r->path, "/dev") ||
		    (tmp_private && fs_path_within(r->path, "/tmp")))
			continue;
		if (r->kind == GRANT_DENY && !grant_holder(g, r->path, GRANT_MASK(GRANT_WRITE)))
			rc = strv_push(denies, r->path);
		else if ((r->kind == GRANT_READ || r->kind == GRANT_READ_ONLY) &&
			 grant_holder(g, r->path, GRANT_MASK(GRANT_DENY)))
			rc = strv_push(exceptions, r->path);
		if (rc < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	}
	return 0;
}

void grant_free(struct grant *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->n_rules; i++)
		free(g->rules[i].path);
	free(g->rules);
	for (size_t i = 0; i < g->n_hosts; i++)
		host_pattern_clear(&g->hosts[i]);
	for (size_t i = 0; i < g->n_deny_hosts; i++)
		host_pattern_clear(&g->deny_hosts[i]);
	free(g->hosts);
	free(g->deny_hosts);
	strv_free(g->sockets);
	strv_free(g->env_pass);
	free(g->allow_ranges);
	free(g->workspace);
	free(g->run_dir);
	free(g->toolbelt);
	free(g);
}

void needs_free(struct needs *n)
{
	if (!n)
		return;
	strv_free(n->read);
	strv_free(n->write);
	strv_free(n->read_only);
	strv_free(n->deny);
	strv_free(n->sockets);
	for (size_t i = 0; i < n->n_hosts; i++)
		host_pattern_clear(&n->hosts[i]);
	free(n->hosts);
}
