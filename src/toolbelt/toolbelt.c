/* toolbelt.c: the daemon's per-job toolbelt server (see toolbelt.h), on
 * its caller's loop: each job's listener a source, libmicrohttpd (its
 * own epoll fd) run before each wait, a paused listener resumed by a
 * timer. */
#include "toolbelt/toolbelt.h"

#include "toolbelt/http.h"

#include "host/config.h"
#include "host/db.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/loop.h"

#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define TB_BODY_MAX ((size_t)64 * 1024)
#define TB_TOKEN_HEX 64
/* connections at once: in all (libmicrohttpd's cap), and of one job */
#define TB_CONNS_MAX 256U
#define TB_JOB_CONNS_MAX 32U

struct tb_job {
	struct tb_job *next;
	char job[HOST_JOB_ID_MAX];
	char token[TB_TOKEN_HEX + 1];
	unsigned int ops;
	int lfd;
	struct loop_fd src;	/* lfd's */
	struct toolbelt *t;
	bool paused;		/* out of fds: not listened to for a while */
};

/* Which job's socket a connection came in on. */
struct tb_conn {
	struct tb_conn *next;
	int fd;
	char job[HOST_JOB_ID_MAX];
};

struct toolbelt {
	char *root;		/* <state>/toolbelt */
	tb_call_fn fn;
	void *ctx;
	struct MHD_Daemon *mhd;
	struct loop *loop;	/* the caller's */
	struct loop_fd mhd_src;	/* libmicrohttpd's own epoll fd */
	struct loop_hook run;	/* libmicrohttpd's turn, before each wait */
	struct loop_timer wake;	/* its next timeout */
	struct loop_timer resume;	/* paused listeners listened to again */
	struct tb_job *jobs;
	struct tb_conn *conns;
};

static struct tb_job *find_job(const struct toolbelt *t, const char *job)
{
	for (struct tb_job *j = t->jobs; j; j = j->next)
		if (strcmp(j->job, job) == 0)
			return j;
	return NULL;
}

/* The job whose socket this connection came in on, when its toolbelt is
 * still open and the call shows its token. */
static struct tb_job *caller(struct toolbelt *t, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	struct tb_job *j = NULL;

	if (!ci)
		return NULL;
	for (struct tb_conn *k = t->conns; k; k = k->next)
		if (k->fd == ci->connect_fd)
			j = find_job(t, k->job);
	if (!j || !h || strncmp(h, "Bearer ", 7) != 0 || strlen(h + 7) != TB_TOKEN_HEX)
		return NULL;
	return CRYPTO_memcmp(h + 7, j->token, TB_TOKEN_HEX) == 0 ? j : NULL;
}

static enum MHD_Result call(struct toolbelt *t, struct MHD_Connection *c, struct tb_job *j,
			    const struct hostd_body *b)
{
	_cleanup_json_ json_t *req = b->p ? json_parse_strict(b->p, b->n, NULL) : NULL;
	const char *op = json_string_value(json_object_get(req, "op"));
	json_t *args = json_object_get(req, "args"), *res;
	const char *why = NULL;
	unsigned int bit;
	int status = 400;

	if (!json_is_object(req) || !op || (args && !json_is_object(args)))
		return hostd_fail(c, "bad_request", "a call is {\"op\": NAME, \"args\": {...}}");
	bit = host_op_bit(op);
	if (!bit)
		return hostd_fail(c, "not_found", "no such operation");
	if (!(j->ops & bit))
		return hostd_fail(c, "sandbox_denied", "the binding does not grant this operation");
	res = t->fn(t->ctx, j->job, op, args, &status, &why);
	if (!res)
		/* (the operation's own status, its reason said by it) */
		return hostd_fail_status(c, (unsigned int)status,
			      status == 403 ? "sandbox_denied"
			      : status >= 500 ? "sandbox_unavailable"
					      : "bad_request",
			      why ? why : "the operation failed");
	return hostd_answer(c, 200, json_pack("{s:o}", "result", res));
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct toolbelt *t = cls;
	struct hostd_body *b;
	struct tb_job *j;
	enum MHD_Result ret;

	if (!hostd_body_step(con_cls, upload, upload_size, TB_BODY_MAX, &ret))
		return ret;
	b = *con_cls;
	j = caller(t, c);
	if (!j)
		return hostd_fail(c, "unauthorized", "this job's toolbelt token is required");
	if (b->too_big)
		/* (413, as the management API answers it) */
		return hostd_fail_status(c, 413, "bad_request", "the body is larger than 64 KiB");
	if (strcmp(method, "GET") == 0 && strcmp(url, "/v1/ops") == 0) {
		/* what the binding grants (an MCP server lists them as tools) */
		json_t *ops = json_array();

		for (unsigned int bit = 1; ops && bit && bit <= HOST_OP_GIT_CREDENTIAL; bit <<= 1)
			if (j->ops & bit)
				json_array_append_new(ops, json_string(host_op_name(bit)));
		return hostd_answer(c, 200, json_pack("{s:o}", "ops", ops ? ops : json_array()));
	}
	if (strcmp(method, "POST") != 0 || strcmp(url, "/v1/call") != 0)
		return hostd_fail(c, "not_found", "POST /v1/call or GET /v1/ops");
	return call(t, c, j, b);
}

