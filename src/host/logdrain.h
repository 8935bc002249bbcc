/* logdrain.h: the job's log as the host's, not the command's. A
 * segment's wrapper was started with fds 1 and 2 on the job's log
 * (append-only); before it launches anything it puts a pipe there
 * instead, and a child of its own drains the pipe into the log. The
 * command holds the pipe's write end and never the log: it cannot
 * truncate or rewrite what an earlier segment, the daemon (notify) or the
 * wrapper itself (the `cordon: planted:` lines) wrote there. The log is
 * held to HOST_LOG_MAX bytes in all, over every segment: past it, one
 * line says so and the rest of the output is read and dropped (never
 * left to block the command). */
#ifndef CORDON_HOST_LOGDRAIN_H
#define CORDON_HOST_LOGDRAIN_H

#include "lib/err.h"

#include <stdbool.h>
#include <sys/types.h>

#define HOST_LOG_MAX ((off_t)256 * 1024 * 1024)

struct host_logdrain {
	int done;		/* readable (its end) once the drain has ended */
	int log;		/* the log, close-on-exec, for the wrapper's own last words */
};

/* fds 1 and 2 become the pipe; the drain is started. On failure nothing
 * is changed. */
int host_logdrain_start(struct host_logdrain *d, struct err **e);
/* fds 1 and 2 back on the log (this process's last words go there
 * directly). After a launch (wait), a wait of at most
 * HOST_LOGDRAIN_WAIT_MS for the drain to have written all the pipe held
 * (its end: every writer gone), so that the log is whole when the daemon
 * reads it at the segment's end; a command's leftover process holding the
 * pipe open is waited for no longer (the drain goes on without the
 * wrapper). Without a launch nothing is waited for: a provider's helper
 * forked early holds the pipe until this process ends. Once only. */
#define HOST_LOGDRAIN_WAIT_MS 5000
void host_logdrain_finish(struct host_logdrain *d, bool wait);

#endif
