/* plan.h: the provider-independent launch plan, its digest, its record on
 * disk and the pin that ties a segment to it.
 *
 * Digest: SHA-256 over this byte string (every "field" is an 8-byte
 * big-endian length followed by that many bytes):
 *   field("cordon-plan-v1")
 *   field(decimal argc)
 *   field(argv[0]) ... field(argv[argc-1])
 *   field(data as canonical JSON: compact, keys sorted, ASCII only)
 * Lengths make the encoding unambiguous: no two plans share a byte
 * string. The environment is not hashed: it may carry secrets and is
 * never recorded with values the caller passed. */
#ifndef CORDON_PLAN_PLAN_H
#define CORDON_PLAN_PLAN_H

#include "guard/guard.h"
#include "lib/err.h"
#include "lib/sha256.h"

#include <jansson.h>

enum plan_signals { PLAN_SIGNALS_TERM, PLAN_SIGNALS_KILL };

struct plan {
	char **argv;
	char **env;		/* KEY=value the sandbox itself sets */
	enum plan_signals signals;
	char *summary;
	json_t *data;		/* the effective policy */
	char digest[SHA256_HEX_LEN + 1];
};

/* Where one segment's files live. */
struct plan_paths {
	char *execution;	/* id */
	unsigned int segment;
	char *exec_dir;		/* <state>/runs/<execution> */
	char *run_dir;		/* <exec_dir>/run: the segment's writable dir */
	char *record_dir;	/* <exec_dir>/sandbox/<segment>: host only */
};

/* A new execution id: UTC time and 64 random bits. */
int plan_new_execution_id(char **out, struct err **e);
/* Make (mode 0700, no symbolic links below the state dir) the execution's
 * run dir, and name this segment's record dir (made when recording). */
int plan_make_paths(const char *state_dir, const char *execution,
		    unsigned int segment, struct plan_paths *out,
		    struct err **e);
void plan_paths_clear(struct plan_paths *p);
/* Remove a refused launch's directories, as long as they are empty. */
void plan_paths_remove(const struct plan_paths *p);

/* A plan from a grant: argv copied, data = the grant as JSON, summary
 * derived from it, signals term. The digest is computed. */
int plan_build(const struct grant *g, char *const *argv, struct plan **out,
	       struct err **e);
int plan_digest(const struct plan *p, char out[SHA256_HEX_LEN + 1],
		struct err **e);

/* Make the record dir (0700), write <record_dir>/plan.json (0444,
 * atomically), then pin digest and
 * summary with the segment in <exec_dir>/pins.json. With durable the
 * record is fsynced before it is renamed into place; without, the caller
 * must call plan_sync_record() before it reports the launch a success
 * (the sandbox root does, while the sandbox is being built). */
/* The process that launches a segment (the sandbox root), named for the
 * life of the boot by its pid and start time, and the provider it
 * launches with (adoption asks that provider, never one guessed from
 * the plan; "" when the pin names none). */
struct plan_root {
	int pid;
	unsigned long long start_ticks;
	char provider[32];
};

/* root, when not NULL, is pinned with the digest: adoption proves it. */
int plan_record(const struct plan *p, const struct plan_paths *paths,
		const struct plan_root *root, bool durable, struct err **e);
/* A segment's pin: digest and, when one was recorded, the root. */
int plan_read_pin_root(const char *exec_dir, unsigned int segment, char **digest,
		       struct plan_root *root, struct err **e);
/* fsync a segment's record and the directories that name it. */
int plan_sync_record(const char *record_dir, struct err **e);
/* Read a record back; its digest must match its content and, when pin is
 * not NULL, the pin. */
int plan_read_record(const char *record_dir, const char *pin,
		     struct plan **out, struct err **e);
/* The pinned digest of a segment. */
int plan_read_pin(const char *exec_dir, unsigned int segment, char **digest,
		  struct err **e);

json_t *plan_to_json(const struct plan *p);
void plan_free(struct plan *p);

#endif
