/* httphead.c: lib/httphead, the HTTP/1.1 head tokenizer: request and
 * status lines, header fields, line ends, and the caller's bounds; the
 * smuggling shapes (two Content-Length, Content-Length with
 * Transfer-Encoding, a space before the colon, obs-fold, NUL, a bare CR,
 * mixed line ends, an over-long line, too many fields) each refused or
 * handed to the caller whole, never merged or dropped. */
#include "lib/httpc.h"
#include "lib/httphead.h"
#include "tap.h"

#include <string.h>

static struct httphead_span S(const char *s)
{
	return (struct httphead_span){ s, strlen(s) };
}

static bool span_is(struct httphead_span s, const char *want)
{
	return s.n == strlen(want) && memcmp(s.p, want, s.n) == 0;
}

/* Read a whole head with eol and lim: the first error, or OK once its
 * empty line is read; *fields counts the field lines tokenized. */
static enum httphead_err read_head(const char *buf, size_t len, enum httphead_eol eol,
				   const struct httphead_limits *lim, size_t *fields)
{
	struct httphead_reader r;
	struct httphead_span line, name, value;
	enum httphead_err err;

	*fields = 0;
	httphead_reader_init(&r, buf, len, eol, lim);
	while ((err = httphead_next_line(&r, &line)) == HTTPHEAD_OK) {
		if (r.done)
			return r.off == len ? HTTPHEAD_OK : HTTPHEAD_BAD_START;
		if (r.fields == 0)
			continue; /* the start line */
		err = httphead_field(line, &name, &value);
		if (err != HTTPHEAD_OK)
			return err;
		(*fields)++;
	}
	return err;
}

