/* policy.c: strict parsing of the policy document, its normalised JSON
 * form, and the embedded default. Unknown keys, duplicate keys and wrong
 * types are refused; every message names the JSON path, never the value. */
#include "policy/policy.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POLICY_FILE_MAX ((size_t)1 << 20)

const char policy_default_json[] =
	"{\n"
	"  \"write\": [\"{workspace}\"],\n"
	"  \"read\": {\"deny\": [], \"allow\": []},\n"
	"  \"network\": {\"allow\": [], \"deny\": []},\n"
	"  \"sockets\": [],\n"
	"  \"unix_sockets\": \"none\"\n"
	"}\n";

void policy_free(struct policy *p)
{
	if (!p)
		return;
	strv_free(p->write);
	strv_free(p->read_deny);
	strv_free(p->read_allow);
	strv_free(p->sockets);
	strv_free(p->env_pass);
	free(p->allow_ranges);
	for (size_t i = 0; i < p->n_net_allow; i++)
		host_pattern_clear(&p->net_allow[i]);
	for (size_t i = 0; i < p->n_net_deny; i++)
		host_pattern_clear(&p->net_deny[i]);
	free(p->net_allow);
	free(p->net_deny);
	free(p);
}

int policy_add_path(char ***list, const char *tmpl, const char *what,
		    struct err **e)
{
	const char *why = NULL;
	char *norm = NULL;

