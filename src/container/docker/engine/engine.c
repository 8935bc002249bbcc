/* engine.c: the Docker Engine API client (see engine.h): names as the
 * daemon allows them, the endpoint (a unix socket or plain tcp), the
 * transport (one curl handle, bounded and timed), the version agreed at
 * the ping, and the readings every call shares. What the daemon says is
 * checked field by field: an answer that does not have the shape expected
 * is an error, never a default. The calls themselves live in
 * container.c, image.c, net.c and attach.c. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/strv.h"
#include "lib/text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#define HOST_NAME_MAX_IN 253
#define TCP_PORT_DEFAULT 2375 /* the CLI's, for tcp:// without TLS */
#define KEEPALIVE_IDLE 30L    /* seconds: a daemon gone quiet is found */
#define KEEPALIVE_INTERVAL 10L

/* --- names -------------------------------------------------------------- */

bool engine_ref_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	return n > 0 && n <= REF_MAX && strspn(s, ENGINE_ALNUM) > 0 &&
	       strspn(s, ENGINE_ALNUM "_.-") == n;
}

bool engine_image_ref_ok(const char *s)
{
	size_t n = s ? strlen(s) : 0;

	/* so the daemon's router sees the path cordon meant */
	return n > 0 && n <= REF_MAX && strspn(s, ENGINE_ALNUM) > 0 && s[n - 1] != '/' &&
	       !strstr(s, "..") && !strstr(s, "//") && strspn(s, ENGINE_ALNUM "_.-/:@") == n;
}

/* (engine_is_hex64 and engine_image_id_ok are in wire.c, which needs
 * them and links alone into its tests) */

