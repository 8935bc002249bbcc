/* internal.h: what the Docker provider's files share (docker.h is its
 * contract with the rest of cordon). */
#ifndef CORDON_CONTAINER_DOCKER_INTERNAL_H
#define CORDON_CONTAINER_DOCKER_INTERNAL_H

#include "container/contract.h"
#include "container/docker/engine/engine.h"

/* Inside every container: the private volume, holding the runtime and
 * the gateway's socket. */
#define DOCKER_VOLUME_PATH "/.cordon"
#define DOCKER_RUNTIME_PATH CONTAINER_RUNTIME_PATH
/* On an attach's container: its workspace (a hash of the path). */
#define DOCKER_LABEL_WORKSPACE "dev.cordon.workspace"
#define DOCKER_CHANNEL_SOCK "/.cordon/gw.sock"
/* The label that names the runtime a gateway image carries. */
#define DOCKER_LABEL_RUNTIME "dev.cordon.runtime"
/* How many images carrying that label a lookup judges by content. */
#define DOCKER_GATEWAY_CANDIDATES 32
/* The companion's own limits. */
#define DOCKER_GATEWAY_PIDS 256
#define DOCKER_GATEWAY_MEMORY (256LL << 20)

/* A job's key on a daemon, what its containers, network and volume are
 * named for: the first DOCKER_KEY_LEN hex digits of sha256(host/job). */
#define DOCKER_KEY_LEN 12
int docker_job_key(const char *host, const char *job, char out[DOCKER_KEY_LEN + 1]);
/* Is name (a container's, "/name" as the daemon keeps it, or without the
 * slash) one cordon gives a container of this host's job:
 * cordon-<key>-<segment> or cordon-<key>-<segment>-gw? A container takes
 * every label of its image that its create does not set, so its labels
 * alone never make it cordon's; its name comes from the create only. */
bool docker_name_of_job(const char *name, const char *host, const char *job);

/* What a segment made, as its container record and pin say. */
struct docker_made {
	char *workload, *gateway, *network, *volume;
};

int docker_create(const struct plan *p, const struct plan_paths *paths,
		  const struct provider_launch *cl, json_t **pin, struct err **e);
int docker_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		 bool *interrupted, struct err **e);
/* The secrets file of the run dir, removed if it is there. */
void docker_drop_secrets(const char *run_dir);
void docker_discard(const struct plan_paths *paths, const json_t *pin);

/* Remove what a segment made (force): 0, or -1 with *e naming what stayed. */
int docker_remove_made(struct engine *g, const struct docker_made *m, struct err **e);
/* Remove every container (by the name cordon gave it: see
 * docker_name_of_job), network and volume of a job that is not running;
 * a running container carrying the job's labels refuses
 * (container_running), whoever made it. */
int docker_clear_job(struct engine *g, const char *host, const char *job, struct err **e);

#endif
