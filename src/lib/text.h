/* text.h: text that crossed from a sandbox, made safe to print. */
#ifndef CORDON_LIB_TEXT_H
#define CORDON_LIB_TEXT_H

#include <stddef.h>

/* Make the n-byte buffer s a string of printable ASCII: cut at the first
 * NUL (or at n - 1), every byte outside 0x20-0x7e replaced by '?'. A
 * terminal then shows what cordon prints, never an escape sequence of
 * the sandbox's choosing. */
void text_printable(char *s, size_t n);

#endif