static void request_lines(void)
{
	struct httphead_span m, t;
	int minor = -1;

	ok(httphead_request_line(S("GET http://a/b HTTP/1.1"), &m, &t, &minor) == HTTPHEAD_OK &&
		   span_is(m, "GET") && span_is(t, "http://a/b") && minor == 1,
	   "a request line: method, target, version");
	ok(httphead_request_line(S("GET / HTTP/1.0"), &m, &t, &minor) == HTTPHEAD_OK && minor == 0,
	   "HTTP/1.0");
	is_int(httphead_request_line(S("GET / HTTP/2.0"), &m, &t, &minor), HTTPHEAD_BAD_VERSION,
	       "another well-formed version is told apart (505)");
	is_int(httphead_request_line(S("GET / http/1.1"), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "the version's name is case-sensitive");
	is_int(httphead_request_line(S("GET  / HTTP/1.1"), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "two spaces: an empty target");
	is_int(httphead_request_line(S("GET / HTTP/1.1 "), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "a space after the version");
	is_int(httphead_request_line(S("GET /a b HTTP/1.1"), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "a space in the target");
	is_int(httphead_request_line(S("G(T / HTTP/1.1"), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "a method that is not a token");
	is_int(httphead_request_line(S("GET"), &m, &t, &minor), HTTPHEAD_BAD_START,
	       "a method alone");
}

static void status_lines(void)
{
	struct httphead_span reason;
	int code = 0, minor = -1;

	ok(httphead_status_line(S("HTTP/1.1 200 OK"), &code, &minor, &reason) == HTTPHEAD_OK &&
		   code == 200 && minor == 1 && span_is(reason, "OK"),
	   "a status line: code, version, reason");
	ok(httphead_status_line(S("HTTP/1.0 404"), &code, &minor, &reason) == HTTPHEAD_OK &&
		   code == 404 && minor == 0 && reason.n == 0,
	   "no reason");
	ok(httphead_status_line(S("HTTP/1.1 204 "), &code, &minor, &reason) == HTTPHEAD_OK &&
		   code == 204 && reason.n == 0,
	   "an empty reason after its space");
	ok(httphead_status_line(S("HTTP/1.1 200 caf\xc3\xa9\tok"), &code, &minor, &reason) ==
		   HTTPHEAD_OK,
	   "a reason with a tab and obs-text");
	is_int(httphead_status_line(S("HTTP/1.1 600 X"), &code, &minor, &reason), HTTPHEAD_BAD_START,
	       "a code over 599");
	is_int(httphead_status_line(S("HTTP/1.1 099 X"), &code, &minor, &reason), HTTPHEAD_BAD_START,
	       "a code under 100");
	is_int(httphead_status_line(S("HTTP/1.1 20 OK"), &code, &minor, &reason), HTTPHEAD_BAD_START,
	       "two digits");
	is_int(httphead_status_line(S("HTTP/1.1 200OK"), &code, &minor, &reason), HTTPHEAD_BAD_START,
	       "no space before the reason");
	is_int(httphead_status_line(S("HTTP/1.2 200 OK"), &code, &minor, &reason),
	       HTTPHEAD_BAD_START, "HTTP/1.2");
	is_int(httphead_status_line(S("HTTP/1.1 200 O\x01K"), &code, &minor, &reason),
	       HTTPHEAD_BAD_START, "a control byte in the reason");
	is_int(httphead_status_line(S("HTTP/1.1 200 OK\x7f"), &code, &minor, &reason),
	       HTTPHEAD_BAD_START, "DEL in the reason");
}

static void fields(void)
{
	struct httphead_span n, v;

	ok(httphead_field(S("Content-Length:  12 \t"), &n, &v) == HTTPHEAD_OK &&
		   span_is(n, "Content-Length") && span_is(v, "12"),
	   "a field: its name, its value without the spaces around it");
	ok(httphead_field(S("X-Empty:"), &n, &v) == HTTPHEAD_OK && v.n == 0, "an empty value");
	ok(httphead_field(S("X: a\xff" "b"), &n, &v) == HTTPHEAD_OK, "obs-text in a value");
	is_int(httphead_field(S("Content-Length : 5"), &n, &v), HTTPHEAD_BAD_NAME,
	       "a space before the colon");
	is_int(httphead_field(S("Content-Length\t: 5"), &n, &v), HTTPHEAD_BAD_NAME,
	       "a tab before the colon");
	is_int(httphead_field(S(" folded"), &n, &v), HTTPHEAD_OBS_FOLD, "obs-fold (a space)");
	is_int(httphead_field(S("\tfolded: x"), &n, &v), HTTPHEAD_OBS_FOLD, "obs-fold (a tab)");
	is_int(httphead_field(S("NoColon"), &n, &v), HTTPHEAD_NO_COLON, "no colon");
	is_int(httphead_field(S(": v"), &n, &v), HTTPHEAD_BAD_NAME, "an empty name");
	is_int(httphead_field(S("X\"y: v"), &n, &v), HTTPHEAD_BAD_NAME, "a name that is no token");
	is_int(httphead_field(S("X: a\x01" "b"), &n, &v), HTTPHEAD_BAD_VALUE,
	       "a control byte in a value");
	is_int(httphead_field(S("X: a\x7f"), &n, &v), HTTPHEAD_BAD_VALUE, "DEL in a value");
	ok(httphead_ieq(S("cOnTeNt-LeNgTh"), "content-length") && !httphead_ieq(S("content-lengt"),
										  "content-length"),
	   "names compare without case, whole");
}

static void lines(void)
{
	static const struct httphead_limits lim = { .head_max = 256, .start_max = 32 };
	static const char ok_crlf[] = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\n\r\n";
	static const char ok_lf[] = "GET / HTTP/1.1\nA: 1\nB: 2\n\n";
	size_t nf = 0;
	char nul[] = "GET / HTTP/1.1\r\nA: x\0y\r\n\r\n";

	ok(read_head(ok_crlf, strlen(ok_crlf), HTTPHEAD_EOL_CRLF, &lim, &nf) == HTTPHEAD_OK &&
		   nf == 2,
	   "a CRLF head, two fields");
	ok(read_head(ok_lf, strlen(ok_lf), HTTPHEAD_EOL_FIRST, &lim, &nf) == HTTPHEAD_OK && nf == 2,
	   "a bare-LF head where the start line decides");
	is_int(read_head(ok_lf, strlen(ok_lf), HTTPHEAD_EOL_CRLF, &lim, &nf), HTTPHEAD_BARE_LF,
	       "a bare LF where CRLF is required");
	{
		static const char mixed[] = "GET / HTTP/1.1\r\nA: 1\nB: 2\r\n\r\n";

		is_int(read_head(mixed, strlen(mixed), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_MIXED_EOL, "mixed line ends");
		ok(read_head(mixed, strlen(mixed), HTTPHEAD_EOL_LOOSE, &lim, &nf) == HTTPHEAD_OK &&
			   nf == 2,
		   "mixed line ends read loosely (a response's)");
	}
	{
		static const char cr_lf_head[] = "GET / HTTP/1.1\nA: 1\r\n\n";

		is_int(read_head(cr_lf_head, strlen(cr_lf_head), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_MIXED_EOL, "a CRLF in a bare-LF head");
	}
	{
		static const char bare_cr[] = "GET / HTTP/1.1\r\nA: 1\rB: 2\r\n\r\n";

		is_int(read_head(bare_cr, strlen(bare_cr), HTTPHEAD_EOL_CRLF, &lim, &nf),
		       HTTPHEAD_BARE_CR, "a bare CR within a line (CRLF)");
		is_int(read_head(bare_cr, strlen(bare_cr), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_BARE_CR, "a bare CR within a line (the start line's choice)");
		is_int(read_head(bare_cr, strlen(bare_cr), HTTPHEAD_EOL_LOOSE, &lim, &nf),
		       HTTPHEAD_BARE_CR, "a bare CR within a line (loose)");
	}
	is_int(read_head(nul, sizeof(nul) - 1, HTTPHEAD_EOL_CRLF, &lim, &nf), HTTPHEAD_NUL,
	       "a NUL in a value");
	is_int(read_head(nul, 21, HTTPHEAD_EOL_FIRST, &lim, &nf), HTTPHEAD_NUL,
	       "a NUL is refused before its line ends");
	{
		static const char cr_wait[] = "GET / HTTP/1.1\r\nA: 1\r";
		static const char cr_early[] = "GET / HTTP/1.1\r\nA:\r1";
		static const char cr_lfmode[] = "GET / HTTP/1.1\nA: 1\r";

		is_int(read_head(cr_wait, strlen(cr_wait), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_MORE, "a CR last waits for its LF");
		is_int(read_head(cr_early, strlen(cr_early), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_BARE_CR, "a CR not last is refused before its line ends");
		is_int(read_head(cr_lfmode, strlen(cr_lfmode), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_BARE_CR, "a CR in a bare-LF head, before its line ends");
	}
	{
		static const char long_line[] =
			"GET /aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa HTTP/1.1\r\n\r\n";

		is_int(read_head(long_line, strlen(long_line), HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_START_LONG, "an over-long start line");
		is_int(read_head(long_line, 34, HTTPHEAD_EOL_FIRST, &lim, &nf),
		       HTTPHEAD_START_LONG, "an over-long start line, before its end");
		is_int(read_head(long_line, 32, HTTPHEAD_EOL_FIRST, &lim, &nf), HTTPHEAD_MORE,
		       "a start line at its bound waits");
	}
	{
		char big[300];
		static const struct httphead_limits small = { .head_max = 64 };

		memset(big, 'a', sizeof(big));
		memcpy(big, "GET / HTTP/1.1\r\nX: ", 19);
		is_int(read_head(big, sizeof(big), HTTPHEAD_EOL_CRLF, &small, &nf),
		       HTTPHEAD_HEAD_BIG, "no end within the head's bound");
		is_int(read_head(big, 63, HTTPHEAD_EOL_CRLF, &small, &nf), HTTPHEAD_MORE,
		       "under the bound, it waits");
	}
	{
		static const char four[] = "GET / HTTP/1.1\r\nA: 1\r\nB: 2\r\nC: 3\r\nD: 4\r\n\r\n";
		static const struct httphead_limits three = { .head_max = 256, .fields_max = 3 };
		static const struct httphead_limits four_ok = { .head_max = 256, .fields_max = 4 };

		is_int(read_head(four, strlen(four), HTTPHEAD_EOL_CRLF, &three, &nf),
		       HTTPHEAD_TOO_MANY, "more fields than the bound");
		ok(read_head(four, strlen(four), HTTPHEAD_EOL_CRLF, &four_ok, &nf) == HTTPHEAD_OK &&
			   nf == 4,
		   "as many fields as the bound");
	}
	{
		size_t bad = 0;

		for (size_t i = 0; i < strlen(ok_crlf); i++)
			if (read_head(ok_crlf, i, HTTPHEAD_EOL_FIRST, &lim, &nf) != HTTPHEAD_MORE)
				bad++;
		is_int(bad, 0, "every prefix of a valid head waits for more");
	}
}

/* The framing rules are the callers': the tokenizer gives each field
 * whole, so two Content-Length, or one with Transfer-Encoding, reach the
 * caller's check (here httpc's, which refuses both). */
static void smuggling(void)
{
	static const char two_cl[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
				     "Content-Length: 2\r\n\r\n";
	static const char cl_te[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n"
				    "Transfer-Encoding: chunked\r\n\r\n";
	static const char sp_colon[] = "HTTP/1.1 200 OK\r\nContent-Length : 1\r\n\r\n";
	static const char fold[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n 2\r\n\r\n";
	static const char fine[] = "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n";
	static const struct httphead_limits lim = { .head_max = 256 };
	struct httpc_head h;
	size_t nf = 0;

	ok(read_head(two_cl, strlen(two_cl), HTTPHEAD_EOL_CRLF, &lim, &nf) == HTTPHEAD_OK &&
		   nf == 2,
	   "two Content-Length: both given to the caller");
	is_int(httpc_parse_head(two_cl, strlen(two_cl), &h), HTTPC_BAD,
	       "two Content-Length: refused by httpc");
	is_int(httpc_parse_head(cl_te, strlen(cl_te), &h), HTTPC_BAD,
	       "Content-Length with Transfer-Encoding: refused by httpc");
	is_int(httpc_parse_head(sp_colon, strlen(sp_colon), &h), HTTPC_BAD,
	       "a space before the colon: refused by httpc");
	is_int(httpc_parse_head(fold, strlen(fold), &h), HTTPC_BAD, "obs-fold: refused by httpc");
	ok(httpc_parse_head(fine, strlen(fine), &h) == HTTPC_OK && h.has_length && h.length == 1 &&
		   h.len == strlen(fine),
	   "the control: one Content-Length is read");
}

int main(void)
{
	request_lines();
	status_lines();
	fields();
	lines();
	smuggling();
	return done_testing();
}
