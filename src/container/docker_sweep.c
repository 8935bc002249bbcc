/* docker_sweep.c: reconcile's part on a Docker daemon. Everything that
 * carries this host's label (containers, companions, networks, volumes)
 * and names a job that is not live is removed: a segment's wrapper
 * removes what it made, and recovery what a dead wrapper left, so this
 * takes what a failed removal left behind. A listing that fails removes
 * nothing and says so. */
#include "container/docker.h"
#include "container/docker_int.h"

#include "lib/cleanup.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_live(char *const *live, const char *job)
{
	for (size_t i = 0; live && live[i]; i++)
		if (strcmp(live[i], job) == 0)
			return true;
	return false;
}

/* The job label of a container, network or volume (by inspecting it). */
static char *job_of_container(struct engine *g, const char *id, struct err **e)
{
	struct engine_container c = { 0 };
	char *job = NULL;

	if (engine_container_inspect(g, id, &c, e) == ENGINE_FOUND) {
		const char *j = json_string_value(json_object_get(c.labels, CONTAINER_LABEL_JOB));
		job = j ? strdup(j) : NULL;
	}
	engine_container_clear(&c);
	return job;
}

static char *job_of_network(struct engine *g, const char *id, struct err **e)
{
	struct engine_network n = { 0 };
	char *job = NULL;

	if (engine_network_inspect(g, id, &n, e) == ENGINE_FOUND) {
		const char *j = json_string_value(json_object_get(n.labels, CONTAINER_LABEL_JOB));
		job = j ? strdup(j) : NULL;
	}
	engine_network_clear(&n);
	return job;
}

int docker_sweep(struct engine *g, const char *host, char *const *live, unsigned int *removed,
		 struct err **e)
{
	_cleanup_free_ char *lh = NULL;
	_cleanup_strv_ char **ids = NULL, **nets = NULL, **vols = NULL;

	*removed = 0;
	if (asprintf(&lh, "%s=%s", CONTAINER_LABEL_HOST, host) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	char *const want[] = { lh, NULL };
	if (engine_container_list(g, want, &ids, e) < 0)
		return err_wrap(e, "sweep: list the host's containers");
	for (size_t i = 0; ids[i]; i++) {
		_cleanup_free_ char *job = job_of_container(g, ids[i], e);

		err_free(*e);
		*e = NULL;
		if (!job || is_live(live, job))
			continue;
		if (engine_container_remove(g, ids[i], true, e) < 0)
			return err_wrap(e, "sweep: remove a container of job `%s`", job);
		(*removed)++;
	}
	if (engine_network_list(g, want, &nets, e) < 0)
		return err_wrap(e, "sweep: list the host's networks");
	for (size_t i = 0; nets[i]; i++) {
		_cleanup_free_ char *job = job_of_network(g, nets[i], e);

		err_free(*e);
		*e = NULL;
		if (!job || is_live(live, job))
			continue;
		if (engine_network_remove(g, nets[i], e) < 0)
			return err_wrap(e, "sweep: remove a network of job `%s`", job);
		(*removed)++;
	}
	/* a volume is named for its job (docker_job_key): a live job's
	 * begin with its key */
	if (engine_volume_list(g, want, &vols, e) < 0)
		return err_wrap(e, "sweep: list the host's volumes");
	for (size_t i = 0; vols[i]; i++) {
		bool keep = false;

		for (size_t k = 0; live && live[k] && !keep; k++) {
			char key[DOCKER_KEY_LEN + 1], prefix[DOCKER_KEY_LEN + 16];

			if (docker_job_key(host, live[k], key) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "names");
			snprintf(prefix, sizeof(prefix), "cordon-%s-", key);
			keep = strncmp(vols[i], prefix, strlen(prefix)) == 0;
		}
		if (keep)
			continue;
		if (engine_volume_remove(g, vols[i], true, e) < 0)
			return err_wrap(e, "sweep: remove a volume");
		(*removed)++;
	}
	return 0;
}
