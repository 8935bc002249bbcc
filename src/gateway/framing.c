/* framing.c: where a chunked request body ends, and the response head
 * the client gets (see framing.h). Strict where the gateway and an origin
 * could disagree: a body's end is decided here once, and the origin is
 * given a body re-encoded so plainly that it can only agree. */
#include "gateway/framing.h"
#include "lib/httphead.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHUNK_DIGITS_MAX 15
#define CHUNK_LINE_MAX 4096
#define TRAILERS_MAX 16384

enum {
	CH_SIZE,	/* hex digits of a chunk size */
	CH_EXT,		/* an extension, up to CR */
	CH_SIZE_LF,
	CH_DATA,
	CH_DATA_CR,
	CH_DATA_LF,
	CH_TRAILER_START,
	CH_TRAILER,
	CH_TRAILER_LF,
	CH_FINAL_LF,
	CH_DONE,
};

static int hex_value(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* A byte of an extension or a field value: visible, space, tab, obs-text. */
static bool is_line_byte(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

enum chunked_result chunked_feed(struct chunked *st, const char *in, size_t n,
				 size_t *used, char *out, size_t *out_len)
{
	size_t i = 0, o = 0;

	*used = 0;
	*out_len = 0;
	while (i < n) {
		unsigned char c = (unsigned char)in[i];

		switch (st->state) {
		case CH_SIZE: {
			int v = hex_value((char)c);

			if (v >= 0 && st->digits < CHUNK_DIGITS_MAX) {
				st->size = st->size * 16 + (uint64_t)v;
				st->digits++;
			} else if (st->digits && c == ';') {
				st->state = CH_EXT;
				st->line = 0;
			} else if (st->digits && c == '\r') {
				st->state = CH_SIZE_LF;
			} else {
				return CHUNKED_BAD;
			}
			i++;
			break;
		}
		case CH_EXT:
			if (c == '\r')
				st->state = CH_SIZE_LF;
			else if (!is_line_byte(c) || ++st->line > CHUNK_LINE_MAX)
				return CHUNKED_BAD;
			i++;
			break;
		case CH_SIZE_LF:
			if (c != '\n')
				return CHUNKED_BAD;
			o += (size_t)snprintf(out + o, CHUNKED_SLACK, "%llx\r\n",
					      (unsigned long long)st->size);
			st->state = st->size ? CH_DATA : CH_TRAILER_START;
			i++;
			break;
		case CH_DATA: {
			size_t k = n - i < st->size ? n - i : (size_t)st->size;

			memcpy(out + o, in + i, k);
			o += k;
			i += k;
			st->size -= k;
			if (st->size == 0)
				st->state = CH_DATA_CR;
			break;
		}
		case CH_DATA_CR:
			if (c != '\r')
				return CHUNKED_BAD;
			st->state = CH_DATA_LF;
			i++;
			break;
		case CH_DATA_LF:
			if (c != '\n')
				return CHUNKED_BAD;
			out[o++] = '\r';
			out[o++] = '\n';
			st->size = 0;
			st->digits = 0;
			st->state = CH_SIZE;
			i++;
			break;
		case CH_TRAILER_START:
			if (c == '\r')
				st->state = CH_FINAL_LF;
			else if (httphead_is_tchar(c) && ++st->trailers <= TRAILERS_MAX)
				st->state = CH_TRAILER;
			else
				return CHUNKED_BAD;
			i++;
			break;
		case CH_TRAILER:
			if (c == '\r')
				st->state = CH_TRAILER_LF;
			else if (!is_line_byte(c) || ++st->trailers > TRAILERS_MAX)
				return CHUNKED_BAD;
			i++;
			break;
		case CH_TRAILER_LF:
			if (c != '\n')
				return CHUNKED_BAD;
			st->state = CH_TRAILER_START;
			i++;
			break;
		case CH_FINAL_LF:
			if (c != '\n')
				return CHUNKED_BAD;
			/* the trailer fields are dropped: the end is plain */
			out[o++] = '\r';
			out[o++] = '\n';
			st->state = CH_DONE;
			*used = i + 1;
			*out_len = o;
			return CHUNKED_DONE;
		default:
			return CHUNKED_BAD;
		}
	}
	*used = i;
	*out_len = o;
	return CHUNKED_MORE;
}

/* Is name listed in the Connection header values (comma lists)? */
static bool named_in(struct httphead_span name, const struct httphead_span *conn, size_t nconn)
{
	for (size_t i = 0; i < nconn; i++) {
		struct httphead_span v = conn[i];

		while (v.n) {
			const char *comma = memchr(v.p, ',', v.n);
			struct httphead_span e = { v.p, comma ? (size_t)(comma - v.p) : v.n };

			e = httphead_trim(e);
			if (e.n == name.n && e.n) {
				bool same = true;

				for (size_t k = 0; same && k < e.n; k++) {
					char a = e.p[k], b = name.p[k];

					if (a >= 'A' && a <= 'Z')
						a = (char)(a - 'A' + 'a');
					if (b >= 'A' && b <= 'Z')
						b = (char)(b - 'A' + 'a');
					same = a == b;
				}
				if (same)
					return true;
			}
			if (!comma)
				break;
			v.n -= (size_t)(comma - v.p) + 1;
			v.p = comma + 1;
		}
	}
	return false;
}

/* A response head's bounds and line ends: an origin's lines may end in
 * a bare LF (RFC 9112 section 2.2); the head is rebuilt with CRLF. */
static void head_reader(struct httphead_reader *r, const char *buf, size_t len)
{
	static const struct httphead_limits lim = { .head_max = RESPONSE_HEAD_MAX };

	httphead_reader_init(r, buf, len, HTTPHEAD_EOL_LOOSE, &lim);
}

#define CONN_VALUES_MAX 16

/* Content-Length: decimal numbers (a list, or several headers) that must
 * all be equal. */
static bool content_length(struct httphead_span v, bool *has, uint64_t *len)
{
	while (v.n) {
		const char *comma = memchr(v.p, ',', v.n);
		struct httphead_span e = httphead_trim((struct httphead_span){ v.p, comma ? (size_t)(comma - v.p) : v.n });
		uint64_t x = 0;

		if (e.n == 0 || e.n > 18)
			return false;
		for (size_t i = 0; i < e.n; i++) {
			if (e.p[i] < '0' || e.p[i] > '9')
				return false;
			x = x * 10 + (uint64_t)(e.p[i] - '0');
		}
		if (*has && x != *len)
			return false;
		*has = true;
		*len = x;
		if (!comma)
			break;
		v.n -= (size_t)(comma - v.p) + 1;
		v.p = comma + 1;
	}
	return *has;
}

/* Is the last coding of a Transfer-Encoding value "chunked"? */
static bool ends_chunked(struct httphead_span v)
{
	const char *comma;

	while ((comma = memchr(v.p, ',', v.n))) {
		v.n -= (size_t)(comma - v.p) + 1;
		v.p = comma + 1;
	}
	return httphead_ieq(httphead_trim(v), "chunked");
}

enum response_result response_head(const char *buf, size_t len, bool head_request,
				   struct response_info *out)
{
	size_t o = 0, nconn = 0;
	struct httphead_span line, status, reason, conn[CONN_VALUES_MAX];
	struct httphead_reader rd;
	bool has_len = false, te = false, chunked = false;
	enum httphead_err err;
	uint64_t length = 0;
	char *head;
	int code = 0, minor = 0;

	memset(out, 0, sizeof(*out));
	/* the status line, then find the end of the head */
	head_reader(&rd, buf, len);
	err = httphead_next_line(&rd, &status);
	if (err == HTTPHEAD_MORE)
		return RESPONSE_MORE;
	if (err != HTTPHEAD_OK || httphead_status_line(status, &code, &minor, &reason) != HTTPHEAD_OK)
		return RESPONSE_BAD;
	if (code == 101)
		return RESPONSE_BAD;
	for (;;) {
		struct httphead_span name, value;

		err = httphead_next_line(&rd, &line);
		if (err == HTTPHEAD_MORE)
			return RESPONSE_MORE;
		if (err != HTTPHEAD_OK)
			return RESPONSE_BAD;
		if (rd.done) {
			out->used = rd.off;
			break;
		}
		if (httphead_field(line, &name, &value) != HTTPHEAD_OK)
			return RESPONSE_BAD;
		if (httphead_ieq(name, "connection")) {
			if (nconn == CONN_VALUES_MAX)
				return RESPONSE_BAD;
			conn[nconn++] = value;
		} else if (httphead_ieq(name, "content-length")) {
			if (!content_length(value, &has_len, &length))
				return RESPONSE_BAD;
		} else if (httphead_ieq(name, "transfer-encoding")) {
			te = true;
			chunked = ends_chunked(value); /* the last header's last coding */
		}
	}
	out->interim = code < 200;
	if (out->interim || head_request || code == 204 || code == 304)
		out->body = RESPONSE_BODY_NONE;
	else if (te)
		out->body = chunked ? RESPONSE_BODY_CHUNKED : RESPONSE_BODY_CLOSE;
	else if (has_len)
		out->body = RESPONSE_BODY_LENGTH;
	else
		out->body = RESPONSE_BODY_CLOSE;
	out->length = length;
	/* rebuilt with CRLF: at most one more byte a line, and our own end */
	head = malloc(2 * out->used + 64);
	if (!head)
		return RESPONSE_BAD;
	memcpy(head + o, status.p, status.n);
	o += status.n;
	memcpy(head + o, "\r\n", 2);
	o += 2;
	/* the head read again, its status line skipped: it was read whole */
	head_reader(&rd, buf, out->used);
	(void)httphead_next_line(&rd, &line);
	while (httphead_next_line(&rd, &line) == HTTPHEAD_OK && !rd.done) {
		struct httphead_span name = { line.p, (size_t)((const char *)memchr(line.p, ':', line.n) - line.p) };

		if (httphead_ieq(name, "connection") || httphead_ieq(name, "keep-alive") ||
		    httphead_ieq(name, "proxy-connection") || httphead_ieq(name, "proxy-authenticate") ||
		    (te && httphead_ieq(name, "content-length")) || named_in(name, conn, nconn))
			continue;
		memcpy(head + o, line.p, line.n);
		o += line.n;
		memcpy(head + o, "\r\n", 2);
		o += 2;
	}
	if (!out->interim) {
		memcpy(head + o, "Connection: close\r\n", 19);
		o += 19;
	}
	memcpy(head + o, "\r\n", 2);
	o += 2;
	head[o] = '\0';
	out->head = head;
	out->head_len = o;
	return RESPONSE_OK;
}
