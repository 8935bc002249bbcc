/* db.c: the daemon's database (see db.h). Statements are prepared per
 * call: the daemon makes a few per launch, and a cache of them is not
 * worth its lifetime rules. Every write is one transaction. */
#include "host/db.h"

#include "lib/cleanup.h"
#include "lib/json.h"

#include <errno.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct host_db {
	sqlite3 *h;
};

/* Version 1. A later version adds a step to migrations[] and never edits
 * this one: a database made by an older build is brought forward. */
static const char schema_v1[] =
	"CREATE TABLE jobs ("
	"  id TEXT PRIMARY KEY, binding TEXT NOT NULL, args TEXT, workspace TEXT,"
	"  created_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL DEFAULT 0,"
	"  result INTEGER NOT NULL DEFAULT 0, code INTEGER NOT NULL DEFAULT 0, reason TEXT"
	") STRICT;"
	"CREATE TABLE attempts ("
	"  job TEXT NOT NULL REFERENCES jobs(id), n INTEGER NOT NULL,"
	"  started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL DEFAULT 0,"
	"  result INTEGER NOT NULL DEFAULT 0, code INTEGER NOT NULL DEFAULT 0, reason TEXT,"
	"  PRIMARY KEY (job, n)"
	") STRICT;"
	"CREATE TABLE segments ("
	"  job TEXT NOT NULL, n INTEGER NOT NULL, attempt INTEGER NOT NULL,"
	"  provider TEXT, digest TEXT NOT NULL, summary TEXT NOT NULL, record_dir TEXT NOT NULL,"
	"  started_ms INTEGER NOT NULL, ended_ms INTEGER NOT NULL DEFAULT 0,"
	"  wrapper_pid INTEGER NOT NULL DEFAULT 0, wrapper_start INTEGER NOT NULL DEFAULT 0,"
	"  result INTEGER NOT NULL DEFAULT 0, code INTEGER NOT NULL DEFAULT 0,"
	"  signal INTEGER NOT NULL DEFAULT 0, reason TEXT,"
	"  PRIMARY KEY (job, n), FOREIGN KEY (job, attempt) REFERENCES attempts(job, n)"
	") STRICT;"
	"CREATE INDEX segments_running ON segments(ended_ms) WHERE ended_ms = 0;"
	/* history is kept */
	"CREATE TRIGGER jobs_kept BEFORE DELETE ON jobs"
	"  BEGIN SELECT RAISE(ABORT, 'history is kept'); END;"
	"CREATE TRIGGER attempts_kept BEFORE DELETE ON attempts"
	"  BEGIN SELECT RAISE(ABORT, 'history is kept'); END;"
	"CREATE TRIGGER segments_kept BEFORE DELETE ON segments"
	"  BEGIN SELECT RAISE(ABORT, 'history is kept'); END;"
	"CREATE TRIGGER jobs_ended BEFORE UPDATE ON jobs WHEN OLD.ended_ms != 0"
	"  BEGIN SELECT RAISE(ABORT, 'an ended job does not change'); END;"
	"CREATE TRIGGER jobs_fixed BEFORE UPDATE OF id, binding, args, workspace, created_ms ON jobs"
	"  BEGIN SELECT RAISE(ABORT, 'what a job was does not change'); END;"
	"CREATE TRIGGER attempts_ended BEFORE UPDATE ON attempts WHEN OLD.ended_ms != 0"
	"  BEGIN SELECT RAISE(ABORT, 'an ended attempt does not change'); END;"
	"CREATE TRIGGER attempts_fixed BEFORE UPDATE OF job, n, started_ms ON attempts"
	"  BEGIN SELECT RAISE(ABORT, 'what an attempt was does not change'); END;"
	"CREATE TRIGGER segments_ended BEFORE UPDATE ON segments WHEN OLD.ended_ms != 0"
	"  BEGIN SELECT RAISE(ABORT, 'an ended segment does not change'); END;"
	"CREATE TRIGGER segments_pinned BEFORE UPDATE OF job, n, attempt, provider, digest,"
	"  summary, record_dir, started_ms ON segments"
	"  BEGIN SELECT RAISE(ABORT, 'a pin does not change'); END;"
	"CREATE TRIGGER segments_stamped BEFORE UPDATE OF wrapper_pid, wrapper_start ON segments"
	"  WHEN OLD.wrapper_pid != 0"
	"  BEGIN SELECT RAISE(ABORT, 'a wrapper is stamped once'); END;";

