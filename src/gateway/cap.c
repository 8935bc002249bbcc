/* cap.c: clients over the gateway's connection cap. None of them gets a
 * connection or any allocation: a refusal in the client's protocol
 * when that is cheap to know, then the close; the audit log takes them
 * at a bounded rate.
 *
 * To answer in the right protocol the first byte is needed, and a client
 * accepted at once may not have sent it yet. So a client with nothing
 * sent waits in one of GW_WAITING_MAX fixed slots for at most
 * WAIT_MS; when the slots are full, or its time is up, it is answered
 * with what is known then. The slots cost a bounded number of fds and
 * no memory beyond the gateway's own struct. */
#include "gateway/http.h"
#include "gateway/internal.h"
#include "gateway/socks5.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#define WAIT_MS 1000		/* for a first byte */
#define AUDIT_PER_S 10		/* refusals audited one line each a second */
#define DRAIN_MAX 65536		/* bytes read from a refused client at most */

/* The refusals of the last window not audited one by one, as one line. */
static void audit_flush(struct gateway *gw)
{
	struct conn line = { .gw = gw, .verdict = "refused", .started_ms = gw_now_ms() };

	if (!gw->cap_unlogged)
		return;
	snprintf(line.reason_buf, sizeof(line.reason_buf),
		 "connection cap reached: %u more connections refused, not logged one by one",
		 gw->cap_unlogged);
	line.reason = line.reason_buf;
	gw->cap_unlogged = 0;
	gw_audit(&line);
}

/* One line each for the first AUDIT_PER_S refusals in a second, then a
 * count: a flood of connections must not become a flood of writes to
 * the audit log's disk. */
static void audit(struct gateway *gw, const char *client, const char *proto_name)
{
	int64_t now = gw_now_ms();
	struct conn line = { .gw = gw, .verdict = "refused", .reason = "connection cap reached",
			     .proto_name = proto_name, .started_ms = now };

	if (now - gw->cap_window_ms >= 1000) {
		audit_flush(gw);
		gw->cap_window_ms = now;
		gw->cap_logged = 0;
	}
	if (gw->cap_logged >= AUDIT_PER_S) {
		gw->cap_unlogged++;
		return;
	}
	gw->cap_logged++;
	snprintf(line.client, sizeof(line.client), "%s", client);
	gw_audit(&line);
}

/* Read what the client has sent (a bounded amount, into the stack), so
 * that the close is not a reset that could destroy the answer; write one
 * fixed answer without waiting, best effort; close. HTTP gets 503. A
 * SOCKS5 client whose greeting is here and offers no-authentication (no
 * token) gets that method and, at once, the general-failure reply to the
 * request it has yet to send; any other SOCKS5 client is only closed: an
 * answer to a greeting not seen, or a method it would then have to use,
 * would be a lie. A client that sent nothing is taken for HTTP. */
static void answer(struct gateway *gw, int fd, enum gw_proto proto, const char *client)
{
	unsigned char head[512], sink[4096];
	size_t got = 0, used;
	ssize_t n = recv(fd, head, sizeof(head), MSG_DONTWAIT);
	const char *why, *proto_name = "unknown";

	if (n > 0) {
		got = (size_t)n;
		if (proto == GW_PROTO_ANY)
			proto = head[0] == 5 ? GW_PROTO_SOCKS5 : GW_PROTO_HTTP;
	}
	for (size_t total = got; n > 0 && total < DRAIN_MAX; total += (size_t)n)
		n = recv(fd, sink, sizeof(sink), MSG_DONTWAIT);
	if (proto == GW_PROTO_SOCKS5) {
		uint8_t reply[12] = { 5, SOCKS_METHOD_NONE };

		proto_name = "socks5";
		if (!gw->has_token &&
		    socks5_parse_greeting(head, got, SOCKS_METHOD_NONE, &used, &why) == SOCKS_OK) {
			socks5_format_reply(reply + 2, SOCKS_GENERAL_FAILURE);
			(void)send(fd, reply, sizeof(reply), MSG_NOSIGNAL | MSG_DONTWAIT);
		}
	} else {
		if (proto == GW_PROTO_HTTP)
			proto_name = "http";
		(void)send(fd, gw->cap_reply, gw->cap_reply_len, MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	close(fd);
	audit(gw, client, proto_name);
}

void gw_over_cap(struct gateway *gw, int fd, enum gw_proto proto, const char *client)
{
	char peek;
	ssize_t n = recv(fd, &peek, 1, MSG_PEEK | MSG_DONTWAIT);
	struct waiting *w = NULL;

	if (!(n < 0 && errno == EAGAIN) || gw->n_waiting >= GW_WAITING_MAX) {
		answer(gw, fd, proto, client);
		return;
	}
	for (int i = 0; i < GW_WAITING_MAX && !w; i++)
		if (gw->waiting[i].ep.fd < 0)
			w = &gw->waiting[i];
	if (!w) {
		answer(gw, fd, proto, client);
		return;
	}
	w->ep = (struct endpoint){ .kind = EP_WAITING, .fd = fd, .proto = proto };
	if (gw_watch(gw, &w->ep, fd, EPOLLIN | EPOLLRDHUP | EPOLLET) < 0) {
		w->ep.fd = -1;
		answer(gw, fd, proto, client);
		return;
	}
	w->deadline_ms = gw_now_ms() + WAIT_MS;
	snprintf(w->client, sizeof(w->client), "%s", client);
	gw->n_waiting++;
}

/* The slot's client is answered now, whatever it has sent. */
static void release(struct gateway *gw, struct waiting *w)
{
	int fd = w->ep.fd;

	w->ep.fd = -1;
	gw->n_waiting--;
	answer(gw, fd, w->ep.proto, w->client); /* closing it leaves epoll too */
}

void gw_cap_event(struct gateway *gw, struct endpoint *ep)
{
	struct waiting *w = (struct waiting *)ep;

	if (w->ep.fd >= 0)
		release(gw, w);
}

void gw_cap_sweep(struct gateway *gw, int64_t now)
{
	for (int i = 0; gw->n_waiting && i < GW_WAITING_MAX; i++)
		if (gw->waiting[i].ep.fd >= 0 && now >= gw->waiting[i].deadline_ms)
			release(gw, &gw->waiting[i]);
	if (gw->cap_unlogged && now - gw->cap_window_ms >= 1000)
		audit_flush(gw);
}

void gw_cap_free(struct gateway *gw)
{
	for (int i = 0; gw->n_waiting && i < GW_WAITING_MAX; i++)
		if (gw->waiting[i].ep.fd >= 0)
			release(gw, &gw->waiting[i]);
	audit_flush(gw);
}
