/* engine.c: the Docker Engine API client (see engine.h): the
 * transport (one curl handle over the unix socket, bounded and timed), the
 * version agreed at the ping, and each call's reading of the answer. What
 * the daemon says is checked field by field: an answer that does not have
 * the shape expected is an error, never a default. */
#include "container/engine.h"

#include "hostd/http.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/strv.h"
#include "lib/text.h"

#include <curl/curl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>

#define REF_MAX 255
#define LABEL_MAX 1024
#define MESSAGE_MAX 200 /* of the daemon's own words, in an error */
#define CONNECT_TIMEOUT 10L

struct engine {
	CURL *curl;
	char *endpoint; /* as given: errors name it */
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)];
	char api[16];	/* the daemon's newest version, from its ping */
	char prefix[16]; /* "/v1.41", on every call but the ping */
	long timeout;
};

struct answer {
	long status;
	struct hostd_buf body;
};

static void answer_clear(struct answer *a)
{
	free(a->body.p);
	a->body.p = NULL;
}

/* --- names -------------------------------------------------------------- */

/* A container's ID or name as the daemon allows names: it then goes into
 * a URL path as it is, with nothing to escape. */
static bool ref_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n <= REF_MAX && strspn(s, ENGINE_ALNUM) > 0 &&
	       strspn(s, ENGINE_ALNUM "_.-") == n;
}

/* An image ID or reference (registry/name:tag@sha256:...): no "..", no
 * empty path element, so the daemon's router sees the path cordon meant. */
static bool image_ref_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n <= REF_MAX && strspn(s, ENGINE_ALNUM) > 0 && s[n - 1] != '/' &&
	       !strstr(s, "..") && !strstr(s, "//") && strspn(s, ENGINE_ALNUM "_.-/:@") == n;
}

static bool is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s && s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

static bool image_id_ok(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && is_hex64(s + 7);
}

/* Printable ASCII, at most max bytes: what a daemon or a file wrote, fit
 * to be kept and printed. */
static bool text_ok(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return s && i > 0 && i <= max;
}

/* --- transport -------------------------------------------------------------- */

/* One request: 0 with a->status and a->body (the caller clears it), or -1
 * when the daemon could not be asked or its answer was too large. A
 * response header of this call can be read until the next one. */
static int engine_call(struct engine *g, const char *method, const char *path, const char *body,
		       struct answer *a, struct err **e)
{
	_cleanup_free_ char *url = NULL;
	struct curl_slist *h = NULL, *h2;
	CURL *k = g->curl;
	CURLcode res;

