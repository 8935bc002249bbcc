/* served.c: absolute-form http:// requests, served one per connection.
 * The origin gets the rebuilt head, then the request body as its framing
 * says (Content-Length bytes, or a chunked body decoded and re-encoded)
 * and not a byte more: whatever the client sends after it (a pipelined
 * or kept-alive second request, with its Proxy-Authorization) goes
 * nowhere and is audited on a line of its own. The client gets the
 * origin's response head rebuilt to say Connection: close, then the body
 * as its framing says, then the end of the connection: its next request
 * comes on a new connection, where it is checked like any other. Both
 * directions keep splice where the body has a length. */
#include "gateway/http.h"
#include "gateway/internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* What the client sent after its request, kept (a head's worth) for the
 * audit and never forwarded. */
static int keep_extra(struct conn *c, const char *p, size_t n)
{
	size_t room;

	if (n == 0)
		return 0;
	if (!c->extra && !(c->extra = malloc(HTTP_HEAD_MAX)))
		return -1;
	room = HTTP_HEAD_MAX - c->extra_len;
	if (n > room)
		n = room;
	memcpy(c->extra + c->extra_len, p, n);
	c->extra_len += n;
	return 0;
}

int gw_served_keep(struct conn *c, const struct http_request *req)
{
	const char *early = c->in + req->head_len;
	size_t n = c->in_len - req->head_len, take = n, out_len = 0;

	c->one_request = true;
	c->head_method = req->head_method;
	c->body = req->body;
	c->body_left = req->body_len;
	c->upout = malloc(req->forward_len + n + CHUNKED_SLACK);
	if (!c->upout)
		return -1;
	memcpy(c->upout, req->forward, req->forward_len);
	c->upout_len = req->forward_len;
	c->upout_off = 0;
	if (c->body == HTTP_BODY_LENGTH) {
		take = n < c->body_left ? n : (size_t)c->body_left;
		memcpy(c->upout + c->upout_len, early, take);
		c->upout_len += take;
		c->body_left -= take;
		c->req_done = c->body_left == 0;
	} else if (c->body == HTTP_BODY_CHUNKED) {
		enum chunked_result r = chunked_feed(&c->chunked, early, n, &take,
						     c->upout + c->upout_len, &out_len);
		if (r == CHUNKED_BAD)
			return 1;
		c->upout_len += out_len;
		c->req_done = r == CHUNKED_DONE;
	} else {
		take = 0;
		c->req_done = true;
	}
	return keep_extra(c, early + take, n - take);
}

/* Bytes to send before any other on one side (a rebuilt head, a decoded
 * chunk), after those already waiting there. */
static int queue_out(struct pipebuf *p, const char *b, size_t n)
{
	size_t have = p->spill ? p->spill_len - p->spill_off : 0;
	char *nb;

	if (n == 0)
		return 0;
	nb = malloc(have + n);
	if (!nb)
		return -1;
	if (have)
		memcpy(nb, p->spill + p->spill_off, have);
	memcpy(nb + have, b, n);
	free(p->spill);
	p->spill = nb;
	p->spill_len = have + n;
	p->spill_off = 0;
	return 0;
}

/* The origin's answer cannot be read as HTTP: a 502 while the client has
 * had nothing yet, else the end. -1: c is refusing or closed. */
static int bad_response(struct conn *c)
{
	if (c->bytes[1] == 0 && !c->p[1].spill) {
		gw_refuse_http(c, 502, "fail", "no valid HTTP response from the host");
	} else {
		c->reason = "no valid HTTP response from the host";
		gw_conn_close(c);
	}
	return -1;
}

/* A chunked body's bytes through the decoder, queued re-encoded for the
 * other side: 1 when its end was found after *used bytes, 0 when it goes
 * on, -1 when it is malformed. */
static int dechunk(struct chunked *st, struct pipebuf *to, const char *in, size_t n,
		   size_t *used)
{
	size_t out_len = 0;
	char *out = malloc(n + CHUNKED_SLACK);
	enum chunked_result r;

	if (!out)
		return -1;
	r = chunked_feed(st, in, n, used, out, &out_len);
	if (r != CHUNKED_BAD && queue_out(to, out, out_len) < 0)
		r = CHUNKED_BAD;
	free(out);
	return r == CHUNKED_BAD ? -1 : r == CHUNKED_DONE;
}

/* The response body from what came with the head: as much as its
 * framing holds; the end of it ends what the origin may send. */
