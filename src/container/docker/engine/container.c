/* container.c: the Engine calls on containers (see engine.h):
 * create (never started, warnings refused), inspect, list by label,
 * start, kill, size its terminal, remove, wait for an exit, and put a
 * tar into one. Gone is the daemon's own "No such container" only. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "lib/text.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NO_SUCH_CONTAINER "No such container"

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
	if (name && !engine_ref_ok(name))
		return err_set(e, ERR_CONFIG, 0, "docker container name is not valid");
	if (!json_is_object(config))
		return err_set(e, ERR_CONFIG, 0, "%s: the config is not an object", what);
	path = name ? engine_api_path(g, "/containers/create?name=%s", name)
		    : engine_api_path(g, "/containers/create");
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
			engine_answer_fail(g, what, &a, a.status == 404, e);
		engine_answer_clear(&a);
		return -1;
	}
	j = engine_answer_json(g, what, &a, JSON_OBJECT, e);
	engine_answer_clear(&a);
	if (!j)
		return -1;
	/* created; a container whose ID cannot be read is left to the
	 * caller's listing by its labels, any other is removed on failure */
	if (!engine_is_hex64(json_string_value(json_object_get(j, "Id"))))
		return engine_shape_fail(g, what, "Id", e);
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
		return engine_shape_fail(g, what, "Warnings", e);
	}
	return 0;
}

/* Fill c from an inspect answer, each field checked. */
static int container_read(struct engine *g, const char *ref, json_t *j,
			  struct engine_container *c, struct err **e)
{
	const char *what = "inspect container";
	json_t *state = json_object_get(j, "State"), *config = json_object_get(j, "Config");
	json_t *labels = json_object_get(config, "Labels");
	json_t *running = json_object_get(state, "Running"), *pid = json_object_get(state, "Pid");
	json_t *code = json_object_get(state, "ExitCode"), *oom = json_object_get(state, "OOMKilled");
	const char *id = json_string_value(json_object_get(j, "Id"));

	/* asked by its full ID, the answer must be about that one */
	if (!engine_is_hex64(id) || (engine_is_hex64(ref) && strcmp(id, ref) != 0))
		return engine_shape_fail(g, what, "Id", e);
	if (!json_is_object(state) || !json_is_boolean(running) || !json_is_integer(pid) ||
	    json_integer_value(pid) < 0 || !json_is_integer(code) ||
	    json_integer_value(code) < -2147483647 || json_integer_value(code) > 2147483647 ||
	    (oom && !json_is_boolean(oom)))
		return engine_shape_fail(g, what, "State", e);
	if (!json_is_object(config) || (labels && !json_is_null(labels) && !engine_strings_ok(labels)))
		return engine_shape_fail(g, what, "Config.Labels", e);
	c->id = strdup(id);
	c->running = json_is_true(running);
	c->pid = (long)json_integer_value(pid);
	c->exit_code = (int)json_integer_value(code);
	c->oom_killed = json_is_true(oom);
	c->labels = json_is_object(labels) ? json_incref(labels) : json_object();
	if (!c->id || !c->labels)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_take_text(g, what, j, "Name", 512, &c->name, e) < 0 ||
	    engine_take_text(g, what, j, "Image", 128, &c->image, e) < 0 ||
	    engine_take_text(g, what, state, "Status", 32, &c->status, e) < 0 ||
	    engine_take_text(g, what, state, "StartedAt", 64, &c->started_at, e) < 0 ||
	    engine_take_text(g, what, state, "FinishedAt", 64, &c->finished_at, e) < 0)
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
	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = engine_api_path(g, "/containers/%s/json", id);
	/* gone only on the daemon's own word */
	j = engine_get_json(g, what, path, JSON_OBJECT, NO_SUCH_CONTAINER, &gone, e);
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
	free(c->finished_at);
	json_decref(c->labels);
	*c = (struct engine_container){ 0 };
}

int engine_container_list(struct engine *g, char *const *labels, char ***ids, struct err **e)
{
	const char *what = "list containers";
	_cleanup_free_ char *filters = NULL, *path = NULL;

	*ids = NULL;
	if (engine_list_filters(g, what, labels, &filters, e) < 0)
		return -1;
	path = engine_api_path(g, "/containers/json?all=1&filters=%s", filters);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	return engine_list_ids(g, what, path, engine_is_hex64, ids, e);
}

int engine_container_start(struct engine *g, const char *id, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = engine_api_path(g, "/containers/%s/start", id);
	/* 304: it runs already */
	return engine_act(g, "start container", "POST", path, 204, 304, NULL, e);
}

int engine_container_kill(struct engine *g, const char *id, int sig, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (sig < 1 || sig > 64)
		return err_set(e, ERR_CONFIG, 0, "kill container: signal %d is not valid", sig);
	path = engine_api_path(g, "/containers/%s/kill?signal=%d", id, sig);
	/* a conflict is "not running" only when the daemon says so (a paused
	 * container is a conflict too, and it is running) */
	return engine_act(g, "kill container", "POST", path, 204, 409, "is not running", e);
}

