/* contract.h: the container-provider contract. A binding that declares a
 * container runs its executor in one; the host keeps the authority it has
 * over a process sandbox (the guard, the plan, its digest, the pin) and
 * the provider turns the plan into a container and reports on it. Every
 * container carries four labels: the host (a hash of the state dir), the
 * job, the segment and the plan's digest. A provider fails closed: what it
 * cannot do or cannot find out is an error, never "none" or "gone".
 *
 * The sequence, in the segment's wrapper: plan (with the guard's grant;
 * the host takes the digest after), create (nothing started; refuses a
 * second container), the pin sent to the daemon, then start on the
 * daemon's word, which is also the start helper: it starts the container
 * attached, passes TERM, INT and HUP on after recording each as the
 * host's, and returns the container's status. The daemon calls inspect,
 * list, stop and remove itself (reconcile, recovery, a stop to confirm). */
#ifndef CORDON_CONTAINER_CONTRACT_H
#define CORDON_CONTAINER_CONTRACT_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"

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

/* What a launch gives its provider beyond the grant. */
struct container_launch {
	const json_t *config;		/* the binding's "container" object */
	const char *state_dir;		/* canonical */
	const char *toolbelt_dir;	/* may be NULL */
	const char *home;		/* the job's own home, or NULL */
	bool terminal;			/* an attach: made with a terminal, started
					 * by the operator's client, not the helper */
};

/* What inspect says of a pinned container. */
enum container_status {
	CONTAINER_GONE = 0,	/* the pinned place answered: it holds no such container */
	CONTAINER_CREATED = 1,	/* made, never started */
	CONTAINER_RUNNING = 2,
	CONTAINER_EXITED = 3,	/* started and ended: exit_code is its status */
};

/* What inspect found (filled for CREATED, RUNNING and EXITED). */
struct container_state {
	char *started_at;	/* RFC 3339, NULL before a start */
	int exit_code;
};
void container_state_clear(struct container_state *st);

struct container_provider {
	const char *name;
	/* The guard's grant to a plan: p->argv becomes what runs in the
	 * container, p->data gains {"container": {...}} (the image ID
	 * and everything the container is made with, so the digest covers
	 * them), p->summary says where. Refuses what it cannot hold. */
	int (*plan)(const struct grant *g, const struct plan_paths *paths,
		    const struct container_launch *cl, struct plan *p, struct err **e);
	/* Make the container (and what serves it), never started, after the
	 * plan was recorded; *pin is what the host pins with the segment
	 * ({"provider", "image", "daemon", "container", ...}). A running
	 * container of the same job refuses (container_running); stopped
	 * ones are removed first; a listing that fails refuses. On failure
	 * nothing it made is left. */
	int (*create)(const struct plan *p, const struct plan_paths *paths,
		      const struct container_launch *cl, json_t **pin, struct err **e);
	/* The start helper, on the host's word: start it attached (this
	 * process's stdin, stdout and stderr), pass TERM, INT and HUP on
	 * (each recorded first as the host's), and return its status, or
	 * -1 with *e when it never ran. *interrupted: it got a TERM the host
	 * did not send. What it made is removed once its status is known. */
	int (*start)(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		     bool *interrupted, struct err **e);
	/* Optional: a container found running after a restart whose start
	 * helper had died (its pin checked by inspect): taken up in the
	 * helper's place, as start would have gone on (TERM, INT and HUP
	 * passed on, each recorded first; its status returned, what it
	 * made removed once that is known). -1 with *e when it cannot be
	 * (the host then stops it). NULL: the provider cannot take a run
	 * up again, and a running one is stopped. */
	int (*resume)(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
		      bool *interrupted, struct err **e);
	/* A container made and never started (the host's word never came):
	 * what create made is removed, the secrets file with it. */
	void (*discard)(const struct plan_paths *paths, const json_t *pin);

	/* The lifecycle the daemon drives (reconcile, recovery, a stop to
	 * confirm), each on a pin as create made it. */
	/* What the pinned container is: a CONTAINER_* (st filled, may be
	 * NULL), or -1 when the place it was made cannot be asked, answers as
	 * another (daemon, host key), or holds a container of the pinned ID
	 * that is not the pinned one (the host's, job's, segment's and
	 * digest's labels; digest NULL: not checked; seg 0: likewise). */
	int (*inspect)(const json_t *pin, const char *digest, const char *job, unsigned int seg,
		       struct container_state *st, struct err **e);
	/* The pins' container IDs of every workload container this host
	 * (label) holds on the place a binding's config names, of one job
	 * (NULL: all). Never another host's or job's; a listing that cannot
	 * be made is -1, never an empty one. */
	int (*list)(const json_t *config, const char *state_dir, const char *host, const char *job,
		    char ***ids, struct err **e);
	/* KILL it (its whole group); 0 only once the place says it is not
	 * running (a gone one: 0). */
	int (*stop)(const json_t *pin, struct err **e);
	/* Remove what create made; a gone one is 0 (removable again). */
	int (*remove)(const json_t *pin, struct err **e);
	/* Reconcile on the place a binding's config names: remove what
	 * carries this host's label for a job not in live (NULL-terminated;
	 * may be NULL); *removed counts it. A listing that fails removes
	 * nothing and is -1. */
	int (*sweep)(const json_t *config, const char *state_dir, const char *host,
		     char *const *live, unsigned int *removed, struct err **e);
};

/* A provider's plan part: p->data's "container" (part, taken), the
 * summary prefixed with where, the signals TERM. */
int container_plan_part(struct plan *p, json_t *part, const char *where, struct err **e);

/* The provider named (the pin's and config's "provider"), among known. */
const struct container_provider *container_provider_find(const struct container_provider *const *known,
							 const char *name);
/* The provider a pin or config names ("provider"), or NULL with *e. */
const struct container_provider *container_of(const struct container_provider *const *known,
					      const json_t *obj, struct err **e);
/* The providers of the program (cordon-host's; NULL-terminated). */
extern const struct container_provider *const container_providers[];

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
