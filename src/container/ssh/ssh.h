/* ssh.h: the SSH provider (contract.h): a segment runs on another machine
 * over the system's ssh client, every call checking the one pinned host
 * key; the host's paths are mirrored there (copied at the same paths)
 * and the write grants' changes copied back under the rules of mirror.h.
 * See ssh.c for what a run on a remote is, start.c for the helper. */
#ifndef CORDON_CONTAINER_SSH_SSH_H
#define CORDON_CONTAINER_SSH_SSH_H

#include "container/contract.h"

extern const struct provider ssh_provider;

/* The helper (contract.h's start) and the removal of a run. */
int ssh_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
	      bool *interrupted, struct err **e);
/* The provider's resume: the helper again for a run whose own died. */
int ssh_resume(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
	       bool *interrupted, struct err **e);
int ssh_remove(const json_t *pin, struct err **e);

/* For the daemon's doctor, which never waits on a remote: the last pass
 * of a remote's checks (a binding's container config), as {"provider":
 * "ssh", "remote", "ready", "checked", "detail"}; ready only while a pass
 * stands (ten minutes) and, for a native run, said that user namespaces
 * work there. NULL when out of memory. */
json_t *ssh_last_pass(const json_t *config, const char *state_dir);

/* `cordon ssh doctor ...` (cordon-host). */
int ssh_main(int argc, char **argv);

#endif
