/* attach.c: engine_container_attach (see engine.h). The daemon answers
 * an attach by handing the connection over (HTTP 101, "Upgrade: tcp"):
 * what follows its head is the container's streams, in both directions.
 * curl does not give such a connection back, so curl only connects (its
 * CONNECT_ONLY: the same endpoint, resolver and timeouts as every other
 * call) and cordon speaks the request and reads the head itself, a few
 * bytes at a time so that it never reads past the head: every byte of
 * the stream stays in the socket for the caller. */
#include "container/docker/engine/internal.h"

#include "lib/cleanup.h"
#include "lib/text.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define ATTACH_BODY_MAX 4096 /* of an error answer's body */

/* The socket curl connected, kept when curl closes the rest. */
struct kept {
	curl_socket_t fd;
};

static int close_unless_kept(void *arg, curl_socket_t fd)
{
	const struct kept *k = arg;

	return fd == k->fd ? 0 : close(fd);
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* Wait for events on fd until the deadline: 0, or -1 with errno
 * (ETIMEDOUT when it passed). */
static int wait_for(int fd, short events, long long deadline)
{
	for (;;) {
		struct pollfd p = { .fd = fd, .events = events };
		long long left = deadline - now_ms();
		int r;

		if (left <= 0) {
			errno = ETIMEDOUT;
			return -1;
		}
		r = poll(&p, 1, left > 60000 ? 60000 : (int)left);
		if (r > 0)
			return 0;
		if (r < 0 && errno != EINTR)
			return -1;
	}
}

/* A connection to the daemon, made as curl makes every other (the
 * options of engine_curl_common): fd is non-blocking and O_CLOEXEC. */
static int attach_connect(struct engine *g, int *fd, struct err **e)
{
	struct kept kept = { .fd = CURL_SOCKET_BAD };
	_cleanup_free_ char *url = NULL;
	curl_socket_t s = CURL_SOCKET_BAD;
	CURL *k = curl_easy_init();
	CURLcode res;

	*fd = -1;
	if (!k || asprintf(&url, "%s/", g->base) < 0) {
		if (k)
			curl_easy_cleanup(k);
		return err_set(e, ERR_INTERNAL, ENOMEM, "attach to container");
	}
	curl_easy_setopt(k, CURLOPT_URL, url);
	engine_curl_common(g, k);
	curl_easy_setopt(k, CURLOPT_CONNECT_ONLY, 1L);
	curl_easy_setopt(k, CURLOPT_CONNECTTIMEOUT,
			 g->timeout < CONNECT_TIMEOUT ? g->timeout : CONNECT_TIMEOUT);
	curl_easy_setopt(k, CURLOPT_CLOSESOCKETFUNCTION, close_unless_kept);
	curl_easy_setopt(k, CURLOPT_CLOSESOCKETDATA, &kept);
	res = curl_easy_perform(k);
	if (res == CURLE_OK)
		res = curl_easy_getinfo(k, CURLINFO_ACTIVESOCKET, &s);
	if (res == CURLE_OK && s != CURL_SOCKET_BAD)
		kept.fd = s;
	curl_easy_cleanup(k);
	if (res != CURLE_OK || s == CURL_SOCKET_BAD)
		return err_set(e, ERR_UNAVAILABLE, 0, "docker daemon `%s` cannot be asked: %s",
			       g->endpoint,
			       res != CURLE_OK ? curl_easy_strerror(res) : "no connection");
	*fd = s;
	return 0;
}

static int send_all(int fd, const char *p, size_t n, long long deadline)
{
	while (n > 0) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
		bool again = w < 0 && (errno == EAGAIN || errno == EINTR);

		if (w > 0) {
			p += w;
			n -= (size_t)w;
			continue;
		}
		if ((w < 0 && !again) || wait_for(fd, POLLOUT, deadline) < 0)
			return -1;
	}
	return 0;
}

/* Read the response head into buf (ENGINE_HEAD_MAX), never a byte past
 * it: while the last k bytes read match the first k of CRLF CRLF, the
 * head ends at least 4 - k bytes on, so at most that many are asked
 * for. *n its length; -1 with errno (0: the daemon closed first; EMSGSIZE:
 * too long). */
static int read_head(int fd, char *buf, size_t *n, long long deadline)
{
	static const char end[] = "\r\n\r\n";
	size_t have = 0, match = 0;

	while (match < 4) {
		ssize_t r;

		if (have + (4 - match) > ENGINE_HEAD_MAX) {
			errno = EMSGSIZE;
			return -1;
		}
		r = recv(fd, buf + have, 4 - match, 0);
		if (r == 0) {
			errno = 0;
			return -1;
		}
		if (r < 0) {
			if (errno != EAGAIN && errno != EINTR)
				return -1;
			if (wait_for(fd, POLLIN, deadline) < 0)
				return -1;
			continue;
		}
		for (ssize_t i = 0; i < r; i++) {
			char c = buf[have + (size_t)i];

			if (c == end[match])
				match++;
			else
				match = c == '\r' ? 1 : 0;
		}
		have += (size_t)r;
	}
	*n = have;
	return 0;
}

