/* text.c: text that crossed from a sandbox is printed as plain ASCII. */
#include "lib/text.h"
#include "tap.h"

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