/* v2: the executor's session (claude-code's), resumed by the next
 * segment; set while the job runs, fixed once it has ended. */
static const char schema_v2[] = "ALTER TABLE jobs ADD COLUMN session TEXT;";

/* v3: the named results a job saves through its toolbelt (job.output);
 * a name may be saved again while the job runs, never after. */
static const char schema_v3[] =
	"CREATE TABLE outputs ("
	"  job TEXT NOT NULL REFERENCES jobs(id), name TEXT NOT NULL, value TEXT NOT NULL,"
	"  saved_ms INTEGER NOT NULL, PRIMARY KEY (job, name)"
	") STRICT;"
	"CREATE TRIGGER outputs_kept BEFORE DELETE ON outputs"
	"  WHEN (SELECT ended_ms FROM jobs WHERE id = OLD.job) != 0"
	"  BEGIN SELECT RAISE(ABORT, 'history is kept'); END;"
	"CREATE TRIGGER outputs_ended BEFORE INSERT ON outputs"
	"  WHEN (SELECT ended_ms FROM jobs WHERE id = NEW.job) != 0"
	"  BEGIN SELECT RAISE(ABORT, 'an ended job does not change'); END;"
	"CREATE TRIGGER outputs_fixed BEFORE UPDATE ON outputs"
	"  WHEN (SELECT ended_ms FROM jobs WHERE id = OLD.job) != 0"
	"  BEGIN SELECT RAISE(ABORT, 'an ended job does not change'); END;";

/* v4: a container segment's pin beyond the plan's (provider, image,
 * daemon, container, ...: JSON), fixed with the rest of the pin. */
static const char schema_v4[] =
	"ALTER TABLE segments ADD COLUMN container TEXT;"
	"DROP TRIGGER segments_pinned;"
	"CREATE TRIGGER segments_pinned BEFORE UPDATE OF job, n, attempt, provider, digest,"
	"  summary, record_dir, started_ms, container ON segments"
	"  BEGIN SELECT RAISE(ABORT, 'a pin does not change'); END;";

static const char *const migrations[] = { schema_v1, schema_v2, schema_v3, schema_v4 };

static int64_t now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

static int db_fail(struct host_db *db, struct err **e, const char *what)
{
	return err_set(e, ERR_UNAVAILABLE, 0, "database: %s: %s", what, sqlite3_errmsg(db->h));
}

static int exec(struct host_db *db, const char *sql, const char *what, struct err **e)
{
	return sqlite3_exec(db->h, sql, NULL, NULL, NULL) == SQLITE_OK ? 0 : db_fail(db, e, what);
}

/* One integer a query answers (its first row's first column). */
static int query_int(struct host_db *db, const char *sql, const char *what, int *v,
		     struct err **e)
{
	sqlite3_stmt *st = NULL;
	int r = sqlite3_prepare_v2(db->h, sql, -1, &st, NULL);

	if (r == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW) {
		*v = sqlite3_column_int(st, 0);
		sqlite3_finalize(st);
		return 0;
	}
	sqlite3_finalize(st);
	return db_fail(db, e, what);
}

static int user_version(struct host_db *db, int *v, struct err **e)
{
	return query_int(db, "PRAGMA user_version", "read the schema version", v, e);
}