/* An error answer's body, for the daemon's words: its Content-Length,
 * or (a daemon that had begun to hand the connection over answers so)
 * until it closes, at most ATTACH_BODY_MAX; what came by the deadline. */
static void read_body(int fd, long long length, struct answer *a, long long deadline)
{
	size_t want = length >= 0 && length < ATTACH_BODY_MAX ? (size_t)length : ATTACH_BODY_MAX;
	char *p = want ? malloc(want + 1) : NULL;
	size_t have = 0;

	while (p && have < want) {
		ssize_t r = recv(fd, p + have, want - have, 0);

		if (r > 0)
			have += (size_t)r;
		else if (r == 0 || (errno != EAGAIN && errno != EINTR) ||
			 wait_for(fd, POLLIN, deadline) < 0)
			break;
	}
	if (p)
		p[have] = '\0';
	a->body = (struct bbuf){ .p = p, .n = have, .max = ATTACH_BODY_MAX };
}

/* The daemon's words in an error answer: {"message": ...}, or its plain
 * text; printable, cut at MESSAGE_MAX. NULL: none. */
static char *attach_message(const struct answer *a)
{
	char *m = engine_answer_message(a);
	size_t n;

	if (m || !a->body.p)
		return m;
	n = strcspn(a->body.p, "\r\n");
	m = strndup(a->body.p, n < MESSAGE_MAX ? n : MESSAGE_MAX);
	if (m)
		text_printable(m, strlen(m) + 1);
	if (m && !m[0]) {
		free(m);
		m = NULL;
	}
	return m;
}

/* An answer that is not the stream: 1 on the daemon's "No such
 * container" (a 404), else an error with its words. */
static int attach_refused(struct engine *g, const struct answer *a, struct err **e)
{
	_cleanup_free_ char *m = attach_message(a);

	if (a->status == 404 && m && strncmp(m, "No such container", 17) == 0)
		return 1;
	return err_set(e, a->status == 400 ? ERR_CONFIG : ERR_UNAVAILABLE, 0,
		       "docker daemon `%s`: attach to container: HTTP %ld%s%s", g->endpoint,
		       a->status, m ? ": " : "", m ? m : "");
}

int engine_container_attach(struct engine *g, const char *id, bool with_stdin, int *fd,
			    struct err **e)
{
	const char *what = "attach to container";
	_cleanup_close_ int s = -1;
	_cleanup_free_ char *req = NULL;
	char head[ENGINE_HEAD_MAX];
	long long deadline = now_ms() + g->timeout * 1000, length = -1;
	struct answer a = { 0 };
	size_t n = 0;
	int flags, r;

	*fd = -1;
	if (!engine_ref_ok(id))
		return err_set(e, ERR_CONFIG, 0, "docker container ID is not valid");
	if (asprintf(&req,
		     "POST %s/containers/%s/attach?stream=1&stdin=%d&stdout=1&stderr=1 HTTP/1.1\r\n"
		     "Host: %s\r\nUser-Agent: cordon\r\nContent-Type: text/plain\r\n"
		     "Content-Length: 0\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n",
		     g->prefix, id, with_stdin ? 1 : 0, g->host) < 0) {
		req = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", what);
	}
	if (attach_connect(g, &s, e) < 0)
		return -1;
	if (send_all(s, req, strlen(req), deadline) < 0 || read_head(s, head, &n, deadline) < 0) {
		if (errno == EMSGSIZE)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "docker daemon `%s`: %s: its answer's head is longer than %d "
				       "bytes",
				       g->endpoint, what, ENGINE_HEAD_MAX);
		return err_set(e, ERR_UNAVAILABLE, errno, "docker daemon `%s` cannot be asked: %s%s",
			       g->endpoint, what, errno ? "" : ": it closed the connection");
	}
	if (engine_head_parse(head, n, &a.status, &length) < 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker daemon `%s`: %s: its answer is not an HTTP response",
			       g->endpoint, what);
	if (a.status != 101 && a.status != 200) {
		read_body(s, length, &a, deadline);
		r = attach_refused(g, &a, e);
		engine_answer_clear(&a);
		return r;
	}
	/* the stream is the caller's, with no deadline of cordon's */
	flags = fcntl(s, F_GETFL);
	if (flags < 0 || fcntl(s, F_SETFL, flags & ~O_NONBLOCK) < 0)
		return err_set(e, ERR_INTERNAL, errno, "%s", what);
	*fd = steal_fd(&s);
	return 0;
}
