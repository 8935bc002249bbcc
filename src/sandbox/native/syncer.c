/* syncer.c: the record made durable on a thread of its own, while the
 * sandbox starts (syncer.h). */
#include "sandbox/native/syncer.h"
#include "lib/cleanup.h"
#include "plan/plan.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <unistd.h>

static void *sync_main(void *arg)
{
	struct syncer *s = arg;
	uint64_t one = 1;

	(void)plan_sync_record(s->record_dir, &s->err);
	if (write(s->done_fd, &one, sizeof(one)) != (ssize_t)sizeof(one))
		abort(); /* an eventfd write of 1 cannot fail */
	return NULL;
}

int syncer_start(struct syncer *s, const char *record_dir, struct err **e)
{
	int r;

	s->record_dir = record_dir;
	s->done_fd = eventfd(0, EFD_CLOEXEC);
	if (s->done_fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "sync the record");
	r = pthread_create(&s->thread, NULL, sync_main, s);
	if (r != 0)
		return err_set(e, ERR_UNAVAILABLE, r, "sync the record");
	s->started = true;
	return 0;
}

int syncer_finish(struct syncer *s, struct err **e)
{
	if (s->started && !s->joined) {
		pthread_join(s->thread, NULL);
		s->joined = true;
	}
	if (s->done_fd >= 0)
		close(s->done_fd);
	s->done_fd = -1;
	if (s->err) {
		err_free(*e);
		*e = steal_pointer(&s->err);
		return -1;
	}
	return 0;
}
