/* tests/fuzz/fuzz_engine_wire.c: libFuzzer target for the Docker Engine
 * client's wire formats (src/container/wire.c): the attach stream's
 * demultiplexer, the hijacked connection's response head and the
 * import's stream of JSON messages.
 *
 * The input goes to the demultiplexer whole and again cut where its
 * first byte says: both give the same bytes on the same streams, or both
 * refuse it; nothing given out is on a stream above 2 or of 0 bytes, and
 * no more bytes come out than went in. The input is also read as a
 * response head (a status of 100 to 599 when read, with a length no
 * larger than it says) and as an import's stream (an ID that is one, an
 * error printable). Any breach aborts, so libFuzzer records the input.
 *
 * Like the unit test, it compiles wire.c in whole: the fuzz build links
 * only libcordon's sources, which do not hold src/container. */
#include "container/docker/engine/wire.c" // NOLINT(bugprone-suspicious-include)
#include "check.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>


struct sink {
	unsigned char *p;
	size_t n;
	int streams[64];
	size_t calls;
	bool overflow;
};

static void sink_out(void *ctx, int stream, const void *p, size_t n)
{
	struct sink *s = ctx;

	CHECK(stream >= 0 && stream <= 2);
	CHECK(n > 0);
	if (s->calls < 64)
		s->streams[s->calls] = stream;
	s->calls++;
	memcpy(s->p + s->n, p, n);
	s->n += n;
}

static int demux(const uint8_t *data, size_t size, size_t cut, struct sink *s)
{
	struct engine_demux d = { 0 };
	int r = engine_demux_feed(&d, data, cut, sink_out, s);

	if (r == 0)
		r = engine_demux_feed(&d, data + cut, size - cut, sink_out, s);
	CHECK(s->n <= size);
	return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct sink a = { .p = malloc(size + 1) }, b = { .p = malloc(size + 1) };
	struct engine_stream_said said;
	long status;
	long long length;
	int ra, rb;

	if (!a.p || !b.p)
		abort();
	ra = demux(data, size, 0, &a);
	rb = demux(data, size, size ? data[0] % (size + 1) : 0, &b);
	CHECK(ra == rb);
	CHECK(a.n == b.n && memcmp(a.p, b.p, a.n) == 0);
	free(a.p);
	free(b.p);

	if (engine_head_parse((const char *)data, size, &status, &length) == 0) {
		CHECK(status >= 100 && status <= 599);
		CHECK(length >= -1);
		CHECK(size >= 4 && memcmp(data + size - 4, "\r\n\r\n", 4) == 0);
	} else {
		CHECK(status == 0 && length == -1);
	}

	if (engine_stream_read((const char *)data, size, &said) == 0) {
		CHECK(!said.id || engine_image_id_ok(said.id));
		for (const char *c = said.error; c && *c; c++)
			CHECK(*c >= 0x20 && *c <= 0x7e);
		CHECK(!said.error || strlen(said.error) <= MESSAGE_MAX);
		engine_stream_said_clear(&said);
	} else {
		CHECK(!said.id && !said.error);
	}
	return 0;
}
