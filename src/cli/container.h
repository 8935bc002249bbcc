/* container.h: `cordon container`, the lifecycle of a container binding's
 * containers on whichever provider made them (contract.h). */
#ifndef CORDON_CLI_CONTAINER_H
#define CORDON_CLI_CONTAINER_H

#include "container/contract.h"

/* A segment whose start helper ended without its exit file: its pinned
 * container (the record dir's container.json, checked against the
 * digest pinned with the segment) stopped when it runs, and what it made
 * removed. 0 once it is confirmed not running, else -1 (unverified). */
int container_settle_record(const char *record_dir,
			    const char *job, unsigned int seg, struct err **e);

/* `cordon container wrap|settle|inspect|list|stop|remove`. */
int container_main(int argc, char **argv);

#endif
