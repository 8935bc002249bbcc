/* tb.c: `cordon tb`, the toolbelt's client, run by a job's command (inside
 * its sandbox, or on the host for a binding without one). The token is
 * read from the file $CORDON_TOOLBELT names; the toolbelt is reached
 * through the sandbox's gateway under its reserved name when a proxy is
 * set, else at the socket beside the token. */
#include "hostd/tb.h"

#include "gateway/gateway.h"
#include "hostd/http.h"
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

#define TB_ANSWER_MAX ((size_t)1 << 20)

static const char tb_usage[] =
	"usage: cordon tb call OP [JSON]\n\n"
	"Call the job's toolbelt (from inside a job): OP is an operation the\n"
	"binding grants (job.status, job.output, notify, git.credential), JSON\n"
	"its arguments (an object). Prints the result as JSON; a refusal on\n"
	"stderr, exit 125. The token is read from the file $CORDON_TOOLBELT\n"
	"names.\n";

static const char *proxy_env(void)
{
	static const char *const names[] = { "CORDON_TOOLBELT_PROXY", "http_proxy", "HTTP_PROXY",
					     "all_proxy", "ALL_PROXY", NULL };

	for (size_t i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);

		if (v && v[0])
			return v;
	}
	return NULL;
}

/* One call: the result (caller frees), or NULL with a message printed. */
json_t *tb_call_op(const char *op, json_t *args)
{
	const char *tokpath = getenv("CORDON_TOOLBELT"), *proxy = proxy_env();
	_cleanup_free_ char *tok = NULL, *auth = NULL, *body = NULL, *sock = NULL;
	_cleanup_json_ json_t *req = NULL, *ans = NULL;
	struct err *e = NULL;
	struct hostd_buf a = { .max = TB_ANSWER_MAX };
	struct curl_slist *h = NULL;
	long status = 0;
	size_t len = 0;
	CURL *k;
	CURLcode res;

	if (!tokpath || tokpath[0] != '/') {
		fprintf(stderr, "cordon: sandbox_unavailable: no toolbelt here ($CORDON_TOOLBELT is "
				"not set: the binding grants no operations)\n");
		return NULL;
	}
	int fd = open(tokpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fs_read_fd(fd, tokpath, 256, &tok, &len, &e) < 0) {
		fprintf(stderr, "cordon: sandbox_unavailable: the toolbelt token `%s`: %s\n", tokpath,
			e ? e->msg : strerror(errno));
		err_free(e);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	tok[strcspn(tok, "\n")] = '\0';
	req = json_pack("{s:s, s:o}", "op", op, "args", args ? json_incref(args) : json_object());
	body = req ? json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	if (!body || asprintf(&auth, "Authorization: Bearer %s", tok) < 0) {
		explicit_bzero(tok, len);
		return NULL;
	}
	explicit_bzero(tok, len);
	k = curl_easy_init();
	if (!k)
		return NULL;
	h = curl_slist_append(h, auth);
	h = curl_slist_append(h, "Content-Type: application/json");
	curl_easy_setopt(k, CURLOPT_URL, "http://" GW_TOOLBELT_NAME "/v1/call");
	if (proxy) {
		/* through the gateway, which answers the reserved name itself */
		curl_easy_setopt(k, CURLOPT_PROXY, proxy);
		curl_easy_setopt(k, CURLOPT_HTTPPROXYTUNNEL, 1L);
	} else {
		/* on the host (a binding without a sandbox): the socket beside
		 * the token */
		const char *slash = strrchr(tokpath, '/');
		_cleanup_free_ char *dir = strndup(tokpath, (size_t)(slash - tokpath));

		sock = dir ? fs_path_join(dir, "toolbelt.sock") : NULL;
		if (!sock || strlen(sock) >= 108) {
			curl_slist_free_all(h);
			curl_easy_cleanup(k);
			return NULL;
		}
		curl_easy_setopt(k, CURLOPT_UNIX_SOCKET_PATH, sock);
		curl_easy_setopt(k, CURLOPT_PROXY, "");
	}
	curl_easy_setopt(k, CURLOPT_NOPROXY, "");
	curl_easy_setopt(k, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(k, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(k, CURLOPT_WRITEFUNCTION, hostd_buf_take);
	curl_easy_setopt(k, CURLOPT_WRITEDATA, &a);
	curl_easy_setopt(k, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(k, CURLOPT_TIMEOUT, 60L);
	curl_easy_setopt(k, CURLOPT_PROTOCOLS_STR, "http");
	res = curl_easy_perform(k);
	if (res == CURLE_OK)
		curl_easy_getinfo(k, CURLINFO_RESPONSE_CODE, &status);
	explicit_bzero(auth, strlen(auth));
	curl_slist_free_all(h);
	curl_easy_cleanup(k);
	if (res != CURLE_OK) {
		fprintf(stderr, "cordon: sandbox_unavailable: the toolbelt does not answer (%s)\n",
			curl_easy_strerror(res));
		free(a.p);
		return NULL;
	}
	ans = a.p ? json_loads(a.p, 0, NULL) : NULL;
	free(a.p);
	if (status != 200 || !json_object_get(ans, "result")) {
		const char *why = json_string_value(json_object_get(ans, "error"));
		const char *msg = json_string_value(json_object_get(ans, "message"));

		fprintf(stderr, "cordon: %s: %s\n", why ? why : "sandbox_unavailable",
			msg ? msg : "the toolbelt refused the call");
		return NULL;
	}
	return json_incref(json_object_get(ans, "result"));
}

int hostd_tb_main(int argc, char **argv)
{
	_cleanup_json_ json_t *args = NULL, *res = NULL;
	_cleanup_free_ char *text = NULL;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(tb_usage, stdout);
		return 0;
	}
	if (argc < 3 || argc > 4 || strcmp(argv[1], "call") != 0) {
		fputs(tb_usage, stderr);
		return 125;
	}
	if (argc == 4) {
		args = json_loads(argv[3], JSON_REJECT_DUPLICATES, NULL);
		if (!json_is_object(args)) {
			fprintf(stderr, "cordon: sandbox_config: the arguments must be a JSON object\n");
			return 125;
		}
	}
	curl_global_init(CURL_GLOBAL_NOTHING);
	res = tb_call_op(argv[2], args);
	curl_global_cleanup();
	if (!res)
		return 125;
	text = json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	printf("%s\n", text ? text : "null");
	return fflush(stdout) == 0 ? 0 : 125;
}
