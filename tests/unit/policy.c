/* tests/unit/policy.c: the policy document (src/policy/policy.c, paths.c):
 * every refusal with its exact message ("<json path>: <reason>") next to a
 * negative control (the same document with that one thing fixed parses),
 * acceptance and normalisation, the embedded default, path resolution for
 * a launch (symbolic links made for real in a temporary directory) and the
 * command-line helpers. */
#include "lib/err.h"
#include "lib/json.h"
#include "policy/policy.h"
#include "tap.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* --- helpers ----------------------------------------------------------- */

/* Parses len bytes of doc. Returns 0 or -1; on -1 *msg (caller frees) is
 * the error message and *reason its class. On success *pp is the policy
 * (caller frees) unless pp is NULL. */
static int parse_n(const char *doc, size_t len, struct policy **pp, char **msg,
		   int *reason)
{
	struct policy *p = NULL;
	struct err *e = NULL;
	int r = policy_parse(doc, len, &p, &e);

	*msg = NULL;
	*reason = -1;
	if (r < 0) {
		if (p)
			diag("policy_parse set *out on failure");
		if (e) {
			*msg = strdup(e->msg);
			*reason = (int)e->reason;
		}
		err_free(e);
		return -1;
	}
	if (e)
		diag("policy_parse succeeded but left an error: %s", e->msg);
	err_free(e);
	if (pp)
		*pp = p;
	else
		policy_free(p);
	return 0;
}

/* The refusal: doc is refused as sandbox_config with the message want
 * (exactly; or, when prefix, starting with want: parse errors add a line
 * and column). */
static void refuses_n(const char *label, const char *doc, size_t len,
		      const char *want, bool prefix)
{
	char *msg = NULL;
	int reason;
	int r = parse_n(doc, len, NULL, &msg, &reason);

	if (!ok(r == -1 && reason == ERR_CONFIG, "%s: refused as sandbox_config", label)) {
		diag("rc %d, reason %d, message %s", r, reason, msg ? msg : "(none)");
		free(msg);
		return;
	}
	if (prefix) {
		if (!ok(msg && strncmp(msg, want, strlen(want)) == 0,
			"%s: message starts `%s`", label, want))
			diag("message: %s", msg ? msg : "(none)");
	} else {
		is_str(msg, want, "%s: message", label);
	}
	free(msg);
}

static void accepts_n(const char *label, const char *doc, size_t len)
{
	char *msg = NULL;
	int reason;

	if (!ok(parse_n(doc, len, NULL, &msg, &reason) == 0, "%s: control parses", label))
		diag("refused: %s", msg ? msg : "(none)");
	free(msg);
}

/* One rule: bad is refused with want; good (the same document with the
 * one thing fixed) is the negative control. */
static void rule(const char *label, const char *bad, const char *want,
		 const char *good)
{
	refuses_n(label, bad, strlen(bad), want, false);
	accepts_n(label, good, strlen(good));
}

/* The same, for parse errors whose message ends in a line and column. */
static void rule_prefix(const char *label, const char *bad, const char *want,
			const char *good)
{
	refuses_n(label, bad, strlen(bad), want, true);
	accepts_n(label, good, strlen(good));
}

/* The refusal message of bad, for checks on what it must not hold.
 * Caller frees. */
static char *message_of(const char *bad)
{
	char *msg = NULL;
	int reason;

	if (parse_n(bad, strlen(bad), NULL, &msg, &reason) == 0)
		return NULL;
	return msg;
}

/* The canonical JSON text of the policy doc parses to; NULL when it is
 * refused. Caller frees. */
static char *canonical_of(const char *doc)
{
	struct policy *p = NULL;
	char *msg = NULL, *text = NULL;
	int reason;
	json_t *j;

	if (parse_n(doc, strlen(doc), &p, &msg, &reason) < 0) {
		diag("refused: %s", msg ? msg : "(none)");
		free(msg);
		return NULL;
	}
	j = policy_to_json(p);
	if (j)
		text = json_dump_canonical(j);
	json_decref(j);
	policy_free(p);
	return text;
}

/* --- structure: unknown keys, duplicate keys, wrong types ---------------- */