/* What a daemon or a file wrote, fit to be kept and printed. */
bool engine_text_ok(const char *s, size_t max)
{
	size_t i;

	for (i = 0; s && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			return false;
	return s && i > 0 && i <= max;
}

bool engine_strings_ok(const json_t *obj)
{
	const char *k;
	json_t *v;

	if (!obj)
		return true;
	if (!json_is_object(obj))
		return false;
	/* (jansson's iteration takes no const object) */
	json_object_foreach((json_t *)obj, k, v)
		if (!json_is_string(v))
			return false;
	return true;
}

/* --- transport -------------------------------------------------------------- */

/* Every socket curl opens for the engine is close-on-exec: the daemon
 * starts children, and a socket of the Docker daemon is root. */
static curl_socket_t open_cloexec(void *arg, curlsocktype purpose, struct curl_sockaddr *addr)
{
	return socket(addr->family, addr->socktype | SOCK_CLOEXEC, addr->protocol);
}

void engine_curl_common(struct engine *g, CURL *k)
{
	if (!g->tcp)
		curl_easy_setopt(k, CURLOPT_UNIX_SOCKET_PATH, g->sock);
	/* never a proxy from the environment: the daemon is where it is */
	curl_easy_setopt(k, CURLOPT_PROXY, "");
	curl_easy_setopt(k, CURLOPT_NOPROXY, "*");
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http");
	curl_easy_setopt(k, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_OPENSOCKETFUNCTION, open_cloexec);
	if (g->tcp) {
		/* a wait may last as long as a job: a peer that vanished
		 * without a word must still end it */
		curl_easy_setopt(k, CURLOPT_TCP_KEEPALIVE, 1L);
		curl_easy_setopt(k, CURLOPT_TCP_KEEPIDLE, KEEPALIVE_IDLE);
		curl_easy_setopt(k, CURLOPT_TCP_KEEPINTVL, KEEPALIVE_INTERVAL);
	}
}

int engine_send(struct engine *g, const struct engine_req *r, struct answer *a, struct err **e)
{
	_cleanup_free_ char *url = NULL, *type = NULL;
	struct curl_slist *h = NULL, *h2;
	long timeout = r->timeout == 0 ? g->timeout : r->timeout;
	CURL *k = g->curl;
	CURLcode res;

	*a = (struct answer){ .body = { .max = ENGINE_ANSWER_MAX } };
	if (asprintf(&url, "%s%s", g->base, r->path) < 0 ||
	    asprintf(&type, "Content-Type: %s", r->type ? r->type : "application/json") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker request");
	/* a request body must go at once, not after a 100-continue */
	h = curl_slist_append(NULL, "Expect:");
	h2 = h ? curl_slist_append(h, type) : NULL;
	if (!h2) {
		curl_slist_free_all(h);
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker request");
	}
	/* a reset keeps the open connection for the next call */
	curl_easy_reset(k);
	curl_easy_setopt(k, CURLOPT_URL, url);
	engine_curl_common(g, k);
	/* 0 is curl's "none" */
	curl_easy_setopt(k, CURLOPT_TIMEOUT, timeout == ENGINE_NO_TIMEOUT ? 0L : timeout);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT,
			 timeout > 0 && timeout < CONNECT_TIMEOUT ? timeout : CONNECT_TIMEOUT);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, bbuf_take);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, &a->body);
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "DELETE") != 0) {
		/* POST and PUT carry their body (maybe empty); PUT is a
		 * POST by another name for curl */
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, r->body ? (const char *)r->body : "");
		curl_easy_setopt(k, CURLOPT_POSTFIELDSIZE_LARGE,
				 (curl_off_t)(r->body ? r->len : 0));
	}
	if (strcmp(r->method, "GET") != 0 && strcmp(r->method, "POST") != 0)
		curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, r->method);
	res = curl_easy_perform(k);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, NULL);
	curl_slist_free_all(h);
	if (res == CURLE_OK || res == CURLE_OPERATION_TIMEDOUT)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &a->status);
	if (res == CURLE_OPERATION_TIMEDOUT && r->timeout_answers && a->status == 200) {
		a->timed_out = true;
		return 0;
	}
	if (res != CURLE_OK || a->status < 100) {
		bool over = a->body.over;

		engine_answer_clear(a);
		if (over)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "docker daemon `%s`: its answer is larger than %zu bytes",
				       g->endpoint, (size_t)ENGINE_ANSWER_MAX);
		return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s` cannot be asked: %s",
			       g->endpoint, curl_easy_strerror(res));
	}
	return 0;
}

int engine_call(struct engine *g, const char *method, const char *path, const char *body,
		struct answer *a, struct err **e)
{
	struct engine_req r = { .method = method, .path = path, .body = body,
				.len = body ? strlen(body) : 0 };

	return engine_send(g, &r, a, e);
}

void engine_answer_clear(struct answer *a)
{
	free(a->body.p);
	a->body.p = NULL;
}

char *engine_answer_message(const struct answer *a)
{
	struct err *pe = NULL;
	/* strictly: of two "message" keys, neither is the daemon's word */
	_cleanup_json_ json_t *j = a->body.p ? json_parse_strict(a->body.p, a->body.n, &pe) : NULL;
	const char *m = json_string_value(json_object_get(j, "message"));
	char *out;

	err_free(pe);
	if (!m)
		return NULL;
	out = strndup(m, MESSAGE_MAX);
	if (out)
		text_printable(out, strlen(out) + 1);
	return out;
}

/* A "not there" is taken only so: any other 404 (a route the daemon does
 * not know, something else on the socket) is not a thing being gone. */
bool engine_answer_says(const struct answer *a, long status, const char *words)
{
	_cleanup_free_ char *m = a->status == status ? engine_answer_message(a) : NULL;

	return m && strstr(m, words);
}

int engine_answer_fail(struct engine *g, const char *what, const struct answer *a,
		       bool with_message, struct err **e)
{
	_cleanup_free_ char *m = with_message ? engine_answer_message(a) : NULL;

	return err_set(e, a->status == 400 ? ERR_CONFIG : ERR_UNAVAILABLE, 0,
		       "docker daemon `%s`: %s: HTTP %ld%s%s", g->endpoint, what, a->status,
		       m ? ": " : "", m ? m : "");
}

json_t *engine_answer_json(struct engine *g, const char *what, const struct answer *a,
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

int engine_shape_fail(struct engine *g, const char *what, const char *field, struct err **e)
{
	return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: %s is missing or not valid",
		       g->endpoint, what, field);
}

int engine_take_text(struct engine *g, const char *what, json_t *obj, const char *field,
		     size_t max, char **out, struct err **e)
{
	const char *s = json_string_value(json_object_get(obj, field));

	if (!engine_text_ok(s, max))
		return engine_shape_fail(g, what, field, e);
	*out = strdup(s);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
}

json_t *engine_get_json(struct engine *g, const char *what, const char *path, json_type type,
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
		if (no_such && gone && engine_answer_says(&a, 404, no_such))
			*gone = true;
		else
			engine_answer_fail(g, what, &a, true, e);
		engine_answer_clear(&a);
		return NULL;
	}
	j = engine_answer_json(g, what, &a, type, e);
	engine_answer_clear(&a);
	return j;
}

char *engine_api_path(const struct engine *g, const char *fmt, ...)
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

char *engine_escape(struct engine *g, const char *s)
{
	char *esc = curl_easy_escape(g->curl, s, 0);
	char *out = esc ? strdup(esc) : NULL;

	curl_free(esc);
	return out;
}

int engine_list_filters(struct engine *g, const char *what, char *const *labels, char **out,
			struct err **e)
{
	_cleanup_json_ json_t *f = json_object(), *arr = json_array();
	_cleanup_free_ char *text = NULL;

	*out = NULL;
	if (!labels || !labels[0])
		return err_set(e, ERR_CONFIG, 0, "%s: no label to list by", what);
	if (!f || !arr)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	for (size_t i = 0; labels[i]; i++) {
		if (!engine_text_ok(labels[i], LABEL_MAX) || labels[i][0] == '=')
			return err_set(e, ERR_CONFIG, 0, "%s: a label is not valid", what);
		if (json_array_push_string(arr, labels[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	if (json_object_set(f, "label", arr) < 0 || !(text = json_dumps(f, JSON_COMPACT)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	*out = engine_escape(g, text);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
}

int engine_act(struct engine *g, const char *what, const char *method, const char *path,
	       long ok, long alt, const char *alt_says, struct err **e)
{
	struct answer a;
	int r;

	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, method, path, NULL, &a, e) < 0)
		return -1;
	if (a.status == ok)
		r = 0;
	else if (a.status == alt && (!alt_says || engine_answer_says(&a, alt, alt_says)))
		r = 1;
	else
		r = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return r;
}

int engine_list_ids(struct engine *g, const char *what, const char *path,
		    bool (*ok)(const char *), char ***ids, struct err **e)
{
	_cleanup_json_ json_t *j = NULL;
	_cleanup_strv_ char **out = calloc(1, sizeof(char *));
	json_t *c;
	size_t i;

	*ids = NULL;
	if (!out)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	j = engine_get_json(g, what, path, JSON_ARRAY, NULL, NULL, e);
	if (!j)
		return -1;
	/* every entry must be one: a list with one left out is wrong */
	json_array_foreach(j, i, c) {
		const char *id = json_string_value(json_object_get(c, "Id"));

		if (!ok(id))
			return engine_shape_fail(g, what, "Id", e);
		if (strv_push(&out, id) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	*ids = steal_pointer(&out);
	return 0;
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
	_cleanup_json_ json_t *j =
		engine_get_json(g, "version", "/version", JSON_OBJECT, NULL, NULL, e);
	unsigned long major = 0, minor = 0;

	if (!j)
		return -1;
	if (api_parse(json_string_value(json_object_get(j, "MinAPIVersion")), &major, &minor) < 0)
		return engine_shape_fail(g, "version", "MinAPIVersion", e);
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
	engine_answer_clear(&a);
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

/* tcp://host[:port][/]: a name (letters, digits, '.', '-'), an IPv4
 * address or a bracketed IPv6 one; the port 2375 when none is given, as
 * the CLI has it. What goes into the URL is checked here, so nothing in
 * the endpoint can add a user, a path or a query to it. */
static int endpoint_tcp(struct engine *g, const char *rest, struct err **e)
{
	char host[HOST_NAME_MAX_IN + 1], port_text[8] = "";
	unsigned long port = TCP_PORT_DEFAULT;
	const char *end;
	size_t n;
	bool v6 = rest[0] == '[';

	if (v6) {
		end = strchr(rest, ']');
		n = end ? (size_t)(end - rest - 1) : 0;
		if (!end || n == 0 || n > 45 || strspn(rest + 1, "0123456789abcdefABCDEF:.") != n)
			goto bad;
		memcpy(host, rest + 1, n);
		end++;
	} else {
		n = strspn(rest, ENGINE_ALNUM ".-");
		if (n == 0 || n > HOST_NAME_MAX_IN || strspn(rest, ENGINE_ALNUM) == 0)
			goto bad;
		memcpy(host, rest, n);
		end = rest + n;
	}
	host[n] = '\0';
	if (end[0] == ':') {
		size_t digits = strspn(end + 1, "0123456789");

		if (digits == 0 || digits >= sizeof(port_text))
			goto bad;
		memcpy(port_text, end + 1, digits);
		if (num_parse_ulong(port_text, 65535, &port) < 0 || port == 0)
			goto bad;
		end += 1 + digits;
	}
	if (strcmp(end, "") != 0 && strcmp(end, "/") != 0)
		goto bad;
	g->tcp = true;
	snprintf(g->host, sizeof(g->host), v6 ? "[%s]:%lu" : "%s:%lu", host, port);
	snprintf(g->base, sizeof(g->base), "http://%s", g->host);
	return 0;
bad:
	return err_set(e, ERR_CONFIG, 0,
		       "docker endpoint: a tcp endpoint is tcp://host[:port] (a name, an IPv4 "
		       "address or a bracketed IPv6 one)");
}

static int endpoint_set(struct engine *g, const char *endpoint, struct err **e)
{
	const char *path;

	if (endpoint && strncmp(endpoint, "tcp://", 6) == 0)
		return endpoint_tcp(g, endpoint + 6, e);
	if (endpoint && strncmp(endpoint, "https://", 8) == 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker endpoint https://...: TLS is not built into cordon (use "
			       "the daemon's unix socket, or plain tcp:// on a network you trust)");
	if (!endpoint || strncmp(endpoint, "unix://", 7) != 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker endpoint: only unix:///path and tcp://host:port endpoints "
			       "are supported");
	path = endpoint + 7;
	if (path[0] != '/' || !engine_text_ok(path, sizeof(g->sock) - 1))
		return err_set(e, ERR_CONFIG, 0,
			       "docker endpoint: a unix socket's path is absolute, at most %zu bytes",
			       sizeof(g->sock) - 1);
	snprintf(g->sock, sizeof(g->sock), "%s", path);
	snprintf(g->base, sizeof(g->base), "http://docker");
	snprintf(g->host, sizeof(g->host), "docker");
	return 0;
}

int engine_open(const char *endpoint, struct engine **out, struct err **e)
{
	struct engine *g;

	*out = NULL;
	g = calloc(1, sizeof(*g));
	if (!g)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker endpoint");
	if (endpoint_set(g, endpoint, e) < 0) {
		engine_close(g);
		return -1;
	}
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

/* --- the daemon ------------------------------------------------------------- */

int engine_info(struct engine *g, struct engine_info *out, struct err **e)
{
	const char *what = "info";
	_cleanup_free_ char *path = engine_api_path(g, "/info");
	_cleanup_json_ json_t *j = NULL;

	*out = (struct engine_info){ 0 };
	j = engine_get_json(g, what, path, JSON_OBJECT, NULL, NULL, e);
	if (!j || engine_take_text(g, what, j, "ID", 256, &out->id, e) < 0 ||
	    engine_take_text(g, what, j, "ServerVersion", 64, &out->version, e) < 0) {
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
