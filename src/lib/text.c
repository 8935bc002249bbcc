/* text.c: see text.h. */
#include "lib/text.h"

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