	a->status = 0;
	a->body = (struct hostd_buf){ .max = ENGINE_ANSWER_MAX };
	if (asprintf(&url, "http://docker%s", path) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker request");
	/* a request body must go at once, not after a 100-continue */
	h = curl_slist_append(NULL, "Expect:");
	h2 = h ? curl_slist_append(h, "Content-Type: application/json") : NULL;
	if (!h2) {
		curl_slist_free_all(h);
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker request");
	}
	/* a reset keeps the open connection for the next call */
	curl_easy_reset(k);
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_UNIX_SOCKET_PATH, g->sock);
	/* never a proxy from the environment: the daemon is on the socket */
	curl_easy_setopt(k, CURLOPT_PROXY, "");
	curl_easy_setopt(k, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_TIMEOUT, g->timeout);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT,
			 g->timeout < CONNECT_TIMEOUT ? g->timeout : CONNECT_TIMEOUT);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, hostd_buf_take);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, &a->body);
	if (strcmp(method, "POST") == 0) {
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, body ? body : "");
		curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(body ? strlen(body) : 0));
	} else if (strcmp(method, "GET") != 0) {
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	}
	res = curl_easy_perform(k);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	if (res == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &a->status);
	if (res != CURLE_OK || a->status < 100) {
		bool over = a->body.over;

		answer_clear(a);
		if (over)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "docker daemon `%s`: its answer is larger than %zu bytes",
				       g->endpoint, (size_t)ENGINE_ANSWER_MAX);
		return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s` cannot be asked: %s",
			       g->endpoint, curl_easy_strerror(res));
	}
	return 0;
}

/* The daemon's own words ({"message": ...}) fit for an error: printable,
 * cut at MESSAGE_MAX. NULL when there are none. */
static char *answer_message(const struct answer *a)
{
	_cleanup_json_ json_t *j = a->body.p ? json_loadb(a->body.p, a->body.n, 0, NULL) : NULL;
	const char *m = json_string_value(json_object_get(j, "message"));
	char *out;

	if (!m)
		return NULL;
	out = strndup(m, MESSAGE_MAX);
	if (out)
		text_printable(out, strlen(out) + 1);
	return out;
}

/* Did the daemon itself answer status with a message saying words? A
 * "not there" is taken only so: any other 404 (a route the daemon does
 * not know, something else on the socket) is not a thing being gone. */
static bool answer_says(const struct answer *a, long status, const char *words)
{
	_cleanup_free_ char *m = a->status == status ? answer_message(a) : NULL;

	return m && strstr(m, words);
}

/* An error for an answer the call did not expect; with_message adds the
 * daemon's own words (left out where they could echo what cordon sent). */
static int answer_fail(struct engine *g, const char *what, const struct answer *a,
		       bool with_message, struct err **e)
{
	_cleanup_free_ char *m = with_message ? answer_message(a) : NULL;

	return err_set(e, a->status == 400 ? ERR_CONFIG : ERR_UNAVAILABLE, 0,
		       "docker daemon `%s`: %s: HTTP %ld%s%s", g->endpoint, what, a->status,
		       m ? ": " : "", m ? m : "");
}

/* The answer as JSON of the type wanted (JSON_OBJECT or JSON_ARRAY). */
static json_t *answer_json(struct engine *g, const char *what, const struct answer *a,
			   json_type type, struct err **e)
{
	struct err *pe = NULL;
	json_t *j = json_parse_strict(a->body.p ? a->body.p : "", a->body.n, &pe);

	if (!j) {
		err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: its answer is not JSON (%s)",
			g->endpoint, what, pe ? pe->msg : "?");
		err_free(pe);
		return NULL;
	}
	if (json_typeof(j) != type) {
		json_decref(j);
		err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: its answer is not %s",
			g->endpoint, what, type == JSON_OBJECT ? "an object" : "a list");
		return NULL;
	}
	return j;
}

static int shape_fail(struct engine *g, const char *what, const char *field, struct err **e)
{
	return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: %s is missing or not valid",
		       g->endpoint, what, field);
}

/* A copy of a string field that must be there and printable. */
static int take_text(struct engine *g, const char *what, json_t *obj, const char *field,
		     size_t max, char **out, struct err **e)
{
	const char *s = json_string_value(json_object_get(obj, field));

	if (!text_ok(s, max))
		return shape_fail(g, what, field, e);
	*out = strdup(s);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
}

/* GET path, wanting 200 and JSON of type. With no_such, the daemon's
 * 404 of that message sets *gone instead of failing. NULL otherwise, with
 * *e set unless *gone. */
static json_t *get_json(struct engine *g, const char *what, const char *path, json_type type,
			const char *no_such, bool *gone, struct err **e)
{
	struct answer a;
	json_t *j;

	if (gone)
		*gone = false;
	if (!path) {
		err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
		return NULL;
	}
	if (engine_call(g, "GET", path, NULL, &a, e) < 0)
		return NULL;
	if (a.status != 200) {
		if (no_such && gone && answer_says(&a, 404, no_such))
			*gone = true;
		else
			answer_fail(g, what, &a, true, e);
		answer_clear(&a);
		return NULL;
	}
	j = answer_json(g, what, &a, type, e);
	answer_clear(&a);
	return j;
}

/* --- open, ping ------------------------------------------------------------- */

/* "major.minor", each at most 3 digits. */
static int api_parse(const char *s, unsigned long *major, unsigned long *minor)
{
	char buf[16];
	char *dot;

	if (!s || strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s);
	dot = strchr(buf, '.');
	if (!dot)
		return -1;
	*dot = '\0';
	return num_parse_ulong(buf, 999, major) < 0 || num_parse_ulong(dot + 1, 999, minor) < 0
		       ? -1
		       : 0;
}

/* a before b, as API versions */
static bool api_below(unsigned long amaj, unsigned long amin, unsigned long bmaj,
		      unsigned long bmin)
{
	return amaj < bmaj || (amaj == bmaj && amin < bmin);
}

/* A daemon newer than cordon's API may have dropped it (Engine 29 serves
 * 1.44 and up): its oldest, from the unversioned /version, said at open
 * rather than as a puzzling error on the first call. */
static int engine_oldest(struct engine *g, struct err **e)
{
	_cleanup_json_ json_t *j = get_json(g, "version", "/version", JSON_OBJECT, NULL, NULL, e);
	unsigned long major = 0, minor = 0;

	if (!j)
		return -1;
	if (api_parse(json_string_value(json_object_get(j, "MinAPIVersion")), &major, &minor) < 0)
		return shape_fail(g, "version", "MinAPIVersion", e);
	if (api_below(ENGINE_API_MAJOR, ENGINE_API_MINOR, major, minor))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s` speaks API %lu.%lu to %s; cordon speaks %d.%d",
			       g->endpoint, major, minor, g->api, ENGINE_API_MAJOR,
			       ENGINE_API_MINOR);
	return 0;
}

