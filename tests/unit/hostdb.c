/* tests/unit/hostdb.c: the daemon's database (src/host/db.c): a job's
 * life (segment opened with its pin, stamped, ended), a second open of the
 * same segment refused, and the history the database keeps itself: a
 * pin, an ended row, a delete and a second stamp are refused even to SQL
 * written against the file directly, next to the same statement allowed
 * where it should be (the control). Reopening migrates nothing twice; a
 * newer schema is refused. */
#include "host/db.h"
#include "tap.h"

#include <fcntl.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dbpath[128];

/* Run sql against the file directly: SQLITE_OK or the error. */
/* The file's bytes (at most max); -1 when it cannot be read. */
static ssize_t file_bytes(const char *path, char *buf, size_t max)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = 0, r;

	if (fd < 0)
		return -1;
	while ((size_t)n < max && (r = read(fd, buf + n, max - (size_t)n)) > 0)
		n += r;
	close(fd);
	return n;
}

/* The WAL and shared-memory files beside a database, removed. */
static void unlink_sidecars(const char *path)
{
	char p[160];

	snprintf(p, sizeof(p), "%s-wal", path);
	unlink(p);
	snprintf(p, sizeof(p), "%s-shm", path);
	unlink(p);
}

static int raw(const char *sql)
{
	sqlite3 *h = NULL;
	int r = sqlite3_open(dbpath, &h);

	if (r == SQLITE_OK)
		r = sqlite3_exec(h, sql, NULL, NULL, NULL);
	sqlite3_close(h);
	return r;
}

struct seen {
	int n;
	char digest[80];
	int result, code, signal;
	pid_t pid;
	long long ended;
	char container[128];
};

static int collect(void *ctx, const struct host_segment *s)
{
	struct seen *v = ctx;

	v->n++;
	snprintf(v->digest, sizeof(v->digest), "%s", s->digest ? s->digest : "");
	v->result = (int)s->result;
	v->code = s->code;
	v->signal = s->signal;
	v->pid = s->wrapper_pid;
	v->ended = (long long)s->ended_ms;
	snprintf(v->container, sizeof(v->container), "%s", s->container ? s->container : "");
	return 0;
}