static void on_conn(void *cls, struct MHD_Connection *c, void **socket_context,
		    enum MHD_ConnectionNotificationCode code)
{
	struct toolbelt *t = cls;
	const union MHD_ConnectionInfo *ci;

	if (code != MHD_CONNECTION_NOTIFY_CLOSED)
		return;
	ci = MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	for (struct tb_conn **p = &t->conns; ci && *p; p = &(*p)->next)
		if ((*p)->fd == ci->connect_fd) {
			struct tb_conn *k = *p;

			*p = k->next;
			free(k);
			return;
		}
}

/* libmicrohttpd's epoll fd is ready: its turn comes in before_wait. */
static void on_mhd(struct loop *l, struct loop_fd *src, uint32_t events)
{
	(void)l;
	(void)src;
	(void)events;
}

/* Before every wait: libmicrohttpd's turn (the connections accepted,
 * their timeouts), and the wait bounded by its next timeout, at most 1 s
 * (a connection's timeout is looked at that often). */
static void before_wait(struct loop *l, struct loop_hook *h)
{
	struct toolbelt *t = h->data;
	MHD_UNSIGNED_LONG_LONG to = 0;

	MHD_run(t->mhd);
	loop_wake_in(l, &t->wake, MHD_get_timeout(t->mhd, &to) == MHD_YES && to < 1000 ? (int)to : 1000);
}

int toolbelt_new(struct loop *l, const char *state_dir, tb_call_fn fn, void *ctx,
		 struct toolbelt **out, struct err **e)
{
	struct toolbelt *t = calloc(1, sizeof(*t));
	const union MHD_DaemonInfo *di;

	if (!t || !(t->root = fs_path_join(state_dir, TOOLBELT_DIR))) {
		free(t);
		return err_set(e, ERR_INTERNAL, ENOMEM, "toolbelt");
	}
	t->fn = fn;
	t->ctx = ctx;
	t->loop = l;
	if (mkdir(t->root, 0700) < 0 && errno != EEXIST) {
		toolbelt_free(t);
		return err_set(e, ERR_UNAVAILABLE, errno, "toolbelt `%s`", state_dir);
	}
	t->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_NO_LISTEN_SOCKET, 0,
				  NULL, NULL, on_request, t, MHD_OPTION_NOTIFY_COMPLETED, hostd_body_done,
				  t, MHD_OPTION_NOTIFY_CONNECTION, on_conn, t,
				  MHD_OPTION_CONNECTION_LIMIT, TB_CONNS_MAX, MHD_OPTION_CONNECTION_TIMEOUT,
				  30U, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
				  MHD_OPTION_END);
	di = t->mhd ? MHD_get_daemon_info(t->mhd, MHD_DAEMON_INFO_EPOLL_FD) : NULL;
	if (!di || loop_fd_add(l, &t->mhd_src, di->epoll_fd, EPOLLIN, on_mhd, t, NULL) < 0) {
		int saved = errno;

		toolbelt_free(t);
		return err_set(e, ERR_UNAVAILABLE, saved, "the toolbelt server");
	}
	loop_hook_add(l, &t->run, before_wait, t);
	*out = t;
	return 0;
}