static void test_unknown_keys(void)
{
	rule("unknown key at top level", "{\"write\":[],\"writes\":[]}",
	     "writes: unknown key (did you mean \"write\"?)", "{\"write\":[]}");
	rule("unknown key in read", "{\"read\":{\"deny\":[],\"allw\":[]}}",
	     "read.allw: unknown key (did you mean \"allow\"?)", "{\"read\":{\"deny\":[],\"allow\":[]}}");
	rule("unknown key in network",
	     "{\"network\":{\"allow\":[\"a.example\"],\"block\":[]}}",
	     "network.block: unknown key",
	     "{\"network\":{\"allow\":[\"a.example\"],\"deny\":[]}}");
	/* An odd key is shown escaped and quoted, not raw. */
	rule("unknown key with odd characters", "{\"a b\\\"c\":1}",
	     "[\"a b\\x22c\"]: unknown key", "{}");
	/* one edit from a known key: named; two edits away: not (the control) */
	rule("a swapped pair", "{\"netwrok\":{}}",
	     "netwrok: unknown key (did you mean \"network\"?)", "{\"network\":{}}");
	rule("a letter dropped, nested", "{\"network\":{\"alow\":[]}}",
	     "network.alow: unknown key (did you mean \"allow\"?)", "{\"network\":{\"allow\":[]}}");
	rule("two edits away", "{\"ntwrok\":{}}", "ntwrok: unknown key", "{\"network\":{}}");
	rule("unknown key nested in read with a dot",
	     "{\"read\":{\"deny.x\":[]}}", "read[\"deny.x\"]: unknown key",
	     "{\"read\":{\"deny\":[]}}");
	{
		/* A long key is cut to KEY_SHOW_MAX (64) bytes, then "...";
		 * a key of 64 bytes is shown whole (the control). */
		char k[101], doc[200], want[200];

		memset(k, 'k', 100);
		k[100] = '\0';
		snprintf(doc, sizeof(doc), "{\"%.64s\":1}", k);
		snprintf(want, sizeof(want), "%.64s: unknown key", k);
		refuses_n("64-byte key shown whole", doc, strlen(doc), want, false);
		snprintf(doc, sizeof(doc), "{\"%s\":1}", k);
		snprintf(want, sizeof(want), "[\"%.64s...\"]: unknown key", k);
		refuses_n("json_path_key: a 100-byte key is cut to 64 bytes", doc,
			  strlen(doc), want, false);
	}
}

static void test_duplicate_keys(void)
{
	rule_prefix("duplicate key at top level",
		    "{\"write\":[\"/a\"],\"write\":[\"/b\"]}",
		    "write: duplicate key (line 1, column ",
		    "{\"write\":[\"/a\"],\"sockets\":[\"/b\"]}");
	rule_prefix("duplicate object at top level",
		    "{\"network\":{},\"read\":{},\"network\":{}}",
		    "network: duplicate key (line ",
		    "{\"network\":{},\"read\":{}}");
	rule_prefix("duplicate key in read",
		    "{\"read\":{\"deny\":[\"/a\"],\"deny\":[\"/b\"]}}",
		    "read.deny: duplicate key (line ",
		    "{\"read\":{\"deny\":[\"/a\"],\"allow\":[\"/b\"]}}");
	rule_prefix("duplicate key in network",
		    "{\"network\":{\"allow\":[\"a.example\"],\n\"allow\":[]}}",
		    "network.allow: duplicate key (line 2, column ",
		    "{\"network\":{\"allow\":[\"a.example\"],\n\"deny\":[]}}");
	rule_prefix("duplicate unix_sockets",
		    "{\"unix_sockets\":\"none\",\"unix_sockets\":\"all\"}",
		    "unix_sockets: duplicate key (line ",
		    "{\"unix_sockets\":\"all\"}");
}

static void test_types(void)
{
	rule("write as a string", "{\"write\":\"/srv/x\"}",
	     "write: must be an array of strings", "{\"write\":[\"/srv/x\"]}");
	rule("write as null", "{\"write\":null}",
	     "write: must be an array of strings", "{\"write\":[]}");
	rule("sockets as an object", "{\"sockets\":{}}",
	     "sockets: must be an array of strings", "{\"sockets\":[]}");
	rule("read as an array", "{\"read\":[\"/a\"]}", "read: must be an object",
	     "{\"read\":{\"deny\":[\"/a\"]}}");
	rule("network as a string", "{\"network\":\"a.example\"}",
	     "network: must be an object",
	     "{\"network\":{\"allow\":[\"a.example\"]}}");
	rule("read.deny element a number", "{\"read\":{\"deny\":[\"/a\",7]}}",
	     "read.deny[1]: must be a string",
	     "{\"read\":{\"deny\":[\"/a\",\"/7\"]}}");
	rule("read.allow element an array", "{\"read\":{\"allow\":[[\"/a\"]]}}",
	     "read.allow[0]: must be a string", "{\"read\":{\"allow\":[\"/a\"]}}");
	rule("network.deny element null",
	     "{\"network\":{\"deny\":[\"a.example\",\"b.example\",null]}}",
	     "network.deny[2]: must be a string",
	     "{\"network\":{\"deny\":[\"a.example\",\"b.example\"]}}");
	rule("network.allow as a string", "{\"network\":{\"allow\":\"a.example\"}}",
	     "network.allow: must be an array of strings",
	     "{\"network\":{\"allow\":[\"a.example\"]}}");
	rule("unix_sockets as true", "{\"unix_sockets\":true}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"all\"}");
	rule("unix_sockets as false", "{\"unix_sockets\":false}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"none\"}");
	rule("unix_sockets as null", "{\"unix_sockets\":null}",
	     "unix_sockets: must be \"all\" or \"none\"", "{}");
	rule("unix_sockets as a number", "{\"unix_sockets\":1}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"all\"}");
	rule("unix_sockets upper case", "{\"unix_sockets\":\"ALL\"}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"all\"}");
	rule("unix_sockets some", "{\"unix_sockets\":\"some\"}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"none\"}");
	rule("unix_sockets empty", "{\"unix_sockets\":\"\"}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"none\"}");
	rule("unix_sockets with a space", "{\"unix_sockets\":\"all \"}",
	     "unix_sockets: must be \"all\" or \"none\"", "{\"unix_sockets\":\"all\"}");
	rule_prefix("unix_sockets with a NUL", "{\"unix_sockets\":\"all\\u0000\"}",
		    "unix_sockets: embedded NUL character (line ",
		    "{\"unix_sockets\":\"all\"}");
}