static int migrate(struct host_db *db, struct err **e)
{
	int v = 0;

	if (exec(db, "BEGIN IMMEDIATE", "migrate", e) < 0)
		return -1;
	if (user_version(db, &v, e) < 0)
		goto fail;
	if (v > HOST_DB_SCHEMA) {
		err_set(e, ERR_UNAVAILABLE, 0,
			"database: schema %d is newer than this cordon's (%d): run the newer cordon",
			v, HOST_DB_SCHEMA);
		goto fail;
	}
	for (; v < HOST_DB_SCHEMA; v++) {
		char set[64];

		snprintf(set, sizeof(set), "PRAGMA user_version = %d", v + 1);
		if (exec(db, migrations[v], "migrate", e) < 0 || exec(db, set, "migrate", e) < 0)
			goto fail;
	}
	return exec(db, "COMMIT", "migrate", e);
fail:
	sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
	return -1;
}

/* The whole file read back before anything writes to it: a damaged page
 * is found now, not by the first request that reads it. */
static int integrity(struct host_db *db, const char *path, struct err **e)
{
	sqlite3_stmt *st = NULL;
	int r = sqlite3_prepare_v2(db->h, "PRAGMA quick_check(1)", -1, &st, NULL);
	bool good = r == SQLITE_OK && sqlite3_step(st) == SQLITE_ROW &&
		    sqlite3_column_text(st, 0) &&
		    strcmp((const char *)sqlite3_column_text(st, 0), "ok") == 0;

	sqlite3_finalize(st);
	if (good)
		return 0;
	return err_set(e, ERR_UNAVAILABLE, 0,
		       "database `%s` fails its integrity check; it is left as it is (see "
		       "\"Recovering a state dir\" in docs/host.md)",
		       path);
}

/* Tables in the file: none is a database never written (a first start),
 * or one lost. */
static int tables(struct host_db *db, int *n, struct err **e)
{
	return query_int(db, "SELECT count(*) FROM sqlite_schema", "read the schema", n, e);
}

int host_db_open(const char *path, bool history, struct host_db **out, struct err **e)
{
	struct host_db *db = calloc(1, sizeof(*db));
	int n = 0;

	if (!db)
		return err_set(e, ERR_INTERNAL, ENOMEM, "database");
	if (sqlite3_open_v2(path, &db->h,
			    SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOFOLLOW |
				    SQLITE_OPEN_FULLMUTEX,
			    NULL) != SQLITE_OK) {
		err_set(e, ERR_UNAVAILABLE, 0, "database `%s`: %s", path,
			db->h ? sqlite3_errmsg(db->h) : "cannot open");
		host_db_close(db);
		return -1;
	}
	sqlite3_busy_timeout(db->h, 5000);
	/* nothing is written before the file is known good: a damaged one,
	 * or an empty one where the state dir shows a history, is refused
	 * and left as it is (migrate would make it a new, empty history) */
	if (integrity(db, path, e) < 0 || tables(db, &n, e) < 0 ||
	    (n == 0 && history &&
	     err_set(e, ERR_UNAVAILABLE, 0,
		     "database `%s` is empty, but this state dir holds runs of jobs (runs/); "
		     "it is left as it is (see \"Recovering a state dir\" in docs/host.md)",
		     path) < 0)) {
		host_db_close(db);
		return -1;
	}
	if (exec(db, "PRAGMA journal_mode = WAL", "WAL", e) < 0 ||
	    exec(db, "PRAGMA synchronous = FULL", "synchronous", e) < 0 ||
	    exec(db, "PRAGMA foreign_keys = ON", "foreign keys", e) < 0 || migrate(db, e) < 0) {
		host_db_close(db);
		return -1;
	}
	*out = db;
	return 0;
}

void host_db_close(struct host_db *db)
{
	if (!db)
		return;
	sqlite3_close(db->h);
	free(db);
}

/* A prepared statement with its text arguments bound in order ("s" text,
 * "i" 64-bit integer, "n" text or NULL). */
