/* net.c: the Engine calls on networks and volumes (see engine.h):
 * create, remove, list by label, and a network's inspect. Gone is the
 * daemon's own word for it: "network <x> not found" and "no such volume"
 * on a 404. A create is checked against what was asked: the daemon's
 * volume create hands back a volume of that name that exists already,
 * whatever its options, so cordon refuses one that exists. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "lib/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_SUCH_VOLUME "no such volume"

/* The daemon's 404 for a network: "network <ref> not found". */
static bool network_gone(const struct answer *a)
{
	_cleanup_free_ char *m = a->status == 404 ? engine_answer_message(a) : NULL;
	size_t n = m ? strlen(m) : 0;

	return n > 18 && strncmp(m, "network ", 8) == 0 && strcmp(m + n - 10, " not found") == 0;
}

static bool object_or_null_of_strings(const json_t *j)
{
	return !j || json_is_null(j) || engine_strings_ok(j);
}

/* A copy of a caller's object of strings for a request (NULL or null:
 * an empty one). NULL on allocation failure, which json_pack's "o"
 * then fails on. */
static json_t *strings_copy(const json_t *j)
{
	return json_is_object(j) ? json_deep_copy(j) : json_object();
}

/* --- networks --------------------------------------------------------------- */

int engine_network_remove(struct engine *g, const char *ref, struct err **e)
{
	const char *what = "remove network";
	_cleanup_free_ char *path = NULL;
	struct answer a;
	int r;

	if (!engine_ref_ok(ref))
		return err_set(e, ERR_CONFIG, 0, "docker network name or ID is not valid");
	path = engine_api_path(g, "/networks/%s", ref);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "DELETE", path, NULL, &a, e) < 0)
		return -1;
	if (a.status == 204)
		r = 0;
	else if (network_gone(&a))
		r = 1;
	else
		r = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return r;
}

/* The create's answer: {"Id": ..., "Warning": ""}. A network whose ID
 * cannot be read is left to the caller's listing by its labels; one the
 * daemon warned about is removed again. */
static int network_created(struct engine *g, const struct answer *a, char **id, struct err **e)
{
	const char *what = "create network";
	_cleanup_json_ json_t *j = engine_answer_json(g, what, a, JSON_OBJECT, e);
	json_t *warning = json_object_get(j, "Warning");
	const char *w = json_string_value(warning);
	_cleanup_free_ char *said = NULL;
	struct err *ue = NULL;

	if (!j)
		return -1;
	if (!engine_is_hex64(json_string_value(json_object_get(j, "Id"))))
		return engine_shape_fail(g, what, "Id", e);
	*id = strdup(json_string_value(json_object_get(j, "Id")));
	if (!*id)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if ((!warning || json_is_null(warning) || (w && !w[0])))
		return 0;
	said = strndup(w ? w : "(not a string)", MESSAGE_MAX);
	if (said)
		text_printable(said, strlen(said) + 1);
	if (engine_network_remove(g, *id, &ue) < 0)
		err_set(e, ERR_UNAVAILABLE, 0,
			"docker daemon `%s`: %s: the daemon warned: %s; and the network (%s) "
			"could not be removed: %s",
			g->endpoint, what, said ? said : "?", *id, ue->msg);
	else
		err_set(e, ERR_UNAVAILABLE, 0,
			"docker daemon `%s`: %s: the daemon warned: %s (removed again)", g->endpoint,
			what, said ? said : "?");
	err_free(ue);
	free(steal_pointer(id));
	return -1;
}

int engine_network_create(struct engine *g, const char *name, const json_t *labels,
			  bool internal, const json_t *options, bool ipv6, char **id,
			  struct err **e)
{
	const char *what = "create network";
	_cleanup_free_ char *path = NULL, *body = NULL;
	_cleanup_json_ json_t *req = NULL;
	struct answer a;
	int r;

	*id = NULL;
	if (!engine_ref_ok(name))
		return err_set(e, ERR_CONFIG, 0, "docker network name is not valid");
	if (!object_or_null_of_strings(labels) || !object_or_null_of_strings(options))
		return err_set(e, ERR_CONFIG, 0, "%s: labels and options are objects of strings",
			       what);
	req = json_pack("{s:s, s:b, s:s, s:b, s:b, s:b, s:o, s:o}", "Name", name,
			"CheckDuplicate", 1, "Driver", "bridge", "Internal", internal,
			"EnableIPv6", ipv6, "Attachable", 0, "Labels", strings_copy(labels),
			"Options", strings_copy(options));
	path = engine_api_path(g, "/networks/create");
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	if (!path || !body)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "POST", path, body, &a, e) < 0)
		return -1;
	if (a.status == 201)
		r = network_created(g, &a, id, e);
	else if (a.status == 409)
		r = err_set(e, ERR_UNAVAILABLE, 0,
			    "docker daemon `%s`: %s: a network named `%s` exists already",
			    g->endpoint, what, name);
	else
		r = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return r;
}

