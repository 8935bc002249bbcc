/* tb.c: `cordon tb`, the toolbelt's client, run by a job's command (inside
 * its sandbox, or on the host for a binding without one). The token is
 * read from the file $CORDON_TOOLBELT names; the toolbelt is reached
 * through the sandbox's gateway under its reserved name when a proxy is
 * set, else at the socket beside the token. `cordon tb mcp` serves the
 * operations the binding grants as MCP tools on stdio. */
#include "cli/tb.h"

#include "gateway/gateway.h"
#include "host/config.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/httpc.h"
#include "lib/json.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TB_ANSWER_MAX ((size_t)1 << 20)
#define TB_LINE_MAX ((size_t)1 << 20)
/* the whole of one call, connecting included */
#define TB_TIMEOUT_MS 60000

static const char tb_usage[] =
	"usage: cordon tb call OP [JSON]\n"
	"       cordon tb mcp\n"
	"       cordon tb git-credential get|store|erase\n\n"
	"The job's toolbelt, from inside a job. call: OP is an operation the\n"
	"binding grants (job.status, job.output, notify, git.credential), JSON its\n"
	"arguments (an object); prints the result as JSON, or the refusal on\n"
	"stderr and exits 125. mcp: an MCP server on stdin and stdout offering\n"
	"the operations the binding grants as tools (for an agent's MCP config).\n"
	"git-credential: git's credential helper (git runs it, through the\n"
	"credential.helper cordon sets): get asks git.credential for what git\n"
	"reads on stdin, and prints the username and password when the binding\n"
	"has one for it (nothing otherwise); store and erase do nothing.\n"
	"The token is read from the file $CORDON_TOOLBELT names.\n";

/* The proxy the job's command was given (the sandbox's gateway), and
 * the variable it came from. */
static const char *proxy_env(const char **name)
{
	static const char *const names[] = { "CORDON_TOOLBELT_PROXY", "http_proxy", "HTTP_PROXY",
					     "all_proxy", "ALL_PROXY", NULL };

	for (size_t i = 0; names[i]; i++) {
		const char *v = getenv(names[i]);

		if (v && v[0]) {
			*name = names[i];
			return v;
		}
	}
	return NULL;
}

static char *why_of(const char *reason, const char *msg)
{
	char *out = NULL;

	return asprintf(&out, "%s: %s", reason, msg) < 0 ? NULL : out;
}

/* A secret's string, wiped before it is freed. */
static void wipe_freep(char **p)
{
	if (*p) {
		explicit_bzero(*p, strlen(*p));
		free(*p);
	}
}
#define _cleanup_wipe_ __attribute__((cleanup(wipe_freep)))

/* The token in the file at tokpath (its first line, visible ASCII; what
 * follows it wiped) in *tok, which the caller wipes; -1 with *why. */