/* --- the document as a whole ------------------------------------------- */

static void test_document(void)
{
	rule("top level an array", "[]", "(root): must be an object", "{}");
	rule_prefix("top level a string", "\"{}\"", "(root): invalid JSON (line ", "{}");
	rule_prefix("top level null", "null", "(root): invalid JSON (line ", "{}");
	rule_prefix("top level a number", "1", "(root): invalid JSON (line ", "{}");
	rule_prefix("empty document", "", "(root): ", "{}");
	rule_prefix("trailing garbage", "{\"write\":[\"/a\"]} x",
		    "(root): trailing data after the document (line 1, column ",
		    "{\"write\":[\"/a\"]} \n");
	rule_prefix("a second document", "{}{}",
		    "(root): trailing data after the document (line ", "{}");
	rule_prefix("trailing comma", "{\"write\":[\"/a\"],}", "(root): invalid JSON (line ",
		    "{\"write\":[\"/a\"]}");
	rule_prefix("unterminated string", "{\"write\":[\"/a",
		    "write[0]: unexpected end of input (line ", "{\"write\":[\"/a\"]}");
	rule_prefix("lone surrogate", "{\"write\":[\"/a\\ud800\"]}",
		    "write[0]: invalid JSON (line ", "{\"write\":[\"/a\\u00e9\"]}");
	rule_prefix("invalid UTF-8", "{\"write\":[\"/a\xff\"]}",
		    "write[0]: invalid UTF-8 (line ", "{\"write\":[\"/a\xc3\xa9\"]}");
	{
		/* A raw NUL byte inside the document. */
		static const char bad[] = "{\"write\":[\"/a\0b\"]}";
		static const char good[] = "{\"write\":[\"/a b\"]}";

		refuses_n("raw NUL byte", bad, sizeof(bad) - 1, "write[0]: ", true);
		accepts_n("raw NUL byte", good, sizeof(good) - 1);
	}
}

/* --- paths -------------------------------------------------------------- */