int engine_network_list(struct engine *g, char *const *labels, char ***ids, struct err **e)
{
	const char *what = "list networks";
	_cleanup_free_ char *filters = NULL, *path = NULL;

	*ids = NULL;
	if (engine_list_filters(g, what, labels, &filters, e) < 0)
		return -1;
	path = engine_api_path(g, "/networks?filters=%s", filters);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	return engine_list_ids(g, what, path, engine_is_hex64, ids, e);
}

/* Its first IPAM pool's subnet and gateway, when it has one. */
static int network_ipam(struct engine *g, json_t *j, struct engine_network *n, struct err **e)
{
	const char *what = "inspect network";
	json_t *ipam = json_object_get(j, "IPAM"), *config = json_object_get(ipam, "Config");
	json_t *pool = json_array_get(config, 0);
	json_t *subnet = json_object_get(pool, "Subnet"), *gw = json_object_get(pool, "Gateway");

	if ((ipam && !json_is_object(ipam) && !json_is_null(ipam)) ||
	    (config && !json_is_array(config) && !json_is_null(config)) ||
	    (pool && !json_is_object(pool)))
		return engine_shape_fail(g, what, "IPAM", e);
	if (subnet && !(json_is_string(subnet) && !json_string_value(subnet)[0]) &&
	    engine_take_text(g, what, pool, "Subnet", 64, &n->subnet, e) < 0)
		return -1;
	if (gw && !(json_is_string(gw) && !json_string_value(gw)[0]) &&
	    engine_take_text(g, what, pool, "Gateway", 64, &n->gateway, e) < 0)
		return -1;
	return 0;
}

static int network_read(struct engine *g, const char *ref, json_t *j, struct engine_network *n,
			struct err **e)
{
	const char *what = "inspect network";
	const char *id = json_string_value(json_object_get(j, "Id"));
	const char *name = json_string_value(json_object_get(j, "Name"));
	json_t *internal = json_object_get(j, "Internal"), *ipv6 = json_object_get(j, "EnableIPv6");
	json_t *labels = json_object_get(j, "Labels"), *options = json_object_get(j, "Options");

	/* the daemon finds a network by ID, by name, then by a prefix of an
	 * ID: the answer must be about the one asked */
	if (!engine_is_hex64(id) || (engine_is_hex64(ref) && strcmp(id, ref) != 0))
		return engine_shape_fail(g, what, "Id", e);
	if (!engine_text_ok(name, REF_MAX) || (!engine_is_hex64(ref) && strcmp(name, ref) != 0))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: asked for `%s`, it answered about another "
			       "network",
			       g->endpoint, what, ref);
	if (!json_is_boolean(internal) || !json_is_boolean(ipv6))
		return engine_shape_fail(g, what, "Internal", e);
	if (!object_or_null_of_strings(labels))
		return engine_shape_fail(g, what, "Labels", e);
	if (!object_or_null_of_strings(options))
		return engine_shape_fail(g, what, "Options", e);
	n->id = strdup(id);
	n->name = strdup(name);
	n->internal = json_is_true(internal);
	n->ipv6 = json_is_true(ipv6);
	n->labels = json_is_object(labels) ? json_incref(labels) : json_object();
	n->options = json_is_object(options) ? json_incref(options) : json_object();
	if (!n->id || !n->name || !n->labels || !n->options)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	return network_ipam(g, j, n, e);
}

int engine_network_inspect(struct engine *g, const char *ref, struct engine_network *out,
			   struct err **e)
{
	const char *what = "inspect network";
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	struct answer a;

	*out = (struct engine_network){ 0 };
	if (!engine_ref_ok(ref))
		return err_set(e, ERR_CONFIG, 0, "docker network name or ID is not valid");
	path = engine_api_path(g, "/networks/%s", ref);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "GET", path, NULL, &a, e) < 0)
		return -1;
	if (a.status != 200) {
		int r = network_gone(&a) ? ENGINE_GONE : engine_answer_fail(g, what, &a, true, e);

		engine_answer_clear(&a);
		return r;
	}
	j = engine_answer_json(g, what, &a, JSON_OBJECT, e);
	engine_answer_clear(&a);
	if (!j)
		return -1;
	if (network_read(g, ref, j, out, e) < 0) {
		engine_network_clear(out);
		return -1;
	}
	return ENGINE_FOUND;
}

void engine_network_clear(struct engine_network *n)
{
	free(n->id);
	free(n->name);
	free(n->subnet);
	free(n->gateway);
	json_decref(n->labels);
	json_decref(n->options);
	*n = (struct engine_network){ 0 };
}

/* --- volumes ---------------------------------------------------------------- */