static int read_token(const char *tokpath, char **tok, char **why)
{
	_cleanup_close_ int fd = open(tokpath, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	struct err *e = NULL;
	size_t len = 0, line;

	if (fd < 0 || fs_read_fd(fd, tokpath, 256, tok, &len, &e) < 0) {
		err_free(e);
		*why = why_of("sandbox_unavailable", "the toolbelt token cannot be read");
		return -1;
	}
	line = strcspn(*tok, "\n");
	explicit_bzero(*tok + line, len - line);
	for (const char *p = *tok; *p; p++) {
		if (*p <= ' ' || *p == 0x7f) {
			*why = why_of("sandbox_unavailable", "the toolbelt token cannot be read");
			return -1;
		}
	}
	return 0;
}

/* One request to the toolbelt (a POST of body, or a GET without one):
 * its JSON answer on 200, else NULL with *why ("reason: message"). */
static json_t *tb_request(const char *path, const char *body, char **why)
{
	const char *tokpath = getenv("CORDON_TOOLBELT"), *pname = NULL, *proxy = proxy_env(&pname);
	_cleanup_wipe_ char *tok = NULL, *auth = NULL;
	_cleanup_free_ char *sock = NULL;
	struct httpc_answer a = { 0 };
	struct httpc_proxy px;
	struct err *e = NULL;
	json_t *ans;
	int rc;

	*why = NULL;
	if (!tokpath || tokpath[0] != '/') {
		*why = why_of("sandbox_unavailable", "no toolbelt here ($CORDON_TOOLBELT is not set: "
						     "the binding grants no operations)");
		return NULL;
	}
	if (read_token(tokpath, &tok, why) < 0)
		return NULL;
	/* on the host, whatever proxy the operator's network needs: the
	 * socket (a clone the host makes for a job) */
	if (getenv("CORDON_TOOLBELT_DIRECT"))
		proxy = NULL;
	if (proxy && httpc_proxy_parse(proxy, &px) < 0) {
		_cleanup_free_ char *msg = NULL;

		if (asprintf(&msg, "$%s is not a proxy the toolbelt is reached through "
				   "(http://HOST:PORT, HOST an address or localhost)", pname) < 0)
			msg = NULL;
		*why = msg ? why_of("sandbox_unavailable", msg) : NULL;
		return NULL;
	}
	if (!proxy) {
		/* on the host (a binding without a sandbox): the socket beside
		 * the token */
		const char *slash = strrchr(tokpath, '/');
		_cleanup_free_ char *dir = strndup(tokpath, (size_t)(slash - tokpath));

		sock = dir ? fs_path_join(dir, "toolbelt.sock") : NULL;
		if (!sock)
			return NULL;
	}
	if (asprintf(&auth, "Bearer %s", tok) < 0) {
		auth = NULL;
		return NULL;
	}
	/* through the gateway, which answers the reserved name itself */
	rc = httpc_exchange(&(struct httpc_request){ .method = body ? "POST" : "GET",
						     .host = GW_TOOLBELT_NAME,
						     .port = GW_TOOLBELT_PORT,
						     .path = path,
						     .auth = auth,
						     .body = body,
						     .proxy = proxy ? &px : NULL,
						     .socket = sock,
						     .timeout_ms = TB_TIMEOUT_MS,
						     .body_max = TB_ANSWER_MAX },
			    &a, &e);
	if (rc < 0) {
		err_free(e);
		*why = why_of("sandbox_unavailable", "the toolbelt does not answer");
		return NULL;
	}
	ans = json_parse_strict(a.body, a.len, NULL);
	explicit_bzero(a.body, a.len);
	free(a.body);
	if (a.status != 200 || !json_is_object(ans)) {
		const char *r = json_string_value(json_object_get(ans, "error"));
		const char *m = json_string_value(json_object_get(ans, "message"));

		*why = why_of(r ? r : "sandbox_unavailable", m ? m : "the toolbelt refused the call");
		json_decref(ans);
		return NULL;
	}
	return ans;
}

json_t *tb_call_op(const char *op, json_t *args, char **why)
{
	_cleanup_json_ json_t *req = json_pack("{s:s, s:o}", "op", op,
					       "args", args ? json_incref(args) : json_object());
	_cleanup_free_ char *body = req ? json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	_cleanup_json_ json_t *ans = NULL;

	*why = NULL;
	if (!body) {
		*why = why_of("sandbox_config", "the operation's name or arguments are not valid");
		return NULL;
	}
	ans = tb_request("/v1/call", body, why);
	return ans ? json_incref(json_object_get(ans, "result")) : NULL;
}

/* --- MCP ----------------------------------------------------------------- */

/* The tools: the granted operations an agent calls (git's credential is
 * git's own, through `cordon tb git-credential`). */
static const struct {
	const char *op, *tool, *description, *schema;
} tools[] = {
	{ "job.status", "job_status", "This job's status as the host sees it: id, binding, "
	  "result, segments and the outputs saved so far.",
	  "{\"type\": \"object\", \"properties\": {}}" },
	{ "job.output", "job_output", "Save a named result of this job for the operator "
	  "(shown by `cordon job show`); saving a name again replaces it.",
	  "{\"type\": \"object\", \"properties\": {\"name\": {\"type\": \"string\", "
	  "\"description\": \"1 to 64 letters, digits, '.', '_' or '-'\"}, \"value\": "
	  "{\"type\": \"string\", \"description\": \"at most 16 KiB\"}}, \"required\": "
	  "[\"name\", \"value\"]}" },
	{ "notify", "notify", "Write a line for the operator in this job's log.",
	  "{\"type\": \"object\", \"properties\": {\"text\": {\"type\": \"string\", "
	  "\"description\": \"at most 1 KiB\"}}, \"required\": [\"text\"]}" },
};

static void send_msg(json_t *m)
{
	_cleanup_free_ char *text = m ? json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	json_decref(m);
	if (text) {
		printf("%s\n", text);
		fflush(stdout);
	}
}

static void send_error(json_t *id, int code, const char *msg)
{
	send_msg(json_pack("{s:s, s:O, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", id, "error", "code",
			   code, "message", msg));
}

static json_t *tools_list(unsigned int granted)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && i < sizeof(tools) / sizeof(*tools); i++) {
		if (!(granted & host_op_bit(tools[i].op)))
			continue;
		json_array_append_new(arr, json_pack("{s:s, s:s, s:o}", "name", tools[i].tool,
						     "description", tools[i].description,
						     "inputSchema",
						     json_parse_strict(tools[i].schema, strlen(tools[i].schema), NULL)));
	}
	return json_pack("{s:o}", "tools", arr ? arr : json_array());
}

