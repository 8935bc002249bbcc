/* httphead.h: the one HTTP/1.1 head tokenizer (RFC 9112): lines, the
 * request line, the status line and header fields, for every head cordon
 * reads (the gateway's requests and its origins' responses, the daemon
 * client's answers, the Docker Engine's hijacked connection). It splits
 * and checks the grammar only; what a method, a target or a field means
 * is the caller's. Pure: no I/O, no allocation; spans point into the
 * caller's buffer. Strict where two readers of one head could disagree:
 * NUL, a CR that does not end a line, line ends that change within a
 * head, obsolete line folding, a field name that is not a token (a space
 * before the colon), control bytes in a value or a reason. */
#ifndef CORDON_LIB_HTTPHEAD_H
#define CORDON_LIB_HTTPHEAD_H

#include <stdbool.h>
#include <stddef.h>

struct httphead_span {
	const char *p;
	size_t n;
};

enum httphead_err {
	HTTPHEAD_OK = 0,
	HTTPHEAD_MORE,		/* no line end yet, and under the limits */
	HTTPHEAD_NUL,		/* a NUL byte */
	HTTPHEAD_BARE_CR,	/* a CR that does not end a line */
	HTTPHEAD_BARE_LF,	/* an LF without its CR (HTTPHEAD_EOL_CRLF) */
	HTTPHEAD_MIXED_EOL,	/* CRLF and bare LF in one head (HTTPHEAD_EOL_FIRST) */
	HTTPHEAD_START_LONG,	/* the start line is longer than start_max */
	HTTPHEAD_HEAD_BIG,	/* no end of the head within head_max */
	HTTPHEAD_TOO_MANY,	/* more header fields than fields_max */
	HTTPHEAD_OBS_FOLD,	/* a field line that starts with a space or tab */
	HTTPHEAD_NO_COLON,	/* a field line without a colon */
	HTTPHEAD_BAD_NAME,	/* a field name that is empty or not a token */
	HTTPHEAD_BAD_VALUE,	/* a control byte (not tab) or DEL in a value */
	HTTPHEAD_BAD_START,	/* a malformed request or status line */
	HTTPHEAD_BAD_VERSION,	/* a well-formed HTTP/x.y other than 1.0 and 1.1 */
};

/* How lines end. */
enum httphead_eol {
	HTTPHEAD_EOL_CRLF,	/* every line in CRLF */
	HTTPHEAD_EOL_FIRST,	/* the start line decides: all CRLF, or all bare
				 * LF with no CR anywhere */
	HTTPHEAD_EOL_LOOSE,	/* each line in LF, one CR before it dropped
				 * (RFC 9112 section 2.2: a recipient MAY) */
};

/* The caller's bounds. */
struct httphead_limits {
	size_t head_max;	/* bytes looked at for the head's end */
	size_t start_max;	/* bytes of the start line without its end; 0: none */
	size_t fields_max;	/* header fields; 0: none but head_max */
};

/* A reader over one buffer, a line at a time, so that a broken line is
 * refused as soon as it is complete, before the head's end arrives. */
struct httphead_reader {
	const char *buf;
	size_t len;
	enum httphead_eol eol;
	struct httphead_limits lim;
	size_t off;		/* where the next line starts; once done, the
				 * head's length */
	size_t fields;		/* field lines read */
	bool started;		/* the start line was read */
	bool crlf;		/* HTTPHEAD_EOL_FIRST: what the start line chose */
	bool done;		/* the empty line that ends the head was read */
};

void httphead_reader_init(struct httphead_reader *r, const char *buf, size_t len,
			  enum httphead_eol eol, const struct httphead_limits *lim);

/* The next line, without its end. The first is the start line; an
 * empty one after it ends the head (r->done, r->off its length).
 * HTTPHEAD_MORE when no line end is in the buffer yet but what is there
 * could still become a valid head; any other error is final. */
enum httphead_err httphead_next_line(struct httphead_reader *r, struct httphead_span *line);

/* A field line: "name:value", the value without the spaces and tabs
 * around it. */
enum httphead_err httphead_field(struct httphead_span line, struct httphead_span *name,
				 struct httphead_span *value);

/* "METHOD SP TARGET SP HTTP/1.x", single spaces: the method a token,
 * the target not empty (its form is the caller's to judge); *minor is
 * the version's 0 or 1. */
enum httphead_err httphead_request_line(struct httphead_span line,
					struct httphead_span *method,
					struct httphead_span *target, int *minor);

/* "HTTP/1.x SP NNN[ SP reason]": a code of 100 to 599, a reason of
 * tabs, spaces, visible ASCII and obs-text. */
enum httphead_err httphead_status_line(struct httphead_span line, int *code, int *minor,
				       struct httphead_span *reason);

/* RFC 9110's tchar, and a token (one or more). */
bool httphead_is_tchar(unsigned char c);
bool httphead_is_token(struct httphead_span s);

/* s without the spaces and tabs at either end (optional whitespace). */
struct httphead_span httphead_trim(struct httphead_span s);

/* ASCII case-insensitive equality with a lower-case literal (a field
 * name, a token in a value). */
bool httphead_ieq(struct httphead_span s, const char *lower);

#endif