static void test_paths(void)
{
	rule("relative path", "{\"write\":[\"/srv\",\"srv/x\"]}",
	     "write[1]: path must be absolute, start with ~/ or a placeholder",
	     "{\"write\":[\"/srv\",\"/srv/x\"]}");
	rule("dot-relative path", "{\"sockets\":[\"./s\"]}",
	     "sockets[0]: path must be absolute, start with ~/ or a placeholder",
	     "{\"sockets\":[\"/s\"]}");
	rule("pattern *", "{\"read\":{\"deny\":[\"~/.ssh/*\"]}}",
	     "read.deny[0]: patterns are not supported: name a path",
	     "{\"read\":{\"deny\":[\"~/.ssh\"]}}");
	rule("pattern ?", "{\"read\":{\"allow\":[\"/etc/host?\"]}}",
	     "read.allow[0]: patterns are not supported: name a path",
	     "{\"read\":{\"allow\":[\"/etc/hosts\"]}}");
	rule("pattern [", "{\"write\":[\"/tmp/[ab]\"]}",
	     "write[0]: patterns are not supported: name a path",
	     "{\"write\":[\"/tmp/ab\"]}");
	rule("~user", "{\"read\":{\"deny\":[\"~root/.ssh\"]}}",
	     "read.deny[0]: `~user` is not supported; use an absolute path",
	     "{\"read\":{\"deny\":[\"/root/.ssh\"]}}");
	rule("~ in the middle is a name", "{\"write\":[\"~x\"]}",
	     "write[0]: `~user` is not supported; use an absolute path",
	     "{\"write\":[\"/~x\"]}");
	rule("empty path", "{\"write\":[\"\"]}", "write[0]: empty path",
	     "{\"write\":[\"/\"]}");
	rule("empty socket path", "{\"sockets\":[\"/a\",\"\"]}", "sockets[1]: empty path",
	     "{\"sockets\":[\"/a\"]}");
	rule_prefix("embedded NUL in a path", "{\"write\":[\"/a\\u0000/b\"]}",
		    "write[0]: embedded NUL character (line ",
		    "{\"write\":[\"/a/b\"]}");
	rule_prefix("embedded NUL in read.deny",
		    "{\"read\":{\"deny\":[\"/x\",\"~/.ssh\\u0000\"]}}",
		    "read.deny[1]: embedded NUL character (line ",
		    "{\"read\":{\"deny\":[\"/x\",\"~/.ssh\"]}}");
	rule("control character", "{\"write\":[\"/a\\nb\"]}",
	     "write[0]: path holds a control character", "{\"write\":[\"/a b\"]}");
	rule("DEL character", "{\"write\":[\"/a\\u007f\"]}",
	     "write[0]: path holds a control character", "{\"write\":[\"/a~\"]}");
	rule("`..` component", "{\"write\":[\"{workspace}/../etc\"]}",
	     "write[0]: `..` components are not allowed",
	     "{\"write\":[\"{workspace}/.../etc\"]}");
	rule("trailing `..`", "{\"read\":{\"deny\":[\"/a/..\"]}}",
	     "read.deny[0]: `..` components are not allowed",
	     "{\"read\":{\"deny\":[\"/a/..b\"]}}");
	rule("unknown placeholder", "{\"write\":[\"{foo}/x\"]}",
	     "write[0]: unknown placeholder (known: {workspace}, {run}, {toolbelt})",
	     "{\"write\":[\"{run}/x\"]}");
	rule("placeholder with a suffix", "{\"write\":[\"{workspace}x\"]}",
	     "write[0]: unknown placeholder (known: {workspace}, {run}, {toolbelt})",
	     "{\"write\":[\"{workspace}/x\"]}");
	rule("braces mid-path", "{\"write\":[\"/srv/{workspace}\"]}",
	     "write[0]: braces are reserved for a leading placeholder",
	     "{\"write\":[\"/srv/workspace\"]}");
	rule("second placeholder", "{\"sockets\":[\"{toolbelt}/{run}\"]}",
	     "sockets[0]: braces are reserved for a leading placeholder",
	     "{\"sockets\":[\"{toolbelt}/run\"]}");
	rule("closing brace alone", "{\"write\":[\"/a}\"]}",
	     "write[0]: braces are reserved for a leading placeholder",
	     "{\"write\":[\"/a\"]}");
	rule("listed twice after normalising", "{\"write\":[\"/a/b\",\"/a//b/\"]}",
	     "write[1]: listed twice", "{\"write\":[\"/a/b\",\"/a//c/\"]}");

	/* PATH_MAX: PATH_MAX - 1 bytes parse, PATH_MAX bytes are refused. */
	{
		size_t n = PATH_MAX, doclen = n + 32;
		char *path = malloc(n + 1), *doc = malloc(doclen);

		if (!path || !doc)
			abort();
		for (size_t i = 0; i < n; i++)
			path[i] = (i % 100 == 0) ? '/' : 'a';
		path[n] = '\0';
		snprintf(doc, doclen, "{\"write\":[\"%s\"]}", path);
		refuses_n("path of PATH_MAX bytes", doc, strlen(doc),
			  "write[0]: path longer than PATH_MAX", false);
		path[n - 1] = '\0';
		snprintf(doc, doclen, "{\"write\":[\"%s\"]}", path);
		accepts_n("path of PATH_MAX - 1 bytes", doc, strlen(doc));
		free(path);
		free(doc);
	}
}

/* --- hosts -------------------------------------------------------------- */

#define NET_ALLOW(h) "{\"network\":{\"allow\":[\"api.example.com\"," h "]}}"

