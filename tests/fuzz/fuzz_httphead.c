/* tests/fuzz/fuzz_httphead.c: libFuzzer target for the HTTP/1.1 head
 * tokenizer (src/lib/httphead.c), which the gateway's request and
 * response parsers, the daemon client's httpc and the Engine's wire all
 * read heads with.
 *
 * The first byte picks the line ends and the bounds; the rest is a
 * head, read a line at a time, each line also tokenized as a request
 * line, a status line and a field. Checked: every line lies in the
 * input and holds no NUL, CR or LF; a CRLF head's lines end in CRLF; a
 * field's name is a token and its value has no control byte and no
 * space or tab at either end; a request line's method is a token and
 * its target is not empty and has no space; a status code is 100 to
 * 599; no more fields than the bound; a head read whole is read the same
 * again, and every shorter prefix of it waits for more. Any breach
 * aborts, so libFuzzer records the input. */
#include "lib/httphead.h"
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static void check_line(const char *buf, size_t len, struct httphead_span l)
{
	CHECK(l.p >= buf && l.p + l.n <= buf + len);
	CHECK(!memchr(l.p, '\0', l.n) && !memchr(l.p, '\r', l.n) && !memchr(l.p, '\n', l.n));
}

static void check_tokens(struct httphead_span l)
{
	struct httphead_span a, b;
	int code = 0, minor = -1;

	if (httphead_field(l, &a, &b) == HTTPHEAD_OK) {
		CHECK(httphead_is_token(a) && a.p == l.p && a.p[a.n] == ':');
		CHECK(b.p >= l.p && b.p + b.n <= l.p + l.n);
		CHECK(b.n == 0 || (b.p[0] != ' ' && b.p[0] != '\t' && b.p[b.n - 1] != ' ' &&
				   b.p[b.n - 1] != '\t'));
		for (size_t i = 0; i < b.n; i++)
			CHECK((unsigned char)b.p[i] >= 0x20 ? b.p[i] != 0x7f : b.p[i] == '\t');
	}
	if (httphead_request_line(l, &a, &b, &minor) == HTTPHEAD_OK) {
		CHECK(httphead_is_token(a) && a.p == l.p);
		CHECK(b.n > 0 && !memchr(b.p, ' ', b.n) && b.p + b.n + 9 == l.p + l.n);
		CHECK(minor == 0 || minor == 1);
	}
	if (httphead_status_line(l, &code, &minor, &b) == HTTPHEAD_OK) {
		CHECK(code >= 100 && code <= 599 && (minor == 0 || minor == 1));
		CHECK(b.p >= l.p && b.p + b.n <= l.p + l.n);
	}
}

/* Read a head: HTTPHEAD_OK with *used once its empty line is read, else
 * the error; check every line on the way. */
static enum httphead_err read_head(const char *buf, size_t len, enum httphead_eol eol,
				   const struct httphead_limits *lim, size_t *used, bool deep)
{
	struct httphead_reader r;
	struct httphead_span l, n, v;
	enum httphead_err err;
	size_t last = 0;

	httphead_reader_init(&r, buf, len, eol, lim);
	while ((err = httphead_next_line(&r, &l)) == HTTPHEAD_OK) {
		bool start = last == 0 && l.p == buf;

		check_line(buf, len, l);
		CHECK(r.off > last && r.off <= len && r.off <= lim->head_max);
		if (eol == HTTPHEAD_EOL_CRLF)
			CHECK(buf[r.off - 1] == '\n' && buf[r.off - 2] == '\r');
		last = r.off;
		if (deep)
			check_tokens(l);
		if (r.done) {
			*used = r.off;
			return HTTPHEAD_OK;
		}
		if (!start && httphead_field(l, &n, &v) != HTTPHEAD_OK)
			return HTTPHEAD_BAD_NAME;
		CHECK(!lim->fields_max || r.fields <= lim->fields_max);
	}
	return err;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum httphead_eol eols[] = { HTTPHEAD_EOL_CRLF, HTTPHEAD_EOL_FIRST,
						  HTTPHEAD_EOL_LOOSE };
	struct httphead_limits lim = { .head_max = 4096 };
	const char *buf = (const char *)data + 1;
	size_t len, used = 0, again = 0;
	enum httphead_eol eol;

	if (size < 1)
		return 0;
	len = size - 1;
	eol = eols[data[0] % 3];
	lim.start_max = (data[0] & 0x04) ? 64 : 0;
	lim.fields_max = (data[0] & 0x08) ? 4 : 0;
	if (data[0] & 0x10)
		lim.head_max = 128;
	if (read_head(buf, len, eol, &lim, &used, true) != HTTPHEAD_OK)
		return 0;
	CHECK(used <= len);
	CHECK(read_head(buf, used, eol, &lim, &again, false) == HTTPHEAD_OK && again == used);
	/* every shorter prefix waits (bounded, so a run stays quick) */
	for (size_t i = used > 512 ? used - 512 : 0; i < used; i++)
		CHECK(read_head(buf, i, eol, &lim, &again, false) == HTTPHEAD_MORE);
	return 0;
}
