/* contract.h: what the container providers (docker, ssh) share beneath
 * the one contract (provider/provider.h): the labels, the records, the
 * plan part, the start helper's signals and the run between create and
 * wait. A binding that declares a container runs its executor in one;
 * the host keeps the authority it has over a process sandbox (the guard,
 * the plan, its digest, the pin) and the provider turns the plan into a
 * container and reports on it. Every container carries four labels: the
 * host (a hash of the state dir), the job, the segment and the plan's
 * digest. A provider fails closed: what it cannot do or cannot find out
 * is an error, never "none" or "gone".
 *
 * The sequence, in the segment's wrapper: plan (with the guard's grant;
 * the host takes the digest after), create (nothing started; refuses a
 * second container), the pin sent to the daemon, then wait on the
 * daemon's word, which is the start helper: it starts the container
 * attached, passes TERM, INT and HUP on after recording each as the
 * host's, and returns the container's status. The daemon calls inspect,
 * list, stop and remove itself (reconcile, recovery, a stop to confirm). */
#ifndef CORDON_CONTAINER_CONTRACT_H
#define CORDON_CONTAINER_CONTRACT_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"
#include "provider/provider.h"

#include <jansson.h>
#include <stdbool.h>

/* The labels on everything a provider makes. */
#define CONTAINER_LABEL_HOST "dev.cordon.host"
#define CONTAINER_LABEL_JOB "dev.cordon.job"
#define CONTAINER_LABEL_SEGMENT "dev.cordon.segment"
#define CONTAINER_LABEL_DIGEST "dev.cordon.digest"
#define CONTAINER_LABEL_ROLE "dev.cordon.role"	/* workload, gateway, channel, attach */

/* In the run dir: the secrets the runtime reads and removes before
 * anything runs, and the marker it leaves when it gets TERM. */
#define CONTAINER_SECRETS_FILE ".cordon-secrets"
#define CONTAINER_TERM_MARKER ".cordon-term"
/* Inside a container: where its provider puts cordon's own static
 * binary (the runtime; `cordon tb` is the job's toolbelt client there). */
#define CONTAINER_RUNTIME_PATH "/.cordon/cordon"
/* In the execution's dir: the container records, outside every grant. */
#define CONTAINER_RECORDS_DIR "container"

/* A container provider's run between create and wait (its start
 * helper) or discard: the plan, its paths and the pin create made. */
typedef int (*container_make_fn)(const struct plan *p, const struct plan_paths *paths,
				 const struct provider_launch *pl, json_t **pin, struct err **e);
typedef int (*container_helper_fn)(const struct plan *p, const struct plan_paths *paths,
				   const json_t *pin, bool *interrupted, struct err **e);
typedef void (*container_discard_fn)(const struct plan_paths *paths, const json_t *pin);
/* create: make makes the container (never started; a running one of the
 * same job refused, stopped ones removed first; on failure nothing it
 * made is left) and *pin is what the host pins with the segment
 * ({"provider", ...}); *run holds it for wait, discard or release. */
int container_run_create(container_make_fn make, container_discard_fn discard,
			 const struct plan *p, const struct plan_paths *paths,
			 const struct provider_launch *pl, struct provider_run **run, json_t **pin,
			 struct err **e);
/* wait: the start helper on the host's word (start it attached, pass
 * TERM, INT and HUP on, each recorded first as the host's; what it made
 * removed once its status is known); frees run. */
int container_run_wait(container_helper_fn helper, struct provider_run *run,
		       struct provider_exit *x, struct err **e);
/* discard: what create made removed, the secrets file with it; frees
 * run. */
void container_run_discard(container_discard_fn discard, struct provider_run *run);
/* release: the container left for the operator's client; frees run. */
void container_run_release(struct provider_run *run);
/* resume by a helper (provider_exit's shape). */
int container_run_resume(container_helper_fn helper, const struct plan *p,
			 const struct plan_paths *paths, const json_t *pin, struct provider_exit *x,
			 struct err **e);

/* A provider's plan part: p->data's "container" (part, taken), the
 * summary prefixed with where, the signals TERM. */
int container_plan_part(struct plan *p, json_t *part, const char *where, struct err **e);

/* Is a container image pinned: an image ID (sha256:<64 hex>) or a name
 * with @sha256:<64 hex>? (An image is what it is pinned to, never what a
 * tag names today.) */
bool container_image_pinned(const char *image);

/* The job's signals record (<exec_dir>/container/signals): sig appended
 * and synced before the host sends it to the segment's container. */
int container_record_signal(const struct plan_paths *paths, int sig, struct err **e);
/* Did the host send this segment a TERM (its signals record says so)? */
bool container_host_sent_term(const struct plan_paths *paths);
/* A start helper's TERM, INT, HUP and QUIT, blocked and read from the
 * signalfd returned (close-on-exec), or -1 with *e. */
int container_helper_signals(struct err **e);

/* cordon's static binary (cordon-static beside this program), the
 * runtime a provider puts where its runs are: its bytes and SHA-256. */
int container_runtime(char **bytes, size_t *len, char hex[65], struct err **e);

/* The container record beside the plan's: the pin, in the record dir's
 * container.json (0444), for the lifecycle's settle and resume. */
int container_write_pin(const struct plan_paths *paths, const json_t *pin, struct err **e);

/* The host label: a hash of the canonical state dir (16 hex digits). */
int container_host_label(const char *state_dir, char out[17], struct err **e);

#endif