static void test_hosts(void)
{
	char *msg;

	rule("host a URL", NET_ALLOW("\"https://x.example\""),
	     "network.allow[1]: host is a URL; give the host name only",
	     NET_ALLOW("\"x.example\""));
	rule("host with a path", NET_ALLOW("\"x.example/path\""),
	     "network.allow[1]: host carries a path", NET_ALLOW("\"x.example\""));
	rule("host with a query", "{\"network\":{\"deny\":[\"x.example?q\"]}}",
	     "network.deny[0]: host carries a query",
	     "{\"network\":{\"deny\":[\"x.example\"]}}");
	rule("host with userinfo", NET_ALLOW("\"user:pw@x.example\""),
	     "network.allow[1]: host carries userinfo", NET_ALLOW("\"x.example\""));
	msg = message_of(NET_ALLOW("\"user:pw@x.example\""));
	ok(msg && !strstr(msg, "pw") && !strstr(msg, "user:"),
	   "userinfo: the message holds neither user nor password");
	free(msg);
	msg = message_of(NET_ALLOW("\"https://user:hunter2@x.example:443/p\""));
	ok(msg && !strstr(msg, "hunter2"), "URL with userinfo: no password in the message");
	free(msg);
	rule("port 0", NET_ALLOW("\"x.example:0\""),
	     "network.allow[1]: port 0 is out of range 1-65535",
	     NET_ALLOW("\"x.example:1\""));
	rule("port 65536", NET_ALLOW("\"x.example:65536\""),
	     "network.allow[1]: port is out of range 1-65535",
	     NET_ALLOW("\"x.example:65535\""));
	rule("empty port", NET_ALLOW("\"x.example:\""),
	     "network.allow[1]: empty port after ':'", NET_ALLOW("\"x.example\""));
	rule("port with a leading zero", NET_ALLOW("\"x.example:0443\""),
	     "network.allow[1]: port has a leading zero", NET_ALLOW("\"x.example:443\""));
	rule("* alone", NET_ALLOW("\"*\""),
	     "network.allow[1]: \"*\" alone would allow every host",
	     NET_ALLOW("\"*.example.com\""));
	rule("*.com", NET_ALLOW("\"*.com\""),
	     "network.allow[1]: wildcard domain needs at least two labels",
	     NET_ALLOW("\"*.example.com\""));
	rule("*.co.uk", NET_ALLOW("\"*.co.uk\""),
	     "network.allow[1]: wildcard over a public suffix",
	     NET_ALLOW("\"*.example.co.uk\""));
	rule("wildcard mid-name", NET_ALLOW("\"a.*.example.com\""),
	     "network.allow[1]: a wildcard must be the whole first label, as in *.example.com",
	     NET_ALLOW("\"*.example.com\""));
	rule("non-ASCII name", NET_ALLOW("\"ex\xc3\xa4mple.com\""),
	     "network.allow[1]: host is not ASCII (write IDNs in their xn-- form)",
	     NET_ALLOW("\"xn--exmple-cua.com\""));
	rule("non-ASCII name as \\u escape", NET_ALLOW("\"ex\\u00e4mple.com\""),
	     "network.allow[1]: host is not ASCII (write IDNs in their xn-- form)",
	     NET_ALLOW("\"example.com\""));
	rule("empty host", NET_ALLOW("\"\""), "network.allow[1]: empty host",
	     NET_ALLOW("\"b.example\""));
	rule_prefix("host with a NUL", NET_ALLOW("\"x.example\\u0000.evil\""),
		    "network.allow[1]: embedded NUL character (line ",
		    NET_ALLOW("\"x.example.evil\""));
	rule("host with a space", NET_ALLOW("\" x.example\""),
	     "network.allow[1]: host has leading or trailing whitespace",
	     NET_ALLOW("\"x.example\""));
	rule("numeric name", NET_ALLOW("\"1.2.3\""),
	     "network.allow[1]: not a valid host name (numeric, like an IPv4 address)",
	     NET_ALLOW("\"1.2.3.4\""));
	rule("bad IPv6", NET_ALLOW("\"[::g]:443\""),
	     "network.allow[1]: not a valid IPv6 address", NET_ALLOW("\"[::1]:443\""));
	rule("IPv4 in brackets", NET_ALLOW("\"[1.2.3.4]\""),
	     "network.allow[1]: brackets are for IPv6 addresses only",
	     NET_ALLOW("\"1.2.3.4\""));
	rule("deny list checked too", "{\"network\":{\"deny\":[\"*\"]}}",
	     "network.deny[0]: \"*\" alone would allow every host",
	     "{\"network\":{\"deny\":[\"*.example.com\"]}}");
}

/* A parse error's path must not quote a string the operator meant as a
 * value: a host list written with braces, as a set, reads as an object
 * whose keys are the hosts, and the JSON path of the error must not
 * carry the userinfo of one of them (policy.h: "the offending value is
 * never echoed"; host.h: a host "may carry a password in userinfo"). */
static void test_parse_errors_quote_no_value(void)
{
	char *msg;

	msg = message_of("{\"network\":{\"allow\":{\"user:pw@x.example\", \"b.example\"}}}");
	if (!ok(msg && !strstr(msg, "pw@"),
		"json_path_at: hosts written as a set: the error path does not quote a host"))
		diag("message: %s", msg ? msg : "(accepted)");
	free(msg);
	msg = message_of("{\"unix_sockets\" \"secretpw\"}");
	if (!ok(msg && !strstr(msg, "secretpw"),
		"json_path_at: a missing ':' does not make the value part of the path"))
		diag("message: %s", msg ? msg : "(accepted)");
	free(msg);
	/* Controls: where the string is no key, nothing is quoted already. */
	msg = message_of("{\"network\":{\"allow\":[\"user:pw@x.example\" \"b\"]}}");
	ok(msg && !strstr(msg, "pw@"), "array with a missing comma: no host quoted");
	free(msg);
	msg = message_of("{\"network\":{\"allow\":{\"user:pw@x.example\"}}}");
	ok(msg && !strstr(msg, "pw@"), "set of one host: no host quoted");
	free(msg);
}

/* --- acceptance and normalisation ------------------------------------- */

static const char full_example[] =
	"{\"write\":[\"{workspace}\",\"/srv/x\"],"
	"\"read\":{\"deny\":[\"~/.config/op\"],\"allow\":[\"~/.ssh/known_hosts\"]},"
	"\"network\":{\"allow\":[\"api.anthropic.com\",\"github.com\","
	"\"*.githubusercontent.com\"]},"
	"\"sockets\":[\"{toolbelt}\"],\"unix_sockets\":\"all\"}";

