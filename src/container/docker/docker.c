/* docker.c: the Docker provider's plan and create (docker.h). The plan
 * holds everything the containers are made with, so that the digest
 * covers it; create makes them from the recorded plan alone, not
 * started, and leaves nothing behind when it fails. */
#include "container/docker/docker.h"

#include "container/docker/internal.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/sha256.h"
#include "lib/strv.h"
#include "plan/container.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int docker_open(const json_t *config, struct engine **g, char **endpoint, struct err **e)
{
	const char *ep = json_string_value(json_object_get(config, "endpoint"));
	const char *ctx = json_string_value(json_object_get(config, "context"));
	_cleanup_free_ char *dir = NULL, *found = NULL;

	if (ep)
		found = strdup(ep);
	else if (!ctx || strcmp(ctx, "default") == 0)
		found = strdup(ENGINE_DEFAULT_ENDPOINT);
	else if (engine_config_dir(&dir, e) < 0 ||
		 engine_context_endpoint(dir, ctx, &found, e) < 0)
		return err_wrap(e, "docker context `%s`", ctx);
	if (!found)
		return err_set(e, ERR_INTERNAL, ENOMEM, "endpoint");
	if (engine_open(found, g, e) < 0)
		return -1;
	if (endpoint)
		*endpoint = steal_pointer(&found);
	return 0;
}

/* What a container made from a gateway image takes from its Config: only
 * the entrypoint and the label cordon gave it. Anything else (an
 * environment, volumes, a healthcheck, a working directory, a user, a
 * stop signal, a key this cordon does not know) set to anything but
 * empty is an image cordon did not make. */
static bool gateway_config_ours(const json_t *config, const char *hex)
{
	const char *k;
	json_t *v;

	json_object_foreach((json_t *)config, k, v) {
		if (strcmp(k, "Entrypoint") == 0) {
			const char *ep = json_string_value(json_array_get(v, 0));

			if (json_array_size(v) != 1 || !ep || strcmp(ep, "/cordon") != 0)
				return false;
		} else if (strcmp(k, "Labels") == 0) {
			const char *have = json_string_value(json_object_get(v, DOCKER_LABEL_RUNTIME));

			if (json_object_size(v) != 1 || !have || strcmp(have, hex) != 0)
				return false;
		} else if (!(json_is_null(v) || json_is_false(v) ||
			     (json_is_string(v) && !json_string_length(v)) ||
			     (json_is_array(v) && !json_array_size(v)) ||
			     (json_is_object(v) && !json_object_size(v)))) {
			return false;
		}
	}
	return true;
}

/* Is this image cordon's gateway for this runtime, by what it holds: one
 * layer, whose diff ID is the digest of the tar cordon makes of its
 * static binary (so its filesystem is that binary alone), and a Config of
 * cordon's own? A label says nothing: any image can carry it (one built
 * FROM the gateway image, the agent's image relabelled). */
static bool gateway_image_ours(const struct engine_image *img, const char *layer,
			       const char *hex)
{
	return img->layers && img->layers[0] && !img->layers[1] &&
	       strcmp(img->layers[0], layer) == 0 && gateway_config_ours(img->config, hex);
}

int docker_gateway_image(struct engine *g, bool make, char **id, unsigned int *others,
			 struct err **e)
{
	_cleanup_free_ char *bytes = NULL, *label = NULL, *tag = NULL, *lchange = NULL,
			   *made = NULL;
	_cleanup_strv_ char **ids = NULL;
	_cleanup_free_ void *tar = NULL;
	struct engine_image img = { 0 };
	size_t len = 0, tlen = 0;
	char hex[65], layer[7 + SHA256_HEX_LEN + 1] = "sha256:";
	int r;