static sqlite3_stmt *prep(struct host_db *db, const char *sql, const char *types, ...)
{
	sqlite3_stmt *st = NULL;
	int r = SQLITE_OK;
	va_list ap;

	va_start(ap, types);
	if (sqlite3_prepare_v2(db->h, sql, -1, &st, NULL) != SQLITE_OK)
		r = SQLITE_ERROR;
	for (size_t i = 0; r == SQLITE_OK && types[i]; i++) {
		int col = (int)i + 1;

		/* clang-tidy 14 reads ap as never started, past va_start above */
		if (types[i] == 'i') {
			int64_t v = va_arg(ap, int64_t); // NOLINT(clang-analyzer-valist.Uninitialized)

			r = sqlite3_bind_int64(st, col, v);
		} else {
			const char *v = va_arg(ap, const char *); // NOLINT(clang-analyzer-valist.Uninitialized)

			r = v ? sqlite3_bind_text(st, col, v, -1, SQLITE_TRANSIENT)
			      : sqlite3_bind_null(st, col);
		}
	}
	va_end(ap);
	if (r != SQLITE_OK) {
		sqlite3_finalize(st);
		return NULL;
	}
	return st;
}

/* Run a statement made by prep to its end; how many rows it changed. */
static int run(struct host_db *db, sqlite3_stmt *st, const char *what, struct err **e)
{
	int r;

	if (!st)
		return db_fail(db, e, what);
	r = sqlite3_step(st);
	sqlite3_finalize(st);
	if (r != SQLITE_DONE)
		return db_fail(db, e, what);
	return sqlite3_changes(db->h);
}

static int begin(struct host_db *db, struct err **e)
{
	return exec(db, "BEGIN IMMEDIATE", "begin", e);
}

static int commit(struct host_db *db, int r, struct err **e)
{
	if (r < 0) {
		sqlite3_exec(db->h, "ROLLBACK", NULL, NULL, NULL);
		return -1;
	}
	return exec(db, "COMMIT", "commit", e) < 0 ? -1 : r;
}

