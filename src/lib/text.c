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

static void term_hex(FILE *f, const unsigned char *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "\\x%02x", b[i]);
}

/* Is c a valid k-th byte (k >= 1) of a sequence starting with lead?
 * Overlong forms, surrogates and code points past U+10FFFF are not. */
static bool term_cont(unsigned char lead, size_t k, unsigned char c)
{
	if (c < 0x80 || c > 0xbf)
		return false;
	if (k != 1)
		return true;
	return !((lead == 0xe0 && c < 0xa0) || (lead == 0xed && c > 0x9f) ||
		 (lead == 0xf0 && c < 0x90) || (lead == 0xf4 && c > 0x8f));
}

void text_term_write(FILE *f, struct text_term *st, const char *p, size_t n, bool lines)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (st->n > 0) {
			if (term_cont(st->pend[0], st->n, c)) {
				st->pend[st->n++] = c;
				if (st->n < st->need)
					continue;
				/* U+0080-U+009F: C2 80 - C2 9F */
				if (st->pend[0] == 0xc2 && st->pend[1] <= 0x9f)
					term_hex(f, st->pend, st->n);
				else
					fwrite(st->pend, 1, st->n, f);
				st->n = 0;
				continue;
			}
			term_hex(f, st->pend, st->n);
			st->n = 0;
		}
		if (c < 0x80) {
			if ((c >= 0x20 && c != 0x7f) || (lines && (c == '\n' || c == '\t')))
				fputc(c, f);
			else
				term_hex(f, &c, 1);
		} else if (c >= 0xc2 && c <= 0xf4) {
			st->pend[0] = c;
			st->n = 1;
			st->need = c < 0xe0 ? 2 : c < 0xf0 ? 3 : 4;
		} else {
			term_hex(f, &c, 1);
		}
	}
}

void text_term_end(FILE *f, struct text_term *st)
{
	term_hex(f, st->pend, st->n);
	st->n = 0;
}

void text_term_puts(FILE *f, const char *s, bool lines)
{
	struct text_term st = { .n = 0 };

	if (!s)
		return;
	text_term_write(f, &st, s, strlen(s), lines);
	text_term_end(f, &st);
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
