/* text.c: see text.h. */
#include "lib/text.h"

#include <string.h>

void text_printable(char *s, size_t n)
{
	size_t i;

	if (n == 0)
		return;
	for (i = 0; i + 1 < n && s[i]; i++)
		if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] > 0x7e)
			s[i] = '?';
	s[i] = '\0';
}

bool text_one_edit(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i = 0;

	if (la < lb) {
		const char *t = a;
		size_t lt = la;

		a = b, b = t, la = lb, lb = lt;
	}
	if (la - lb > 1)
		return false;
	while (i < lb && a[i] == b[i])
		i++;
	if (la == lb + 1)	/* a has one character more, at i */
		return strcmp(a + i + 1, b + i) == 0;
	if (i == la)		/* equal */
		return false;
	if (strcmp(a + i + 1, b + i + 1) == 0)	/* one changed */
		return true;
	/* two neighbours swapped */
	return i + 1 < la && a[i] == b[i + 1] && a[i + 1] == b[i] &&
	       strcmp(a + i + 2, b + i + 2) == 0;
}
