/* framing.c (test): the chunked decoder (the body's end found exactly,
 * re-encoded plainly, fed whole and a byte at a time, malformed input
 * refused) and the response head rebuilt with Connection: close and the
 * body's framing read from it. */
#include "gateway/framing.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

/* Feed in by pieces of step bytes; the decoded output and where it ended. */
static enum chunked_result feed(const char *in, size_t step, char *out, size_t *out_len,
				size_t *end)
{
	struct chunked st = { 0 };
	size_t n = strlen(in), off = 0, o = 0;

	*end = 0;
	while (off < n) {
		size_t k = n - off < step ? n - off : step, used = 0, got = 0;
		enum chunked_result r = chunked_feed(&st, in + off, k, &used, out + o, &got);

		o += got;
		off += used;
		if (r != CHUNKED_MORE) {
			*out_len = o;
			*end = off;
			return r;
		}
	}
	*out_len = o;
	return CHUNKED_MORE;
}

struct chcase {
	const char *in;
	enum chunked_result want;
	const char *out;	/* re-encoded, for CHUNKED_DONE */
	size_t end;		/* bytes of in the body took */
};

static const struct chcase chunk_cases[] = {
	{ "5\r\nhello\r\n0\r\n\r\n", CHUNKED_DONE, "5\r\nhello\r\n0\r\n\r\n", 15 },
	{ "5\r\nhello\r\n0\r\n\r\nGET / HTTP/1.1\r\n\r\n", CHUNKED_DONE,
	  "5\r\nhello\r\n0\r\n\r\n", 15 },
	{ "005;a=b;c=\"d\"\r\nhello\r\n6\r\n world\r\n0;x\r\nT: 1\r\nU: 2\r\n\r\nX", CHUNKED_DONE,
	  "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n", 52 },
	{ "A\r\n0123456789\r\n0\r\n\r\n", CHUNKED_DONE, "a\r\n0123456789\r\n0\r\n\r\n", 20 },
	{ "0\r\n\r\n", CHUNKED_DONE, "0\r\n\r\n", 5 },
	{ "5\r\nhello\r\n", CHUNKED_MORE, NULL, 0 },
	{ "5\r\nhello\r\n0\r\n", CHUNKED_MORE, NULL, 0 },
	/* refused: bare LF, missing CRLF after data, no digits, spaces,
	 * signs, too many digits, a control byte in an extension, a trailer
	 * line that is not a field */
	{ "5\nhello\r\n0\r\n\r\n", CHUNKED_BAD, NULL, 0 },
	{ "5\r\nhello\n0\r\n\r\n", CHUNKED_BAD, NULL, 0 },
	{ "5\r\nhelloX\r\n0\r\n\r\n", CHUNKED_BAD, NULL, 0 },
	{ "\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ ";x\r\n", CHUNKED_BAD, NULL, 0 },
	{ " 5\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "5 \r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "+5\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "0x5\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "1000000000000000\r\n", CHUNKED_BAD, NULL, 0 },
	{ "5;a\nb\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "5;a\001\r\nhello\r\n", CHUNKED_BAD, NULL, 0 },
	{ "0\r\n: no name\r\n\r\n", CHUNKED_BAD, NULL, 0 },
	{ "0\r\nT: 1\n\r\n", CHUNKED_BAD, NULL, 0 },
	{ "0\r\n\n", CHUNKED_BAD, NULL, 0 },
};

static void test_chunked(void)
{
	for (size_t i = 0; i < sizeof(chunk_cases) / sizeof(chunk_cases[0]); i++) {
		const struct chcase *c = &chunk_cases[i];
		static const size_t steps[] = { 1, 2, 7, 4096 };

		for (size_t s = 0; s < sizeof(steps) / sizeof(steps[0]); s++) {
			char out[256];
			size_t out_len = 0, end = 0;
			enum chunked_result r = feed(c->in, steps[s], out, &out_len, &end);
			bool good = r == c->want;

			if (good && r == CHUNKED_DONE)
				good = end == c->end && out_len == strlen(c->out) &&
				       memcmp(out, c->out, out_len) == 0;
			if (!ok(good, "case %zu in pieces of %zu: %s", i, steps[s],
				c->want == CHUNKED_DONE ? "ends where it should, re-encoded" :
				c->want == CHUNKED_MORE ? "wants more" : "refused"))
				diag("got %d, end %zu, out %.*s", (int)r, end, (int)out_len, out);
		}
	}
}

/* The output never outgrows the input by more than the slack, however
 * the input is cut (a long size line ending in the next feed). */
static void test_slack(void)
{
	const char *in = "00000000000000f;ext\r\n0123456789abcde\r\n0\r\n\r\n";
	struct chunked st = { 0 };
	char out[64 + CHUNKED_SLACK];
	size_t used, got, worst = 0;

	for (size_t i = 0; in[i]; i++) {
		enum chunked_result r = chunked_feed(&st, in + i, 1, &used, out, &got);

		if (got > worst)
			worst = got;
		if (r != CHUNKED_MORE)
			break;
	}
	ok(worst <= 1 + CHUNKED_SLACK, "a byte in gives at most 1 + CHUNKED_SLACK out (%zu)", worst);
}

static enum response_result resp(const char *in, bool head_request, struct response_info *ri)
{
	return response_head(in, strlen(in), head_request, ri);
}

static void test_response(void)
{
	struct response_info ri;
	const char *in;

	in = "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nConnection: keep-alive, X-Hop\r\n"
	     "Keep-Alive: timeout=5\r\nX-Hop: 1\r\nProxy-Connection: keep-alive\r\nX-End: 2\r\n\r\nhello";
	ok(resp(in, false, &ri) == RESPONSE_OK, "a response head parses");
	is_str(ri.head, "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-End: 2\r\nConnection: close\r\n\r\n",
	       "hop-by-hop headers and those Connection names dropped, Connection: close added");
	ok(ri.used == strlen(in) - 5 && ri.body == RESPONSE_BODY_LENGTH && ri.length == 5,
	   "its length and framing: Content-Length 5");
	free(ri.head);
	ok(resp(in, true, &ri) == RESPONSE_OK && ri.body == RESPONSE_BODY_NONE,
	   "the same answering a HEAD: no body");
	free(ri.head);

	in = "HTTP/1.1 200 OK\nTransfer-Encoding: chunked\nContent-Length: 9\n\n";
	ok(resp(in, false, &ri) == RESPONSE_OK && ri.body == RESPONSE_BODY_CHUNKED,
	   "LF line ends; chunked wins over Content-Length");
	is_str(ri.head, "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
	       "... rebuilt with CRLF, the Content-Length dropped");
	free(ri.head);
	ok(resp("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n", false, &ri) == RESPONSE_OK &&
		   ri.body == RESPONSE_BODY_CLOSE,
	   "a transfer coding not ending in chunked: until the close");
	free(ri.head);
	ok(resp("HTTP/1.0 200 OK\r\n\r\n", false, &ri) == RESPONSE_OK && ri.body == RESPONSE_BODY_CLOSE,
	   "no length: until the close");
	free(ri.head);
	ok(resp("HTTP/1.1 204 No Content\r\nContent-Length: 3\r\n\r\n", false, &ri) == RESPONSE_OK &&
		   ri.body == RESPONSE_BODY_NONE,
	   "204: no body");
	free(ri.head);
	ok(resp("HTTP/1.1 304 Not Modified\r\n\r\n", false, &ri) == RESPONSE_OK &&
		   ri.body == RESPONSE_BODY_NONE,
	   "304: no body");
	free(ri.head);
	ok(resp("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\n\r\n", false, &ri) == RESPONSE_OK &&
		   ri.interim && ri.used == 25,
	   "100 Continue: interim, its own length");
	ok(ri.head && !strstr(ri.head, "Connection: close"), "... and no Connection: close on it");
	free(ri.head);
	ok(resp("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n", false, &ri) == RESPONSE_MORE,
	   "a head without its end: more");
	ok(resp("HTTP/1.1 2", false, &ri) == RESPONSE_MORE, "a status line without its end: more");

	static const char *const bad[] = {
		"HTTP/1.1 101 Switching Protocols\r\nUpgrade: x\r\n\r\n",
		"HTTP/2 200 OK\r\n\r\n",
		"HTTP/1.1 20 OK\r\n\r\n",
		"HTTP/1.1 200OK\r\n\r\n",
		"HTTP/1.1 600 What\r\n\r\n",
		"SSH-2.0-x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n",
		"HTTP/1.1 200 OK\r\nNo colon\r\n\r\n",
		"HTTP/1.1 200 OK\r\n folded: x\r\n\r\n",
		"HTTP/1.1 200 OK\r\nA: b\rc\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent-Length : 5\r\n\r\n",
		"HTTP/1.1 200 OK\r\nContent Length: 5\r\n\r\n",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ok(resp(bad[i], false, &ri) == RESPONSE_BAD, "bad response head %zu refused", i);

	char *big = malloc(RESPONSE_HEAD_MAX + 64);
	if (big) {
		memset(big, 'a', RESPONSE_HEAD_MAX + 63);
		memcpy(big, "HTTP/1.1 200 OK\r\nX: ", 20);
		big[RESPONSE_HEAD_MAX + 63] = '\0';
		ok(resp(big, false, &ri) == RESPONSE_BAD, "a head over %d bytes refused", RESPONSE_HEAD_MAX);
		free(big);
	}
}

int main(void)
{
	test_chunked();
	test_slack();
	test_response();
	return done_testing();
}
