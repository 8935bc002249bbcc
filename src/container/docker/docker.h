/* docker.h: the Docker provider (contract.h), talking to the Docker
 * Engine API itself (engine.h). A segment's container has no network at
 * all (network mode none); cordon's static binary, copied in through the
 * API, is its pid 1 (`cordon cinit`): it reads and removes the secrets
 * file, confines the command with Landlock and seccomp, and relays the
 * proxy ports it serves on the container's loopback over a unix socket in
 * a private volume to a companion container running `cordon gateway`, the
 * only way out, on a bridge network of the segment's own. */
#ifndef CORDON_CONTAINER_DOCKER_DOCKER_H
#define CORDON_CONTAINER_DOCKER_DOCKER_H

#include "container/contract.h"
#include "container/docker/engine/engine.h"

extern const struct provider docker_provider;

/* The gateway image for this cordon: made from the static binary alone
 * when missing (make) or found, and found only by what it holds (its one
 * layer the tar of this cordon's static binary, its Config nothing but
 * cordon's entrypoint and the label naming the runtime's digest): an
 * image that carries the label and holds anything else is never taken
 * (*others counts them; may be NULL). *id is its image ID, the digest of
 * that content; ENGINE_GONE when not there and !make. */
int docker_gateway_image(struct engine *g, bool make, char **id, unsigned int *others,
			 struct err **e);

/* Open the daemon a binding's config names: "endpoint" (unix:// or
 * tcp://), else "context" (a Docker CLI context), else the default. */
int docker_open(const json_t *config, struct engine **g, char **endpoint, struct err **e);

/* The lifecycle ops (contract.h), for the daemon through the provider. */
int docker_inspect(const json_t *pin, const char *digest, const char *job, unsigned int seg,
		   struct provider_state *st, struct err **e);
int docker_list(const json_t *config, const char *state_dir, const char *host, const char *job,
		char ***ids, struct err **e);
/* KILL it, and 0 only once the daemon says it is not running. */
int docker_stop(const json_t *pin, struct err **e);
/* Remove what the segment made (the pin names it). */
int docker_remove(const json_t *pin, struct err **e);

/* The provider's doctor for a binding's container config (endpoint or
 * context, image), with the state dir (NULL: shared_path fails):
 * {"provider": "docker", "ready", "checks": [{"id", "status": "pass" |
 * "fail", "detail", "fix"}]}, the checks daemon, image (when the config
 * names one), gateway_image, shared_path and preflight. Runs containers
 * and removes them (labelled dev.cordon.role=doctor): 2 to 3 s. NULL
 * with *e only when the report cannot be made. */
json_t *docker_doctor(const json_t *config, const char *state_dir, struct err **e);

/* What `cordon job doctor` says of Docker without asking a daemon: the
 * last pass of the checks a launch ran ({"provider", "ready", "detail",
 * "endpoint", "daemon"}), ready while it stands (ten minutes). */
json_t *docker_last_pass(const char *state_dir);

/* Remove everything labelled with this host whose job is not in live
 * (NULL-terminated; may be NULL) nor has a running attach container
 * (dev.cordon.role=attach: an operator's terminal on an ended job, kept
 * with its companion, network and volume): *removed counts what went. A
 * listing that fails is an error, and what was not yet looked at stays. */
int docker_sweep(struct engine *g, const char *host, char *const *live, unsigned int *removed,
		 struct err **e);

/* The provider's sweep (contract.h) on the daemon a config names. */
int docker_sweep_config(const json_t *config, const char *state_dir, const char *host,
			char *const *live, unsigned int *removed, struct err **e);

/* Open the daemon a pin names (its endpoint) and check it is the pinned
 * one (its ID, the pin's "daemon"): another daemon is an error. (The
 * attach terminal, client/tty.c, opens its container's daemon so.) */
int docker_open_pinned(const json_t *pin, struct engine **g, struct err **e);

#endif