static int response_body_start(struct conn *c, const struct response_info *ri)
{
	size_t n = c->resp_len - ri->used, used = 0;
	const char *rest = c->resp + ri->used;
	int r;

	c->resp_body = ri->body;
	c->resp_left = ri->length;
	switch (ri->body) {
	case RESPONSE_BODY_NONE:
		c->eof[1] = true;
		return 0;
	case RESPONSE_BODY_LENGTH:
		used = n < c->resp_left ? n : (size_t)c->resp_left;
		c->resp_left -= used;
		c->eof[1] = c->resp_left == 0;
		return queue_out(&c->p[1], rest, used);
	case RESPONSE_BODY_CHUNKED:
		r = dechunk(&c->resp_chunked, &c->p[1], rest, n, &used);
		if (r > 0)
			c->eof[1] = true;
		return r < 0 ? -1 : 0;
	case RESPONSE_BODY_CLOSE:
		break;
	}
	return queue_out(&c->p[1], rest, n);
}

/* Read the origin's response head and queue it rebuilt (Connection:
 * close), interim 1xx heads as they come. 1: relay on; 0: wait; -1: c
 * is refusing or closed. */
static int response_in(struct conn *c)
{
	for (;;) {
		struct response_info ri = { 0 };
		enum response_result r = c->resp_len ? response_head(c->resp, c->resp_len,
								     c->head_method, &ri)
						     : RESPONSE_MORE;
		ssize_t n;

		if (r == RESPONSE_BAD)
			return bad_response(c);
		if (r == RESPONSE_OK) {
			int q = queue_out(&c->p[1], ri.head, ri.head_len);

			free(ri.head);
			if (q == 0 && !ri.interim)
				q = response_body_start(c, &ri);
			if (q < 0) {
				c->reason = "no valid HTTP response from the host";
				gw_conn_close(c);
				return -1;
			}
			memmove(c->resp, c->resp + ri.used, c->resp_len - ri.used);
			c->resp_len -= ri.used;
			if (ri.interim)
				return 1; /* out now: a client may wait for its 100 */
			free(c->resp);
			c->resp = NULL;
			c->resp_len = 0;
			c->resp_started = true;
			return 1;
		}
		if (!c->resp && !(c->resp = malloc(RESPONSE_HEAD_MAX))) {
			gw_conn_close(c);
			return -1;
		}
		n = recv(c->up.fd, c->resp + c->resp_len, RESPONSE_HEAD_MAX - c->resp_len, 0);
		if (n > 0)
			c->resp_len += (size_t)n;
		else if (n < 0 && errno == EINTR)
			continue;
		else if (n < 0 && errno == EAGAIN)
			return 0;
		else
			return bad_response(c); /* ended before a whole head */
	}
}

/* One read from a side for what the pipe cannot move: a chunked body (the
 * request's or the response's), or the client's bytes after its request.
 * 1: go on; 0: wait; -1: end the connection. */
static int read_side(struct conn *c, int dir, size_t *moved)
{
	char buf[16384];
	size_t used = 0;
	int fd = dir == 0 ? c->cli.fd : c->up.fd;
	ssize_t n = recv(fd, buf, sizeof(buf), 0);
	int r;

	if (n < 0)
		return errno == EINTR ? 1 : errno == EAGAIN ? 0 : -1;
	if (n == 0) {
		c->eof[dir] = true; /* passed on as a half-close */
		return 1;
	}
	*moved += (size_t)n;
	if (dir == 0 && c->req_done)
		return keep_extra(c, buf, (size_t)n) < 0 ? -1 : 1;
	r = dechunk(dir == 0 ? &c->chunked : &c->resp_chunked, &c->p[dir], buf, (size_t)n, &used);
	if (r < 0) {
		c->reason = dir == 0 ? "malformed chunked body" : "malformed chunked response";
		gw_conn_close(c);
		return -1;
	}
	if (r > 0 && dir == 0) {
		c->req_done = true;
		return keep_extra(c, buf + used, (size_t)n - used) < 0 ? -1 : 1;
	}
	if (r > 0)
		c->eof[1] = true; /* the response is whole: nothing after it */
	return 1;
}

int gw_served_read(struct conn *c, int dir, size_t *moved)
{
	bool here = (dir == 1 && !c->resp_started) ||
		    (dir == 0 && (c->req_done || c->body == HTTP_BODY_CHUNKED)) ||
		    (dir == 1 && c->resp_body == RESPONSE_BODY_CHUNKED);

	if (!here)
		return 2;
	gw_pipe_release(c->gw, &c->p[dir]); /* empty here; not needed */
	if (dir == 1 && !c->resp_started)
		return response_in(c);
	return read_side(c, dir, moved);
}

size_t gw_served_limit(const struct conn *c, int dir, size_t chunk)
{
	uint64_t left = dir == 0 ? c->body_left : c->resp_left;

	if (dir == 1 && c->resp_body != RESPONSE_BODY_LENGTH)
		return chunk;
	return left < chunk ? (size_t)left : chunk;
}

void gw_served_moved(struct conn *c, int dir, size_t n)
{
	if (dir == 0) {
		c->body_left -= n;
		c->req_done = c->body_left == 0;
	} else if (c->resp_body == RESPONSE_BODY_LENGTH) {
		c->resp_left -= n;
		if (c->resp_left == 0)
			c->eof[1] = true; /* the response is whole: nothing after it */
	}
}
