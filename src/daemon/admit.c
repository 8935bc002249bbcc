/* admit.c: the management API's connections, bounded so that what some
 * clients hold never keeps the operator's next request waiting. Any
 * process of the operator's uid can connect (an unsandboxed job too), and
 * libmicrohttpd has a fixed number of slots: a client that dribbles its
 * request a byte at a time, or holds a connection open between requests,
 * would otherwise hold a slot for as long as it likes.
 *
 * A connection is waiting from its accept until its request is whole,
 * and again from a response's end until its next request is whole (a
 * kept-alive connection between requests). A waiting connection:
 * - is cut after ADMIT_WAIT_MS, however slowly it keeps sending;
 * - from one peer (its process, by SO_PEERCRED) beyond ADMIT_PEER_MAX
 *   waiting is cut as it arrives;
 * - beyond ADMIT_WAITING_MAX waiting in all, the oldest is cut, so that
 *   a new client always has a slot while any is held by a waiting one.
 * A request whose head and body have come (the API's handler has it) is
 * never cut here: a followed log or a job's wait stays as long as it is
 * served. A connection is cut by shutting its socket down: libmicrohttpd
 * then sees its end and closes it as it would a client's. */
#include "daemon/internal.h"

#include <stdlib.h>
#include <sys/socket.h>

struct admit_conn {
	struct MHD_Connection *c;
	int fd;
	pid_t peer;		/* 0: not known */
	int64_t since_ms;	/* loop_now_ms() it started waiting */
	bool waiting;
	bool cut;
	struct admit_conn *next;
};

static void cut(struct admit_conn *a)
{
	if (a->cut)
		return;
	a->cut = true;
	(void)shutdown(a->fd, SHUT_RDWR);
}

static struct admit_conn *find(struct hostd *d, struct MHD_Connection *c)
{
	for (struct admit_conn *a = d->admitted; a; a = a->next)
		if (a->c == c)
			return a;
	return NULL;
}

/* A new connection: counted, and the bounds applied. */
static void started(struct hostd *d, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	struct ucred cred = { 0 };
	socklen_t len = sizeof(cred);
	struct admit_conn *a, *oldest = NULL;
	unsigned int waiting = 0, same = 0;

	if (!ci)
		return;
	a = calloc(1, sizeof(*a));
	if (!a) {
		/* not counted, not kept: nothing may hold a slot unbounded */
		(void)shutdown(ci->connect_fd, SHUT_RDWR);
		return;
	}
	a->c = c;
	a->fd = ci->connect_fd;
	if (getsockopt(a->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0)
		a->peer = cred.pid;
	a->since_ms = loop_now_ms();
	a->waiting = true;
	for (struct admit_conn *o = d->admitted; o; o = o->next) {
		if (!o->waiting || o->cut)
			continue;
		waiting++;
		same += a->peer && o->peer == a->peer;
		if (!oldest || o->since_ms <= oldest->since_ms)
			oldest = o;
	}
	a->next = d->admitted;
	d->admitted = a;
	if (same >= ADMIT_PEER_MAX)
		cut(a);
	else if (waiting >= ADMIT_WAITING_MAX && oldest)
		cut(oldest);
}

void hostd_admit_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code)
{
	struct hostd *d = cls;

	(void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		started(d, c);
		return;
	}
	for (struct admit_conn **p = &d->admitted; *p; p = &(*p)->next)
		if ((*p)->c == c) {
			struct admit_conn *a = *p;

			*p = a->next;
			free(a);
			return;
		}
}

void hostd_admit_served(struct hostd *d, struct MHD_Connection *c)
{
	struct admit_conn *a = find(d, c);

	if (a)
		a->waiting = false;
}

void hostd_admit_idle(struct hostd *d, struct MHD_Connection *c)
{
	struct admit_conn *a = find(d, c);

	if (a) {
		a->waiting = true;
		a->since_ms = loop_now_ms();
	}
}

void hostd_admit_sweep(struct hostd *d)
{
	int64_t now = loop_now_ms();

	for (struct admit_conn *a = d->admitted; a; a = a->next)
		if (a->waiting && now - a->since_ms >= ADMIT_WAIT_MS)
			cut(a);
}

void hostd_admit_clear(struct hostd *d)
{
	while (d->admitted) {
		struct admit_conn *a = d->admitted;

		d->admitted = a->next;
		free(a);
	}
}
