/* engine_demux.c (test): the Engine's wire formats (src/container/wire.c):
 * the attach stream's frames read whole, a byte at a time and in every
 * split, with zero-length and large frames, and malformed headers
 * refused for good; the response head of a hijacked connection (101 and
 * 200 taken, malformed heads refused); the import's stream of JSON
 * messages (the image ID, an error, a line that is not JSON).
 *
 * Unit tests link libcordon.a, which does not hold src/container (that
 * code goes into cordon-host only, with libcurl): wire.c is pure and
 * needs nothing of the rest, so it is compiled into this test whole. */
#include "container/docker/engine/wire.c" // NOLINT(bugprone-suspicious-include)

#include "tap.h"

#include <stdlib.h>
#include <string.h>

struct got {
	char s[3][256];
	size_t n[3];
	size_t calls;
	bool empty_call;
};

static void got_out(void *ctx, int stream, const void *p, size_t n)
{
	struct got *g = ctx;

	g->calls++;
	if (n == 0)
		g->empty_call = true;
	if (stream < 0 || stream > 2 || g->n[stream] + n >= sizeof(g->s[0]))
		return;
	memcpy(g->s[stream] + g->n[stream], p, n);
	g->n[stream] += n;
	g->s[stream][g->n[stream]] = '\0';
}

/* Feed in[0..n) in pieces of step bytes (0: whole): the last result. */
static int feed(const void *in, size_t n, size_t step, struct got *g, struct engine_demux *d)
{
	const unsigned char *p = in;
	size_t off = 0;
	int r = 0;

	*g = (struct got){ 0 };
	*d = (struct engine_demux){ 0 };
	if (step == 0)
		return engine_demux_feed(d, in, n, got_out, g);
	while (off < n) {
		size_t k = n - off < step ? n - off : step;

		r = engine_demux_feed(d, p + off, k, got_out, g);
		off += k;
	}
	return r;
}

static void demux_cases(void)
{
	/* stdout "hello\n", stderr "oops", a frame of 0 bytes, stdout "!" */
	static const unsigned char frames[] = {
		1, 0, 0, 0, 0, 0, 0, 6, 'h', 'e', 'l', 'l', 'o', '\n',
		2, 0, 0, 0, 0, 0, 0, 4, 'o', 'o', 'p', 's',
		1, 0, 0, 0, 0, 0, 0, 0,
		1, 0, 0, 0, 0, 0, 0, 1, '!',
	};
	struct engine_demux d;
	struct got g;
	bool all = true;

	for (size_t step = 0; step <= sizeof(frames); step++) {
		int r = feed(frames, sizeof(frames), step, &g, &d);

		if (r != 0 || strcmp(g.s[1], "hello\n!") != 0 || strcmp(g.s[2], "oops") != 0 ||
		    g.n[0] != 0 || g.empty_call || !engine_demux_idle(&d)) {
			all = false;
			diag("step %zu: r %d, stdout '%s', stderr '%s'", step, r, g.s[1], g.s[2]);
		}
	}
	ok(all, "frames read alike whole and in every split; a frame of 0 bytes gives no call");
	ok(feed(frames, 5, 0, &g, &d) == 0 && !engine_demux_idle(&d) && g.calls == 0,
	   "a header cut short: no output yet, not idle");
	ok(feed(frames, 10, 0, &g, &d) == 0 && !engine_demux_idle(&d) && strcmp(g.s[1], "he") == 0,
	   "a frame cut short: its bytes so far, not idle (a stream that ends here was cut)");

	static const unsigned char stdin_frame[] = { 0, 0, 0, 0, 0, 0, 0, 2, 'i', 'n' };
	ok(feed(stdin_frame, sizeof(stdin_frame), 1, &g, &d) == 0 && strcmp(g.s[0], "in") == 0,
	   "stream 0 (stdin) is a stream");

	static const unsigned char big[] = { 1, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 'a', 'b' };
	ok(feed(big, sizeof(big), 0, &g, &d) == 0 && d.left == 0xffffffffU - 2 &&
		   strcmp(g.s[1], "ab") == 0,
	   "a size of 2^32-1 is counted, not buffered");

	static const unsigned char bad_stream[] = { 3, 0, 0, 0, 0, 0, 0, 1, 'x' };
	ok(feed(bad_stream, sizeof(bad_stream), 0, &g, &d) == -1 && g.calls == 0,
	   "stream 3 is a malformed header: -1, nothing given out");
	static const unsigned char bad_pad[] = { 1, 0, 1, 0, 0, 0, 0, 1, 'x' };
	ok(feed(bad_pad, sizeof(bad_pad), 1, &g, &d) == -1 && g.calls == 0,
	   "padding not zero is a malformed header (fed a byte at a time too)");
	static const unsigned char raw[] = "hello, a TTY's raw bytes";
	ok(feed(raw, sizeof(raw) - 1, 0, &g, &d) == -1, "raw bytes (a TTY's) are not frames");
	ok(engine_demux_feed(&d, frames, sizeof(frames), got_out, &g) == -1 && g.calls == 0 &&
		   !engine_demux_idle(&d),
	   "after a malformed header every feed is -1");
	static const unsigned char late_bad[] = { 1, 0, 0, 0, 0, 0, 0, 1, 'y', 9, 0, 0, 0 };
	ok(feed(late_bad, sizeof(late_bad), 0, &g, &d) == -1 && strcmp(g.s[1], "y") == 0,
	   "frames before a malformed header are given out, the rest not");
}

