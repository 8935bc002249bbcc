/* num.c: see num.h. */
#include "num.h"

#include <errno.h>

int num_parse_ulong(const char *s, unsigned long max, unsigned long *out)
{
	unsigned long v = 0;

	if (!s || !*s)
		return errno = EINVAL, -1;
	for (; *s; s++) {
		unsigned int d;

		if (*s < '0' || *s > '9')
			return errno = EINVAL, -1;
		d = (unsigned int)(*s - '0');
		if (v > (max - d) / 10)
			return errno = ERANGE, -1;
		v = v * 10 + d;
	}
	*out = v;
	return 0;
}
