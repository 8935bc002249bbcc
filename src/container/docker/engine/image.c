/* image.c: the Engine calls on images (see engine.h): inspect,
 * import a root filesystem from a tar with Dockerfile changes, list by
 * label, remove. An import answers 200 as soon as it begins and tells
 * its failure inside the stream that follows: the stream is read whole
 * (wire.c) and any error in it fails the call. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NO_SUCH_IMAGE "No such image"
#define CHANGES_MAX 64
#define CHANGE_MAX 4096

/* RootFS's layers and Config, into out: what the image holds and what
 * a container made from it takes, for a caller that checks it by
 * content. */
static int image_content(struct engine *g, const json_t *j, struct engine_image *out,
			 struct err **e)
{
	const char *what = "inspect image";
	const json_t *rootfs = json_object_get(j, "RootFS"), *config = json_object_get(j, "Config");
	const json_t *layers = json_object_get(rootfs, "Layers"), *l;
	const char *type = json_string_value(json_object_get(rootfs, "Type"));
	size_t i;

	if (!type || strcmp(type, "layers") != 0 || (layers && !json_is_array(layers)))
		return engine_shape_fail(g, what, "RootFS", e);
	if (config && !json_is_object(config) && !json_is_null(config))
		return engine_shape_fail(g, what, "Config", e);
	out->layers = calloc(1, sizeof(char *));
	out->config = json_is_object(config) ? json_deep_copy(config) : json_object();
	if (!out->layers || !out->config) {
		engine_image_clear(out);
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	json_array_foreach(layers, i, l) {
		if (!engine_image_id_ok(json_string_value(l))) {
			engine_image_clear(out);
			return engine_shape_fail(g, what, "RootFS.Layers", e);
		}
		if (strv_push(&out->layers, json_string_value(l)) < 0) {
			engine_image_clear(out);
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
		}
	}
	return 0;
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
	if (!engine_image_ref_ok(ref))
		return err_set(e, ERR_CONFIG, 0, "docker image reference is not valid");
	path = engine_api_path(g, "/images/%s/json", ref);
	j = engine_get_json(g, what, path, JSON_OBJECT, NO_SUCH_IMAGE, &gone, e);
	if (!j)
		return gone ? ENGINE_GONE : -1;
	if (!engine_image_id_ok(json_string_value(json_object_get(j, "Id"))))
		return engine_shape_fail(g, what, "Id", e);
	digests = json_object_get(j, "RepoDigests");
	if (digests && !json_is_array(digests) && !json_is_null(digests))
		return engine_shape_fail(g, what, "RepoDigests", e);
	if (image_content(g, j, out, e) < 0)
		return -1;
	out->id = strdup(json_string_value(json_object_get(j, "Id")));
	out->repo_digests = calloc(1, sizeof(char *));
	if (!out->id || !out->repo_digests) {
		engine_image_clear(out);
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	json_array_foreach(digests, i, d) {
		if (!engine_text_ok(json_string_value(d), 512)) {
			engine_image_clear(out);
			return engine_shape_fail(g, what, "RepoDigests", e);
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
	strv_free(i->layers);
	json_decref(i->config);
	*i = (struct engine_image){ 0 };
}

/* "&repo=R&tag=T" of a "name[:tag]" (the tag's colon is the one after
 * the last slash: "host:5000/name" has none), "" for NULL. */
static int import_tag(struct engine *g, const char *repo_tag, char **out, struct err **e)
{
	const char *what = "import image";
	_cleanup_free_ char *repo = NULL, *erepo = NULL, *etag = NULL;
	const char *slash, *colon, *tag = NULL;

	*out = NULL;
	if (!repo_tag)
		return (*out = strdup("")) ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (!engine_image_ref_ok(repo_tag) || strchr(repo_tag, '@'))
		return err_set(e, ERR_CONFIG, 0, "%s: `%s` is not a name:tag", what, repo_tag);
	slash = strrchr(repo_tag, '/');
	colon = strrchr(slash ? slash : repo_tag, ':');
	repo = colon ? strndup(repo_tag, (size_t)(colon - repo_tag)) : strdup(repo_tag);
	if (colon)
		tag = colon + 1;
	if (!repo)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	if (!repo[0] || (tag && !tag[0]))
		return err_set(e, ERR_CONFIG, 0, "%s: `%s` is not a name:tag", what, repo_tag);
	erepo = engine_escape(g, repo);
	etag = engine_escape(g, tag ? tag : "latest");
	if (!erepo || !etag || asprintf(out, "&repo=%s&tag=%s", erepo, etag) < 0) {
		*out = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	return 0;
}

/* "&changes=..." for each change line. The daemon parses them (and
 * refuses FROM, RUN and the like); cordon keeps them to single
 * printable lines. */
static int import_changes(struct engine *g, char *const *changes, char **out, struct err **e)
{
	const char *what = "import image";
	_cleanup_free_ char *acc = strdup("");
	size_t i;

	*out = NULL;
	for (i = 0; acc && changes && changes[i]; i++) {
		_cleanup_free_ char *esc = NULL;
		char *next = NULL;

		if (i >= CHANGES_MAX || !engine_text_ok(changes[i], CHANGE_MAX))
			return err_set(e, ERR_CONFIG, 0,
				       "%s: a change is one printable line (at most %d of %d bytes)",
				       what, CHANGES_MAX, CHANGE_MAX);
		esc = engine_escape(g, changes[i]);
		if (!esc || asprintf(&next, "%s&changes=%s", acc, esc) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
		free(acc);
		acc = next;
	}
	if (!acc)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	*out = steal_pointer(&acc);
	return 0;
}

/* The import's stream: 0 with *id (maybe NULL: the stream named none),
 * or -1 on an error in it. */
static int import_read(struct engine *g, const struct answer *a, char **id, struct err **e)
{
	const char *what = "import image";
	struct engine_stream_said said;

	*id = NULL;
	if (engine_stream_read(a->body.p ? a->body.p : "", a->body.n, &said) < 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: its answer is not a stream of JSON messages",
			       g->endpoint, what);
	if (said.error) {
		err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s`: %s: the daemon: %s",
			g->endpoint, what, said.error);
		engine_stream_said_clear(&said);
		return -1;
	}
	*id = steal_pointer(&said.id);
	engine_stream_said_clear(&said);
	return 0;
}

int engine_image_import(struct engine *g, const void *tar, size_t len, const char *repo_tag,
			char *const *changes, char **id, struct err **e)
{
	const char *what = "import image";
	_cleanup_free_ char *tag = NULL, *ch = NULL, *path = NULL, *got = NULL;
	struct engine_req r = { .method = "POST", .body = tar, .len = len,
				/* a form type would have the daemon read
				 * the tar as form fields */
				.type = "application/x-tar" };
	struct engine_image im;
	struct answer a;
	int found;

	*id = NULL;
	if (!tar || len == 0)
		return err_set(e, ERR_CONFIG, 0, "%s: no archive", what);
	if (import_tag(g, repo_tag, &tag, e) < 0 || import_changes(g, changes, &ch, e) < 0)
		return -1;
	path = engine_api_path(g, "/images/create?fromSrc=-%s%s", tag, ch);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	r.path = path;
	if (engine_send(g, &r, &a, e) < 0)
		return -1;
	if (a.status != 200) {
		engine_answer_fail(g, what, &a, true, e);
		engine_answer_clear(&a);
		return -1;
	}
	found = import_read(g, &a, &got, e);
	engine_answer_clear(&a);
	if (found < 0)
		return -1;
	if (got) {
		*id = steal_pointer(&got);
		return 0;
	}
	/* a daemon that did not say the ID: the tag says it, else nothing */
	if (!repo_tag)
		return engine_shape_fail(g, what, "the image's ID (status)", e);
	found = engine_image_inspect(g, repo_tag, &im, e);
	if (found == ENGINE_GONE)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: no image `%s` after the import",
			       g->endpoint, what, repo_tag);
	if (found < 0)
		return -1;
	*id = steal_pointer(&im.id);
	engine_image_clear(&im);
	return 0;
}

int engine_image_list(struct engine *g, char *const *labels, char ***ids, struct err **e)
{
	const char *what = "list images";
	_cleanup_free_ char *filters = NULL, *path = NULL;

	*ids = NULL;
	if (engine_list_filters(g, what, labels, &filters, e) < 0)
		return -1;
	path = engine_api_path(g, "/images/json?filters=%s", filters);
	if (!path)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	return engine_list_ids(g, what, path, engine_image_id_ok, ids, e);
}

int engine_image_remove(struct engine *g, const char *ref, bool force, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (!engine_image_ref_ok(ref))
		return err_set(e, ERR_CONFIG, 0, "docker image reference is not valid");
	path = engine_api_path(g, "/images/%s?force=%d&noprune=0", ref, force ? 1 : 0);
	/* 200 with what was untagged and deleted */
	return engine_act(g, "remove image", "DELETE", path, 200, 404, NO_SUCH_IMAGE, e);
}
