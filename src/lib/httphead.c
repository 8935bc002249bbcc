/* httphead.c: the HTTP/1.1 head tokenizer (see httphead.h). */
#include "httphead.h"

#include <string.h>

bool httphead_is_tchar(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c != '\0' && strchr("!#$%&'*+-.^_`|~", c));
}

bool httphead_is_token(struct httphead_span s)
{
	if (s.n == 0)
		return false;
	for (size_t i = 0; i < s.n; i++)
		if (!httphead_is_tchar((unsigned char)s.p[i]))
			return false;
	return true;
}

bool httphead_ieq(struct httphead_span s, const char *lower)
{
	size_t n = strlen(lower);

	if (s.n != n)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s.p[i];

		if ((c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c) != lower[i])
			return false;
	}
	return true;
}

struct httphead_span httphead_trim(struct httphead_span s)
{
	while (s.n > 0 && (s.p[0] == ' ' || s.p[0] == '\t')) {
		s.p++;
		s.n--;
	}
	while (s.n > 0 && (s.p[s.n - 1] == ' ' || s.p[s.n - 1] == '\t'))
		s.n--;
	return s;
}

/* A reason's or a value's byte: tab, space, visible ASCII, obs-text. */
static bool is_text(unsigned char c)
{
	return c == '\t' || (c >= 0x20 && c != 0x7f);
}

void httphead_reader_init(struct httphead_reader *r, const char *buf, size_t len,
			  enum httphead_eol eol, const struct httphead_limits *lim)
{
	*r = (struct httphead_reader){ .buf = buf, .len = len, .eol = eol, .lim = *lim };
}

/* No line end in buf[off, scan): refuse what can never become valid,
 * else wait. */
static enum httphead_err partial(const struct httphead_reader *r, size_t scan)
{
	const char *p = r->buf + r->off;
	size_t n = scan - r->off;

	if (r->eol == HTTPHEAD_EOL_FIRST) {
		const char *cr = memchr(p, '\r', n);

		if (memchr(p, '\0', n))
			return HTTPHEAD_NUL;
		/* a CR may only be the last byte read, waiting for its LF, and
		 * only while the line ends are CRLF or not yet known */
		if (cr && (cr != p + n - 1 || (r->started && !r->crlf)))
			return HTTPHEAD_BARE_CR;
		if (!r->started && r->lim.start_max && n - (cr ? 1 : 0) > r->lim.start_max)
			return HTTPHEAD_START_LONG;
	}
	return r->len >= r->lim.head_max ? HTTPHEAD_HEAD_BIG : HTTPHEAD_MORE;
}

enum httphead_err httphead_next_line(struct httphead_reader *r, struct httphead_span *line)
{
	size_t scan = r->len < r->lim.head_max ? r->len : r->lim.head_max;
	const char *lf;
	size_t end, next;
	bool cr;

	*line = (struct httphead_span){ r->buf + r->off, 0 };
	if (r->done) /* nothing after the head is a line of it */
		return HTTPHEAD_OK;
	lf = memchr(r->buf + r->off, '\n', scan - r->off);
	if (!lf)
		return partial(r, scan);
	next = (size_t)(lf - r->buf) + 1;
	end = next - 1;
	cr = end > r->off && r->buf[end - 1] == '\r';
	if (cr)
		end--;
	if (r->eol == HTTPHEAD_EOL_CRLF && !cr)
		return HTTPHEAD_BARE_LF;
	if (r->eol == HTTPHEAD_EOL_FIRST) {
		if (!r->started)
			r->crlf = cr;
		else if (cr != r->crlf)
			return HTTPHEAD_MIXED_EOL;
	}
	*line = (struct httphead_span){ r->buf + r->off, end - r->off };
	if (memchr(line->p, '\0', line->n))
		return HTTPHEAD_NUL;
	if (memchr(line->p, '\r', line->n))
		return HTTPHEAD_BARE_CR;
	r->off = next;
	if (!r->started) {
		r->started = true;
		if (r->lim.start_max && line->n > r->lim.start_max)
			return HTTPHEAD_START_LONG;
		return HTTPHEAD_OK;
	}
	if (line->n == 0) {
		r->done = true;
		return HTTPHEAD_OK;
	}
	if (++r->fields > r->lim.fields_max && r->lim.fields_max)
		return HTTPHEAD_TOO_MANY;
	return HTTPHEAD_OK;
}

