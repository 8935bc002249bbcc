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
	return done_testing();
}
