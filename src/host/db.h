/* db.h: the daemon's database (SQLite, WAL): every job, its attempts and
 * their segments, each segment with its pin (the plan's digest and
 * summary, written in the same transaction that opens the segment, before
 * anything is launched). History is kept by the database itself: triggers
 * refuse a delete, a change to a pin, and any change to a row once it has
 * ended. The schema is versioned (PRAGMA user_version) and migrated on
 * open; a database newer than this build is refused. */
#ifndef CORDON_HOST_DB_H
#define CORDON_HOST_DB_H

#include "lib/err.h"

#include <jansson.h>

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define HOST_DB_SCHEMA 4
#define HOST_JOB_ID_MAX 40

struct host_db;

/* What a job, an attempt or a segment came to. */
enum host_result {
	HOST_RUNNING = 0,
	HOST_EXITED,	/* the command's status is the code */
	HOST_REFUSED,	/* cordon refused or failed: code 125, reason set */
	HOST_STOPPED,	/* stopped by the operator (the signal it sent) */
	HOST_LOST,	/* could not be proven after a restart: stopped, failed */
};

struct host_segment {
	char job[HOST_JOB_ID_MAX];
	unsigned int attempt, n;
	char *provider;		/* "native", "srt", or NULL: no sandbox */
	char *digest;		/* the pin */
	char *summary;
	char *record_dir;
	int64_t started_ms, ended_ms;	/* ended_ms 0: running */
	pid_t wrapper_pid;		/* 0 until the wrapper stamped it */
	unsigned long long wrapper_start;	/* its start time, clock ticks since boot */
	enum host_result result;
	int code;		/* exit status (128+N for a signal) */
	int signal;		/* what a stop delivered, 0 if none */
	char *reason;		/* a refusal's reason name, or NULL */
	char *container;	/* a container's pin (JSON), or NULL */
};

/* Open (and make, or migrate) the daemon's database. Refused, the file left
 * as it is: a file that fails SQLite's integrity check, a newer schema,
 * and, with history (the state dir holds runs of jobs), a database with no
 * tables: a lost history is never taken for a first start. */
int host_db_open(const char *path, bool history, struct host_db **out, struct err **e);
void host_db_close(struct host_db *db);

/* A new job (id: plan_new_execution_id's), its first attempt open. */
int host_db_job_new(struct host_db *db, const char *id, const char *binding,
		    const char *args_json, const char *workspace, struct err **e);
/* A job's current attempt and the job end refused (code 125) before any
 * segment was pinned: reason and message say why. */
int host_db_job_refused(struct host_db *db, const char *id, const char *reason,
			struct err **e);

/* A named result of a running job (its toolbelt's job.output); saved
 * again under the same name, it replaces the last. A job keeps at most
 * HOST_OUTPUTS_MAX names and HOST_OUTPUTS_BYTES_MAX bytes of values in
 * all: past either, ERR_DENIED and nothing saved. */
#define HOST_OUTPUTS_MAX 256U
#define HOST_OUTPUTS_BYTES_MAX (1024U * 1024U)
int host_db_job_output(struct host_db *db, const char *id, const char *name,
		       const char *value, struct err **e);
/* The executor's session for a running job (claude-code's session id),
 * which its next segment resumes. */
int host_db_job_session(struct host_db *db, const char *id, const char *session,
			struct err **e);

/* Open segment n of the job's current attempt with its pin, in one
 * transaction; refused (ERR_UNAVAILABLE) when that segment exists. */
int host_db_segment_open(struct host_db *db, const struct host_segment *s, struct err **e);
/* The wrapper's stamp, once. */
int host_db_segment_stamp(struct host_db *db, const char *job, unsigned int attempt,
			  unsigned int n, pid_t pid, unsigned long long start, struct err **e);
/* The end: result, code, signal, reason; closes the attempt and the job
 * with it when final (no retry to come). */
int host_db_segment_end(struct host_db *db, const struct host_segment *s, bool final,
			struct err **e);
/* End a job's attempt (its segment ended already) without ending the
 * job: another attempt follows. */
int host_db_attempt_end(struct host_db *db, const char *job, unsigned int attempt,
			enum host_result result, int code, const char *reason, struct err **e);
/* A new attempt of a job whose last one failed. */
int host_db_attempt_new(struct host_db *db, const char *job, unsigned int *attempt,
			struct err **e);

/* Every segment still running, for recovery: fn gets each (its fields
 * live for the call). */
int host_db_running(struct host_db *db, int (*fn)(void *ctx, const struct host_segment *s),
		    void *ctx, struct err **e);
/* Every segment of a job, in order. */
int host_db_segments(struct host_db *db, const char *job,
		     int (*fn)(void *ctx, const struct host_segment *s), void *ctx,
		     struct err **e);

const char *host_result_name(enum host_result r);

/* A job as the API shows it: {"id", "binding", "args", "workspace",
 * "created_ms", "ended_ms", "result", "code", "reason", "segments": [{"n",
 * "attempt", "provider", "digest", "summary", "record", "started_ms",
 * "ended_ms", "result", "code", "signal", "reason"}]}; NULL with *e set
 * (ERR_CONFIG "no such job" when there is none). */
json_t *host_db_job_json(struct host_db *db, const char *id, struct err **e);
/* Every segment that ran under a provider (a sandbox or a container),
 * oldest first: fn gets its job's workspace (NULL for none), its record
 * dir and its pin; a negative return stops the walk and is returned. (A
 * workspace and what a run's grants reached outlive the job: a binding
 * that dropped its sandbox still finds the files its sandboxed runs
 * wrote.) 0, or -1 with *e. */
int host_db_sandboxed(struct host_db *db,
		      int (*fn)(void *ctx, const char *workspace, const char *record_dir,
				const char *digest),
		      void *ctx, struct err **e);
/* Every job, newest first, without their segments. */
json_t *host_db_jobs_json(struct host_db *db, struct err **e);

#endif
