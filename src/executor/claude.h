/* claude.h: the claude-code executor's own code after a segment: what
 * its log says of its session and of its last turn. The log is the
 * sandboxed command's to write: what is read of it is bounded and checked
 * (a session id as claude writes it, a failed turn's text printable). */
#ifndef CORDON_EXECUTOR_CLAUDE_H
#define CORDON_EXECUTOR_CLAUDE_H

#include <stdbool.h>
#include <sys/types.h>

struct host_db;

/* A session id as claude writes it? */
bool host_claude_session_ok(const char *v);
/* Keep the claude session a segment's part of the job's log (state_dir's
 * runs/<job>/log, from from) announced with the job in db; *failed (when
 * asked for): why its last turn failed (the caller frees). */
void host_claude_keep_session(struct host_db *db, const char *state_dir, const char *job,
			      off_t from, char **failed);

#endif