static json_t *tools_call(unsigned int granted, json_t *params)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	json_t *args = json_object_get(params, "arguments");
	_cleanup_free_ char *why = NULL, *text = NULL;
	_cleanup_json_ json_t *res = NULL;
	const char *op = NULL;

	for (size_t i = 0; name && i < sizeof(tools) / sizeof(*tools); i++)
		if (strcmp(name, tools[i].tool) == 0 && (granted & host_op_bit(tools[i].op)))
			op = tools[i].op;
	if (!op)
		return NULL;
	res = tb_call_op(op, json_is_object(args) ? args : NULL, &why);
	text = res ? json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY) : NULL;
	return json_pack("{s:[{s:s, s:s}], s:b}", "content", "type", "text", "text",
			 text ? text : why ? why : "the call failed", "isError", !res);
}

/* The operations the binding grants, as host_op bits (0 when the
 * toolbelt cannot say). */
static unsigned int granted_ops(char **why)
{
	_cleanup_json_ json_t *ans = tb_request("/v1/ops", NULL, why);
	unsigned int bits = 0;
	json_t *v;
	size_t i;

	json_array_foreach(json_object_get(ans, "ops"), i, v)
		if (json_is_string(v))
			bits |= host_op_bit(json_string_value(v));
	return bits;
}

static int mcp_main(void)
{
	_cleanup_free_ char *line = NULL, *why = NULL;
	unsigned int granted = granted_ops(&why);
	size_t cap = 0;
	ssize_t n;

	if (why)
		fprintf(stderr, "cordon: %s\n", why);
	while ((n = getline(&line, &cap, stdin)) > 0) {
		_cleanup_json_ json_t *m = NULL;
		json_t *id, *params;
		const char *method;

		if ((size_t)n > TB_LINE_MAX)
			continue;
		m = json_parse_strict(line, strlen(line), NULL);
		if (!json_is_object(m)) {
			send_error(json_null(), -32700, "not a JSON object");
			continue;
		}
		id = json_object_get(m, "id");
		method = json_string_value(json_object_get(m, "method"));
		params = json_object_get(m, "params");
		if (!id)
			continue; /* a notification (initialized, cancelled): nothing to answer */
		if (!method) {
			send_error(id, -32600, "no method");
		} else if (strcmp(method, "initialize") == 0) {
			const char *v = json_string_value(json_object_get(params, "protocolVersion"));

			send_msg(json_pack("{s:s, s:O, s:{s:s, s:{s:{}}, s:{s:s, s:s}}}", "jsonrpc",
					   "2.0", "id", id, "result", "protocolVersion",
					   v ? v : "2024-11-05", "capabilities", "tools",
					   "serverInfo", "name", "cordon-toolbelt", "version",
					   CORDON_VERSION));
		} else if (strcmp(method, "ping") == 0) {
			send_msg(json_pack("{s:s, s:O, s:{}}", "jsonrpc", "2.0", "id", id, "result"));
		} else if (strcmp(method, "tools/list") == 0) {
			send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id, "result",
					   tools_list(granted)));
		} else if (strcmp(method, "tools/call") == 0) {
			json_t *r = tools_call(granted, params);

			if (r)
				send_msg(json_pack("{s:s, s:O, s:o}", "jsonrpc", "2.0", "id", id,
						   "result", r));
			else
				send_error(id, -32602, "no such tool");
		} else {
			send_error(id, -32601, "no such method");
		}
	}
	return 0;
}