	*id = NULL;
	if (others)
		*others = 0;
	if (container_runtime(&bytes, &len, hex, e) < 0)
		return -1;
	/* the image is the binary alone: no shell, no libraries, nothing
	 * pulled; the tar of it is the same bytes each time (engine.h), so
	 * its digest is the layer's diff ID */
	struct engine_tar_file f = { .name = "cordon", .mode = 0555, .data = bytes, .len = len };
	if (engine_tar_build(&f, 1, 0, &tar, &tlen, e) < 0)
		return -1;
	if (sha256_hex(tar, tlen, layer + 7) < 0)
		return err_set(e, ERR_INTERNAL, 0, "the gateway image's digest");
	if (asprintf(&label, "%s=%s", DOCKER_LABEL_RUNTIME, hex) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway image");
	if (asprintf(&tag, "cordon-gateway:%.12s", hex) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway image");
	/* the name gateway-image gives it first, judged by content as any
	 * other: images dated ahead that carry the label cannot push it out
	 * of the candidates below */
	r = engine_image_inspect(g, tag, &img, e);
	if (r < 0)
		return err_wrap(e, "the gateway image `%s`", tag);
	if (r == ENGINE_FOUND && gateway_image_ours(&img, layer, hex)) {
		*id = strdup(img.id);
		engine_image_clear(&img);
		return *id ? ENGINE_FOUND : err_set(e, ERR_INTERNAL, ENOMEM, "gateway image");
	}
	engine_image_clear(&img);
	/* the label only narrows the search; each image is judged by content,
	 * the newest DOCKER_GATEWAY_CANDIDATES (the daemon lists the newest
	 * first, by a date the image's maker wrote; past them, a launch would
	 * wait on as many inspects as there are images carrying the label) */
	char *const want[] = { label, NULL };
	if (engine_image_list(g, want, &ids, e) < 0)
		return err_wrap(e, "the gateway image");
	for (size_t i = 0; i < DOCKER_GATEWAY_CANDIDATES && ids[i]; i++) {
		r = engine_image_inspect(g, ids[i], &img, e);
		if (r < 0)
			return err_wrap(e, "the gateway image `%.19s`", ids[i]);
		bool ours = r == ENGINE_FOUND && gateway_image_ours(&img, layer, hex);
		engine_image_clear(&img);
		if (ours) {
			*id = strdup(ids[i]);
			return *id ? ENGINE_FOUND : err_set(e, ERR_INTERNAL, ENOMEM, "gateway image");
		}
		if (r == ENGINE_FOUND && others)
			(*others)++;
	}
	if (!make)
		return ENGINE_GONE;
	if (asprintf(&lchange, "LABEL %s=%s", DOCKER_LABEL_RUNTIME, hex) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "gateway image");
	char *const changes[] = { lchange, "ENTRYPOINT [\"/cordon\"]", NULL };
	if (engine_image_import(g, tar, tlen, tag, changes, &made, e) < 0)
		return err_wrap(e, "make the gateway image");
	/* what the daemon made, judged as any other: never taken on its word */
	r = engine_image_inspect(g, made, &img, e);
	if (r < 0)
		return err_wrap(e, "the gateway image made");
	bool ours = r == ENGINE_FOUND && gateway_image_ours(&img, layer, hex);
	engine_image_clear(&img);
	if (!ours)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "the gateway image the daemon made (`%.19s`) does not hold what "
			       "cordon gave it",
			       made);
	*id = steal_pointer(&made);
	return ENGINE_FOUND;
}

/* The binding's config, as the host checked it at load: the image pinned
 * by digest or ID, checked again here. */
static int config_image(const json_t *c, const char **image, struct err **e)
{
	*image = json_string_value(json_object_get(c, "image"));
	if (!*image || !container_image_pinned(*image))
		return err_set(e, ERR_CONFIG, 0,
			       "container.image: must be pinned: an image ID (sha256:...) or "
			       "name@sha256:<digest>");
	return 0;
}

/* <state>/containers/docker/{empty,empty-file}: what covers a deny. */
static int covers(const char *state, char **dir, char **file, struct err **e)
{
	_cleanup_free_ char *base = NULL;
	_cleanup_close_ int sfd = -1, dfd = -1, ffd = -1;

	if (asprintf(&base, "%s/containers/docker", state) < 0 ||
	    !(*dir = fs_path_join(base, "empty")) || !(*file = fs_path_join(base, "empty-file")))
		return err_set(e, ERR_INTERNAL, ENOMEM, "covers");
	sfd = fs_open_nofollow(AT_FDCWD, state, O_PATH | O_DIRECTORY, 0);
	if (sfd < 0 || (dfd = fs_mkdirs_beneath(sfd, "containers/docker/empty", 0755, e)) < 0)
		return sfd < 0 ? err_set(e, ERR_UNAVAILABLE, errno, "state `%s`", state) : -1;
	close(dfd);
	dfd = fs_open_nofollow(AT_FDCWD, *dir, O_RDONLY | O_DIRECTORY, 0);
	if (dfd < 0 || fchmod(dfd, 0555) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", *dir);
	ffd = fs_open_nofollow(AT_FDCWD, base, O_PATH | O_DIRECTORY, 0);
	if (ffd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", base);
	int fd = openat(ffd, "empty-file", O_WRONLY | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0444);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", *file);
	struct stat st;
	int bad = fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size != 0 ||
		  fchmod(fd, 0444) < 0;
	close(fd);
	return bad ? err_set(e, ERR_UNAVAILABLE, 0, "`%s` is not an empty file", *file) : 0;
}

/* Doctor's checks before a plan: a pass for this endpoint, daemon,
 * runtime and gateway image (by ID: its content) stands
 * DOCKER_DOCTOR_PASS_S, recorded in the provider's dir of the state dir;
 * otherwise they run (a few seconds), and a failure refuses the launch
 * naming the check. The pass is read back as hostile: strict JSON. */
#define DOCKER_DOCTOR_PASS_S 600
static int doctor_passed(const json_t *config, const char *state, const char *endpoint,
			 const char *daemon, const char *runtime, const char *gateway,
			 struct err **e)
{
	_cleanup_free_ char *dir = NULL, *buf = NULL, *text = NULL;
	_cleanup_close_ int dfd = -1;
	_cleanup_json_ json_t *pass = NULL, *report = NULL;
	long long now = (long long)time(NULL);
	struct err *perr = NULL;
	size_t i, len = 0;
	json_t *c;

	if (asprintf(&dir, "%s/containers/docker", state) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "doctor");
	dfd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", dir);
	if (endpoint && daemon && runtime && gateway &&
	    fs_read_file(dfd, "doctor-pass.json", 4096, &buf, &len, NULL) == 0 &&
	    (pass = json_parse_strict(buf, len, &perr))) {
		json_int_t at = json_integer_value(json_object_get(pass, "time"));
		const char *pe = json_string_value(json_object_get(pass, "endpoint"));
		const char *pd = json_string_value(json_object_get(pass, "daemon"));
		const char *pr = json_string_value(json_object_get(pass, "runtime"));
		const char *pg = json_string_value(json_object_get(pass, "gateway_image"));

		if (pe && pd && pr && pg && strcmp(pe, endpoint) == 0 && strcmp(pd, daemon) == 0 &&
		    strcmp(pr, runtime) == 0 && strcmp(pg, gateway) == 0 && at <= now &&
		    now - at < DOCKER_DOCTOR_PASS_S)
			return 0;
	}
	/* no pass, or not one to read: the checks run */
	err_free(perr);
	report = docker_doctor(config, state, e);
	if (!report)
		return -1;
	json_array_foreach(json_object_get(report, "checks"), i, c) {
		const char *st = json_string_value(json_object_get(c, "status"));

		if (!st || strcmp(st, "pass") != 0)
			return err_set(e, ERR_UNAVAILABLE, 0, "docker doctor: %s: %s",
				       json_string_value(json_object_get(c, "id")),
				       json_string_value(json_object_get(c, "detail")));
	}
	if (!json_is_true(json_object_get(report, "ready")))
		return err_set(e, ERR_UNAVAILABLE, 0, "docker doctor: not ready");
	json_decref(pass);
	pass = json_pack("{s:s, s:s, s:s, s:s, s:I}", "endpoint", endpoint, "daemon", daemon,
			 "runtime", runtime, "gateway_image", gateway, "time", (json_int_t)now);
	text = pass ? json_dumps(pass, JSON_COMPACT) : NULL;
	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "doctor");
	return fs_write_atomic(dfd, "doctor-pass.json", text, strlen(text), 0600, false, e);
}

json_t *docker_last_pass(const char *state)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_json_ json_t *pass = NULL;
	struct err *e = NULL;
	long long now = (long long)time(NULL), at = 0;

	if (asprintf(&path, "%s/containers/docker/doctor-pass.json", state) < 0)
		return NULL;
	size_t len = 0;

	if (fs_read_file(AT_FDCWD, path, 4096, &buf, &len, &e) == 0 &&
	    (pass = json_parse_strict(buf, len, &e)))
		at = json_integer_value(json_object_get(pass, "time"));
	err_free(e);
	bool fresh = at > 0 && at <= now && now - at < DOCKER_DOCTOR_PASS_S;
	return json_pack("{s:s, s:b, s:s, s:s?, s:s?}", "provider", "docker", "ready", fresh, "detail",
			 fresh ? "the Docker checks passed in the last ten minutes"
			       : "no pass of the Docker checks in the last ten minutes: a launch "
				 "runs them, and `cordon docker doctor` shows them",
			 "endpoint", json_string_value(json_object_get(pass, "endpoint")), "daemon",
			 json_string_value(json_object_get(pass, "daemon")));
}

/* cinit's argv: the runtime, its Landlock layer, the command. */
static int runtime_argv(const struct grant *g, const char *home, char *const *cmd, char ***out,
			struct err **e)
{
	_cleanup_strv_ char **v = NULL, **denies = NULL, **exceptions = NULL;
	int r = strv_push(&v, DOCKER_RUNTIME_PATH) < 0 || strv_push(&v, "cinit") < 0 ||
		strv_push(&v, "--run") < 0 || strv_push(&v, g->run_dir) < 0 ||
		strv_push(&v, "--channel") < 0 || strv_push(&v, DOCKER_CHANNEL_SOCK) < 0;

