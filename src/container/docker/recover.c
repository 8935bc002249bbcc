/* recover.c: what the daemon asks of a pinned container after a
 * restart (the recover table) and of containers it no longer needs
 * (reconcile). A container is the pinned one only on the pinned daemon,
 * with the pinned ID, the host's, job's, segment's and digest labels and
 * the pinned image; a daemon that cannot be asked, or another daemon, is
 * an error, never "gone". */
#include "container/docker/docker.h"
#include "container/docker/internal.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "plan/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int docker_open_pinned(const json_t *pin, struct engine **g, struct err **e)
{
	struct engine_info info = { 0 };
	json_t *ep = json_pack("{s:s?}", "endpoint", str(pin, "endpoint"));
	int r = ep && str(pin, "endpoint") ? docker_open(ep, g, NULL, e)
					   : err_set(e, ERR_INTERNAL, 0, "the pin names no endpoint");

	json_decref(ep);
	if (r < 0)
		return -1;
	r = engine_info(*g, &info, e);
	if (r == 0 && (!str(pin, "daemon") || strcmp(info.id, str(pin, "daemon")) != 0))
		r = err_set(e, ERR_UNAVAILABLE, 0,
			    "the endpoint answers as another Docker daemon than the pinned one");
	engine_info_clear(&info);
	return r;
}

static bool label_is(const json_t *labels, const char *k, const char *v)
{
	const char *have = json_string_value(json_object_get(labels, k));

	return have && v && strcmp(have, v) == 0;
}

int docker_inspect(const json_t *pin, const char *digest, const char *job, unsigned int seg,
		   struct provider_state *st, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	struct engine_container c = { 0 };
	char n[16];
	int r;

	if (docker_open_pinned(pin, &g, e) < 0)
		return -1;
	r = engine_container_inspect(g, str(pin, "container"), &c, e);
	if (r < 0)
		return err_wrap(e, "container_stop_unverified: inspect the pinned container");
	if (r == ENGINE_GONE)
		return PROVIDER_GONE;
	snprintf(n, sizeof(n), "%u", seg);
	if (strcmp(c.id, str(pin, "container")) != 0 ||
	    !label_is(c.labels, CONTAINER_LABEL_HOST, str(pin, "host")) ||
	    (job && !label_is(c.labels, CONTAINER_LABEL_JOB, job)) ||
	    (seg && !label_is(c.labels, CONTAINER_LABEL_SEGMENT, n)) ||
	    (digest && !label_is(c.labels, CONTAINER_LABEL_DIGEST, digest)) || !c.image ||
	    !str(pin, "image") || strcmp(c.image, str(pin, "image")) != 0) {
		engine_container_clear(&c);
		return err_set(e, ERR_DENIED, 0,
			       "the container of the pinned ID is not the pinned one (its labels "
			       "or image differ)");
	}
	/* never started: the daemon's status says so, and its start time is
	 * the zero time */
	if (c.running)
		r = PROVIDER_RUNNING;
	else if (c.status && strcmp(c.status, "created") == 0)
		r = PROVIDER_CREATED;
	else
		r = PROVIDER_EXITED;
	if (st) {
		st->exit_code = c.exit_code;
		st->started_at = r != PROVIDER_CREATED && c.started_at ? strdup(c.started_at) : NULL;
	}
	engine_container_clear(&c);
	return r;
}

int docker_stop(const json_t *pin, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	int code = 0;

	if (docker_open_pinned(pin, &g, e) < 0)
		return -1;
	if (engine_container_kill(g, str(pin, "container"), SIGKILL, e) < 0) {
		/* a gone one is stopped (contract.h), on the daemon's own word */
		struct engine_container c = { 0 };
		struct err *ie = NULL;
		int r = engine_container_inspect(g, str(pin, "container"), &c, &ie);

		engine_container_clear(&c);
		err_free(ie);
		if (r != ENGINE_GONE)
			return err_wrap(e, "container_stop_unverified");
		err_free(*e);
		*e = NULL;
		return 0;
	}
	/* confirmed only when the daemon says it is not running */
	int r = engine_container_wait(g, str(pin, "container"), "not-running", 30, &code, e);
	if (r != 0 && r != ENGINE_WAIT_GONE)
		return r < 0 ? err_wrap(e, "container_stop_unverified")
			     : err_set(e, ERR_UNAVAILABLE, 0,
				       "container_stop_unverified: still running after KILL");
	return 0;
}

int docker_remove(const json_t *pin, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	struct docker_made m = { (char *)str(pin, "container"), (char *)str(pin, "gateway"),
				 (char *)str(pin, "network"), (char *)str(pin, "volume") };

	if (docker_open_pinned(pin, &g, e) < 0)
		return -1;
	return docker_remove_made(g, &m, e);
}

int docker_list(const json_t *config, const char *state_dir, const char *host, const char *job,
		char ***ids, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_free_ char *lh = NULL, *lj = NULL, *lr = NULL;

	(void)state_dir;
	*ids = NULL;
	if (asprintf(&lh, "%s=%s", CONTAINER_LABEL_HOST, host) < 0 ||
	    asprintf(&lr, "%s=workload", CONTAINER_LABEL_ROLE) < 0 ||
	    (job && asprintf(&lj, "%s=%s", CONTAINER_LABEL_JOB, job) < 0))
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	_cleanup_strv_ char **all = NULL;
	char *const want[] = { lh, lr, lj, NULL };
	if (docker_open(config, &g, NULL, e) < 0 || engine_container_list(g, want, &all, e) < 0)
		return -1;
	/* cordon's only, by the name it gave: the labels can be an image's */
	*ids = calloc(1, sizeof(char *));
	for (size_t i = 0; *ids && all[i]; i++) {
		struct engine_container c = { 0 };
		int r = engine_container_inspect(g, all[i], &c, e);
		const char *j = json_string_value(json_object_get(c.labels, CONTAINER_LABEL_JOB));
		bool ours = r == ENGINE_FOUND && docker_name_of_job(c.name, host, j);

		engine_container_clear(&c);
		if (r < 0) {
			strv_free(steal_pointer(ids));
			return err_wrap(e, "inspect the container `%.12s`", all[i]);
		}
		if (ours && strv_push(ids, all[i]) < 0)
			strv_free(steal_pointer(ids));
	}
	return *ids ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "list");
}