enum httphead_err httphead_field(struct httphead_span line, struct httphead_span *name,
				 struct httphead_span *value)
{
	const char *colon;
	struct httphead_span v;

	if (line.n && (line.p[0] == ' ' || line.p[0] == '\t'))
		return HTTPHEAD_OBS_FOLD;
	colon = memchr(line.p, ':', line.n);
	if (!colon)
		return HTTPHEAD_NO_COLON;
	*name = (struct httphead_span){ line.p, (size_t)(colon - line.p) };
	/* a name is a token: "Content-Length :" is not one two readers read
	 * alike */
	if (!httphead_is_token(*name))
		return HTTPHEAD_BAD_NAME;
	v = (struct httphead_span){ colon + 1, line.n - name->n - 1 };
	for (size_t i = 0; i < v.n; i++)
		if (!is_text((unsigned char)v.p[i]))
			return HTTPHEAD_BAD_VALUE;
	*value = httphead_trim(v);
	return HTTPHEAD_OK;
}

enum httphead_err httphead_request_line(struct httphead_span line,
					struct httphead_span *method,
					struct httphead_span *target, int *minor)
{
	const char *sp1 = memchr(line.p, ' ', line.n), *sp2, *v;
	size_t vn;

	if (!sp1)
		return HTTPHEAD_BAD_START;
	*method = (struct httphead_span){ line.p, (size_t)(sp1 - line.p) };
	target->p = sp1 + 1;
	sp2 = memchr(target->p, ' ', (size_t)(line.p + line.n - target->p));
	if (!sp2)
		return HTTPHEAD_BAD_START;
	target->n = (size_t)(sp2 - target->p);
	v = sp2 + 1;
	vn = (size_t)(line.p + line.n - v);
	if (!httphead_is_token(*method) || target->n == 0)
		return HTTPHEAD_BAD_START;
	if (vn == 8 && memcmp(v, "HTTP/1.", 7) == 0 && (v[7] == '0' || v[7] == '1')) {
		*minor = v[7] - '0';
		return HTTPHEAD_OK;
	}
	if (vn == 8 && memcmp(v, "HTTP/", 5) == 0 && v[5] >= '0' && v[5] <= '9' && v[6] == '.' &&
	    v[7] >= '0' && v[7] <= '9')
		return HTTPHEAD_BAD_VERSION;
	return HTTPHEAD_BAD_START;
}

enum httphead_err httphead_status_line(struct httphead_span line, int *code, int *minor,
				       struct httphead_span *reason)
{
	const char *s = line.p;

	if (line.n < 12 || memcmp(s, "HTTP/1.", 7) != 0 || (s[7] != '0' && s[7] != '1') ||
	    s[8] != ' ' || s[9] < '1' || s[9] > '5' || s[10] < '0' || s[10] > '9' ||
	    s[11] < '0' || s[11] > '9' || (line.n > 12 && s[12] != ' '))
		return HTTPHEAD_BAD_START;
	for (size_t i = 13; i < line.n; i++)
		if (!is_text((unsigned char)s[i]))
			return HTTPHEAD_BAD_START;
	*minor = s[7] - '0';
	*code = (s[9] - '0') * 100 + (s[10] - '0') * 10 + (s[11] - '0');
	*reason = line.n > 13 ? (struct httphead_span){ s + 13, line.n - 13 }
			      : (struct httphead_span){ s + line.n, 0 };
	return HTTPHEAD_OK;
}