	for (size_t i = 0; !r && i < g->n_rules; i++)
		if (g->rules[i].kind == GRANT_WRITE)
			r = strv_push(&v, "--write") < 0 || strv_push(&v, g->rules[i].path) < 0;
	if (!r)
		r = strv_push(&v, "--write") < 0 || strv_push(&v, "/tmp") < 0;
	/* the job's home, which the container mounts read-write */
	if (!r && home)
		r = strv_push(&v, "--write") < 0 || strv_push(&v, home) < 0;
	if (!r && grant_read_side(g, true, &denies, &exceptions, e) < 0)
		return -1;
	for (size_t i = 0; !r && denies && denies[i]; i++)
		r = strv_push(&v, "--deny") < 0 || strv_push(&v, denies[i]) < 0;
	for (size_t i = 0; !r && exceptions && exceptions[i]; i++)
		r = strv_push(&v, "--read") < 0 || strv_push(&v, exceptions[i]) < 0;
	if (!r && g->unix_sockets_all)
		r = strv_push(&v, "--unix-all") < 0;
	if (!r)
		r = strv_push(&v, "--") < 0;
	for (size_t i = 0; !r && cmd[i]; i++)
		r = strv_push(&v, cmd[i]) < 0;
	if (r)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker plan");
	*out = steal_pointer(&v);
	return 0;
}

static int docker_plan(const struct grant *g, const struct plan_paths *paths,
		       const struct provider_launch *cl, struct plan *p, struct err **e)
{
	_cleanup_engine_ struct engine *eng = NULL;
	_cleanup_free_ char *endpoint = NULL, *gw = NULL, *edir = NULL, *efile = NULL,
			   *bytes = NULL, *summary = NULL;
	_cleanup_json_ json_t *mounts = NULL;
	struct engine_info info = { 0 };
	struct engine_image img = { 0 };
	const char *image;
	char **argv = NULL, hex[65];
	size_t len = 0;
	int r;

	if (config_image(cl->config, &image, e) < 0)
		return -1;
	/* the grant's own refusals first, before the daemon is asked */
	struct container_mount_input mi = { .g = g, .record_dir = NULL,
					    .toolbelt_dir = cl->toolbelt_dir, .home = cl->home };
	if (covers(cl->state_dir, &edir, &efile, e) < 0)
		return -1;
	mi.empty_dir = edir;
	mi.empty_file = efile;
	if (container_mounts(&mi, &mounts, e) < 0)
		return -1;
	if (container_runtime(&bytes, &len, hex, e) < 0)
		return -1;
	if (docker_open(cl->config, &eng, &endpoint, e) < 0)
		return -1;
	if (engine_info(eng, &info, e) < 0)
		return -1;
	r = engine_image_inspect(eng, image, &img, e);
	if (r == ENGINE_GONE)
		err_set(e, ERR_UNAVAILABLE, 0, "container.image: `%s` is not on the daemon", image);
	if (r != ENGINE_FOUND)
		goto out;
	r = docker_gateway_image(eng, false, &gw, NULL, e);
	if (r == ENGINE_GONE)
		err_set(e, ERR_UNAVAILABLE, 0,
			"no gateway image for this cordon on the daemon (run `cordon docker "
			"gateway-image`)");
	if (r != ENGINE_FOUND)
		goto out;
	r = -1;
	if (doctor_passed(cl->config, cl->state_dir, endpoint, info.id, hex, gw, e) < 0)
		goto out;
	if (runtime_argv(g, cl->home, p->argv, &argv, e) < 0)
		goto out;
	strv_free(p->argv);
	p->argv = argv;
	json_t *lim = json_pack("{s:I, s:I, s:I}", "pids", (json_int_t)g->limits.pids, "memory",
				(json_int_t)g->limits.memory, "cpu_millis",
				(json_int_t)g->limits.cpu_millis);
	json_t *c = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:o, s:o, s:s, s:i, s:i}",
			      "provider", "docker", "endpoint", endpoint, "daemon", info.id,
			      "image", img.id, "gateway_image", gw, "runtime", hex, "network",
			      "none", "limits", lim, "mounts", json_incref(mounts), "record_dir",
			      paths->record_dir, "uid", (int)getuid(), "gid", (int)getgid());
	if (c && cl->toolbelt_dir)
		json_object_set_new(c, "toolbelt_dir", json_string(cl->toolbelt_dir));
	/* an attach: a terminal (and no toolbelt: the launch names none) */
	if (c && cl->terminal)
		json_object_set_new(c, "terminal", json_true());
	/* the job's home: the command's HOME and claude's config directory */
	if (c && cl->home)
		json_object_set_new(c, "home", json_string(cl->home));
	if (asprintf(&summary, "docker %.19s", img.id) < 0) {
		json_decref(c);
		err_set(e, ERR_INTERNAL, ENOMEM, "docker plan");
		goto out;
	}
	r = container_plan_part(p, c, summary, e);
