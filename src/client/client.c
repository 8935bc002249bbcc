/* client.c: the management API's client (see client.h): libcurl over
 * the daemon's unix socket, the operator's token read from the state
 * dir. */
#include "client/client.h"
#include "daemon/daemon.h"

#include "lib/bbuf.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define ANSWER_MAX ((size_t)16 * 1024 * 1024)

void client_global_init(void)
{
	curl_global_init(CURL_GLOBAL_NOTHING);
}

void client_global_cleanup(void)
{
	curl_global_cleanup();
}

int client_open(struct client *c, const char *state_dir)
{
	_cleanup_free_ char *path = NULL, *tok = NULL;
	_cleanup_close_ int fd = -1;
	struct err *e = NULL;
	size_t len = 0;

	c->state = state_dir ? strdup(state_dir) : hostd_default_state_dir();
	if (!c->state || asprintf(&path, "%s/%s", c->state, HOSTD_TOKEN_FILE) < 0) {
		fprintf(stderr, "cordon: error: no state dir (set --state-dir or HOME)\n");
		return -1;
	}
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fs_read_fd(fd, path, 256, &tok, &len, &e) < 0) {
		fprintf(stderr, "cordon: sandbox_unavailable: the operator's token `%s`: %s (is the daemon started on this state dir?)\n",
			path, e ? e->msg : strerror(errno));
		err_free(e);
		return -1;
	}
	tok[strcspn(tok, "\n")] = '\0';
	snprintf(c->auth, sizeof(c->auth), "Authorization: Bearer %s", tok);
	explicit_bzero(tok, len);
	snprintf(c->sock, sizeof(c->sock), "%s/%s", c->state, HOSTD_SOCKET);
	return 0;
}

void client_close(struct client *c)
{
	explicit_bzero(c->auth, sizeof(c->auth));
	free(c->state);
}

long client_call(struct client *c, const char *method, const char *path, const char *body,
		 json_t **out)
{
	_cleanup_free_ char *url = NULL;
	struct curl_slist *h = NULL;
	struct bbuf b = { .max = ANSWER_MAX };
	long status = 0;
	CURL *k = curl_easy_init();

	*out = NULL;
	if (!k || asprintf(&url, "http://cordon%s", path) < 0)
		return 0;
	h = curl_slist_append(h, c->auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(k, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(k, CURLOPT_URL, url);
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_CUSTOMREQUEST, method);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, bbuf_take);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http");
	if (body)
		curl_easy_setopt(k, CURLOPT_POSTFIELDS, body);
	if (curl_easy_perform(k) == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
	else
		fprintf(stderr, "cordon: sandbox_unavailable: the daemon at `%s` does not answer\n",
			c->sock);
	curl_slist_free_all(h);
	curl_easy_cleanup(k);
	if (b.p)
		*out = json_parse_strict(b.p, strlen(b.p), NULL);
	free(b.p);
	return status;
}

/* What a log request brings: given to the sink as it comes when the
 * answer is the log, kept when it is an error. */
struct stream {
	CURL *k;
	size_t n;
	struct bbuf err;
	void (*sink)(const char *p, size_t n, void *arg);
	void *arg;
};

static size_t show(char *data, size_t size, size_t nmemb, void *arg)
{
	struct stream *st = arg;
	long code = 0;

	curl_easy_getinfo(st->k, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200)
		return bbuf_take(data, size, nmemb, &st->err);
	st->sink(data, size * nmemb, st->arg);
	st->n += size * nmemb;
	return size * nmemb;
}

long client_log(struct client *c, const char *id, unsigned long long offset, bool follow,
		void (*sink)(const char *p, size_t n, void *arg), void *arg, size_t *got,
		bool *whole, json_t **err)
{
	_cleanup_free_ char *path = NULL;
	struct stream st = { .k = curl_easy_init(), .err = { .max = ANSWER_MAX }, .sink = sink,
			     .arg = arg };
	struct curl_slist *h = NULL;
	CURLcode res;
	long status = 0;

	*got = 0;
	*whole = false;
	*err = NULL;
	if (!st.k || asprintf(&path, "http://cordon/v1/jobs/%s/log?offset=%llu%s", id, offset,
			      follow ? "&follow=1" : "") < 0) {
		curl_easy_cleanup(st.k);
		return -1;
	}
	h = curl_slist_append(h, c->auth);
	curl_easy_setopt(st.k, CURLOPT_UNIX_SOCKET_PATH, c->sock);
	curl_easy_setopt(st.k, CURLOPT_URL, path);
	curl_easy_setopt(st.k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(st.k, CURLOPT_WRITEFUNCTION, show);
	curl_easy_setopt(st.k, CURLOPT_WRITEDATA, &st);
	curl_easy_setopt(st.k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(st.k, CURLOPT_PROTOCOLS_STR, "http");
	res = curl_easy_perform(st.k);
	curl_easy_getinfo(st.k, CURLINFO_RESPONSE_CODE, &status);
	curl_slist_free_all(h);
	curl_easy_cleanup(st.k);
	*got = st.n;
	*whole = res == CURLE_OK;
	if (status != 200 && status != 0 && st.err.p)
		*err = json_parse_strict(st.err.p, strlen(st.err.p), NULL);
	free(st.err.p);
	return status;
}
