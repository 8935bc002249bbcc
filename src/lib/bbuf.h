/* bbuf.h: a bounded buffer bytes are gathered into, in the shape of a
 * curl write callback (the Engine's answers, the management API's), so
 * that an answer larger than its bound is cut off rather than held. */
#ifndef CORDON_LIB_BBUF_H
#define CORDON_LIB_BBUF_H

#include <stdbool.h>
#include <stddef.h>

/* At most max bytes (NUL-terminated; p NULL until the first), over set
 * once more came. */
struct bbuf {
	char *p;
	size_t n;
	size_t max;
	bool over;
};

/* Append size * nmemb bytes of data to the struct bbuf at arg: their
 * count, or 0 (which ends a curl transfer) when they would pass the
 * bound or memory runs out. */
size_t bbuf_take(char *data, size_t size, size_t nmemb, void *arg);

#endif