int main(void)
{
	char dir[] = "/tmp/cordon-hostdb-XXXXXX", id[HOST_JOB_ID_MAX], sql[512];
	struct host_db *db = NULL;
	struct err *e = NULL;
	struct seen v = { 0 };
	unsigned int attempt = 0;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return done_testing();
	}
	snprintf(dbpath, sizeof(dbpath), "%s/cordon.db", dir);
	ok(host_db_open(dbpath, false, &db, &e) == 0, "a new database opens (schema %d)", HOST_DB_SCHEMA);
	if (!db) {
		diag("%s", e ? e->msg : "?");
		return done_testing();
	}
	snprintf(id, sizeof(id), "20261201T000000Z-0123456789abcdef");
	ok(host_db_job_new(db, id, "build", "[\"make\"]", "/srv/p", &e) == 0, "a job");

	struct host_segment s = { .attempt = 1, .n = 1, .provider = "native",
				  .digest = "sha256:abc", .summary = "native: write ws",
				  .record_dir = "/state/runs/x/sandbox/1",
				  .container = "{\"provider\":\"docker\",\"container\":\"c1\"}" };
	snprintf(s.job, sizeof(s.job), "%s", id);
	ok(host_db_segment_open(db, &s, &e) == 0, "segment 1 opened with its pin");
	ok(host_db_segment_open(db, &s, &e) < 0 && e &&
		   strstr(e->msg, "segment 1 of") && strstr(e->msg, "is pinned already"),
	   "a second open of segment 1 is refused");
	err_free(e);
	e = NULL;
	host_db_running(db, collect, &v, &e);
	ok(v.n == 1 && strcmp(v.digest, "sha256:abc") == 0, "recovery lists it, with its pin");
	ok(strcmp(v.container, "{\"provider\":\"docker\",\"container\":\"c1\"}") == 0,
	   "... and its container's pin");
	snprintf(sql, sizeof(sql), "UPDATE segments SET container = '{}' WHERE job = '%s'", id);
	ok(raw(sql) != SQLITE_OK, "a container's pin cannot be changed, even by SQL on the file");

	/* what the database refuses by itself */
	snprintf(sql, sizeof(sql), "UPDATE segments SET digest = 'sha256:other' WHERE job = '%s'",
		 id);
	ok(raw(sql) != SQLITE_OK, "a pin cannot be changed, even by SQL on the file");
	snprintf(sql, sizeof(sql), "UPDATE segments SET wrapper_pid = 7 WHERE job = '%s'", id);
	ok(raw(sql) == SQLITE_OK, "... while the wrapper's stamp can be set once (control)");
	ok(host_db_segment_stamp(db, id, 1, 1, 4242, 99, &e) < 0,
	   "... and not a second time");
	err_free(e);
	e = NULL;
	ok(raw("DELETE FROM segments") != SQLITE_OK && raw("DELETE FROM attempts") != SQLITE_OK &&
		   raw("DELETE FROM jobs") != SQLITE_OK,
	   "no row of the history can be deleted");

	s.result = HOST_EXITED;
	s.code = 3;
	ok(host_db_segment_end(db, &s, true, &e) == 0, "the segment ends (exit 3), and its job");
	memset(&v, 0, sizeof(v));
	host_db_running(db, collect, &v, &e);
	ok(v.n == 0, "nothing left running");
	memset(&v, 0, sizeof(v));
	host_db_segments(db, id, collect, &v, &e);
	ok(v.n == 1 && v.result == HOST_EXITED && v.code == 3 && v.ended > 0 && v.pid == 7,
	   "the job's segment: exited 3, ended, its stamp");
	snprintf(sql, sizeof(sql), "UPDATE segments SET code = 0 WHERE job = '%s'", id);
	ok(raw(sql) != SQLITE_OK, "an ended segment does not change");
	snprintf(sql, sizeof(sql), "UPDATE jobs SET code = 0 WHERE id = '%s'", id);
	ok(raw(sql) != SQLITE_OK, "nor does an ended job");
	ok(host_db_segment_end(db, &s, true, &e) < 0, "ending it again is refused");
	err_free(e);
	e = NULL;

	/* retries: a second attempt of another job */
	char id2[HOST_JOB_ID_MAX] = "20261201T000001Z-0123456789abcdef";
	ok(host_db_job_new(db, id2, "build", NULL, NULL, &e) == 0, "a second job");
	ok(host_db_job_new(db, id2, "build", NULL, NULL, &e) < 0, "... whose id cannot be taken twice");
	err_free(e);
	e = NULL;
	ok(host_db_attempt_new(db, id2, &attempt, &e) == 0 && attempt == 2, "its attempt 2");
	struct host_segment s2 = { .attempt = 2, .n = 1, .digest = "sha256:d", .summary = "none",
				   .record_dir = "/r" };
	snprintf(s2.job, sizeof(s2.job), "%s", id2);
	ok(host_db_segment_open(db, &s2, &e) == 0, "a segment of attempt 2, without a sandbox");
	s2.result = HOST_STOPPED;
	s2.code = 143;
	s2.signal = 15;
	ok(host_db_segment_end(db, &s2, false, &e) == 0, "stopped by TERM, not final");
	snprintf(sql, sizeof(sql), "UPDATE jobs SET code = 1 WHERE id = '%s'", id2);
	ok(raw(sql) == SQLITE_OK, "a job still open can change (control of the trigger)");
	char id3[HOST_JOB_ID_MAX] = "20261201T000002Z-0123456789abcdef";
	json_t *j = NULL;
	ok(host_db_job_new(db, id3, "build", NULL, NULL, &e) == 0 &&
		   host_db_job_refused(db, id3, "sandbox_denied", &e) == 0 &&
		   (j = host_db_job_json(db, id3, &e)) &&
		   strcmp(json_string_value(json_object_get(j, "result")), "refused") == 0 &&
		   json_integer_value(json_object_get(j, "code")) == 125 &&
		   json_array_size(json_object_get(j, "segments")) == 0,
	   "a job refused before any segment: ended, refused, 125, no segment");
	json_decref(j);
	j = host_db_jobs_json(db, &e);
	ok(j && json_array_size(j) == 3, "the list holds the three jobs");
	json_decref(j);
	j = host_db_job_json(db, "nope", &e);
	ok(!j && e && strcmp(e->msg, "no such job") == 0, "an unknown job is no such job");
	err_free(e);
	e = NULL;
	host_db_close(db);
	db = NULL;

	ok(host_db_open(dbpath, true, &db, &e) == 0, "the database opens again (nothing to migrate)");
	memset(&v, 0, sizeof(v));
	if (db)
		host_db_segments(db, id, collect, &v, &e);
	ok(v.n == 1 && strcmp(v.digest, "sha256:abc") == 0, "... with its history");
	host_db_close(db);
	db = NULL;
	/* a schema 1 file (before the jobs' session) migrates, history kept */
	ok(raw("DROP TABLE outputs; ALTER TABLE jobs DROP COLUMN session;"
	       "DROP TRIGGER segments_pinned; ALTER TABLE segments DROP COLUMN container;"
	       "CREATE TRIGGER segments_pinned BEFORE UPDATE OF job, n, attempt, provider, digest,"
	       "  summary, record_dir, started_ms ON segments"
	       "  BEGIN SELECT RAISE(ABORT, 'a pin does not change'); END;"
	       "PRAGMA user_version = 1") == SQLITE_OK,
	   "(the file made schema 1 again)");
	ok(host_db_open(dbpath, true, &db, &e) == 0 && host_db_job_session(db, id, "s-1", &e) == 0,
	   "a schema 1 database is migrated to %d on open (the session is kept again)",
	   HOST_DB_SCHEMA);
	memset(&v, 0, sizeof(v));
	if (db)
		host_db_segments(db, id, collect, &v, &e);
	ok(v.n == 1 && strcmp(v.digest, "sha256:abc") == 0, "... with its history");
	host_db_close(db);
	db = NULL;
	ok(raw("PRAGMA user_version = 99") == SQLITE_OK, "(the file claims schema 99)");
	char want[128];
	snprintf(want, sizeof(want),
		 "database: schema 99 is newer than this cordon's (%d): run the newer cordon",
		 HOST_DB_SCHEMA);
	ok(host_db_open(dbpath, true, &db, &e) < 0 && e && strcmp(e->msg, want) == 0,
	   "a newer schema is refused");
	err_free(e);
	e = NULL;
	host_db_close(db);
	db = NULL;

	/* a damaged page: refused at open, the file left as it was */
	snprintf(sql, sizeof(sql), "PRAGMA user_version = %d; PRAGMA journal_mode = DELETE",
		 HOST_DB_SCHEMA);
	ok(raw(sql) == SQLITE_OK,
	   "(the file back at a schema this cordon reads, its WAL folded in)");
	ok(host_db_open(dbpath, true, &db, &e) == 0, "control: the intact file opens");
	host_db_close(db);
	db = NULL;
	ok(raw("PRAGMA journal_mode = DELETE") == SQLITE_OK, "(its WAL folded in again)");
	char before[65536], after[65536];
	ssize_t nb = file_bytes(dbpath, before, sizeof(before));
	int fd = open(dbpath, O_WRONLY | O_CLOEXEC);
	/* every page but the first (the header and the schema's root) */
	char junk[65536];
	memset(junk, 0xa5, sizeof(junk));
	ok(nb > 8192 && fd >= 0 &&
		   pwrite(fd, junk, (size_t)nb - 4096, 4096) == (ssize_t)((size_t)nb - 4096),
	   "(the file's pages but the first overwritten)");
	if (fd >= 0)
		close(fd);
	nb = file_bytes(dbpath, before, sizeof(before));
	ok(host_db_open(dbpath, true, &db, &e) < 0 && e && strstr(e->msg, "fails its integrity check") &&
		   file_bytes(dbpath, after, sizeof(after)) == nb && memcmp(before, after, (size_t)nb) == 0,
	   "a damaged database is refused at open, and left as it was");
	host_db_close(db);
	db = NULL;
	err_free(e);
	e = NULL;

	/* an empty file: a first start without history, a lost one with it */
	fd = open(dbpath, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd >= 0)
		close(fd);
	unlink_sidecars(dbpath);
	ok(host_db_open(dbpath, true, &db, &e) < 0 && e && strstr(e->msg, "is empty, but") &&
		   file_bytes(dbpath, after, sizeof(after)) == 0,
	   "an empty database where the state dir holds runs is refused, and left empty");
	err_free(e);
	e = NULL;
	json_t *jobs = NULL;
	ok(host_db_open(dbpath, false, &db, &e) == 0 && (jobs = host_db_jobs_json(db, &e)) &&
		   json_array_size(jobs) == 0,
	   "control: the same empty file on a first start is made the database");
	json_decref(jobs);
	host_db_close(db);
	snprintf(sql, sizeof(sql), "rm -rf '%s'", dir);
	if (system(sql) != 0)
		diag("could not remove %s", dir);
	return done_testing();
}
