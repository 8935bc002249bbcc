/* lifecycle.h: `cordon container`, the lifecycle of a container binding's
 * containers on whichever provider made them (contract.h). */
#ifndef CORDON_CONTAINER_LIFECYCLE_H
#define CORDON_CONTAINER_LIFECYCLE_H

#include "container/contract.h"

/* The providers of cordon-host (NULL-terminated). */
extern const struct container_provider *const container_providers[];

/* The provider a pin or config names ("provider"), or NULL with *e. */
const struct container_provider *container_of(const struct container_provider *const *known,
					      const json_t *obj, struct err **e);

/* A segment whose start helper ended without its exit file: its pinned
 * container (the record dir's container.json, checked against the
 * digest pinned with the segment) stopped when it runs, and what it made
 * removed. 0 once it is confirmed not running, else -1 (unverified). */
int container_settle_record(const struct container_provider *const *known, const char *record_dir,
			    const char *job, unsigned int seg, struct err **e);

/* `cordon container wrap|settle|inspect|list|stop|remove`. */
int container_main(int argc, char **argv, const struct container_provider *const *known);

#endif