static void test_accept(void)
{
	struct policy *p = NULL;
	char *msg = NULL, *text, *again;
	int reason;

	if (!ok(parse_n(full_example, strlen(full_example), &p, &msg, &reason) == 0,
		"full example parses")) {
		diag("refused: %s", msg ? msg : "(none)");
		free(msg);
		return;
	}
	is_int(p->unix_sockets_all, 1, "  unix_sockets all");
	is_str(p->write[0], "{workspace}", "  write[0]");
	is_str(p->write[1], "/srv/x", "  write[1]");
	ok(p->write[2] == NULL, "  write has two entries");
	is_str(p->read_deny[0], "~/.config/op", "  read.deny[0]");
	is_str(p->read_allow[0], "~/.ssh/known_hosts", "  read.allow[0]");
	is_str(p->sockets[0], "{toolbelt}", "  sockets[0]");
	is_int(p->n_net_allow, 3, "  three allowed hosts");
	is_int(p->n_net_deny, 0, "  no denied hosts");
	if (p->n_net_allow == 3) {
		is_int(p->net_allow[0].kind, HOST_NAME, "  api.anthropic.com is a name");
		is_int(p->net_allow[2].kind, HOST_WILDCARD, "  *.githubusercontent.com is a wildcard");
		is_str(p->net_allow[2].name, "githubusercontent.com", "  wildcard domain");
	}
	policy_free(p);

	text = canonical_of(full_example);
	is_str(text,
	       "{\"network\":{\"allow\":[\"api.anthropic.com\",\"github.com\","
	       "\"*.githubusercontent.com\"],\"deny\":[]},"
	       "\"read\":{\"allow\":[\"~/.ssh/known_hosts\"],\"deny\":[\"~/.config/op\"]},"
	       "\"sockets\":[\"{toolbelt}\"],\"unix_sockets\":\"all\","
	       "\"write\":[\"{workspace}\",\"/srv/x\"]}",
	       "full example: normalised JSON");
	again = text ? canonical_of(text) : NULL;
	is_str(again, text, "full example: the normalised JSON parses to itself");
	free(text);
	free(again);
}

static void test_normalise(void)
{
	char *text, *again;
	static const char doc[] =
		"{\"write\":[\"/a//b/./c/\",\"~\",\"{run}/./x//\",\"//\",\"{workspace}/\"],"
		"\"read\":{\"deny\":[\"~/\",\"~//.ssh/./\"],\"allow\":[\"/\xc3\xa9t\xc3\xa9\"]},"
		"\"network\":{\"allow\":[\"Example.COM.\",\"[::0001]:443\",\"1.2.3.4:80\","
		"\"*.Example.ORG\"],\"deny\":[\"BAD.example\"]},"
		"\"sockets\":[\"{toolbelt}/\"],\"unix_sockets\":\"none\"}";

	text = canonical_of(doc);
	is_str(text,
	       "{\"network\":{\"allow\":[\"example.com\",\"[::1]:443\",\"1.2.3.4:80\","
	       "\"*.example.org\"],\"deny\":[\"bad.example\"]},"
	       "\"read\":{\"allow\":[\"/\\u00E9t\\u00E9\"],\"deny\":[\"~\",\"~/.ssh\"]},"
	       "\"sockets\":[\"{toolbelt}\"],\"unix_sockets\":\"none\","
	       "\"write\":[\"/a/b/c\",\"~\",\"{run}/x\",\"/\",\"{workspace}\"]}",
	       "normalised: paths folded, hosts lower-cased, trailing dots dropped");
	again = text ? canonical_of(text) : NULL;
	is_str(again, text, "normalised JSON parses to itself");
	free(text);
	free(again);

	text = canonical_of("{}");
	is_str(text,
	       "{\"network\":{\"allow\":[],\"deny\":[]},\"read\":{\"allow\":[],\"deny\":[]},"
	       "\"sockets\":[],\"unix_sockets\":\"none\",\"write\":[]}",
	       "{} parses with defaults: empty lists, unix_sockets none");
	free(text);
	text = canonical_of("{\"read\":{},\"network\":{}}");
	is_str(text,
	       "{\"network\":{\"allow\":[],\"deny\":[]},\"read\":{\"allow\":[],\"deny\":[]},"
	       "\"sockets\":[],\"unix_sockets\":\"none\",\"write\":[]}",
	       "empty read and network objects parse");
	free(text);
	text = canonical_of(" \n\t{ }\n");
	ok(text != NULL, "whitespace around the document is fine");
	free(text);
}

static void test_default(void)
{
	struct policy *p = NULL;
	struct err *e = NULL;
	char *text = NULL;
	json_t *j;

	if (!ok(policy_default(&p, &e) == 0 && p, "embedded default parses")) {
		diag("%s", e ? e->msg : "(no error)");
		err_free(e);
		return;
	}
	is_str(p->write[0], "{workspace}", "  default writes {workspace}");
	ok(p->write[1] == NULL, "  and nothing else");
	ok(!p->unix_sockets_all, "  default unix_sockets none");
	is_int(p->n_net_allow, 0, "  default allows no host");
	j = policy_to_json(p);
	text = j ? json_dump_canonical(j) : NULL;
	is_str(text,
	       "{\"network\":{\"allow\":[],\"deny\":[]},\"read\":{\"allow\":[],\"deny\":[]},"
	       "\"sockets\":[],\"unix_sockets\":\"none\",\"write\":[\"{workspace}\"]}",
	       "  default as JSON");
	free(text);
	json_decref(j);
	policy_free(p);
}

