/* text.h: text that crossed from a sandbox, made safe to print; how near
 * two words are. */
#ifndef CORDON_LIB_TEXT_H
#define CORDON_LIB_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Make the n-byte buffer s a string of printable ASCII: cut at the first
 * NUL (or at n - 1), every byte outside 0x20-0x7e replaced by '?'. A
 * terminal then shows what cordon prints, never an escape sequence of
 * the sandbox's choosing. */
void text_printable(char *s, size_t n);

/* Text another wrote (a sandboxed command's log, a job's args, a path it
 * made), written to a terminal as text and never as a command to it. Shown
 * as \xNN, byte by byte: C0 controls and DEL (newline and tab kept when
 * lines is set), C1 controls raw (0x80-0x9f: 0x9b is CSI, 0x9d OSC on a
 * terminal reading 8-bit controls) and UTF-8 encoded (U+0080-U+009F, e.g.
 * U+009D starting an OSC 52 clipboard write), and every byte that is not
 * part of well-formed UTF-8. Other UTF-8 passes as it is. The state carries
 * a character cut between two writes; text_term_end writes what is left. */
struct text_term {
	unsigned char pend[4];
	size_t n, need;
};
void text_term_write(FILE *f, struct text_term *st, const char *p, size_t n, bool lines);
void text_term_end(FILE *f, struct text_term *st);
/* One whole string s so (NULL: nothing). */
void text_term_puts(FILE *f, const char *s, bool lines);

/* Do a and b differ by exactly one edit: a character added, dropped or
 * changed, or two neighbours swapped? ("netwrok" and "network" do;
 * equal words do not.) What a refusal offers as `did you mean`. */
bool text_one_edit(const char *a, const char *b);

#endif
