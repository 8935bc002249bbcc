/* feeder.h: the stdin of an executor that takes its input as a stream
 * (claude-code's stream-json). The wrapper's fd 0 becomes a pipe that a
 * process of its own, outside the sandbox, feeds: the first message, then
 * each message the host leaves in the job's inbox (inject), as a user
 * message. It closes the pipe once the command has answered every message
 * it was sent (a "result" line in the job's log) and nothing waits in the
 * inbox, so the command ends; it ends itself with the wrapper. It needs
 * nothing of the daemon: an adopted segment takes inject the same way. */
#ifndef CORDON_HOST_FEEDER_H
#define CORDON_HOST_FEEDER_H

#include "lib/err.h"

int host_feeder_start(const char *first, const char *inbox, const char *log, struct err **e);

/* One stream-json user message (a line, newline included) carrying text;
 * NULL when text is not valid UTF-8 or out of memory. The executor's first
 * message and the feeder's later ones are made by it alike. */
char *host_claude_user_message(const char *text);

#endif