static void test_load_file(void)
{
	struct policy *p = NULL;
	struct err *e = NULL;

	ok(policy_load_file("/nonexistent/cordon/policy.json", &p, &e) < 0 && !p &&
		   e && e->reason == ERR_CONFIG,
	   "a missing policy file is sandbox_config");
	err_free(e);
	policy_free(NULL);
}

/* policy_path_normalise takes (in, len): only those bytes are the path. */
static void test_normalise_len(void)
{
	char *out = NULL;
	const char *why = NULL;
	int r;

	r = policy_path_normalise("/srv/x", 6, &out, &why);
	ok(r == 0 && out && strcmp(out, "/srv/x") == 0, "normalise: whole string");
	free(out);
	out = NULL;
	r = policy_path_normalise("/srv/x", 0, &out, &why);
	ok(r == -1 && why && strcmp(why, "empty path") == 0, "normalise: len 0 is empty");
	r = policy_path_normalise("/a/*", 4, &out, &why);
	ok(r == -1 && why && strstr(why, "patterns"), "normalise: pattern refused");
	r = policy_path_normalise("/a*", 2, &out, &why);
	if (!ok(r == 0 && out && strcmp(out, "/a") == 0,
		"policy_path_normalise: only len bytes are read (\"/a*\", 2 -> \"/a\")"))
		diag("rc %d, out %s, why %s", r, r == 0 && out ? out : "(none)",
		     r < 0 && why ? why : "(none)");
	if (r == 0)
		free(out);
	out = NULL;
	r = policy_path_normalise("/srv/x/../etc", 6, &out, &why);
	if (!ok(r == 0 && out && strcmp(out, "/srv/x") == 0,
		"policy_path_normalise: bytes past len are not normalised in"))
		diag("rc %d, out %s, why %s", r, r == 0 && out ? out : "(none)",
		     r < 0 && why ? why : "(none)");
	if (r == 0)
		free(out);
}

/* --- resolving for a launch -------------------------------------------- */

static char *resolve(const char *tmpl, const struct path_ctx *ctx, char **msg)
{
	struct err *e = NULL;
	char *out = NULL;

	*msg = NULL;
	if (policy_path_resolve(tmpl, ctx, &out, &e) < 0) {
		*msg = e ? strdup(e->msg) : strdup("(no error)");
		if (e && e->reason != ERR_CONFIG)
			diag("resolve `%s`: reason %d", tmpl, (int)e->reason);
		err_free(e);
		return NULL;
	}
	err_free(e);
	return out;
}

static char *cat(const char *a, const char *b)
{
	char *s = NULL;

	if (asprintf(&s, "%s%s", a, b) < 0)
		abort();
	return s;
}

static void is_resolved(const char *tmpl, const struct path_ctx *ctx,
			const char *want, const char *label)
{
	char *msg = NULL, *got = resolve(tmpl, ctx, &msg);

	if (!is_str(got, want, "resolve %s", label))
		diag("error: %s", msg ? msg : "(none)");
	free(got);
	free(msg);
}