/* Out of fds (or memory) for a connection: the listener is left alone
 * for TB_PAUSE_MS, rather than woken again at once by the connection
 * still waiting (a loop that would take the daemon's CPU while it lasts). */
#define TB_PAUSE_MS 250

/* The pause is over: every paused listener is listened to again. */
static void resume_listeners(struct loop *l, struct loop_timer *tm)
{
	struct toolbelt *t = tm->data;

	for (struct tb_job *j = t->jobs; j; j = j->next)
		if (j->paused && loop_fd_mod(l, &j->src, EPOLLIN, NULL) == 0)
			j->paused = false;
}

static void pause_listener(struct toolbelt *t, struct tb_job *j)
{
	if (j->paused || loop_fd_mod(t->loop, &j->src, 0, NULL) < 0)
		return;
	j->paused = true;
	/* (from the last pause: a timer armed again moves) */
	loop_timer_start(t->loop, &t->resume, TB_PAUSE_MS, 0, resume_listeners, t);
}

static unsigned int job_conns(const struct toolbelt *t, const char *job)
{
	unsigned int n = 0;

	for (const struct tb_conn *k = t->conns; k; k = k->next)
		n += strcmp(k->job, job) == 0;
	return n;
}

/* A job's listener is ready: its connections, accepted and handed to
 * libmicrohttpd (run before the next wait). */
static void on_listener(struct loop *l, struct loop_fd *src, uint32_t events)
{
	struct tb_job *j = src->data;
	struct toolbelt *t = j->t;
	struct sockaddr_un sa;
	socklen_t len = sizeof(sa);
	int fd;

	(void)l;
	(void)events;
	while ((fd = accept4(j->lfd, (struct sockaddr *)&sa, &len,
			     SOCK_CLOEXEC | SOCK_NONBLOCK)) >= 0) {
		struct tb_conn *k = NULL;

		/* a job's share of the connections: one job's command
		 * holding many open leaves the others theirs */
		if (job_conns(t, j->job) >= TB_JOB_CONNS_MAX || !(k = calloc(1, sizeof(*k)))) {
			close(fd);
			continue;
		}
		k->fd = fd;
		snprintf(k->job, sizeof(k->job), "%s", j->job);
		k->next = t->conns;
		t->conns = k;
		/* libmicrohttpd owns the fd from here, and closes it */
		if (MHD_add_connection(t->mhd, fd, (struct sockaddr *)&sa, len) != MHD_YES) {
			t->conns = k->next;
			free(k);
		}
		len = sizeof(sa);
	}
	if (fd < 0 && (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
		       errno == ENOMEM))
		pause_listener(t, j);
}

static int write_token(const char *dir, char token[TB_TOKEN_HEX + 1], struct err **e)
{
	unsigned char raw[TB_TOKEN_HEX / 2];
	_cleanup_close_ int dfd = -1;

	if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
		return err_set(e, ERR_UNAVAILABLE, errno, "toolbelt token");
	for (size_t i = 0; i < sizeof(raw); i++)
		snprintf(token + 2 * i, 3, "%02x", raw[i]);
	OPENSSL_cleanse(raw, sizeof(raw));
	dfd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "toolbelt `%s`", dir);
	return fs_write_atomic(dfd, TOOLBELT_TOKEN, token, TB_TOKEN_HEX, 0400, true, e);
}

static int read_token(const char *dir, char token[TB_TOKEN_HEX + 1], struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	size_t n = 0;

	if (dfd < 0 || fs_read_file(dfd, TOOLBELT_TOKEN, 256, &buf, &n, e) < 0)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "toolbelt `%s`", dir);
	if (n != TB_TOKEN_HEX || strspn(buf, "0123456789abcdef") != TB_TOKEN_HEX)
		return err_set(e, ERR_DENIED, 0, "toolbelt `%s`: its token is not the daemon's", dir);
	memcpy(token, buf, TB_TOKEN_HEX + 1);
	OPENSSL_cleanse(buf, n);
	return 0;
}