/* a and b the same object of strings (NULL and null as {}) */
static bool same_strings(const json_t *a, const json_t *b)
{
	size_t na = json_is_object(a) ? json_object_size(a) : 0;
	size_t nb = json_is_object(b) ? json_object_size(b) : 0;

	if (na == 0 || nb == 0)
		return na == nb;
	return json_equal(a, b);
}

/* The create's answer is the volume as the daemon holds it: it must be
 * the one asked for, of the local driver, with those labels and options. */
static int volume_created(struct engine *g, const char *name, const json_t *labels,
			  const json_t *opts, const struct answer *a, struct err **e)
{
	const char *what = "create volume";
	_cleanup_json_ json_t *j = engine_answer_json(g, what, a, JSON_OBJECT, e);

	if (!j)
		return -1;
	if (!json_is_string(json_object_get(j, "Name")) ||
	    strcmp(json_string_value(json_object_get(j, "Name")), name) != 0)
		return engine_shape_fail(g, what, "Name", e);
	if (!json_is_string(json_object_get(j, "Driver")) ||
	    strcmp(json_string_value(json_object_get(j, "Driver")), "local") != 0 ||
	    !same_strings(json_object_get(j, "Labels"), labels) ||
	    !same_strings(json_object_get(j, "Options"), opts))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: volume `%s` is not as asked (its driver, "
			       "labels or options differ: one of that name was there before)",
			       g->endpoint, what, name);
	return 0;
}

int engine_volume_create(struct engine *g, const char *name, const json_t *labels,
			 const json_t *driver_opts, struct err **e)
{
	const char *what = "create volume";
	_cleanup_free_ char *path = NULL, *body = NULL, *at = NULL;
	_cleanup_json_ json_t *req = NULL, *old = NULL;
	struct answer a;
	bool gone = false;
	int r;

	if (!engine_ref_ok(name) || strlen(name) < 2)
		return err_set(e, ERR_CONFIG, 0, "docker volume name is not valid");
	if (!object_or_null_of_strings(labels) || !object_or_null_of_strings(driver_opts))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: labels and driver options are objects of strings", what);
	/* the daemon's create of a name it holds answers with that volume:
	 * ask first, so one made by someone else is never taken for ours
	 * (the answer's check below covers a race with another create) */
	at = engine_api_path(g, "/volumes/%s", name);
	old = engine_get_json(g, what, at, JSON_OBJECT, NO_SUCH_VOLUME, &gone, e);
	if (old)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: a volume named `%s` exists already",
			       g->endpoint, what, name);
	if (!gone)
		return -1;
	req = json_pack("{s:s, s:s, s:o, s:o}", "Name", name, "Driver", "local", "Labels",
			strings_copy(labels), "DriverOpts", strings_copy(driver_opts));
	path = engine_api_path(g, "/volumes/create");
	body = req ? json_dumps(req, JSON_COMPACT) : NULL;
	if (!path || !body)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "POST", path, body, &a, e) < 0)
		return -1;
	if (a.status == 201)
		r = volume_created(g, name, labels, driver_opts, &a, e);
	else
		r = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return r;
}

int engine_volume_remove(struct engine *g, const char *name, bool force, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!engine_ref_ok(name))
		return err_set(e, ERR_CONFIG, 0, "docker volume name is not valid");
	path = engine_api_path(g, "/volumes/%s?force=%d", name, force ? 1 : 0);
	/* in use: 409, an error */
	return engine_act(g, "remove volume", "DELETE", path, 204, 404, NO_SUCH_VOLUME, e);
}

int engine_volume_list(struct engine *g, char *const *labels, char ***names, struct err **e)
{
	const char *what = "list volumes";
	_cleanup_free_ char *filters = NULL, *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_strv_ char **out = NULL;
	json_t *vols, *warnings, *v;
	size_t i;

	*names = NULL;
	if (engine_list_filters(g, what, labels, &filters, e) < 0)
		return -1;
	out = calloc(1, sizeof(char *));
	path = engine_api_path(g, "/volumes?filters=%s", filters);
	if (!out || !path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	j = engine_get_json(g, what, path, JSON_OBJECT, NULL, NULL, e);
	if (!j)
		return -1;
	vols = json_object_get(j, "Volumes");
	warnings = json_object_get(j, "Warnings");
	if (vols && !json_is_array(vols) && !json_is_null(vols))
		return engine_shape_fail(g, what, "Volumes", e);
	/* a warning is a driver the daemon could not ask: the list may
	 * lack its volumes */
	if (warnings && !json_is_null(warnings) &&
	    !(json_is_array(warnings) && json_array_size(warnings) == 0))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: the daemon warned (the list may be short)",
			       g->endpoint, what);
	json_array_foreach(vols, i, v) {
		const char *name = json_string_value(json_object_get(v, "Name"));

		if (!engine_ref_ok(name))
			return engine_shape_fail(g, what, "Name", e);
		if (strv_push(&out, name) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	*names = steal_pointer(&out);
	return 0;
}
