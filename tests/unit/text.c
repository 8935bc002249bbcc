/* text.c: text that crossed from a sandbox is printed as plain ASCII. */
#include "lib/text.h"
#include "tap.h"

#include <stdio.h>
#include <string.h>

int main(void)
{
	char a[] = "exec\033]0;pwned\007 \xc3\xa9t\xc3\xa9";
	char b[8] = { 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h' };
	char c[] = "set no_new_privs";

	text_printable(a, sizeof(a));
	is_str(a, "exec?]0;pwned? ??t??", "escape, bell and non-ASCII bytes become '?'");
	text_printable(b, sizeof(b));
	is_str(b, "abcdefg", "an unterminated buffer is cut at its last byte");
	text_printable(c, sizeof(c));
	is_str(c, "set no_new_privs", "plain text is left as it is");

	/* to a terminal: C0, DEL, C1 raw and UTF-8 encoded, broken UTF-8 */
	{
		char buf[512];
		FILE *f;
		struct text_term st = { .n = 0 };

		f = fmemopen(buf, sizeof(buf), "w");
		text_term_puts(f, "a\033]52;c;eA==\007 b\x9b" "31m c\xc2\x9d" "52;c;eA==\xc2\x9c d", true);
		fclose(f);
		is_str(buf, "a\\x1b]52;c;eA==\\x07 b\\x9b31m c\\xc2\\x9d52;c;eA==\\xc2\\x9c d",
		       "ESC, BEL, raw CSI (0x9b) and U+009D/U+009C (OSC 52 in UTF-8) are shown as \\xNN");
		f = fmemopen(buf, sizeof(buf), "w");
		text_term_puts(f, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xc2\xa0\tx\n", true);
		fclose(f);
		is_str(buf, "\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x99\x82 \xc2\xa0\tx\n",
		       "control: other UTF-8 (U+00A0 too), a tab and a newline pass as they are");
		f = fmemopen(buf, sizeof(buf), "w");
		text_term_puts(f, "t\tn\n\x7f \xc0\xaf \xed\xa0\x80 \xe2\x82 \xc2", false);
		fclose(f);
		is_str(buf, "t\\x09n\\x0a\\x7f \\xc0\\xaf \\xed\\xa0\\x80 \\xe2\\x82 \\xc2",
		       "without lines: tab and newline escaped; DEL, overlong, surrogate and cut sequences too");
		f = fmemopen(buf, sizeof(buf), "w");
		text_term_write(f, &st, "x\xc2", 2, true);
		text_term_write(f, &st, "\x9d" "y\xe2\x82", 4, true);
		text_term_write(f, &st, "\xac", 1, true);
		text_term_end(f, &st);
		fclose(f);
		is_str(buf, "x\\xc2\\x9dy\xe2\x82\xac", "a character cut between two writes is judged whole");
	}

	/* one edit: added, dropped, changed, two neighbours swapped */
	ok(text_one_edit("netwrk", "network"), "a letter dropped is one edit");
	ok(text_one_edit("networks", "network"), "a letter added is one edit");
	ok(text_one_edit("netwerk", "network"), "a letter changed is one edit");
	ok(text_one_edit("netwrok", "network"), "two neighbours swapped is one edit");
	ok(text_one_edit("xnetwork", "network"), "a letter added in front is one edit");
	ok(text_one_edit("a", ""), "one letter against none is one edit");
	ok(!text_one_edit("network", "network"), "equal words are not one edit apart");
	ok(!text_one_edit("ntwrok", "network"), "a letter dropped and a pair swapped are two");
	ok(!text_one_edit("nwteork", "network"), "a pair swapped across a letter is two");
	ok(!text_one_edit("net", "network"), "four letters short is not one edit");
	ok(!text_one_edit("writ", "read"), "unrelated words are not one edit apart");
	return done_testing();
}
