/* syncer.h: the record made durable beside the launch (launch.c). */
#ifndef CORDON_SANDBOX_NATIVE_SYNCER_H
#define CORDON_SANDBOX_NATIVE_SYNCER_H

#include "lib/err.h"

#include <pthread.h>
#include <stdbool.h>

/* The record made durable on a thread of its own: an fsync waits for the
 * filesystem's journal, which takes longer than the sandbox's start, so
 * the launch goes on and the result is collected before cordon reports
 * anything (a failure kills the sandbox as soon as it is known). */
struct syncer {
	pthread_t thread;
	const char *record_dir;
	struct err *err;
	int done_fd;	/* eventfd, readable once the thread is done */
	bool started, joined;
};

/* Start making record_dir durable on a thread (s->done_fd -1 before). */
int syncer_start(struct syncer *s, const char *record_dir, struct err **e);
/* Wait for the thread; -1 with *e when the record is not durable. */
int syncer_finish(struct syncer *s, struct err **e);

#endif
