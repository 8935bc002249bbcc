/* wire.c: the Engine's wire formats that need no I/O, each pure and
 * fuzzed (with the ID checks they use): the frames of an attach stream
 * (engine_demux_feed), the head of the response that hands a connection
 * over (engine_head_parse, read by attach.c itself, since curl does not
 * give a hijacked connection back), and the stream of JSON messages an
 * image import answers. Each reads the daemon's bytes as hostile:
 * bounded, strict, never trusting a size beyond what it counts. It
 * needs nothing of the other engine files, so that its unit test and
 * fuzz target compile it in alone. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/httphead.h"
#include "lib/json.h"
#include "lib/text.h"

#include <stdlib.h>
#include <string.h>

/* --- IDs ------------------------------------------------------------------ */

bool engine_is_hex64(const char *s)
{
	size_t i;

	for (i = 0; s && s[i]; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return i == 64;
}

bool engine_image_id_ok(const char *s)
{
	return s && strncmp(s, "sha256:", 7) == 0 && engine_is_hex64(s + 7);
}

/* --- attach frames --------------------------------------------------------- */

int engine_demux_feed(struct engine_demux *d, const void *buf, size_t n,
		      void (*out)(void *ctx, int stream, const void *p, size_t n), void *ctx)
{
	const unsigned char *p = buf;

	while (!d->bad && n > 0) {
		if (d->left == 0) {
			size_t take = sizeof(d->head) - d->have;

			if (take > n)
				take = n;
			memcpy(d->head + d->have, p, take);
			d->have += (unsigned)take;
			p += take;
			n -= take;
			/* a stream Docker does not have, or padding that is
			 * not zero, is not its framing: nothing after it
			 * can be read as frames (told as soon as it comes) */
			if (d->head[0] > 2 || (d->have > 1 && d->head[1]) ||
			    (d->have > 2 && d->head[2]) || (d->have > 3 && d->head[3])) {
				d->bad = true;
				break;
			}
			if (d->have < sizeof(d->head))
				break;
			d->stream = d->head[0];
			d->left = (uint32_t)d->head[4] << 24 | (uint32_t)d->head[5] << 16 |
				  (uint32_t)d->head[6] << 8 | (uint32_t)d->head[7];
			d->have = 0;
		} else {
			size_t take = d->left < n ? d->left : n;

			out(ctx, d->stream, p, take);
			d->left -= (uint32_t)take;
			p += take;
			n -= take;
		}
	}
	return d->bad ? -1 : 0;
}

bool engine_demux_idle(const struct engine_demux *d)
{
	return !d->bad && d->left == 0 && d->have == 0;
}

/* --- a response head ------------------------------------------------------- */

/* One header field (lib/httphead): its Content-Length and
 * Transfer-Encoding noted. */
static int head_field(struct httphead_span line, long long *length, bool *chunked)
{
	struct httphead_span name, v;

	if (httphead_field(line, &name, &v) != HTTPHEAD_OK)
		return -1;
	if (httphead_ieq(name, "content-length")) {
		long long len = 0;

		if (v.n == 0 || v.n > 15)
			return -1;
		for (size_t i = 0; i < v.n; i++) {
			if (v.p[i] < '0' || v.p[i] > '9')
				return -1;
			len = len * 10 + (v.p[i] - '0');
		}
		/* two that differ: which one frames the body is a guess */
		if (*length >= 0 && *length != len)
			return -1;
		*length = len;
	} else if (httphead_ieq(name, "transfer-encoding")) {
		*chunked = true;
	}
	return 0;
}

/* The whole head, CRLF throughout, ending where the buffer does. */
static int head_parse(const char *buf, size_t n, long *status, long long *length)
{
	static const struct httphead_limits lim = { .head_max = ENGINE_HEAD_MAX };
	struct httphead_reader r;
	struct httphead_span line, reason;
	bool chunked = false;
	int code = 0, minor = 0;

	if (n < 16 || n > ENGINE_HEAD_MAX || memcmp(buf + n - 4, "\r\n\r\n", 4) != 0)
		return -1;
	httphead_reader_init(&r, buf, n, HTTPHEAD_EOL_CRLF, &lim);
	if (httphead_next_line(&r, &line) != HTTPHEAD_OK ||
	    httphead_status_line(line, &code, &minor, &reason) != HTTPHEAD_OK)
		return -1;
	*status = code;
	for (;;) {
		if (httphead_next_line(&r, &line) != HTTPHEAD_OK)
			return -1;
		if (r.done)
			break;
		if (head_field(line, length, &chunked) < 0)
			return -1;
	}
	/* nothing after the head's end */
	if (r.off != n)
		return -1;
	if (chunked)
		*length = -1;
	return 0;
}

int engine_head_parse(const char *buf, size_t n, long *status, long long *length)
{
	*status = 0;
	*length = -1;
	if (head_parse(buf, n, status, length) == 0)
		return 0;
	*status = 0;
	*length = -1;
	return -1;
}

/* --- a stream of JSON messages --------------------------------------------- */

void engine_stream_said_clear(struct engine_stream_said *s)
{
	free(s->error);
	free(s->id);
	*s = (struct engine_stream_said){ 0 };
}

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The first error a message tells: "error", or errorDetail.message. */
static int said_error(struct engine_stream_said *s, json_t *m)
{
	const char *text = json_string_value(json_object_get(m, "error"));

	if (!text)
		text = json_string_value(json_object_get(json_object_get(m, "errorDetail"),
							 "message"));
	/* an error with no words is an error all the same */
	if (!text && (json_object_get(m, "error") || json_object_get(m, "errorDetail")))
		text = "(no message)";
	if (!text || s->error)
		return 0;
	s->error = strndup(text, MESSAGE_MAX);
	if (!s->error)
		return -1;
	text_printable(s->error, strlen(s->error) + 1);
	return 0;
}

int engine_stream_read(const char *buf, size_t n, struct engine_stream_said *out)
{
	size_t at = 0;

	*out = (struct engine_stream_said){ 0 };
	while (at < n) {
		const char *nl = memchr(buf + at, '\n', n - at);
		size_t end = nl ? (size_t)(nl - buf) : n, b = at, e = end;
		_cleanup_json_ json_t *m = NULL;
		const char *status;

		at = end + 1;
		while (b < e && blank(buf[b]))
			b++;
		while (e > b && blank(buf[e - 1]))
			e--;
		if (b == e)
			continue;
		m = json_parse_strict(buf + b, e - b, NULL);
		if (!json_is_object(m))
			goto bad;
		out->messages++;
		if (said_error(out, m) < 0)
			goto bad;
		status = json_string_value(json_object_get(m, "status"));
		if (engine_image_id_ok(status)) {
			free(out->id);
			out->id = strdup(status);
			if (!out->id)
				goto bad;
		}
	}
	return 0;
bad:
	engine_stream_said_clear(out);
	return -1;
}