out:
	engine_info_clear(&info);
	engine_image_clear(&img);
	return r < 0 ? -1 : 0;
}

static int docker_create_op(const struct grant *g, const struct plan *p,
			    const struct plan_paths *paths, const struct provider_launch *pl,
			    struct provider_run **run, json_t **pin, struct err **e)
{
	return container_run_create(docker_create, docker_discard, p, paths, pl, run, pin, e);
}

static int docker_wait(struct provider_run *run, struct provider_exit *x, struct err **e)
{
	return container_run_wait(docker_start, run, x, e);
}

static void docker_discard_op(struct provider_run *run)
{
	container_run_discard(docker_discard, run);
}

/* A daemon's doctor never waits on a Docker daemon: the last pass of the
 * checks a launch ran. */
static json_t *docker_doctor_op(const json_t *config, const char *state_dir)
{
	return docker_last_pass(state_dir);
}

const struct provider docker_provider = {
	.name = "docker",
	.kind = PROVIDER_CONTAINER,
	.plan = docker_plan,
	.create = docker_create_op,
	.wait = docker_wait,
	.discard = docker_discard_op,
	.release = container_run_release,
	.inspect = docker_inspect,
	.list = docker_list,
	.stop = docker_stop,
	.remove = docker_remove,
	.sweep = docker_sweep_config,
	.doctor = docker_doctor_op,
};