	if (policy_path_normalise(tmpl, strlen(tmpl), &norm, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", what, why);
	if (strv_contains(*list, norm)) {
		free(norm);
		return 0;
	}
	if (strv_push_take(list, norm) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	return 0;
}

int policy_add_host(struct host_pattern **list, size_t *n, const char *host,
		    const char *what, struct err **e)
{
	struct host_pattern h, *nl;
	const char *why = NULL;

	if (host_parse(host, strlen(host), &h, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", what, why);
	nl = realloc(*list, (*n + 1) * sizeof(**list));
	if (!nl) {
		host_pattern_clear(&h);
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	nl[(*n)++] = h;
	*list = nl;
	return 0;
}

static json_t *get_object(json_t *obj, const char *path, const char *key,
			  struct err **e)
{
	json_t *v = json_object_get(obj, key);
	_cleanup_free_ char *kp = NULL;

	if (!v || json_is_object(v))
		return v;
	kp = json_path_key(path, key);
	err_set(e, ERR_CONFIG, 0, "%s: must be an object", json_path_show(kp));
	return NULL;
}

typedef int (*item_fn)(void *dst, const char *s, size_t len, const char *path,
		       struct err **e);

/* Walk an optional array of strings at obj[key], calling fn for each. */
static int each_string(json_t *obj, const char *path, const char *key,
		       item_fn fn, void *dst, struct err **e)
{
	_cleanup_free_ char *kp = json_path_key(path, key);
	json_t *arr = json_object_get(obj, key), *v;
	size_t i;

	if (!kp)
		return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
	if (!arr)
		return 0;
	if (!json_is_array(arr))
		return err_set(e, ERR_CONFIG, 0, "%s: must be an array of strings", kp);
	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index(kp, i);
		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
		if (!json_is_string(v))
			return err_set(e, ERR_CONFIG, 0, "%s: must be a string", ip);
		if (fn(dst, json_string_value(v), json_string_length(v), ip, e) < 0)
			return -1;
	}
	return 0;
}

static int add_path_item(void *dst, const char *s, size_t len, const char *path,
			 struct err **e)
{
	char ***list = dst;
	const char *why = NULL;
	char *norm = NULL;

	if (policy_path_normalise(s, len, &norm, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", path, why);
	if (strv_contains(*list, norm)) {
		free(norm);
		return err_set(e, ERR_CONFIG, 0, "%s: listed twice", path);
	}
	if (strv_push_take(list, norm) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", path);
	return 0;
}

struct host_list {
	struct host_pattern **list;
	size_t *n;
};

static int add_host_item(void *dst, const char *s, size_t len, const char *path,
			 struct err **e)
{
	struct host_list *hl = dst;
	struct host_pattern h, *nl;
	const char *why = NULL;

	if (host_parse(s, len, &h, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", path, why);
	for (size_t i = 0; i < *hl->n; i++) {
		if (host_covers(&(*hl->list)[i], &h) && host_covers(&h, &(*hl->list)[i])) {
			host_pattern_clear(&h);
			return err_set(e, ERR_CONFIG, 0, "%s: listed twice", path);
		}
	}
	nl = realloc(*hl->list, (*hl->n + 1) * sizeof(**hl->list));
	if (!nl) {
		host_pattern_clear(&h);
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", path);
	}
	nl[(*hl->n)++] = h;
	*hl->list = nl;
	return 0;
}

struct range_list {
	struct net_range **list;
	size_t *n;
};

static int add_range_item(void *dst, const char *s, size_t len, const char *path,
			  struct err **e)
{
	struct range_list *rl = dst;
	struct net_range r, *nl;
	const char *why = NULL;

	if (range_parse(s, len, &r, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: %s", path, why);
	for (size_t i = 0; i < *rl->n; i++)
		if (range_covers(&(*rl->list)[i], &r) && range_covers(&r, &(*rl->list)[i]))
			return err_set(e, ERR_CONFIG, 0, "%s: listed twice", path);
	nl = realloc(*rl->list, (*rl->n + 1) * sizeof(**rl->list));
	if (!nl)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", path);
	nl[(*rl->n)++] = r;
	*rl->list = nl;
	return 0;
}

static int add_env_item(void *dst, const char *s, size_t len, const char *path,
			struct err **e)
{
	char ***list = dst;

	if (strlen(s) != len)
		return err_set(e, ERR_CONFIG, 0, "%s: not a variable name", path);
	if (strv_contains(*list, s))
		return err_set(e, ERR_CONFIG, 0, "%s: listed twice", path);
	return policy_add_env_pass(list, s, path, e);
}

/* "limits": {"pids": N, "memory": "512m" | bytes, "cpus": N}. */
static int parse_limits(json_t *lim, struct policy_limits *l, struct err **e)
{
	json_t *v;
	const char *why = NULL;

	if ((v = json_object_get(lim, "pids"))) {
		json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
		if (n < 1 || (unsigned long long)n > POLICY_PIDS_MAX)
			return err_set(e, ERR_CONFIG, 0, "limits.pids: must be a whole number "
				       "from 1 to %lu", POLICY_PIDS_MAX);
		l->pids = (unsigned long)n;
	}
	if ((v = json_object_get(lim, "workspace_entries"))) {
		json_int_t n = json_is_integer(v) ? json_integer_value(v) : 0;
		if (n < 1 || (unsigned long long)n > POLICY_WORKSPACE_ENTRIES_MAX)
			return err_set(e, ERR_CONFIG, 0, "limits.workspace_entries: must be a "
				       "whole number from 1 to %lu", POLICY_WORKSPACE_ENTRIES_MAX);
		l->workspace_entries = (unsigned long)n;
	}
	if ((v = json_object_get(lim, "memory"))) {
		if (json_is_integer(v) && json_integer_value(v) > 0) {
			l->memory = (unsigned long long)json_integer_value(v);
			if (l->memory > POLICY_MEMORY_MAX)
				return err_set(e, ERR_CONFIG, 0, "limits.memory: size is larger "
					       "than 1 PiB");
		} else if (!json_is_string(v) ||
			   strlen(json_string_value(v)) != json_string_length(v) ||
			   policy_parse_size(json_string_value(v), &l->memory, &why) < 0) {
			return err_set(e, ERR_CONFIG, 0, "limits.memory: %s",
				       why ? why : "must be a size such as \"512m\" or a number of bytes");
		}
		if (l->memory < POLICY_MEMORY_MIN)
			return err_set(e, ERR_CONFIG, 0, "limits.memory: must be at least 1m");
	}
	if ((v = json_object_get(lim, "cpus"))) {
		double d = json_is_number(v) ? json_number_value(v) : -1.0;
		double m = d * 1000.0;
		long long ml = d > 0 && d <= 1024 ? (long long)(m + 0.5) : -1;
		if (ml < 0 || ml % 10 != 0 || m - (double)ml > 1e-6 || (double)ml - m > 1e-6)
			return err_set(e, ERR_CONFIG, 0,
				       "limits.cpus: must be a number from 0.01 to 1024, at most "
				       "two decimals");
		l->cpu_millis = (unsigned int)ml;
		if (l->cpu_millis < POLICY_CPU_MILLIS_MIN)
			return err_set(e, ERR_CONFIG, 0, "limits.cpus: must be from 0.01 to 1024");
	}
	return 0;
}

static int parse_unix_sockets(json_t *root, struct policy *p, struct err **e)
{
	json_t *v = json_object_get(root, "unix_sockets");
	const char *s;

	if (!v)
		return 0;
	if (!json_is_string(v))
		return err_set(e, ERR_CONFIG, 0, "unix_sockets: must be \"all\" or \"none\"");
	s = json_string_value(v);
	if (json_string_length(v) == 3 && strcmp(s, "all") == 0)
		p->unix_sockets_all = true;
	else if (!(json_string_length(v) == 4 && strcmp(s, "none") == 0))
		return err_set(e, ERR_CONFIG, 0, "unix_sockets: must be \"all\" or \"none\"");
	return 0;
}

static struct policy *policy_new(void)
{
	struct policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->write = calloc(1, sizeof(char *));
	p->read_deny = calloc(1, sizeof(char *));
	p->read_allow = calloc(1, sizeof(char *));
	p->sockets = calloc(1, sizeof(char *));
	p->env_pass = calloc(1, sizeof(char *));
	if (!p->write || !p->read_deny || !p->read_allow || !p->sockets || !p->env_pass) {
		policy_free(p);
		return NULL;
	}
	return p;
}

static int policy_from_json(json_t *root, struct policy *p, struct err **e)
{
	static const char *const top_keys[] = { "write", "read", "network", "sockets",
						"unix_sockets", "limits", "env", NULL };
	static const char *const read_keys[] = { "deny", "allow", NULL };
	static const char *const net_keys[] = { "allow", "deny", "allow_ranges", NULL };
	static const char *const limit_keys[] = { "pids", "memory", "cpus", "workspace_entries",
						  NULL };
	static const char *const env_keys[] = { "pass", NULL };
	struct host_list allow = { &p->net_allow, &p->n_net_allow };
	struct host_list deny = { &p->net_deny, &p->n_net_deny };
	struct range_list ranges = { &p->allow_ranges, &p->n_allow_ranges };
	json_t *read, *net, *lim, *env;

	if (!json_is_object(root))
		return err_set(e, ERR_CONFIG, 0, "(root): must be an object");
	if (json_check_keys(root, "", top_keys, e) < 0)
		return -1;
	read = get_object(root, "", "read", e);
	net = get_object(root, "", "network", e);
	lim = get_object(root, "", "limits", e);
	env = get_object(root, "", "env", e);
	if (*e)
		return -1;
	if ((read && json_check_keys(read, "read", read_keys, e) < 0) ||
	    (net && json_check_keys(net, "network", net_keys, e) < 0) ||
	    (lim && json_check_keys(lim, "limits", limit_keys, e) < 0) ||
	    (env && json_check_keys(env, "env", env_keys, e) < 0))
		return -1;
	if ((lim && parse_limits(lim, &p->limits, e) < 0) ||
	    (net && each_string(net, "network", "allow_ranges", add_range_item, &ranges, e) < 0) ||
	    (env && each_string(env, "env", "pass", add_env_item, &p->env_pass, e) < 0))
		return -1;
	if (each_string(root, "", "write", add_path_item, &p->write, e) < 0 ||
	    (read && each_string(read, "read", "deny", add_path_item, &p->read_deny, e) < 0) ||
	    (read && each_string(read, "read", "allow", add_path_item, &p->read_allow, e) < 0) ||
	    (net && each_string(net, "network", "allow", add_host_item, &allow, e) < 0) ||
	    (net && each_string(net, "network", "deny", add_host_item, &deny, e) < 0) ||
	    each_string(root, "", "sockets", add_path_item, &p->sockets, e) < 0)
		return -1;
	return parse_unix_sockets(root, p, e);
}

int policy_parse(const char *buf, size_t len, struct policy **out,
		 struct err **e)
{
	_cleanup_json_ json_t *root = NULL;
	struct policy *p;

	root = json_parse_strict(buf, len, e);
	if (!root)
		return -1;
	p = policy_new();
	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
	if (policy_from_json(root, p, e) < 0) {
		policy_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

int policy_from_value(json_t *v, const char *where, struct policy **out, struct err **e)
{
	struct policy *p = policy_new();

	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
	if (policy_from_json(v, p, e) < 0) {
		policy_free(p);
		return where ? err_wrap(e, "%s", where) : -1;
	}
	*out = p;
	return 0;
}

int policy_load_file(const char *path, struct policy **out, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = -1;
	size_t len = 0;

	/* The operator names the file; a symbolic link to it is fine here. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0)
		return err_set(e, ERR_CONFIG, errno, "policy file `%s`", path);
	if (fs_read_fd(fd, path, POLICY_FILE_MAX, &buf, &len, e) < 0)
		return err_reclass(e, ERR_CONFIG);
	return policy_parse(buf, len, out, e);
}

int policy_default(struct policy **out, struct err **e)
{
	return policy_parse(policy_default_json, strlen(policy_default_json), out, e);
}

json_t *policy_hosts_json(const struct host_pattern *h, size_t n)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < n; i++) {
		char *s = host_format(&h[i]);
		int r = s ? json_array_push_string(arr, s) : -1;
		free(s);
		if (r < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

json_t *policy_to_json(const struct policy *p)
{
	json_t *j = json_pack("{s:o, s:{s:o, s:o}, s:{s:o, s:o}, s:o, s:s}",
			      "write", json_strv(p->write),
			      "read", "deny", json_strv(p->read_deny),
			      "allow", json_strv(p->read_allow),
			      "network", "allow", policy_hosts_json(p->net_allow, p->n_net_allow),
			      "deny", policy_hosts_json(p->net_deny, p->n_net_deny),
			      "sockets", json_strv(p->sockets),
			      "unix_sockets", p->unix_sockets_all ? "all" : "none");

	/* The newer keys only when set: the default's shape stays as it was. */
	if (j && p->n_allow_ranges &&
	    json_object_set_new(json_object_get(j, "network"), "allow_ranges",
				policy_ranges_json(p->allow_ranges, p->n_allow_ranges)) < 0)
		goto fail;
	if (j && (p->limits.pids || p->limits.memory || p->limits.cpu_millis ||
		  p->limits.workspace_entries) &&
	    json_object_set_new(j, "limits", policy_limits_json(&p->limits)) < 0)
		goto fail;
	if (j && strv_len(p->env_pass) &&
	    json_object_set_new(j, "env", json_pack("{s:o}", "pass", json_strv(p->env_pass))) < 0)
		goto fail;
	return j;
fail:
	json_decref(j);
	return NULL;
}
