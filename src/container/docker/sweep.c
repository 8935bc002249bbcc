/* sweep.c: reconcile's part on a Docker daemon. Everything that
 * carries this host's label (containers, companions, networks, volumes)
 * and names a job that is not live is removed: a segment's wrapper
 * removes what it made, and recovery what a dead wrapper left, so this
 * takes what a failed removal left behind. An attach container runs for
 * a job that has ended (`cordon job attach`, an operator's terminal):
 * while one runs, its job counts as live for the pass, so that it and
 * what it uses (its companion, network, volume) stay; one made and never
 * started, or ended, goes with the rest. A container is taken for a job's
 * only by the name cordon gave it: one that carries the labels alone
 * (from its image: an operator's `docker run` of an agent's image) is
 * left alone. A listing that fails removes nothing and says so. */
#include "container/docker/docker.h"
#include "container/docker/internal.h"

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

/* The job label of a container cordon made (by inspecting it: its name
 * is the one cordon gives that job's containers, docker_name_of_job; one
 * that only carries the labels, which an image can give it, is not
 * cordon's and NULL); *attach_runs when it is a running attach
 * container. */
static char *job_of_container(struct engine *g, const char *host, const char *id,
			      bool *attach_runs, struct err **e)
{
	struct engine_container c = { 0 };
	char *job = NULL;

	*attach_runs = false;
	if (engine_container_inspect(g, id, &c, e) == ENGINE_FOUND) {
		const char *j = json_string_value(json_object_get(c.labels, CONTAINER_LABEL_JOB));
		const char *role = json_string_value(json_object_get(c.labels, CONTAINER_LABEL_ROLE));

		if (!docker_name_of_job(c.name, host, j))
			j = NULL;
		job = j ? strdup(j) : NULL;
		*attach_runs = c.running && role && strcmp(role, "attach") == 0;
	}
	engine_container_clear(&c);
	return job;
}

static void free_jobs(char **jobs, size_t n)
{
	for (size_t i = 0; jobs && i < n; i++)
		free(jobs[i]);
	free(jobs);
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
	_cleanup_strv_ char **ids = NULL, **nets = NULL, **vols = NULL, **keep = NULL;
	char **jobs = NULL;
	size_t n;

	*removed = 0;
	if (asprintf(&lh, "%s=%s", CONTAINER_LABEL_HOST, host) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	char *const want[] = { lh, NULL };
	if (engine_container_list(g, want, &ids, e) < 0)
		return err_wrap(e, "sweep: list the host's containers");
	/* the jobs kept: the live ones, and each one an attach container
	 * runs for, all known before anything goes */
	n = strv_len(ids);
	jobs = calloc(n + 1, sizeof(*jobs));
	keep = strv_dup(live);
	if (!jobs || !keep) {
		free(jobs);
		return err_set(e, ERR_INTERNAL, ENOMEM, "sweep");
	}
	for (size_t i = 0; i < n; i++) {
		bool attach_runs = false;

		jobs[i] = job_of_container(g, host, ids[i], &attach_runs, e);
		err_free(*e);
		*e = NULL;
		if (jobs[i] && attach_runs && !is_live(keep, jobs[i]) &&
		    strv_push(&keep, jobs[i]) < 0) {
			free_jobs(jobs, n);
			return err_set(e, ERR_INTERNAL, ENOMEM, "sweep");
		}
	}
	for (size_t i = 0; i < n; i++) {
		if (!jobs[i] || is_live(keep, jobs[i]))
			continue;
		if (engine_container_remove(g, ids[i], true, e) < 0) {
			err_wrap(e, "sweep: remove a container of job `%s`", jobs[i]);
			free_jobs(jobs, n);
			return -1;
		}
		(*removed)++;
	}
	free_jobs(jobs, n);
	if (engine_network_list(g, want, &nets, e) < 0)
		return err_wrap(e, "sweep: list the host's networks");
	for (size_t i = 0; nets[i]; i++) {
		_cleanup_free_ char *job = job_of_network(g, nets[i], e);

		err_free(*e);
		*e = NULL;
		if (!job || is_live(keep, job))
			continue;
		if (engine_network_remove(g, nets[i], e) < 0)
			return err_wrap(e, "sweep: remove a network of job `%s`", job);
		(*removed)++;
	}
	/* a volume is named for its job (docker_job_key): a kept job's
	 * begin with its key */
	if (engine_volume_list(g, want, &vols, e) < 0)
		return err_wrap(e, "sweep: list the host's volumes");
	for (size_t i = 0; vols[i]; i++) {
		bool kept = false;

		for (size_t k = 0; keep[k] && !kept; k++) {
			char key[DOCKER_KEY_LEN + 1], prefix[DOCKER_KEY_LEN + 16];

			if (docker_job_key(host, keep[k], key) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "names");
			snprintf(prefix, sizeof(prefix), "cordon-%s-", key);
			kept = strncmp(vols[i], prefix, strlen(prefix)) == 0;
		}
		if (kept)
			continue;
		if (engine_volume_remove(g, vols[i], true, e) < 0)
			return err_wrap(e, "sweep: remove a volume");
		(*removed)++;
	}
	return 0;
}

int docker_sweep_config(const json_t *config, const char *state_dir, const char *host,
			char *const *live, unsigned int *removed, struct err **e)
{
	_cleanup_engine_ struct engine *g = NULL;

	(void)state_dir;
	*removed = 0;
	if (docker_open(config, &g, NULL, e) < 0)
		return -1;
	return docker_sweep(g, host, live, removed, e);
}
