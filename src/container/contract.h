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

/* What inspect found. */
struct container_state {
	char *daemon;		/* the ID of the daemon that answered */
	char *id;
	char *image;
	char *started_at;	/* RFC 3339 */
	bool running;
	bool ever_started;
	int exit_code;
	json_t *labels;
};

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
	/* A container made and never started (the host's word never came):
	 * what create made is removed, the secrets file with it. */
	void (*discard)(const struct plan_paths *paths, const json_t *pin);
};

/* The host label: a hash of the canonical state dir (16 hex digits). */
int container_host_label(const char *state_dir, char out[17], struct err **e);

#endif
