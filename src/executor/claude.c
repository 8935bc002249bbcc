/* claude.c: the claude-code executor's own code that runs after a
 * segment (see claude.h): the session its log announced kept with the
 * job for the next segment to resume, and why its last turn failed. */
#include "executor/claude.h"
#include "host/db.h"
#include "lib/cleanup.h"
#include "lib/json.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A session id as claude writes it; anything else (the log is the
 * sandboxed command's to write) is not kept. */
bool host_claude_session_ok(const char *v)
{
	size_t n = v ? strlen(v) : 0;

	return n > 0 && n <= 128 &&
	       strspn(v, "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ-_") == n;
}

/* A failed turn's text for people: printable ASCII, at most 200 bytes
 * (it is the sandboxed command's to write). */
static char *turn_error(const char *v)
{
	char *out = NULL;
	size_t n = 0;

	if (!v)
		v = "(no message)";
	out = malloc(201);
	for (; out && *v && n < 200; v++)
		out[n++] = (*v >= 0x20 && *v < 0x7f) ? *v : '?';
	if (out)
		out[n] = '\0';
	return out;
}

/* How much of a log the daemon reads at a segment's end: its output is
 * the sandboxed command's to make as large as it likes, and the daemon's
 * loop serves every job. */
#define SESSION_SCAN_MAX ((off_t)16 << 20)

/* What a claude-code job's log says, in the segment's part of it (from
 * from, at most its last SESSION_SCAN_MAX bytes): the last session its
 * stream's init message announced, kept with the job for the next
 * segment to resume; and, when its last turn failed, why (*failed, the
 * caller frees). */
void host_claude_keep_session(struct host_db *db, const char *state_dir, const char *job,
			      off_t from, char **failed)
{
	_cleanup_free_ char *path = NULL, *line = NULL, *last = NULL;
	_cleanup_fclose_ FILE *f = NULL;
	struct stat st;
	off_t at, end;
	size_t cap = 0;
	ssize_t n;
	struct err *e = NULL;

	if (asprintf(&path, "%s/runs/%s/log", state_dir, job) < 0)
		return;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fstat(fd, &st) < 0 || !(f = fdopen(fd, "r"))) {
		if (fd >= 0)
			close(fd);
		return;
	}
	end = st.st_size;
	at = end - from > SESSION_SCAN_MAX ? end - SESSION_SCAN_MAX : from;
	if (at < 0 || at > end || fseeko(f, at, SEEK_SET) < 0)
		return;
	/* (in the middle of a line: from the next one) */
	if (at > from && getline(&line, &cap, f) > 0)
		at = ftello(f);
	while (at < end && (n = getline(&line, &cap, f)) > 0) {
		at += n;
		json_t *j;
		const char *v;

		if (line[0] != '{' || (!strstr(line, "\"init\"") && !strstr(line, "\"result\"")))
			continue;
		/* (the command's words: strict, a duplicate key is no line of
		 * claude's) */
		j = json_parse_strict(line, (size_t)n, NULL);
		if (failed && json_is_object(j) && json_string_value(json_object_get(j, "type")) &&
		    strcmp(json_string_value(json_object_get(j, "type")), "result") == 0) {
			free(*failed);
			*failed = json_is_true(json_object_get(j, "is_error"))
					  ? turn_error(json_string_value(json_object_get(j, "result")))
					  : NULL;
		}
		v = json_string_value(json_object_get(j, "session_id"));
		if (json_is_object(j) && json_string_value(json_object_get(j, "subtype")) &&
		    strcmp(json_string_value(json_object_get(j, "subtype")), "init") == 0 &&
		    host_claude_session_ok(v)) {
			free(last);
			last = strdup(v);
		}
		json_decref(j);
	}
	if (last && host_db_job_session(db, job, last, &e) < 0)
		err_print(stderr, e);
	err_free(e);
}