static int engine_ping(struct engine *g, struct err **e)
{
	struct answer a;
	struct curl_header *hv = NULL;
	unsigned long major = 0, minor = 0;
	const char *v;

	if (engine_call(g, "GET", "/_ping", NULL, &a, e) < 0)
		return -1;
	answer_clear(&a);
	if (a.status != 200)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: its ping answers HTTP %ld (is it a Docker daemon?)",
			       g->endpoint, a.status);
	v = curl_easy_header(g->curl, "Api-Version", 0, CURLH_HEADER, -1, &hv) == CURLHE_OK
		    ? hv->value
		    : NULL;
	if (api_parse(v, &major, &minor) < 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: its ping names no API version", g->endpoint);
	snprintf(g->api, sizeof(g->api), "%lu.%lu", major, minor);
	if (api_below(major, minor, ENGINE_API_MAJOR, ENGINE_API_MINOR))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s` speaks API %s; cordon needs %d.%d or later "
			       "(Docker Engine 20.10)",
			       g->endpoint, g->api, ENGINE_API_MAJOR, ENGINE_API_MINOR);
	if (api_below(ENGINE_API_MAJOR, ENGINE_API_MINOR, major, minor))
		return engine_oldest(g, e);
	return 0;
}

int engine_open(const char *endpoint, struct engine **out, struct err **e)
{
	struct engine *g;
	const char *path;

	*out = NULL;
	if (!endpoint || strncmp(endpoint, "unix://", 7) != 0) {
		if (endpoint && strncmp(endpoint, "tcp://", 6) == 0)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "docker endpoint tcp://...: not supported yet (cordon "
				       "speaks to a daemon over its unix socket only; TLS is not built)");
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker endpoint: only unix:///path endpoints are supported");
	}
	path = endpoint + 7;
	if (path[0] != '/' || !text_ok(path, sizeof(g->sock) - 1))
		return err_set(e, ERR_CONFIG, 0,
			       "docker endpoint: a unix socket's path is absolute, at most %zu bytes",
			       sizeof(g->sock) - 1);
	g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker endpoint");
	snprintf(g->sock, sizeof(g->sock), "%s", path);
	snprintf(g->prefix, sizeof(g->prefix), "/v%d.%d", ENGINE_API_MAJOR, ENGINE_API_MINOR);
	g->timeout = ENGINE_TIMEOUT_DEFAULT;
	g->endpoint = strdup(endpoint);
	g->curl = curl_easy_init();
	if (!g->endpoint || !g->curl) {
		engine_close(g);
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker endpoint");
	}
	if (engine_ping(g, e) < 0) {
		engine_close(g);
		return -1;
	}
	*out = g;
	return 0;
}

void engine_close(struct engine *g)
{
	if (!g)
		return;
	if (g->curl)
		curl_easy_cleanup(g->curl);
	free(g->endpoint);
	free(g);
}

void engine_set_timeout(struct engine *g, long seconds)
{
	g->timeout = seconds > 0 ? seconds : ENGINE_TIMEOUT_DEFAULT;
}

const char *engine_daemon_api(const struct engine *g)
{
	return g->api;
}

/* A versioned request path. */
static char *api_path(const struct engine *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static char *api_path(const struct engine *g, const char *fmt, ...)
{
	_cleanup_free_ char *tail = NULL;
	char *out = NULL;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&tail, fmt, ap);
	va_end(ap);
	if (r < 0 || asprintf(&out, "%s%s", g->prefix, tail) < 0)
		return NULL;
	return out;
}

/* --- calls -------------------------------------------------------------- */

int engine_info(struct engine *g, struct engine_info *out, struct err **e)
{
	const char *what = "info";
	_cleanup_free_ char *path = api_path(g, "/info");
	_cleanup_json_ json_t *j = NULL;

	*out = (struct engine_info){ 0 };
	j = get_json(g, what, path, JSON_OBJECT, NULL, NULL, e);
	if (!j || take_text(g, what, j, "ID", 256, &out->id, e) < 0 ||
	    take_text(g, what, j, "ServerVersion", 64, &out->version, e) < 0) {
		engine_info_clear(out);
		return -1;
	}
	return 0;
}

void engine_info_clear(struct engine_info *i)
{
	free(i->id);
	free(i->version);
	*i = (struct engine_info){ 0 };
}

int engine_image_inspect(struct engine *g, const char *ref, struct engine_image *out,
			 struct err **e)
{
	const char *what = "inspect image";
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_t *digests, *d;
	bool gone = false;
	size_t i;

	*out = (struct engine_image){ 0 };
	if (!image_ref_ok(ref))
		return err_set(e, ERR_CONFIG, 0, "docker image reference is not valid");
	path = api_path(g, "/images/%s/json", ref);
	j = get_json(g, what, path, JSON_OBJECT, "No such image", &gone, e);
	if (!j)
		return gone ? ENGINE_GONE : -1;
	if (!image_id_ok(json_string_value(json_object_get(j, "Id"))))
		return shape_fail(g, what, "Id", e);
	digests = json_object_get(j, "RepoDigests");
	if (digests && !json_is_array(digests) && !json_is_null(digests))
		return shape_fail(g, what, "RepoDigests", e);
	out->id = strdup(json_string_value(json_object_get(j, "Id")));
	out->repo_digests = calloc(1, sizeof(char *));
	if (!out->id || !out->repo_digests) {
		engine_image_clear(out);
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	json_array_foreach(digests, i, d) {
		if (!text_ok(json_string_value(d), 512)) {
			engine_image_clear(out);
			return shape_fail(g, what, "RepoDigests", e);
		}
		if (strv_push(&out->repo_digests, json_string_value(d)) < 0) {
			engine_image_clear(out);
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
		}
	}
	return ENGINE_FOUND;
}

void engine_image_clear(struct engine_image *i)
{
	free(i->id);
	strv_free(i->repo_digests);
	*i = (struct engine_image){ 0 };
}

/* Remove a container cordon has just made and will not keep. */
static int create_undo(struct engine *g, const char *id, struct err **e)
{
	return engine_container_remove(g, id, true, e) < 0 ? -1 : 0;
}

int engine_container_create(struct engine *g, const char *name, const json_t *config,
			    char **id, struct err **e)
{
	const char *what = "create container";
	_cleanup_free_ char *path = NULL, *body = NULL, *warning = NULL;
	_cleanup_json_ json_t *j = NULL;
	json_t *warnings;
	struct answer a;

	*id = NULL;
	if (name && !ref_ok(name))
		return err_set(e, ERR_CONFIG, 0, "docker container name is not valid");
	if (!json_is_object(config))
		return err_set(e, ERR_CONFIG, 0, "%s: the config is not an object", what);
	path = name ? api_path(g, "/containers/create?name=%s", name)
		    : api_path(g, "/containers/create");
	body = json_dumps(config, JSON_COMPACT);
	if (!path || !body)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "POST", path, body, &a, e) < 0)
		return -1;
	if (a.status != 201) {
		/* the daemon's words about a config could echo it (its
		 * environment): only a missing image is told in them */
		if (a.status == 409)
			err_set(e, ERR_UNAVAILABLE, 0,
				"docker daemon `%s`: %s: a container named `%s` exists already",
				g->endpoint, what, name ? name : "");
		else
			answer_fail(g, what, &a, a.status == 404, e);
		answer_clear(&a);
		return -1;
	}
	j = answer_json(g, what, &a, JSON_OBJECT, e);
	answer_clear(&a);
	if (!j)
		return -1;
	/* created; a container whose ID cannot be read is left to the
	 * caller's listing by its labels, any other is removed on failure */
	if (!is_hex64(json_string_value(json_object_get(j, "Id"))))
		return shape_fail(g, what, "Id", e);
	*id = strdup(json_string_value(json_object_get(j, "Id")));
	if (!*id)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	warnings = json_object_get(j, "Warnings");
	if (json_is_array(warnings) && json_array_size(warnings) > 0) {
		/* a warning is something asked that is not in force */
		const char *w = json_string_value(json_array_get(warnings, 0));
		struct err *ue = NULL;

		warning = strndup(w ? w : "?", MESSAGE_MAX);
		if (warning)
			text_printable(warning, strlen(warning) + 1);
		if (create_undo(g, *id, &ue) < 0)
			err_set(e, ERR_UNAVAILABLE, 0,
				"docker daemon `%s`: %s: the daemon warned: %s; and the container "
				"(%s) could not be removed: %s",
				g->endpoint, what, warning ? warning : "?", *id, ue->msg);
		else
			err_set(e, ERR_UNAVAILABLE, 0,
				"docker daemon `%s`: %s: the daemon warned: %s (removed again)",
				g->endpoint, what, warning ? warning : "?");
		err_free(ue);
		free(steal_pointer(id));
		return -1;
	}
	if (warnings && !json_is_array(warnings) && !json_is_null(warnings)) {
		struct err *ue = NULL;

		create_undo(g, *id, &ue);
		err_free(ue);
		free(steal_pointer(id));
		return shape_fail(g, what, "Warnings", e);
	}
	return 0;
}

/* Fill c from an inspect answer, each field checked. */
static int container_read(struct engine *g, const char *ref, json_t *j,
			  struct engine_container *c, struct err **e)
{
	const char *what = "inspect container";
	json_t *state = json_object_get(j, "State"), *config = json_object_get(j, "Config");
	json_t *labels = json_object_get(config, "Labels"), *v;
	json_t *running = json_object_get(state, "Running"), *pid = json_object_get(state, "Pid");
	json_t *code = json_object_get(state, "ExitCode");
	const char *id = json_string_value(json_object_get(j, "Id")), *k;

	/* asked by its full ID, the answer must be about that one */
	if (!is_hex64(id) || (is_hex64(ref) && strcmp(id, ref) != 0))
		return shape_fail(g, what, "Id", e);
	if (!json_is_object(state) || !json_is_boolean(running) || !json_is_integer(pid) ||
	    json_integer_value(pid) < 0 || !json_is_integer(code) ||
	    json_integer_value(code) < -2147483647 || json_integer_value(code) > 2147483647)
		return shape_fail(g, what, "State", e);
	if (!json_is_object(config) || (labels && !json_is_object(labels) && !json_is_null(labels)))
		return shape_fail(g, what, "Config.Labels", e);
	json_object_foreach(labels, k, v)
		if (!json_is_string(v))
			return shape_fail(g, what, "Config.Labels", e);
	c->id = strdup(id);
	c->running = json_is_true(running);
	c->pid = (long)json_integer_value(pid);
	c->exit_code = (int)json_integer_value(code);
	c->labels = json_is_object(labels) ? json_incref(labels) : json_object();
	if (!c->id || !c->labels)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (take_text(g, what, j, "Name", 512, &c->name, e) < 0 ||
	    take_text(g, what, j, "Image", 128, &c->image, e) < 0 ||
	    take_text(g, what, state, "Status", 32, &c->status, e) < 0 ||
	    take_text(g, what, state, "StartedAt", 64, &c->started_at, e) < 0)
		return -1;
	return 0;
}

int engine_container_inspect(struct engine *g, const char *id, struct engine_container *out,
			     struct err **e)
{
	const char *what = "inspect container";
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	bool gone = false;

	*out = (struct engine_container){ 0 };
	if (!ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = api_path(g, "/containers/%s/json", id);
	/* gone only on the daemon's own word */
	j = get_json(g, what, path, JSON_OBJECT, "No such container", &gone, e);
	if (!j)
		return gone ? ENGINE_GONE : -1;
	if (container_read(g, id, j, out, e) < 0) {
		engine_container_clear(out);
		return -1;
	}
	return ENGINE_FOUND;
}

void engine_container_clear(struct engine_container *c)
{
	free(c->id);
	free(c->name);
	free(c->image);
	free(c->status);
	free(c->started_at);
	json_decref(c->labels);
	*c = (struct engine_container){ 0 };
}

/* The list query's filters, escaped for the URL. */
static int list_filters(struct engine *g, char *const *labels, char **out, struct err **e)
{
	const char *what = "list containers";
	_cleanup_json_ json_t *f = json_object(), *arr = json_array();
	_cleanup_free_ char *text = NULL;
	char *esc;

	*out = NULL;
	if (!labels || !labels[0])
		return err_set(e, ERR_CONFIG, 0, "%s: no label to list by", what);
	if (!f || !arr)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	for (size_t i = 0; labels[i]; i++) {
		if (!text_ok(labels[i], LABEL_MAX) || labels[i][0] == '=')
			return err_set(e, ERR_CONFIG, 0, "%s: a label is not valid", what);
		if (json_array_push_string(arr, labels[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	if (json_object_set(f, "label", arr) < 0 || !(text = json_dumps(f, JSON_COMPACT)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	esc = curl_easy_escape(g->curl, text, 0);
	*out = esc ? strdup(esc) : NULL;
	curl_free(esc);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
}

int engine_container_list(struct engine *g, char *const *labels, char ***ids, struct err **e)
{
	const char *what = "list containers";
	_cleanup_free_ char *filters = NULL, *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_strv_ char **out = NULL;
	json_t *c;
	size_t i;

	*ids = NULL;
	if (list_filters(g, labels, &filters, e) < 0)
		return -1;
	out = calloc(1, sizeof(char *));
	if (!out)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	path = api_path(g, "/containers/json?all=1&filters=%s", filters);
	j = get_json(g, what, path, JSON_ARRAY, NULL, NULL, e);
	if (!j)
		return -1;
	/* every entry must be one: a list with one left out is wrong */
	json_array_foreach(j, i, c) {
		const char *id = json_string_value(json_object_get(c, "Id"));

		if (!is_hex64(id))
			return shape_fail(g, what, "Id", e);
		if (strv_push(&out, id) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	*ids = steal_pointer(&out);
	return 0;
}

/* A call on one container answered by its status alone: 0 on 204, 1 on
 * alt when the daemon says alt_says (NULL: anything), else -1. */
static int container_act(struct engine *g, const char *what, const char *method,
			 const char *path, long alt, const char *alt_says, struct err **e)
{
	struct answer a;
	int r;

	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, method, path, NULL, &a, e) < 0)
		return -1;
	if (a.status == 204)
		r = 0;
	else if (a.status == alt && (!alt_says || answer_says(&a, alt, alt_says)))
		r = 1;
	else
		r = answer_fail(g, what, &a, true, e);
	answer_clear(&a);
	return r;
}

int engine_container_start(struct engine *g, const char *id, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = api_path(g, "/containers/%s/start", id);
	/* 304: it runs already */
	return container_act(g, "start container", "POST", path, 304, NULL, e);
}

int engine_container_kill(struct engine *g, const char *id, int sig, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (sig < 1 || sig > 64)
		return err_set(e, ERR_CONFIG, 0, "kill container: signal %d is not valid", sig);
	path = api_path(g, "/containers/%s/kill?signal=%d", id, sig);
	/* a conflict is "not running" only when the daemon says so (a paused
	 * container is a conflict too, and it is running) */
	return container_act(g, "kill container", "POST", path, 409, "is not running", e);
}

int engine_container_remove(struct engine *g, const char *id, bool force, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = api_path(g, "/containers/%s?force=%d&v=1", id, force ? 1 : 0);
	return container_act(g, "remove container", "DELETE", path, 404, "No such container", e);
}
