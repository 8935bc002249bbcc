/* cleanup.h: scope-bound ownership for heap memory, fds, FILE streams and
 * jansson values, so every early return releases what it holds. */
#ifndef CORDON_LIB_CLEANUP_H
#define CORDON_LIB_CLEANUP_H

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static inline void cleanup_freep(void *p)
{
	free(*(void **)p);
}

static inline void cleanup_closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		close(*fd);
		errno = saved;
	}
}

static inline void cleanup_fclosep(FILE **f)
{
	if (*f)
		fclose(*f);
}

void cleanup_strvp(char ***v);

#define _cleanup_free_ __attribute__((cleanup(cleanup_freep)))
#define _cleanup_close_ __attribute__((cleanup(cleanup_closep)))
#define _cleanup_fclose_ __attribute__((cleanup(cleanup_fclosep)))
#define _cleanup_strv_ __attribute__((cleanup(cleanup_strvp)))

/* Hand ownership out of a cleanup-scoped variable. */
#define steal_pointer(pp)                                                      \
	({                                                                     \
		__typeof__(*(pp)) steal_tmp_ = *(pp);                          \
		*(pp) = NULL;                                                  \
		steal_tmp_;                                                    \
	})

static inline int steal_fd(int *fd)
{
	int r = *fd;
	*fd = -1;
	return r;
}

#endif