int engine_container_resize(struct engine *g, const char *id, unsigned short rows,
			    unsigned short cols, struct err **e)
{
	const char *what = "resize container";
	_cleanup_free_ char *path = NULL;
	struct answer a;
	int r;

	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (rows == 0 || cols == 0)
		return err_set(e, ERR_CONFIG, 0, "%s: a size is at least 1x1", what);
	path = engine_api_path(g, "/containers/%s/resize?h=%u&w=%u", id, rows, cols);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (engine_call(g, "POST", path, NULL, &a, e) < 0)
		return -1;
	/* a container that is not (or no longer) running has no terminal
	 * to size: the daemon's conflict says so, as its 404 says gone */
	if (a.status == 200)
		r = 0;
	else if (engine_answer_says(&a, 404, NO_SUCH_CONTAINER) ||
		 engine_answer_says(&a, 409, "is not running"))
		r = 1;
	else
		r = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return r;
}

int engine_container_remove(struct engine *g, const char *id, bool force, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	path = engine_api_path(g, "/containers/%s?force=%d&v=1", id, force ? 1 : 0);
	return engine_act(g, "remove container", "DELETE", path, 204, 404, NO_SUCH_CONTAINER, e);
}

/* The wait's answer: {"StatusCode": n, "Error": null or {"Message": ""}}. */
static int wait_read(struct engine *g, const struct answer *a, int *code, struct err **e)
{
	const char *what = "wait for container";
	_cleanup_json_ json_t *j = engine_answer_json(g, what, a, JSON_OBJECT, e);
	json_t *sc = json_object_get(j, "StatusCode"), *error = json_object_get(j, "Error");
	const char *m = json_string_value(json_object_get(error, "Message"));

	if (!j)
		return -1;
	if (error && !json_is_null(error) && !json_is_object(error))
		return engine_shape_fail(g, what, "Error", e);
	if (m && m[0]) {
		_cleanup_free_ char *said = strndup(m, MESSAGE_MAX);

		if (said)
			text_printable(said, strlen(said) + 1);
		return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: the daemon: %s",
			       g->endpoint, what, said ? said : "?");
	}
	if (!json_is_integer(sc) || json_integer_value(sc) < -2147483647 ||
	    json_integer_value(sc) > 2147483647)
		return engine_shape_fail(g, what, "StatusCode", e);
	*code = (int)json_integer_value(sc);
	return ENGINE_WAIT_EXITED;
}

int engine_container_wait(struct engine *g, const char *id, const char *condition,
			  long timeout_s, int *code, struct err **e)
{
	const char *what = "wait for container";
	_cleanup_free_ char *path = NULL;
	struct engine_req r = { .method = "POST" };
	struct answer a;
	int ret;

	*code = -1;
	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (!condition ||
	    (strcmp(condition, "next-exit") != 0 && strcmp(condition, "not-running") != 0))
		return err_set(e, ERR_CONFIG, 0, "%s: the condition is next-exit or not-running",
			       what);
	if (timeout_s < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: a timeout is 0 (none) or seconds", what);
	path = engine_api_path(g, "/containers/%s/wait?condition=%s", id, condition);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	r.path = path;
	/* the daemon answers its head at once and the body at the exit: a
	 * wait lasts as long as the job. Without a timeout of the caller's
	 * it has none; a daemon that goes away still ends it (its socket
	 * closes; over tcp, keepalive finds a peer that vanished). */
	r.timeout = timeout_s > 0 ? timeout_s : ENGINE_NO_TIMEOUT;
	r.timeout_answers = true;
	if (engine_send(g, &r, &a, e) < 0)
		return -1;
	if (a.timed_out)
		ret = ENGINE_WAIT_TIMEOUT;
	else if (a.status == 200)
		ret = wait_read(g, &a, code, e);
	else if (engine_answer_says(&a, 404, NO_SUCH_CONTAINER))
		ret = ENGINE_WAIT_GONE;
	else
		ret = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return ret;
}

int engine_container_put_archive(struct engine *g, const char *id, const char *path,
				 const void *tar, size_t len, struct err **e)
{
	const char *what = "put archive into container";
	_cleanup_free_ char *esc = NULL, *url = NULL;
	struct engine_req r = { .method = "PUT", .body = tar, .len = len,
				.type = "application/x-tar" };
	struct answer a;
	int ret;

	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (!engine_text_ok(path, PATH_MAX_IN) || path[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "%s: the path is not absolute", what);
	if (!tar || len == 0)
		return err_set(e, ERR_CONFIG, 0, "%s: no archive", what);
	esc = engine_escape(g, path);
	/* a directory is never replaced by a file, nor a file by a
	 * directory: the tar adds to what is there */
	url = esc ? engine_api_path(g, "/containers/%s/archive?path=%s&noOverwriteDirNonDir=true",
				    id, esc)
		  : NULL;
	if (!url)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	r.path = url;
	if (engine_send(g, &r, &a, e) < 0)
		return -1;
	if (a.status == 200)
		ret = 0;
	else if (engine_answer_says(&a, 404, NO_SUCH_CONTAINER))
		ret = 1;
	else
		ret = engine_answer_fail(g, what, &a, true, e);
	engine_answer_clear(&a);
	return ret;
}