int host_db_job_new(struct host_db *db, const char *id, const char *binding,
		    const char *args_json, const char *workspace, struct err **e)
{
	int64_t t = now_ms();
	int r;

	if (strlen(id) >= HOST_JOB_ID_MAX)
		return err_set(e, ERR_INTERNAL, 0, "job id too long");
	if (begin(db, e) < 0)
		return -1;
	r = run(db,
		prep(db,
		     "INSERT INTO jobs (id, binding, args, workspace, created_ms)"
		     " VALUES (?, ?, ?, ?, ?)",
		     "snnni", id, binding, args_json, workspace, t),
		"new job", e);
	if (r >= 0)
		r = run(db,
			prep(db, "INSERT INTO attempts (job, n, started_ms) VALUES (?, 1, ?)", "si",
			     id, t),
			"new attempt", e);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_job_refused(struct host_db *db, const char *id, const char *reason,
			struct err **e)
{
	int64_t t = now_ms();
	int r;

	if (begin(db, e) < 0)
		return -1;
	r = run(db,
		prep(db,
		     "UPDATE attempts SET ended_ms = ?, result = ?, code = 125, reason = ?"
		     " WHERE job = ? AND ended_ms = 0",
		     "iins", t, (int64_t)HOST_REFUSED, reason, id),
		"end an attempt", e);
	if (r >= 0)
		r = run(db,
			prep(db,
			     "UPDATE jobs SET ended_ms = ?, result = ?, code = 125, reason = ?"
			     " WHERE id = ? AND ended_ms = 0",
			     "iins", t, (int64_t)HOST_REFUSED, reason, id),
			"end a job", e);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_job_output(struct host_db *db, const char *id, const char *name,
		       const char *value, struct err **e)
{
	int r;

	if (begin(db, e) < 0)
		return -1;
	/* within the job's bounds, counted in the same statement (the
	 * other names' count and bytes, and this value's): the tenant
	 * makes as many calls as it likes, the job keeps what it may */
	r = run(db,
		prep(db,
		     "INSERT INTO outputs (job, name, value, saved_ms) SELECT ?1, ?2, ?3, ?4"
		     " WHERE (SELECT COUNT(*) FROM outputs WHERE job = ?1 AND name != ?2) < ?5"
		     " AND (SELECT COALESCE(SUM(LENGTH(CAST(value AS BLOB))), 0) FROM outputs"
		     "      WHERE job = ?1 AND name != ?2) + LENGTH(CAST(?3 AS BLOB)) <= ?6"
		     " ON CONFLICT (job, name) DO UPDATE SET value = excluded.value,"
		     " saved_ms = excluded.saved_ms",
		     "sssiii", id, name, value, now_ms(), (int64_t)HOST_OUTPUTS_MAX,
		     (int64_t)HOST_OUTPUTS_BYTES_MAX),
		"save an output", e);
	if (r == 0)
		r = err_set(e, ERR_DENIED, 0,
			    "job.output: the job keeps at most %u outputs and %u KiB of them in "
			    "all; this one is not saved",
			    HOST_OUTPUTS_MAX, HOST_OUTPUTS_BYTES_MAX / 1024);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_job_session(struct host_db *db, const char *id, const char *session,
			struct err **e)
{
	int r;

	if (begin(db, e) < 0)
		return -1;
	r = run(db,
		prep(db, "UPDATE jobs SET session = ? WHERE id = ? AND ended_ms = 0", "ss", session,
		     id),
		"keep the session", e);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_segment_open(struct host_db *db, const struct host_segment *s, struct err **e)
{
	sqlite3_stmt *st;
	int r;

	if (begin(db, e) < 0)
		return -1;
	st = prep(db, "SELECT 1 FROM segments WHERE job = ? AND n = ?", "si", s->job,
		  (int64_t)s->n);
	r = st ? sqlite3_step(st) : SQLITE_ERROR;
	sqlite3_finalize(st);
	if (r == SQLITE_ROW) {
		commit(db, -1, e);
		return err_set(e, ERR_UNAVAILABLE, 0, "segment %u of `%s` is pinned already", s->n,
			       s->job);
	}
	if (r != SQLITE_DONE)
		return commit(db, db_fail(db, e, "open a segment"), e);
	r = run(db,
		prep(db,
		     "INSERT INTO segments (job, n, attempt, provider, digest, summary,"
		     " record_dir, started_ms, container) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
		     "siinsssin", s->job, (int64_t)s->n, (int64_t)s->attempt, s->provider,
		     s->digest, s->summary, s->record_dir, now_ms(), s->container),
		"open a segment", e);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_segment_stamp(struct host_db *db, const char *job, unsigned int attempt,
			  unsigned int n, pid_t pid, unsigned long long start, struct err **e)
{
	int r = run(db,
		    prep(db,
			 "UPDATE segments SET wrapper_pid = ?, wrapper_start = ?"
			 " WHERE job = ? AND attempt = ? AND n = ?",
			 "iisii", (int64_t)pid, (int64_t)start, job, (int64_t)attempt, (int64_t)n),
		    "stamp a segment", e);

	if (r == 0)
		return err_set(e, ERR_INTERNAL, 0, "segment %u of `%s`: no such segment", n, job);
	return r < 0 ? -1 : 0;
}

int host_db_segment_end(struct host_db *db, const struct host_segment *s, bool final,
			struct err **e)
{
	int64_t t = now_ms();
	int r;

	if (s->result == HOST_RUNNING)
		return err_set(e, ERR_INTERNAL, 0, "a segment ends with a result");
	if (begin(db, e) < 0)
		return -1;
	r = run(db,
		prep(db,
		     "UPDATE segments SET ended_ms = ?, result = ?, code = ?, signal = ?, reason = ?"
		     " WHERE job = ? AND n = ? AND ended_ms = 0",
		     "iiiinsi", t, (int64_t)s->result, (int64_t)s->code, (int64_t)s->signal,
		     s->reason, s->job, (int64_t)s->n),
		"end a segment", e);
	if (r == 0)
		r = err_set(e, ERR_INTERNAL, 0, "segment %u of `%s` is not running", s->n, s->job);
	if (r >= 0 && final)
		r = run(db,
			prep(db,
			     "UPDATE attempts SET ended_ms = ?, result = ?, code = ?, reason = ?"
			     " WHERE job = ? AND n = ? AND ended_ms = 0",
			     "iiinsi", t, (int64_t)s->result, (int64_t)s->code, s->reason, s->job,
			     (int64_t)s->attempt),
			"end an attempt", e);
	if (r >= 0 && final)
		r = run(db,
			prep(db,
			     "UPDATE jobs SET ended_ms = ?, result = ?, code = ?, reason = ?"
			     " WHERE id = ? AND ended_ms = 0",
			     "iiins", t, (int64_t)s->result, (int64_t)s->code, s->reason, s->job),
			"end a job", e);
	return commit(db, r, e) < 0 ? -1 : 0;
}

int host_db_attempt_new(struct host_db *db, const char *job, unsigned int *attempt,
			struct err **e)
{
	sqlite3_stmt *st;
	int64_t last = 0;
	int r;

	if (begin(db, e) < 0)
		return -1;
	st = prep(db, "SELECT MAX(n) FROM attempts WHERE job = ?", "s", job);
	r = st ? sqlite3_step(st) : SQLITE_ERROR;
	if (r == SQLITE_ROW)
		last = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	if (r != SQLITE_ROW || last == 0)
		return commit(db, err_set(e, ERR_INTERNAL, 0, "job `%s`: no attempt", job), e);
	r = run(db,
		prep(db, "INSERT INTO attempts (job, n, started_ms) VALUES (?, ?, ?)", "sii", job,
		     last + 1, now_ms()),
		"new attempt", e);
	if (commit(db, r, e) < 0)
		return -1;
	*attempt = (unsigned int)(last + 1);
	return 0;
}

static char *col_text(sqlite3_stmt *st, int i)
{
	const unsigned char *t = sqlite3_column_text(st, i);

	return t ? strdup((const char *)t) : NULL;
}

static int each_segment(struct host_db *db, sqlite3_stmt *st,
			int (*fn)(void *ctx, const struct host_segment *s), void *ctx,
			struct err **e)
{
	int r;

	if (!st)
		return db_fail(db, e, "read segments");
	while ((r = sqlite3_step(st)) == SQLITE_ROW) {
		struct host_segment s = { 0 };
		const unsigned char *job = sqlite3_column_text(st, 0);
		int fr;

		snprintf(s.job, sizeof(s.job), "%s", job ? (const char *)job : "");
		s.n = (unsigned int)sqlite3_column_int64(st, 1);
		s.attempt = (unsigned int)sqlite3_column_int64(st, 2);
		s.provider = col_text(st, 3);
		s.digest = col_text(st, 4);
		s.summary = col_text(st, 5);
		s.record_dir = col_text(st, 6);
		s.started_ms = sqlite3_column_int64(st, 7);
		s.ended_ms = sqlite3_column_int64(st, 8);
		s.wrapper_pid = (pid_t)sqlite3_column_int64(st, 9);
		s.wrapper_start = (unsigned long long)sqlite3_column_int64(st, 10);
		s.result = (enum host_result)sqlite3_column_int(st, 11);
		s.code = sqlite3_column_int(st, 12);
		s.signal = sqlite3_column_int(st, 13);
		s.reason = col_text(st, 14);
		s.container = col_text(st, 15);
		fr = fn(ctx, &s);
		free(s.container);
		free(s.provider);
		free(s.digest);
		free(s.summary);
		free(s.record_dir);
		free(s.reason);
		if (fr < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : db_fail(db, e, "read segments");
}

#define SEGMENT_COLS                                                                           \
	"job, n, attempt, provider, digest, summary, record_dir, started_ms, ended_ms,"        \
	" wrapper_pid, wrapper_start, result, code, signal, reason, container"

int host_db_running(struct host_db *db, int (*fn)(void *ctx, const struct host_segment *s),
		    void *ctx, struct err **e)
{
	return each_segment(db,
			    prep(db, "SELECT " SEGMENT_COLS " FROM segments WHERE ended_ms = 0"
				     " ORDER BY job, n", ""),
			    fn, ctx, e);
}

int host_db_segments(struct host_db *db, const char *job,
		     int (*fn)(void *ctx, const struct host_segment *s), void *ctx,
		     struct err **e)
{
	return each_segment(db,
			    prep(db, "SELECT " SEGMENT_COLS " FROM segments WHERE job = ? ORDER BY n",
				 "s", job),
			    fn, ctx, e);
}

const char *host_result_name(enum host_result r)
{
	switch (r) {
	case HOST_RUNNING:
		return "running";
	case HOST_EXITED:
		return "exited";
	case HOST_REFUSED:
		return "refused";
	case HOST_STOPPED:
		return "stopped";
	case HOST_LOST:
		return "lost";
	}
	return "unknown";
}

static json_t *job_row(sqlite3_stmt *st)
{
	json_t *j = json_object();
	const char *names[] = { "id", "binding", "args", "workspace" };

	if (!j)
		return NULL;
	for (int i = 0; i < 4; i++) {
		const unsigned char *t = sqlite3_column_text(st, i);
		/* args are kept as a JSON array's text */
		json_t *v = !t ? json_null()
			       : i == 2 ? json_parse_strict((const char *)t, strlen((const char *)t), NULL)
					: json_string((const char *)t);

		json_object_set_new(j, names[i], v ? v : json_null());
	}
	json_object_set_new(j, "created_ms", json_integer(sqlite3_column_int64(st, 4)));
	json_object_set_new(j, "ended_ms", json_integer(sqlite3_column_int64(st, 5)));
	json_object_set_new(j, "result",
			    json_string(host_result_name((enum host_result)sqlite3_column_int(st, 6))));
	json_object_set_new(j, "code", json_integer(sqlite3_column_int(st, 7)));
	const unsigned char *r = sqlite3_column_text(st, 8);
	json_object_set_new(j, "reason", r ? json_string((const char *)r) : json_null());
	const unsigned char *se = sqlite3_column_text(st, 9);
	json_object_set_new(j, "session", se ? json_string((const char *)se) : json_null());
	return j;
}

static int segment_json(void *ctx, const struct host_segment *s)
{
	json_t *j = json_pack("{s:i, s:i, s:s?, s:s, s:s, s:s, s:I, s:I, s:s, s:i, s:i, s:s?}",
			      "n", (int)s->n, "attempt", (int)s->attempt, "provider", s->provider,
			      "digest", s->digest ? s->digest : "", "summary",
			      s->summary ? s->summary : "", "record",
			      s->record_dir ? s->record_dir : "", "started_ms",
			      (json_int_t)s->started_ms, "ended_ms", (json_int_t)s->ended_ms,
			      "result", host_result_name(s->result), "code", s->code, "signal",
			      s->signal, "reason", s->reason);

	/* a container's pin, as the wrapper reported it */
	if (j && s->container) {
		json_t *c = json_parse_strict(s->container, strlen(s->container), NULL);

		if (c)
			json_object_set_new(j, "container", c);
	}
	return j && json_array_append_new(ctx, j) == 0 ? 0 : -1;
}

#define JOB_COLS \
	"id, binding, args, workspace, created_ms, ended_ms, result, code, reason, session"

json_t *host_db_job_json(struct host_db *db, const char *id, struct err **e)
{
	sqlite3_stmt *st = prep(db, "SELECT " JOB_COLS " FROM jobs WHERE id = ?", "s", id);
	json_t *j = NULL, *segs;
	int r;

	if (!st) {
		db_fail(db, e, "read a job");
		return NULL;
	}
	r = sqlite3_step(st);
	if (r == SQLITE_ROW)
		j = job_row(st);
	sqlite3_finalize(st);
	if (r == SQLITE_DONE) {
		err_set(e, ERR_CONFIG, 0, "no such job");
		return NULL;
	}
	segs = json_array();
	if (!j || !segs || r != SQLITE_ROW) {
		json_decref(j);
		json_decref(segs);
		if (r != SQLITE_ROW)
			db_fail(db, e, "read a job");
		else
			err_set(e, ERR_INTERNAL, ENOMEM, "job");
		return NULL;
	}
	if (host_db_segments(db, id, segment_json, segs, e) < 0) {
		json_decref(j);
		json_decref(segs);
		return NULL;
	}
	json_object_set_new(j, "segments", segs);
	/* its named results, by name */
	json_t *outs = json_object();
	st = prep(db, "SELECT name, value FROM outputs WHERE job = ? ORDER BY name", "s", id);
	while (st && outs && sqlite3_step(st) == SQLITE_ROW)
		json_object_set_new(outs, (const char *)sqlite3_column_text(st, 0),
				    json_string((const char *)sqlite3_column_text(st, 1)));
	sqlite3_finalize(st);
	json_object_set_new(j, "outputs", outs ? outs : json_object());
	return j;
}

json_t *host_db_jobs_json(struct host_db *db, struct err **e)
{
	sqlite3_stmt *st = prep(db, "SELECT " JOB_COLS " FROM jobs ORDER BY created_ms DESC, id DESC",
				"");
	json_t *arr = json_array();
	int r;

	if (!st || !arr) {
		sqlite3_finalize(st);
		json_decref(arr);
		db_fail(db, e, "list jobs");
		return NULL;
	}
	while ((r = sqlite3_step(st)) == SQLITE_ROW)
		json_array_append_new(arr, job_row(st));
	sqlite3_finalize(st);
	if (r != SQLITE_DONE) {
		json_decref(arr);
		db_fail(db, e, "list jobs");
		return NULL;
	}
	return arr;
}

int host_db_sandboxed(struct host_db *db,
		      int (*fn)(void *ctx, const char *workspace, const char *record_dir,
				const char *digest),
		      void *ctx, struct err **e)
{
	sqlite3_stmt *st = prep(db,
				"SELECT jobs.workspace, segments.record_dir, segments.digest"
				" FROM segments JOIN jobs ON jobs.id = segments.job"
				" WHERE segments.provider IS NOT NULL ORDER BY segments.started_ms",
				"");
	int r = st ? SQLITE_ROW : SQLITE_ERROR;

	while (st && (r = sqlite3_step(st)) == SQLITE_ROW)
		if (fn(ctx, (const char *)sqlite3_column_text(st, 0),
		       (const char *)sqlite3_column_text(st, 1),
		       (const char *)sqlite3_column_text(st, 2)) < 0) {
			sqlite3_finalize(st);
			return -1;
		}
	sqlite3_finalize(st);
	return r == SQLITE_DONE ? 0 : db_fail(db, e, "read the sandboxed runs' history");
}

int host_db_attempt_end(struct host_db *db, const char *job, unsigned int attempt,
			enum host_result result, int code, const char *reason, struct err **e)
{
	int r = run(db,
		    prep(db,
			 "UPDATE attempts SET ended_ms = ?, result = ?, code = ?, reason = ?"
			 " WHERE job = ? AND n = ? AND ended_ms = 0",
			 "iiinsi", now_ms(), (int64_t)result, (int64_t)code, reason, job,
			 (int64_t)attempt),
		    "end an attempt", e);

	if (r == 0)
		return err_set(e, ERR_INTERNAL, 0, "attempt %u of `%s` is not running", attempt, job);
	return r < 0 ? -1 : 0;
}