static int listen_at(const char *path, struct err **e)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path))
		return err_set(e, ERR_CONFIG, ENAMETOOLONG, "toolbelt socket `%s`", path);
	memcpy(sa.sun_path, path, strlen(path) + 1);
	(void)unlink(path); /* the last daemon's, for this job */
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || chmod(path, 0600) < 0 ||
	    listen(fd, 64) < 0) {
		int saved = errno;

		if (fd >= 0)
			close(fd);
		return err_set(e, ERR_UNAVAILABLE, saved, "toolbelt socket `%s`", path);
	}
	return fd;
}

int toolbelt_open(struct toolbelt *t, const char *job, unsigned int ops, bool reuse,
		  struct err **e)
{
	_cleanup_free_ char *dir = fs_path_join(t->root, job), *sock = NULL;
	struct tb_job *j;
	int r;

	if (find_job(t, job))
		return 0;
	j = calloc(1, sizeof(*j));
	if (!dir || !j || !(sock = fs_path_join(dir, TOOLBELT_SOCKET))) {
		free(j);
		return err_set(e, ERR_INTERNAL, ENOMEM, "toolbelt");
	}
	snprintf(j->job, sizeof(j->job), "%s", job);
	j->ops = ops;
	j->lfd = -1;
	j->t = t;
	if (mkdir(dir, 0700) < 0 && !(reuse && errno == EEXIST)) {
		free(j);
		return err_set(e, ERR_UNAVAILABLE, errno, "toolbelt `%s`", dir);
	}
	r = reuse ? read_token(dir, j->token, e) : write_token(dir, j->token, e);
	if (r == 0 && (j->lfd = listen_at(sock, e)) < 0)
		r = -1;
	if (r == 0 && loop_fd_add(t->loop, &j->src, j->lfd, EPOLLIN, on_listener, j, NULL) < 0)
		r = err_set(e, ERR_UNAVAILABLE, errno, "toolbelt `%s`", dir);
	if (r < 0) {
		if (j->lfd >= 0)
			close(j->lfd);
		OPENSSL_cleanse(j->token, sizeof(j->token));
		free(j);
		return -1;
	}
	j->next = t->jobs;
	t->jobs = j;
	return 0;
}

void toolbelt_close(struct toolbelt *t, const char *job)
{
	_cleanup_free_ char *dir = fs_path_join(t->root, job);
	_cleanup_close_ int dfd = -1;

	for (struct tb_job **p = &t->jobs; *p; p = &(*p)->next) {
		struct tb_job *j = *p;

		if (strcmp(j->job, job) != 0)
			continue;
		*p = j->next;
		loop_fd_del(t->loop, &j->src);
		close(j->lfd);
		OPENSSL_cleanse(j->token, sizeof(j->token));
		free(j);
		break;
	}
	/* revoked: nothing of it left to read or to connect to */
	dfd = dir ? fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0) : -1;
	if (dfd >= 0) {
		(void)unlinkat(dfd, TOOLBELT_TOKEN, 0);
		(void)unlinkat(dfd, TOOLBELT_SOCKET, 0);
		(void)rmdir(dir);
	}
}

char *toolbelt_dir_of(const struct toolbelt *t, const char *job)
{
	return find_job(t, job) ? fs_path_join(t->root, job) : NULL;
}

char *toolbelt_socket_of(const struct toolbelt *t, const char *job)
{
	_cleanup_free_ char *dir = toolbelt_dir_of(t, job);

	return dir ? fs_path_join(dir, TOOLBELT_SOCKET) : NULL;
}

void toolbelt_free(struct toolbelt *t)
{
	if (!t)
		return;
	/* listeners closed; the directories stay for a restart to take up */
	while (t->jobs) {
		struct tb_job *j = t->jobs;

		t->jobs = j->next;
		loop_fd_del(t->loop, &j->src);
		close(j->lfd);
		OPENSSL_cleanse(j->token, sizeof(j->token));
		free(j);
	}
	loop_hook_del(t->loop, &t->run);
	loop_timer_stop(t->loop, &t->wake);
	loop_timer_stop(t->loop, &t->resume);
	loop_fd_del(t->loop, &t->mhd_src);
	if (t->mhd)
		MHD_stop_daemon(t->mhd);
	while (t->conns) {
		struct tb_conn *k = t->conns;

		t->conns = k->next;
		free(k);
	}
	free(t->root);
	free(t);
}