static void test_resolve(void)
{
	char tmpl[] = "/tmp/cordon-policy-t-XXXXXX";
	char *root = NULL, *home, *ws, *tb, *real, *want, *msg = NULL, *got;
	char *link_rel, *link_abs, *dangling, *chain, *loop_a, *loop_b;
	struct path_ctx ctx = { 0 };

	if (!mkdtemp(tmpl)) {
		ok(0, "mkdtemp: %s", strerror(errno));
		return;
	}
	/* The directory as the kernel sees it: /tmp may be a link itself. */
	root = realpath(tmpl, NULL);
	if (!root)
		abort();
	home = cat(root, "/home");
	ws = cat(root, "/ws");
	tb = cat(root, "/tb.sock");
	real = cat(root, "/real");
	link_rel = cat(root, "/link");
	link_abs = cat(root, "/alink");
	dangling = cat(root, "/dangling");
	chain = cat(root, "/chain");
	loop_a = cat(root, "/loop_a");
	loop_b = cat(root, "/loop_b");
	if (mkdir(real, 0700) < 0 || symlink("real", link_rel) < 0 ||
	    symlink(real, link_abs) < 0 || symlink("real/missing", dangling) < 0 ||
	    symlink("link", chain) < 0 || symlink("loop_b", loop_a) < 0 ||
	    symlink("loop_a", loop_b) < 0)
		abort();

	ctx.home = home;
	ctx.workspace = ws;
	ctx.run = root;

	want = cat(home, "/x");
	is_resolved("~/x", &ctx, want, "~/x with a home");
	free(want);
	is_resolved("~", &ctx, home, "~ alone");
	want = cat(ws, "/a");
	is_resolved("{workspace}/a", &ctx, want, "{workspace}/a");
	free(want);
	is_resolved("{workspace}", &ctx, ws, "{workspace} alone");
	is_resolved("/", &ctx, "/", "/");

	got = resolve("{toolbelt}", &ctx, &msg);
	ok(!got, "{toolbelt} with no toolbelt refused");
	is_str(msg, "`{toolbelt}`: this launch has no {toolbelt}", "  its message");
	free(got);
	free(msg);
	ctx.toolbelt = tb;
	is_resolved("{toolbelt}", &ctx, tb, "{toolbelt} with a toolbelt (control)");

	ctx.home = NULL;
	got = resolve("~/x", &ctx, &msg);
	ok(!got && msg && strstr(msg, "HOME is not an absolute path"),
	   "~/x with no home refused");
	free(got);
	free(msg);
	ctx.home = "relative/home";
	got = resolve("~/x", &ctx, &msg);
	ok(!got && msg && strstr(msg, "HOME is not an absolute path"),
	   "~/x with a relative home refused");
	free(got);
	free(msg);
	ctx.home = home;

	/* Symbolic links in the longest existing prefix are resolved. */
	ctx.workspace = root;
	want = cat(real, "/nonexistent/child");
	is_resolved("{workspace}/real/nonexistent/child", &ctx, want,
		    "through the real directory (control)");
	is_resolved("{workspace}/link/nonexistent/child", &ctx, want,
		    "through a relative link to the directory");
	is_resolved("{workspace}/alink/nonexistent/child", &ctx, want,
		    "through an absolute link to the directory");
	is_resolved("{workspace}/chain/nonexistent/child", &ctx, want,
		    "through a chain of two links");
	free(want);
	is_resolved("{workspace}/link", &ctx, real, "the link itself");
	want = cat(real, "/missing");
	is_resolved("{workspace}/dangling", &ctx, want, "a dangling link: its target");
	free(want);
	want = cat(real, "/missing/child");
	is_resolved("{workspace}/dangling/child", &ctx, want, "beneath a dangling link");
	free(want);
	want = cat(root, "/nolink/child");
	is_resolved("{workspace}/nolink/child", &ctx, want, "nothing exists: as given");
	free(want);
	got = resolve("{workspace}/loop_a/x", &ctx, &msg);
	ok(!got && msg, "a link loop is refused");
	free(got);
	free(msg);

	unlink(loop_a);
	unlink(loop_b);
	unlink(chain);
	unlink(dangling);
	unlink(link_abs);
	unlink(link_rel);
	rmdir(real);
	ok(rmdir(tmpl) == 0, "temporary directory removed");
	free(loop_a);
	free(loop_b);
	free(chain);
	free(dangling);
	free(link_abs);
	free(link_rel);
	free(real);
	free(tb);
	free(ws);
	free(home);
	free(root);
}

/* --- command-line helpers ------------------------------------------------ */

static void test_add(void)
{
	struct policy *p = NULL;
	struct err *e = NULL;
	int r;

	if (policy_parse("{}", 2, &p, &e) < 0)
		abort();

	r = policy_add_path(&p->write, "srv/x", "--write", &e);
	ok(r < 0 && e && e->reason == ERR_CONFIG, "--write relative path refused");
	is_str(e ? e->msg : NULL,
	       "--write: path must be absolute, start with ~/ or a placeholder",
	       "  message names the flag");
	err_free(e);
	e = NULL;
	r = policy_add_path(&p->read_deny, "~/.ssh/*", "--deny-read", &e);
	is_str(e ? e->msg : NULL, "--deny-read: patterns are not supported: name a path",
	       "--deny-read pattern refused, naming the flag");
	err_free(e);
	e = NULL;
	r = policy_add_path(&p->write, "/srv//x/", "--write", &e);
	ok(r == 0 && !e && p->write[0] && strcmp(p->write[0], "/srv/x") == 0,
	   "--write absolute path added, normalised (control)");
	r = policy_add_path(&p->write, "/srv/x", "--write", &e);
	ok(r == 0 && !e && p->write[1] == NULL, "--write twice: added once");

	r = policy_add_host(&p->net_allow, &p->n_net_allow, "https://x.example",
			    "--allow-host", &e);
	ok(r < 0 && e && e->reason == ERR_CONFIG, "--allow-host URL refused");
	is_str(e ? e->msg : NULL, "--allow-host: host is a URL; give the host name only",
	       "  message names the flag");
	err_free(e);
	e = NULL;
	r = policy_add_host(&p->net_deny, &p->n_net_deny, "u:secret@x.example",
			    "--deny-host", &e);
	ok(r < 0 && e && !strstr(e->msg, "secret"), "--deny-host userinfo refused, not quoted");
	is_str(e ? e->msg : NULL, "--deny-host: host carries userinfo", "  its message");
	err_free(e);
	e = NULL;
	r = policy_add_host(&p->net_allow, &p->n_net_allow, "X.Example.", "--allow-host", &e);
	ok(r == 0 && !e && p->n_net_allow == 1 && strcmp(p->net_allow[0].name, "x.example") == 0,
	   "--allow-host name added, normalised (control)");
	err_free(e);
	policy_free(p);
}

int main(void)
{
	test_unknown_keys();
	test_duplicate_keys();
	test_types();
	test_document();
	test_paths();
	test_hosts();
	test_parse_errors_quote_no_value();
	test_accept();
	test_normalise();
	test_default();
	test_load_file();
	test_normalise_len();
	test_resolve();
	test_add();
	return done_testing();
}
