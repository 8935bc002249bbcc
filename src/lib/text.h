/* text.h: text that crossed from a sandbox, made safe to print; how near
 * two words are. */
#ifndef CORDON_LIB_TEXT_H
#define CORDON_LIB_TEXT_H

#include <stdbool.h>
#include <stddef.h>

/* Make the n-byte buffer s a string of printable ASCII: cut at the first
 * NUL (or at n - 1), every byte outside 0x20-0x7e replaced by '?'. A
 * terminal then shows what cordon prints, never an escape sequence of
 * the sandbox's choosing. */
void text_printable(char *s, size_t n);

/* Do a and b differ by exactly one edit: a character added, dropped or
 * changed, or two neighbours swapped? ("netwrok" and "network" do;
 * equal words do not.) What a refusal offers as `did you mean`. */
bool text_one_edit(const char *a, const char *b);

#endif
