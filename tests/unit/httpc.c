/* httpc.c (test): the small HTTP client `cordon tb` uses (src/lib/httpc.c):
 * the answer's parser, each refusal beside the same answer fixed and
 * accepted (status line, header fields, Content-Length against the body,
 * the size bounds at their edges); the proxy URL; and whole exchanges
 * with a forked server, over a unix socket and through a CONNECT proxy
 * on loopback (what it sends, what it takes back, a proxy's refusal, a
 * short body, a server that never answers within the deadline). */
#include "lib/httpc.h"
#include "tap.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

struct acase {
	const char *name;
	const char *in;
	bool good;
	unsigned int status;
	const char *body;
};

/* pairs: a refusal, then its control (the same answer fixed) */
static const struct acase answers[] = {
	{ "a plain 200 with Content-Length", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", true, 200, "{}" },
	{ "HTTP/1.0, no reason, no length: to the end", "HTTP/1.0 404\r\n\r\n{\"a\":1}", true, 404, "{\"a\":1}" },
	{ "a reason with tabs and obs-text", "HTTP/1.1 401 Un\tauth \xc3\xa9\r\nX-A: b\r\n\r\n", true, 401, "" },
	{ "HTTP/2 refused", "HTTP/2.0 200 OK\r\n\r\n", false, 0, NULL },
	{ "... HTTP/1.1 accepted", "HTTP/1.1 200 OK\r\n\r\n", true, 200, "" },
	{ "lower-case version refused", "http/1.1 200 OK\r\n\r\n", false, 0, NULL },
	{ "... upper-case accepted", "HTTP/1.1 200 OK\r\n\r\n", true, 200, "" },
	{ "a two-digit status refused", "HTTP/1.1 20 OK\r\n\r\n", false, 0, NULL },
	{ "... three digits accepted", "HTTP/1.1 201 OK\r\n\r\n", true, 201, "" },
	{ "a four-digit status refused", "HTTP/1.1 2000 OK\r\n\r\n", false, 0, NULL },
	{ "... 200 accepted", "HTTP/1.1 200 OK\r\n\r\n", true, 200, "" },
	{ "an interim 100 refused", "HTTP/1.1 100 Continue\r\n\r\n", false, 0, NULL },
	{ "... 599 accepted", "HTTP/1.1 599 X\r\n\r\n", true, 599, "" },
	{ "600 refused", "HTTP/1.1 600 X\r\n\r\n", false, 0, NULL },
	{ "... 500 accepted", "HTTP/1.1 500 X\r\n\r\n", true, 500, "" },
	{ "two spaces after the version refused", "HTTP/1.1  200 OK\r\n\r\n", false, 0, NULL },
	{ "... one accepted", "HTTP/1.1 200 OK\r\n\r\n", true, 200, "" },
	{ "a control byte in the reason refused", "HTTP/1.1 200 O\x01K\r\n\r\n", false, 0, NULL },
	{ "... without it accepted", "HTTP/1.1 200 OK\r\n\r\n", true, 200, "" },
	{ "bare LF line ends refused", "HTTP/1.1 200 OK\nContent-Length: 0\n\n", false, 0, NULL },
	{ "... CRLF accepted", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true, 200, "" },
	{ "a bare LF inside a field refused", "HTTP/1.1 200 OK\r\nA: b\nC: d\r\n\r\n", false, 0, NULL },
	{ "... two fields accepted", "HTTP/1.1 200 OK\r\nA: b\r\nC: d\r\n\r\n", true, 200, "" },
	{ "a bare CR inside a field refused", "HTTP/1.1 200 OK\r\nA: b\rC: d\r\n\r\n", false, 0, NULL },
	{ "... without it accepted", "HTTP/1.1 200 OK\r\nA: bC: d\r\n\r\n", true, 200, "" },
	{ "a folded field refused", "HTTP/1.1 200 OK\r\nA: b\r\n c\r\n\r\n", false, 0, NULL },
	{ "... unfolded accepted", "HTTP/1.1 200 OK\r\nA: b c\r\n\r\n", true, 200, "" },
	{ "a space before the colon refused", "HTTP/1.1 200 OK\r\nA : b\r\n\r\n", false, 0, NULL },
	{ "... none accepted", "HTTP/1.1 200 OK\r\nA: b\r\n\r\n", true, 200, "" },
	{ "a field with no colon refused", "HTTP/1.1 200 OK\r\nA b\r\n\r\n", false, 0, NULL },
	{ "... with one accepted", "HTTP/1.1 200 OK\r\nA:b\r\n\r\n", true, 200, "" },
	{ "an empty field name refused", "HTTP/1.1 200 OK\r\n: b\r\n\r\n", false, 0, NULL },
	{ "... a name accepted", "HTTP/1.1 200 OK\r\nx: b\r\n\r\n", true, 200, "" },
	{ "a NUL in a value refused", "HTTP/1.1 200 OK\r\nA: b\0c\r\n\r\n", false, 0, NULL },
	{ "... a DEL in a value refused", "HTTP/1.1 200 OK\r\nA: b\x7f\r\n\r\n", false, 0, NULL },
	{ "... a tab accepted", "HTTP/1.1 200 OK\r\nA: b\tc\r\n\r\n", true, 200, "" },
	{ "Transfer-Encoding: chunked refused", "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n0\r\n\r\n", false, 0, NULL },
	{ "... any Transfer-Encoding refused", "HTTP/1.1 200 OK\r\ntransfer-encoding: identity\r\n\r\n{}", false, 0, NULL },
	{ "... Content-Length accepted", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", true, 200, "{}" },
	{ "a body short of its Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\n{}", false, 0, NULL },
	{ "a body past its Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\n{}", false, 0, NULL },
	{ "... one that matches accepted", "HTTP/1.1 200 OK\r\ncontent-length:  2 \r\n\r\n{}", true, 200, "{}" },
	{ "a signed Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\n{}", false, 0, NULL },
	{ "an empty Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: \r\n\r\n", false, 0, NULL },
	{ "Content-Length twice refused", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}", false, 0, NULL },
	{ "a list in Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\n{}", false, 0, NULL },
	{ "a huge Content-Length refused", "HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n{}", false, 0, NULL },
	{ "... Content-Length 0 accepted", "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", true, 200, "" },
	{ "a 204 with a body refused", "HTTP/1.1 204 No Content\r\n\r\nx", false, 0, NULL },
	{ "... without accepted", "HTTP/1.1 204 No Content\r\n\r\n", true, 204, "" },
	{ "a head cut short refused", "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n", false, 0, NULL },
	{ "nothing refused", "", false, 0, NULL },
	{ "an empty status line refused", "\r\n\r\n", false, 0, NULL },
	{ "garbage refused", "SSH-2.0-OpenSSH_9.2\r\n\r\n", false, 0, NULL },
	{ "HTML refused", "<html>\r\n\r\n</html>", false, 0, NULL },
};

/* The body bound, and the head bound, at their edges. */
static void bounds(void)
{
	static const char head[] = "HTTP/1.1 200 OK\r\nContent-Length: 8\r\n\r\n";
	char buf[HTTPC_HEAD_MAX + 64];
	struct httpc_head h;
	size_t n = strlen(head), bl, pad;

	memcpy(buf, head, n);
	memcpy(buf + n, "12345678", 8);
	ok(httpc_parse_answer(buf, n + 8, 8, &h, &bl) == 0 && bl == 8,
	   "a body of exactly the bound accepted");
	ok(httpc_parse_answer(buf, n + 8, 7, &h, &bl) < 0, "... one byte over refused (Content-Length)");
	memcpy(buf, "HTTP/1.1 200 OK\r\n\r\n12345678", 27);
	ok(httpc_parse_answer(buf, 27, 8, &h, &bl) == 0 && bl == 8,
	   "a body to the end of exactly the bound accepted");
	ok(httpc_parse_answer(buf, 27, 7, &h, &bl) < 0, "... one byte over refused (no Content-Length)");

	/* a head of HTTPC_HEAD_MAX bytes exactly: one field padded out */
	pad = HTTPC_HEAD_MAX - strlen("HTTP/1.1 200 OK\r\nX: \r\n\r\n");
	n = (size_t)snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nX: ");
	memset(buf + n, 'a', pad);
	n += pad;
	memcpy(buf + n, "\r\n\r\n", 4);
	n += 4;
	ok(n == HTTPC_HEAD_MAX && httpc_parse_head(buf, n, &h) == HTTPC_OK && h.len == n,
	   "a head of exactly HTTPC_HEAD_MAX bytes accepted");
	memmove(buf + 14, buf + 13, n - 13);
	buf[13] = 'a'; /* one byte more, in the reason ("aOK") */
	ok(httpc_parse_head(buf, n + 1, &h) == HTTPC_BAD, "... one byte more refused");
	ok(httpc_parse_head(buf, HTTPC_HEAD_MAX - 1, &h) == HTTPC_MORE,
	   "a head not yet ended within the bound wants more");
	ok(httpc_parse_head(buf, HTTPC_HEAD_MAX, &h) == HTTPC_BAD,
	   "... at the bound without its end, refused");
	ok(httpc_parse_head("HTTP/1.1 200 OK\r\n\r\nrest", 23, &h) == HTTPC_OK && h.len == 19 &&
		   h.status == 200,
	   "a head's length excludes what follows it");
}

struct pcase {
	const char *url;
	bool good;
	size_t n;
	int family;
	unsigned int port;
};

static const struct pcase proxies[] = {
	{ "http://127.0.0.1:3128", true, 1, AF_INET, 3128 },
	{ "http://127.0.0.1:3128/", true, 1, AF_INET, 3128 },
	{ "HTTP://127.0.0.1:3128", true, 1, AF_INET, 3128 },
	{ "http://localhost:41000", true, 2, AF_INET, 41000 },
	{ "http://[::1]:8080", true, 1, AF_INET6, 8080 },
	{ "socks5h://127.0.0.1:1080", false, 0, 0, 0 },
	{ "https://127.0.0.1:3128", false, 0, 0, 0 },
	{ "127.0.0.1:3128", false, 0, 0, 0 },
	{ "http://127.0.0.1", false, 0, 0, 0 },
	{ "http://127.0.0.1:", false, 0, 0, 0 },
	{ "http://127.0.0.1:0", false, 0, 0, 0 },
	{ "http://127.0.0.1:65536", false, 0, 0, 0 },
	{ "http://127.0.0.1:3128/x", false, 0, 0, 0 },
	{ "http://127.0.0.1:-1", false, 0, 0, 0 },
	{ "http://u:p@127.0.0.1:3128", false, 0, 0, 0 },
	{ "http://proxy.example:3128", false, 0, 0, 0 },
	{ "http://127.1:3128", false, 0, 0, 0 },
	{ "http://::1:8080", false, 0, 0, 0 },
	{ "http://[::1]8080", false, 0, 0, 0 },
	{ "http://[127.0.0.1]:8080", false, 0, 0, 0 },
	{ "http://:3128", false, 0, 0, 0 },
};

static void proxy_urls(void)
{
	for (size_t i = 0; i < sizeof(proxies) / sizeof(*proxies); i++) {
		const struct pcase *c = &proxies[i];
		struct httpc_proxy p;
		int r = httpc_proxy_parse(c->url, &p);
		unsigned int port = 0;

		if (r == 0)
			port = ntohs(((const struct sockaddr_in *)&p.addr[0])->sin_port);
		if (c->good)
			ok(r == 0 && p.n == c->n && p.addr[0].ss_family == c->family && port == c->port,
			   "proxy %s accepted (%zu address(es), port %u)", c->url, p.n, port);
		else
			ok(r < 0, "proxy %s refused", c->url);
	}
}

/* --- exchanges with a forked server --------------------------------------- */

/* Accept once on lfd, read the request head (and a body of blen), write
 * it to the file at got, then send answer (NULL: say nothing, hold the
 * connection). With proxy_answer, first read a CONNECT head and answer
 * it. */
static void serve(int lfd, const char *got, const char *proxy_answer, const char *answer,
		  size_t blen)
{
	char buf[65536];
	size_t n = 0;
	int c = accept(lfd, NULL, NULL);
	FILE *f = fopen(got, "w");

	if (c < 0 || !f)
		_exit(1);
	for (int round = proxy_answer ? 0 : 1; round < 2; round++) {
		size_t start = n;
		char *end = NULL;

		while (!end || (round == 1 && (size_t)(buf + n - (end + 4)) < blen)) {
			ssize_t k = read(c, buf + n, sizeof(buf) - 1 - n);

			if (k <= 0)
				_exit(1);
			n += (size_t)k;
			buf[n] = '\0';
			end = strstr(buf + start, "\r\n\r\n");
		}
		if (round == 0 && write(c, proxy_answer, strlen(proxy_answer)) < 0)
			_exit(1);
		if (round == 0 && strncmp(proxy_answer, "HTTP/1.1 200", 12) != 0)
			break;
	}
	fwrite(buf, 1, n, f);
	fclose(f);
	if (!answer) {
		pause();
		_exit(0);
	}
	if (write(c, answer, strlen(answer)) < 0)
		_exit(1);
	close(c);
	_exit(0);
}

static char *slurp(const char *path)
{
	static char buf[65536];
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;

	if (f)
		fclose(f);
	buf[n] = '\0';
	return buf;
}

static const char want_post[] =
	"POST /v1/call HTTP/1.1\r\nHost: toolbelt.cordon.internal\r\n"
	"Authorization: Bearer t0ken\r\nContent-Type: application/json\r\n"
	"Content-Length: 16\r\nConnection: close\r\n\r\n{\"op\": \"notify\"}";

static void exchanges(void)
{
	char dir[] = "/tmp/httpc-test.XXXXXX", sock[64], got[64];
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	struct httpc_request r = {
		.method = "POST", .host = "toolbelt.cordon.internal", .port = 80,
		.path = "/v1/call", .auth = "Bearer t0ken", .body = "{\"op\": \"notify\"}",
		.timeout_ms = 5000, .body_max = 1024,
	};
	struct httpc_answer a;
	struct httpc_proxy px;
	struct err *e = NULL;
	char url[64];
	int lfd, tfd, rc;
	pid_t pid;

	if (!mkdtemp(dir))
		return;
	snprintf(sock, sizeof(sock), "%s/s.sock", dir);
	snprintf(got, sizeof(got), "%s/got", dir);
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(lfd, 4) < 0)
		return;
	r.socket = sock;

	/* over the unix socket: the request exactly, the answer taken */
	pid = fork();
	if (pid == 0)
		serve(lfd, got, NULL, "HTTP/1.1 200 OK\r\nContent-Length: 11\r\n\r\n{\"ok\":true}", 16);
	rc = httpc_exchange(&r, &a, &e);
	waitpid(pid, NULL, 0);
	ok(rc == 0 && a.status == 200 && a.len == 11 && strcmp(a.body, "{\"ok\":true}") == 0,
	   "over a unix socket: the answer's status and body (%s)", e ? e->msg : "ok");
	is_str(slurp(got), want_post, "... the request sent exactly");
	free(a.body);
	err_free(e);
	e = NULL;

	/* a GET has no body and no framing headers */
	r.method = "GET";
	r.path = "/v1/ops";
	r.body = NULL;
	pid = fork();
	if (pid == 0)
		serve(lfd, got, NULL, "HTTP/1.0 401 Unauthorized\r\n\r\n{\"error\":\"x\"}", 0);
	rc = httpc_exchange(&r, &a, &e);
	waitpid(pid, NULL, 0);
	ok(rc == 0 && a.status == 401 && strcmp(a.body, "{\"error\":\"x\"}") == 0,
	   "a GET, its refusal (401) read to the end as the answer");
	is_str(slurp(got),
	       "GET /v1/ops HTTP/1.1\r\nHost: toolbelt.cordon.internal\r\n"
	       "Authorization: Bearer t0ken\r\nConnection: close\r\n\r\n",
	       "... the GET sent exactly");
	free(a.body);
	err_free(e);
	e = NULL;

	/* a body short of its Content-Length */
	pid = fork();
	if (pid == 0)
		serve(lfd, got, NULL, "HTTP/1.1 200 OK\r\nContent-Length: 12\r\n\r\n{\"ok\":true}", 0);
	rc = httpc_exchange(&r, &a, &e);
	waitpid(pid, NULL, 0);
	ok(rc < 0 && !a.body, "a body short of its Content-Length is an error (%s)", e ? e->msg : "none");
	err_free(e);
	e = NULL;

	/* no answer: the deadline */
	r.timeout_ms = 300;
	pid = fork();
	if (pid == 0)
		serve(lfd, got, NULL, NULL, 0);
	rc = httpc_exchange(&r, &a, &e);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	ok(rc < 0 && e && strstr(e->msg, "timed out"), "a server that never answers: the deadline (%s)",
	   e ? e->msg : "none");
	err_free(e);
	e = NULL;
	r.timeout_ms = 5000;

	/* control bytes in the Authorization value never reach the wire */
	r.auth = "Bearer t0ken\r\nX-Evil: 1";
	rc = httpc_exchange(&r, &a, &e);
	ok(rc < 0, "an Authorization value with CR LF refused before connecting");
	err_free(e);
	e = NULL;
	r.auth = "Bearer t0ken";
	close(lfd);
	unlink(sock);

	/* through a proxy on loopback: CONNECT, then the request in the tunnel */
	tfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (tfd < 0 || bind(tfd, (struct sockaddr *)&sin, sizeof(sin)) < 0 || listen(tfd, 4) < 0 ||
	    getsockname(tfd, (struct sockaddr *)&sin, &sl) < 0)
		return;
	snprintf(url, sizeof(url), "http://localhost:%u", ntohs(sin.sin_port));
	ok(httpc_proxy_parse(url, &px) == 0, "the proxy %s", url);
	r.proxy = &px;
	r.socket = NULL;
	r.method = "POST";
	r.path = "/v1/call";
	r.body = "{\"op\": \"notify\"}";
	pid = fork();
	if (pid == 0)
		serve(tfd, got, "HTTP/1.1 200 Connection established\r\n\r\n",
		      "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}", 16);
	rc = httpc_exchange(&r, &a, &e);
	waitpid(pid, NULL, 0);
	ok(rc == 0 && a.status == 200 && strcmp(a.body, "{}") == 0,
	   "through a proxy: the answer in the tunnel (%s)", e ? e->msg : "ok");
	{
		char want[1024];

		snprintf(want, sizeof(want), "%s%s",
			 "CONNECT toolbelt.cordon.internal:80 HTTP/1.1\r\n"
			 "Host: toolbelt.cordon.internal:80\r\n\r\n", want_post);
		is_str(slurp(got), want, "... CONNECT with its Host, then the request, exactly");
	}
	free(a.body);
	err_free(e);
	e = NULL;

	pid = fork();
	if (pid == 0)
		serve(tfd, got, "HTTP/1.1 403 Forbidden\r\nContent-Length: 0\r\n\r\n", "", 0);
	rc = httpc_exchange(&r, &a, &e);
	waitpid(pid, NULL, 0);
	ok(rc < 0 && e && strstr(e->msg, "refused the tunnel (403)"),
	   "a proxy refusing the tunnel is an error (%s)", e ? e->msg : "none");
	err_free(e);
	e = NULL;
	close(tfd);
	unlink(got);
	rmdir(dir);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(answers) / sizeof(*answers); i++) {
		const struct acase *c = &answers[i];
		/* the inputs with a NUL in them are measured by hand */
		size_t n = strlen(c->in), bl = 0;
		struct httpc_head h;
		int r;

		if (strstr(c->name, "a NUL in a value"))
			n = sizeof("HTTP/1.1 200 OK\r\nA: b\0c\r\n\r\n") - 1;
		r = httpc_parse_answer(c->in, n, 1024, &h, &bl);
		if (c->good)
			ok(r == 0 && h.status == c->status && bl == strlen(c->body) &&
				   memcmp(c->in + h.len, c->body, bl) == 0,
			   "%s (status %u, %zu body bytes)", c->name, h.status, bl);
		else
			ok(r < 0, "%s", c->name);
	}
	bounds();
	proxy_urls();
	exchanges();
	return done_testing();
}
