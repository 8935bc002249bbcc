/* limits.c: the policy's resource limits ("limits": pids, memory, cpus),
 * the names it passes through from the caller's environment ("env":
 * "pass") and its address ranges, each as the document and the command
 * line give them. Messages are fixed and never quote a value. */
#include "policy/policy.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int policy_parse_size(const char *s, unsigned long long *out, const char **why)
{
	unsigned long long v = 0, mult = 1;
	size_t n = strlen(s), digits;

	*why = "not a size such as 512m, 2g or a number of bytes";
	if (n == 0 || n > 24)
		return -1;
	switch (s[n - 1]) {
	case 'k': case 'K':
		mult = 1ULL << 10;
		break;
	case 'm': case 'M':
		mult = 1ULL << 20;
		break;
	case 'g': case 'G':
		mult = 1ULL << 30;
		break;
	case 't': case 'T':
		mult = 1ULL << 40;
		break;
	default:
		break;
	}
	digits = mult == 1 ? n : n - 1;
	if (digits == 0 || (s[0] == '0' && digits > 1))
		return -1;
	for (size_t i = 0; i < digits; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		v = v * 10 + (unsigned long long)(s[i] - '0');
		if (v > POLICY_MEMORY_MAX)
			return *why = "size is larger than 1 PiB", -1;
	}
	if (v > POLICY_MEMORY_MAX / mult)
		return *why = "size is larger than 1 PiB", -1;
	*out = v * mult;
	*why = NULL;
	return 0;
}

int policy_parse_cpus(const char *s, unsigned int *millis, const char **why)
{
	unsigned long m = 0;
	int decimals = -1; /* -1: no '.' yet */

	*why = "cpus: not a number such as 2 or 0.5 (at most two decimals)";
	if (!*s || *s == '.' || (s[0] == '0' && s[1] && s[1] != '.'))
		return -1;
	for (const char *p = s; *p; p++) {
		if (*p == '.') {
			if (decimals >= 0)
				return -1;
			decimals = 0;
			continue;
		}
		if (*p < '0' || *p > '9' || (decimals >= 0 && ++decimals > 2))
			return -1;
		m = m * 10 + (unsigned long)(*p - '0');
		if (m > 100000000UL)
			return *why = "cpus: must be from 0.01 to 1024", -1;
	}
	if (decimals == 0)
		return -1;
	m *= decimals < 0 ? 1000 : decimals == 1 ? 100 : 10;
	if (m < POLICY_CPU_MILLIS_MIN || m > POLICY_CPU_MILLIS_MAX)
		return *why = "cpus: must be from 0.01 to 1024", -1;
	*millis = (unsigned int)m;
	*why = NULL;
	return 0;
}

static bool env_name_ok(const char *s, size_t len)
{
	if (len == 0 || len > POLICY_ENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];
		if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') ||
		      (c >= '0' && c <= '9') || c == '_'))
			return false;
	}
	return true;
}

int policy_add_env_pass(char ***list, const char *name, const char *what, struct err **e)
{
	if (!env_name_ok(name, strlen(name)))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: not a variable name (letters, digits and '_', not starting "
			       "with a digit)", what);
	if (strv_contains(*list, name))
		return 0;
	return strv_push(list, name) < 0 ? err_set(e, ERR_INTERNAL, ENOMEM, "%s", what) : 0;
}

int policy_add_range(struct net_range **list, size_t *n, const char *text,
		     const char *what, struct err **e)
{
	struct net_range r, *nl;
	const char *why = NULL;

	if (range_parse(text, strlen(text), &r, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", what, why);
	for (size_t i = 0; i < *n; i++)
		if (range_covers(&(*list)[i], &r) && range_covers(&r, &(*list)[i]))
			return 0;
	nl = realloc(*list, (*n + 1) * sizeof(**list));
	if (!nl)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	nl[(*n)++] = r;
	*list = nl;
	return 0;
}

int policy_set_limit(struct policy_limits *l, const char *assignment, const char *what,
		     struct err **e)
{
	const char *eq = strchr(assignment, '='), *val, *why = NULL;
	unsigned long pids;

	if (!eq)
		return err_set(e, ERR_CONFIG, 0, "%s: expected pids=N, memory=SIZE, cpus=N or "
			       "workspace_entries=N",
			       what);
	val = eq + 1;
	if ((size_t)(eq - assignment) == 4 && strncmp(assignment, "pids", 4) == 0) {
		if (num_parse_ulong(val, POLICY_PIDS_MAX, &pids) < 0 || pids == 0 ||
		    (val[0] == '0' && val[1]))
			return err_set(e, ERR_CONFIG, 0, "%s: pids: must be a whole number from "
				       "1 to %lu", what, POLICY_PIDS_MAX);
		l->pids = pids;
		return 0;
	}
	if ((size_t)(eq - assignment) == 6 && strncmp(assignment, "memory", 6) == 0) {
		if (policy_parse_size(val, &l->memory, &why) < 0)
			return err_set(e, ERR_CONFIG, 0, "%s: memory: %s", what, why);
		if (l->memory < POLICY_MEMORY_MIN)
			return err_set(e, ERR_CONFIG, 0, "%s: memory: must be at least 1m", what);
		return 0;
	}
	if ((size_t)(eq - assignment) == 17 && strncmp(assignment, "workspace_entries", 17) == 0) {
		unsigned long n;
		if (num_parse_ulong(val, POLICY_WORKSPACE_ENTRIES_MAX, &n) < 0 || n == 0 ||
		    (val[0] == '0' && val[1]))
			return err_set(e, ERR_CONFIG, 0, "%s: workspace_entries: must be a whole "
				       "number from 1 to %lu", what, POLICY_WORKSPACE_ENTRIES_MAX);
		l->workspace_entries = n;
		return 0;
	}
	if ((size_t)(eq - assignment) == 4 && strncmp(assignment, "cpus", 4) == 0) {
		if (policy_parse_cpus(val, &l->cpu_millis, &why) < 0)
			return err_set(e, ERR_CONFIG, 0, "%s: %s", what, why);
		return 0;
	}
	return err_set(e, ERR_CONFIG, 0, "%s: unknown limit (known: pids, memory, cpus, "
		       "workspace_entries)", what);
}

json_t *policy_ranges_json(const struct net_range *r, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		char buf[RANGE_TEXT_MAX];

		range_format(&r[i], buf);
		if (json_array_append_new(arr, json_string(buf)) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *policy_limits_json(const struct policy_limits *l)
{
	json_t *o = json_object();

	if (o && l->pids && json_object_set_new(o, "pids", json_integer((json_int_t)l->pids)) < 0)
		goto fail;
	if (o && l->memory &&
	    json_object_set_new(o, "memory", json_integer((json_int_t)l->memory)) < 0)
		goto fail;
	if (o && l->cpu_millis &&
	    json_object_set_new(o, "cpus", json_real(l->cpu_millis / 1000.0)) < 0)
		goto fail;
	if (o && l->workspace_entries &&
	    json_object_set_new(o, "workspace_entries",
				json_integer((json_int_t)l->workspace_entries)) < 0)
		goto fail;
	return o;
fail:
	json_decref(o);
	return NULL;
}
