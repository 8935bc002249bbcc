/* bbuf.c: see bbuf.h. */
#include "lib/bbuf.h"

#include <stdlib.h>
#include <string.h>

size_t bbuf_take(char *data, size_t size, size_t nmemb, void *arg)
{
	struct bbuf *b = arg;
	size_t len = size * nmemb;
	char *p;

	if (b->over || b->n + len > b->max) {
		b->over = true;
		return 0;
	}
	p = realloc(b->p, b->n + len + 1);
	if (!p)
		return 0;
	memcpy(p + b->n, data, len);
	b->p = p;
	b->n += len;
	b->p[b->n] = '\0';
	return len;
}