static void head_cases(void)
{
	static const struct {
		const char *head;
		int r;
		long status;
		long long length;
	} cases[] = {
		{ "HTTP/1.1 101 UPGRADED\r\nContent-Type: application/vnd.docker.raw-stream\r\n"
		  "Connection: Upgrade\r\nUpgrade: tcp\r\n\r\n", 0, 101, -1 },
		{ "HTTP/1.1 200 OK\r\nContent-Type: application/vnd.docker.raw-stream\r\n\r\n", 0, 200,
		  -1 },
		{ "HTTP/1.0 404 Not Found\r\ncontent-length: 42\r\n\r\n", 0, 404, 42 },
		{ "HTTP/1.1 404\r\nContent-Length: 7\r\nContent-Length:7\r\n\r\n", 0, 404, 7 },
		{ "HTTP/1.1 500 x\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", 0, 500,
		  -1 },
		{ "HTTP/1.1 200 OK\r\n\r\n", 0, 200, -1 },
		{ "HTTP/1.1 204\r\n\r\n", 0, 204, -1 },
		/* refused */
		{ "HTTP/1.1 20\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 101 UPGRADED\n\n", -1, 0, -1 },
		{ "HTTP/1.1 101 UPGRADED\r\nA: b\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 101 UPGRADED\r\nA: b\r\r\n\r\n", -1, 0, -1 },
		{ "HTTP/2 200 OK\r\nA: b\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 2x0 OK\r\nA: b\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 600 OK\r\nA: b\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 2000 OK\r\nA: b\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nContent-Length: 1234567890123456\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nA: b\r\n folded\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nNo colon here\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 OK\r\nA: b\r\n\r\nX", -1, 0, -1 },	/* not the end */
		{ "HTTP/1.1 200 OK\r\nA: \x01\r\n\r\n", -1, 0, -1 },
		{ "HTTP/1.1 200 O\x1bK\r\nA: b\r\n\r\n", -1, 0, -1 },
	};
	char big[ENGINE_HEAD_MAX + 64];
	long status;
	long long length;

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		int r = engine_head_parse(cases[i].head, strlen(cases[i].head), &status, &length);

		ok(r == cases[i].r && (r < 0 || (status == cases[i].status && length == cases[i].length)),
		   "head %zu: %s (status %ld, length %lld)", i, cases[i].r == 0 ? "read" : "refused",
		   status, length);
	}
	ok(engine_head_parse("HTTP/1.1 200 OK\r\nA: \0b\r\n\r\n", 26, &status, &length) == -1,
	   "a NUL in a head is refused");
	/* a header value of zeros that takes the head past the limit */
	snprintf(big, sizeof(big), "HTTP/1.1 200 OK\r\nX: %0*d\r\n\r\n", ENGINE_HEAD_MAX, 0);
	ok(strlen(big) > ENGINE_HEAD_MAX &&
		   engine_head_parse(big, strlen(big), &status, &length) == -1,
	   "a head over ENGINE_HEAD_MAX is refused");
}

static void stream_cases(void)
{
	const char *id = "sha256:4804651281f0ec3352fb6aeaa87ff43c2b1da3e42166d230a07fa10a6eb2fdbd";
	char text[512];
	struct engine_stream_said s;

	snprintf(text, sizeof(text), "{\"status\":\"Importing\"}\r\n\r\n{\"status\":\"%s\"}\r\n", id);
	ok(engine_stream_read(text, strlen(text), &s) == 0 && s.id && strcmp(s.id, id) == 0 &&
		   !s.error && s.messages == 2,
	   "the image ID is the status that is one; blank lines skipped");
	engine_stream_said_clear(&s);
	snprintf(text, sizeof(text),
		 "{\"status\":\"%s\"}\n{\"errorDetail\":{\"message\":\"disk \\u001b full\"},"
		 "\"error\":\"disk \\u001b full\"}\n{\"error\":\"second\"}\n",
		 id);
	ok(engine_stream_read(text, strlen(text), &s) == 0 && s.error &&
		   strcmp(s.error, "disk ? full") == 0,
	   "the first error is told, made printable");
	engine_stream_said_clear(&s);
	snprintf(text, sizeof(text), "{\"errorDetail\":{\"message\":\"only detail\"}}");
	ok(engine_stream_read(text, strlen(text), &s) == 0 && s.error &&
		   strcmp(s.error, "only detail") == 0,
	   "errorDetail alone is an error");
	engine_stream_said_clear(&s);
	snprintf(text, sizeof(text), "{\"error\":null}");
	ok(engine_stream_read(text, strlen(text), &s) == 0 && s.error,
	   "an error without words is an error");
	engine_stream_said_clear(&s);
	snprintf(text, sizeof(text), "{\"status\":\"%s\"}\nnot json\n", id);
	ok(engine_stream_read(text, strlen(text), &s) == -1 && !s.id,
	   "a line that is not JSON: the stream is refused, nothing kept");
	snprintf(text, sizeof(text), "[1]\n");
	ok(engine_stream_read(text, strlen(text), &s) == -1, "a message that is not an object");
	snprintf(text, sizeof(text), "{\"status\":\"a\",\"status\":\"%s\"}\n", id);
	ok(engine_stream_read(text, strlen(text), &s) == -1, "a duplicate key is refused");
	ok(engine_stream_read("{\"status\":\"sha256:abc\"}", 23, &s) == 0 && !s.id,
	   "a status that is not a full ID is no ID");
	engine_stream_said_clear(&s);
}

int main(void)
{
	demux_cases();
	head_cases();
	stream_cases();
	return done_testing();
}
