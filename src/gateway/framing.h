/* framing.h: HTTP/1.1 message framing for absolute-form http:// requests,
 * which the gateway serves one per connection: where a chunked request
 * body ends (so that nothing the client sends after it reaches the
 * origin), and the origin's response head rebuilt to say Connection:
 * close (so that the client sends its next request on a new connection,
 * where it is checked). Pure functions over buffers; no I/O. */
#ifndef CORDON_GATEWAY_FRAMING_H
#define CORDON_GATEWAY_FRAMING_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A chunked body (RFC 9112 section 7.1), decoded strictly and re-encoded:
 * every line must end in CRLF; sizes are hex digits (at most 15);
 * extensions (visible ASCII and tabs, at most 4 KiB a line) and trailer
 * fields (at most 16 KiB in all) are read and dropped. The origin gets
 * "<hex>\r\n<data>\r\n" per chunk and "0\r\n\r\n" at the end: it cannot
 * read the body's end anywhere but where the gateway did. */
struct chunked {
	int state;
	uint64_t size;		/* the chunk being read */
	unsigned digits;
	size_t line;		/* bytes of the current extension or trailer line */
	size_t trailers;	/* bytes of trailer fields so far */
};

enum chunked_result {
	CHUNKED_MORE,	/* all of in used, the body goes on */
	CHUNKED_DONE,	/* the body ended after *used bytes of in */
	CHUNKED_BAD,	/* malformed: end the connection */
};

/* Feed in[0..n). What the origin gets is written to out, which has room
 * for n + CHUNKED_SLACK bytes (a chunk's size line can end in this feed
 * and have begun in the last one; otherwise the output never outgrows
 * what it was decoded from); *out_len is what was written there, *used
 * what was taken from in. */
#define CHUNKED_SLACK 32
enum chunked_result chunked_feed(struct chunked *st, const char *in, size_t n,
				 size_t *used, char *out, size_t *out_len);

#define RESPONSE_HEAD_MAX 65536

enum response_result {
	RESPONSE_MORE,	/* no complete head yet */
	RESPONSE_OK,
	RESPONSE_BAD,
};

/* How a response's body ends (RFC 9112 section 6.3). */
enum response_body {
	RESPONSE_BODY_NONE,	/* HEAD, 204, 304 */
	RESPONSE_BODY_LENGTH,
	RESPONSE_BODY_CHUNKED,
	RESPONSE_BODY_CLOSE,	/* until the origin closes */
};

struct response_info {
	size_t used;		/* bytes of buf the head took */
	char *head;		/* the head for the client (malloc'd, NUL-terminated) */
	size_t head_len;
	bool interim;		/* 1xx: the final head follows */
	enum response_body body;
	uint64_t length;	/* RESPONSE_BODY_LENGTH */
};

/* One response head at the start of buf[0..len): "HTTP/1.x NNN ..." then
 * header lines (CRLF or LF ends) and an empty line. On RESPONSE_OK, out
 * says how long it was, how its body ends (head_request: it answers a
 * HEAD), and holds the head to send to the client: the status line,
 * every header but Connection, Keep-Alive, Proxy-Connection,
 * Proxy-Authenticate and those Connection names (and Content-Length
 * beside Transfer-Encoding, which wins), then "Connection: close" (not on
 * an interim 1xx head). A 101 is bad (the gateway never forwards
 * Upgrade), as are Content-Length values that differ or are not numbers,
 * and a head over RESPONSE_HEAD_MAX. */
enum response_result response_head(const char *buf, size_t len, bool head_request,
				   struct response_info *out);

#endif