/* git's credential-helper protocol (gitcredentials(7)): key=value lines
 * on stdin up to a blank line; for get, the answer's username and
 * password lines on stdout, or nothing when the toolbelt has none. */
static int git_credential_main(const char *action)
{
	_cleanup_json_ json_t *args = json_object(), *res = NULL;
	_cleanup_free_ char *line = NULL, *why = NULL;
	size_t cap = 0, total = 0;
	ssize_t n;

	if (strcmp(action, "get") != 0)
		return strcmp(action, "store") == 0 || strcmp(action, "erase") == 0 ? 0 : 125;
	while (args && (n = getline(&line, &cap, stdin)) > 0) {
		char *eq;

		total += (size_t)n;
		if (total > 65536 || strlen(line) != (size_t)n)
			return 125;
		line[strcspn(line, "\n")] = '\0';
		if (!line[0])
			break;
		eq = strchr(line, '=');
		if (!eq)
			continue;
		*eq = '\0';
		if ((strcmp(line, "protocol") == 0 || strcmp(line, "host") == 0 ||
		     strcmp(line, "path") == 0) &&
		    json_object_set_new(args, line, json_string(eq + 1)) < 0)
			return 125;
	}
	if (!args || !json_object_get(args, "protocol") || !json_object_get(args, "host"))
		return 0;
	res = tb_call_op("git.credential", args, &why);
	if (!res) {
		/* none for that host is the answer git expects often; a
		 * toolbelt that cannot answer is said */
		if (why && strncmp(why, "sandbox_denied:", 15) != 0)
			fprintf(stderr, "cordon: git-credential: %s\n", why);
		return 0;
	}
	const char *user = json_string_value(json_object_get(res, "username"));
	const char *pass = json_string_value(json_object_get(res, "password"));
	if (!user || !pass || strpbrk(user, "\n\r") || strpbrk(pass, "\n\r") ||
	    strlen(user) != json_string_length(json_object_get(res, "username")) ||
	    strlen(pass) != json_string_length(json_object_get(res, "password")))
		return 0;
	printf("username=%s\npassword=%s\n", user, pass);
	return fflush(stdout) == 0 ? 0 : 125;
}

int cli_tb(int argc, char **argv)
{
	_cleanup_json_ json_t *args = NULL, *res = NULL;
	_cleanup_free_ char *text = NULL, *why = NULL;

	if (argc >= 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(tb_usage, stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "mcp") == 0)
		return mcp_main();
	if (argc == 3 && strcmp(argv[1], "git-credential") == 0)
		return git_credential_main(argv[2]);
	if (argc < 3 || argc > 4 || strcmp(argv[1], "call") != 0) {
		fputs(tb_usage, stderr);
		return 125;
	}
	if (argc == 4) {
		args = json_parse_strict(argv[3], strlen(argv[3]), NULL);
		if (!json_is_object(args)) {
			fprintf(stderr, "cordon: sandbox_config: the arguments must be a JSON object\n");
			return 125;
		}
	}
	res = tb_call_op(argv[2], args, &why);
	if (!res) {
		fprintf(stderr, "cordon: %s\n", why ? why : "sandbox_unavailable: the call failed");
		return 125;
	}
	text = json_dumps(res, JSON_COMPACT | JSON_ENSURE_ASCII | JSON_ENCODE_ANY);
	printf("%s\n", text ? text : "null");
	return fflush(stdout) == 0 ? 0 : 125;
}
