/* tests/unit/places.c: what a binding may write on the host and what the
 * operator's claude reads (src/host/places.c, src/host/executor.c): the
 * operator's ~/.claude and ~/.claude.json denied to a binding under every
 * provider, a container's (Docker mounts, an SSH remote's copy back) as a
 * process provider's, next to an unsandboxed binding that needs nothing;
 * a grant's ~ expanded with the HOME the binding sets, as its launch
 * does; and the load's refusal of an unsandboxed claude on a sandboxed
 * binding's workspace, next to one elsewhere. */
#include "host/config.h"
#include "executor/executor.h"
#include "host/places.h"
#include "lib/cleanup.h"
#include "lib/strv.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK"

static struct host_config *parse(const char *doc, char **msg)
{
	struct host_config *c = NULL;
	struct err *e = NULL;

	*msg = NULL;
	if (host_config_parse(doc, strlen(doc), &c, &e) < 0)
		*msg = strdup(e && e->msg ? e->msg : "(none)");
	err_free(e);
	return c;
}

/* Does b's shell job's needs deny path? -1 when it builds none. */
static int denies(const struct host_binding *b, const char *path)
{
	char *const args[] = { "true", NULL };
	struct host_exec x;
	struct err *e = NULL;
	json_t *v;
	size_t i;
	int found = 0;

	if (host_exec_build(b, args, "/nonexistent", NULL, NULL, NULL, &x, &e) < 0) {
		diag("build: %s", e && e->msg ? e->msg : "?");
		err_free(e);
		return -1;
	}
	json_array_foreach(json_object_get(x.needs, "deny"), i, v)
		found = found || strcmp(json_string_value(v), path) == 0;
	host_exec_clear(&x);
	return found;
}

static void container_denies(const char *home)
{
	char doc[4096], *msg = NULL;
	_cleanup_free_ char *claude = NULL, *claude_json = NULL;
	struct host_config *c;

	if (asprintf(&claude, "%s/.claude", home) < 0 ||
	    asprintf(&claude_json, "%s/.claude.json", home) < 0)
		abort();
	snprintf(doc, sizeof(doc),
		 "{\"bindings\": {"
		 " \"dk\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/p\"},"
		 "   \"container\": {\"provider\": \"docker\", \"image\": \"sha256:%064d\"}},"
		 " \"sh\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/q\"},"
		 "   \"container\": {\"provider\": \"ssh\", \"remote\": \"agent@runner.example\","
		 "     \"host_key\": \"" KEY "\", \"isolation\": \"none\", \"network\": \"host\"}},"
		 " \"nt\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/r\"},"
		 "   \"sandbox\": {\"provider\": \"native\"}},"
		 " \"un\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/s\"}}"
		 "}}",
		 0);
	c = parse(doc, &msg);
	ok(c != NULL, "a config with a Docker, an SSH, a native and an unsandboxed binding%s%s",
	   msg ? ": " : "", msg ? msg : "");
	free(msg);
	if (!c)
		return;
	ok(denies(host_config_find(c, "nt"), claude) == 1 &&
		   denies(host_config_find(c, "nt"), claude_json) == 1,
	   "a native binding's job denies ~/.claude and ~/.claude.json (the control)");
	ok(denies(host_config_find(c, "dk"), claude) == 1 &&
		   denies(host_config_find(c, "dk"), claude_json) == 1,
	   "a Docker binding's job denies them too (its grants are mounts of host paths)");
	ok(denies(host_config_find(c, "sh"), claude) == 1 &&
		   denies(host_config_find(c, "sh"), claude_json) == 1,
	   "an SSH binding's job denies them too (its grants are copied back to the host)");
	ok(denies(host_config_find(c, "un"), claude) == 0,
	   "an unsandboxed binding's job needs nothing (the control: nothing denied)");
	host_config_free(c);
}

/* host_binding_writes names want among b's places */
static bool writes(const struct host_binding *b, const char *want)
{
	_cleanup_strv_ char **w = NULL;
	struct err *e = NULL;
	bool r = host_binding_writes(b, &w, &e) == 0 && strv_contains(w, want);

	err_free(e);
	return r;
}

static void home_of_binding(const char *home)
{
	char *msg = NULL;
	_cleanup_free_ char *mine = NULL;
	struct host_config *c = parse(
		"{\"bindings\": {"
		" \"h2\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/p\"},"
		"   \"env\": {\"HOME\": \"/srv/h2\"},"
		"   \"sandbox\": {\"provider\": \"native\", \"policy\": {\"write\": [\"~/x\"]}}},"
		" \"hd\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"/srv/p\"},"
		"   \"sandbox\": {\"provider\": \"native\", \"policy\": {\"write\": [\"~/x\"]}}}"
		"}}",
		&msg);

	ok(c != NULL, "bindings granted ~/x, one with HOME in its env%s%s", msg ? ": " : "",
	   msg ? msg : "");
	free(msg);
	if (!c || asprintf(&mine, "%s/x", home) < 0) {
		host_config_free(c);
		return;
	}
	ok(writes(host_config_find(c, "h2"), "/srv/h2/x") && !writes(host_config_find(c, "h2"), mine),
	   "a grant's ~ is the HOME the binding sets, as its launch expands it");
	ok(writes(host_config_find(c, "hd"), mine),
	   "... and the daemon's home where it sets none (the control)");
	host_config_free(c);
}

#define LOAD_DOC                                                                             \
	"{\"bindings\": {"                                                                   \
	" \"h\": {\"executor\": {\"kind\": \"claude-code\"}, \"workspace\": {\"dir\": \"%s\"}," \
	"   \"env\": {\"CLAUDE_CONFIG_DIR\": \"%s/cc\"}},"                                       \
	" \"a\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"dir\": \"%s/w\"},"      \
	"   \"sandbox\": {\"provider\": \"native\"}}"                                           \
	"}}"

static void load_workspaces(const char *home)
{
	char doc[4096], *msg = NULL;
	struct host_config *c;
	_cleanup_free_ char *sub = NULL, *other = NULL;

	if (asprintf(&sub, "%s/w/sub/", home) < 0 || asprintf(&other, "%s/elsewhere", home) < 0)
		abort();
	snprintf(doc, sizeof(doc), LOAD_DOC, sub, home, home);
	c = parse(doc, &msg);
	ok(c == NULL && msg && strstr(msg, "bindings.h.env.CLAUDE_CONFIG_DIR: this claude runs "
					   "without a sandbox, and its workspace") &&
		   strstr(msg, "`a`"),
	   "an unsandboxed claude whose workspace lies in a sandboxed binding's: the config is "
	   "refused, naming both");
	if (!c && msg)
		diag("%s", msg);
	free(msg);
	host_config_free(c);
	snprintf(doc, sizeof(doc), LOAD_DOC, other, home, home);
	c = parse(doc, &msg);
	ok(c != NULL, "... one elsewhere loads (the control)%s%s", msg ? ": " : "", msg ? msg : "");
	free(msg);
	host_config_free(c);
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-places.XXXXXX";
	char *home = mkdtemp(tmpl);

	if (!home || setenv("HOME", home, 1) < 0)
		abort();
	container_denies(home);
	home_of_binding(home);
	load_workspaces(home);
	rmdir(home);
	done_testing();
}
