/* srt_settings.c: the srt provider's mapping of a grant to srt's settings,
 * rule by rule with a control beside each refusal, including the shapes
 * the guard refuses first (so the provider's own check is exercised), and
 * srt's version comparison. */
#include "guard/guard.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "sandbox/srt/srt.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char lab[] = "/tmp/cordon-srt-unit.XXXXXX";

static char *at(const char *rel)
{
	static char buf[8][256];
	static int i;

	i = (i + 1) % 8;
	snprintf(buf[i], sizeof(buf[i]), "%s%s", lab, rel);
	return buf[i];
}

static struct grant *grant_new(void)
{
	struct grant *g = calloc(1, sizeof(*g));

	g->sockets = calloc(1, sizeof(char *));
	g->workspace = strdup(at("/ws"));
	g->run_dir = strdup(at("/state/run"));
	return g;
}

static void add(struct grant *g, const char *rel, enum grant_kind k)
{
	struct err *e = NULL;

	if (grant_add(g, at(rel), k, "test", &e) < 0)
		err_free(e);
	grant_sort(g);
}

/* The refusal's message, or "" when the grant is held. */
static const char *check(const struct grant *g)
{
	static char msg[512];
	struct err *e = NULL;

	msg[0] = '\0';
	if (srt_settings_check(g, &e) < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", err_reason_name(e->reason), e->msg);
		err_free(e);
	}
	return msg;
}

/* Is {"path": <lab>rel, "literal": true} in filesystem.<list>? */
static bool has(const json_t *s, const char *list, const char *rel)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(s, "filesystem"), list), i, v)
		if (strcmp(json_string_value(json_object_get(v, "path")), at(rel)) == 0 &&
		    json_is_true(json_object_get(v, "literal")))
			return true;
	return false;
}

/* Is {"path": path, "literal": true} (an absolute path) in the list? */
static bool literal_in(const json_t *s, const char *list, const char *path)
{
	const json_t *v;
	size_t i;

	json_array_foreach(json_object_get(json_object_get(s, "filesystem"), list), i, v)
		if (strcmp(json_string_value(json_object_get(v, "path")), path) == 0)
			return true;
	return false;
}

static void test_lists(void)
{
	struct grant *g = grant_new();
	struct srt_helpers h = { "/b/bwrap", "/b/socat", "/b/rg", "/opt/c/cordon" };
	struct srt_ports ports = { 4000, 4001 };
	json_t *s = NULL;
	struct err *e = NULL;

	add(g, "/ws", GRANT_WRITE);
	add(g, "/state", GRANT_DENY);
	add(g, "/state/run", GRANT_WRITE);
	add(g, "/home/.ssh", GRANT_DENY);
	add(g, "/home/proj", GRANT_DENY);
	add(g, "/home/proj/pub", GRANT_READ);
	add(g, "/ws/.git/config", GRANT_READ_ONLY);
	add(g, "/ws/secret", GRANT_DENY);
	add(g, "/ws/secret/open", GRANT_READ);
	ok(srt_settings_build(g, &h, &ports, &s, &e) == 0, "a grant srt can hold builds");
	ok(s && has(s, "denyRead", "/state") && has(s, "denyRead", "/home/.ssh") &&
		   has(s, "denyRead", "/ws/secret"), "denyRead: every deny");
	ok(s && has(s, "allowRead", "/state/run") && has(s, "allowRead", "/home/proj/pub") &&
		   has(s, "allowRead", "/ws/secret/open"), "allowRead: readable rules beneath a deny");
	ok(s && !has(s, "allowRead", "/ws") && !has(s, "allowRead", "/ws/.git/config"),
	   "allowRead: nothing that is not beneath a deny");
	ok(s && has(s, "allowWrite", "/ws") && has(s, "allowWrite", "/state/run") &&
		   json_array_size(json_object_get(json_object_get(s, "filesystem"),
						   "allowWrite")) == 2,
	   "allowWrite: the write grants and nothing else");
	ok(s && has(s, "denyWrite", "/ws/.git/config") && has(s, "denyWrite", "/ws/secret") &&
		   has(s, "denyWrite", "/ws/secret/open") && !has(s, "denyWrite", "/home/.ssh"),
	   "denyWrite: read-only needs, and denies and exceptions inside a write grant only");
	ok(s && json_integer_value(json_object_get(json_object_get(s, "network"),
						   "httpProxyPort")) == 4000 &&
		   json_integer_value(json_object_get(json_object_get(s, "network"),
						      "socksProxyPort")) == 4001,
	   "network: the gateway's ports");
	ok(s && strcmp(json_string_value(json_object_get(s, "bwrapPath")), "/b/bwrap") == 0,
	   "the helpers are pinned");
	json_decref(s);
	s = NULL;

	/* The sandbox's /tmp is its own; cordon's binary built under /tmp is
	 * bound back for srt to run, and only then. */
	ok(srt_settings_build(g, &h, &ports, &s, &e) == 0 && literal_in(s, "denyRead", "/tmp") &&
		   !literal_in(s, "allowRead", "/opt/c/cordon"),
	   "the host's /tmp is denied; cordon elsewhere is not an exception");
	json_decref(s);
	s = NULL;
	h.self = "/tmp/build/cordon";
	ok(srt_settings_build(g, &h, &ports, &s, &e) == 0 &&
		   literal_in(s, "allowRead", "/tmp/build/cordon"),
	   "cordon's binary under the denied /tmp is a read exception");
	json_decref(s);
	grant_free(g);
}

static void test_refusals(void)
{
	struct grant *g;

	/* An exception holding a deeper deny. */
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/state", GRANT_DENY);
	add(g, "/state/run", GRANT_WRITE);
	is_str(check(g), "", "control: the run dir as an exception");
	add(g, "/state/run/secret", GRANT_DENY);
	ok(strstr(check(g), "sandbox_config: srt: read exception"), "a deny beneath an exception is refused");
	diag("%s", check(g));
	grant_free(g);

	/* A read-only path holding a write grant (the guard refuses it first). */
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/ws/.git/hooks", GRANT_READ_ONLY);
	is_str(check(g), "", "control: a read-only need inside a write grant");
	add(g, "/ws/.git/hooks/x", GRANT_WRITE);
	ok(strstr(check(g), "sandbox_config: srt: read-only") &&
		   strstr(check(g), "holds write grant"), "a write grant beneath read-only is refused");
	grant_free(g);

	/* A write grant beneath a read exception that is not writable (the
	 * deny is outside every grant here, so only that shape is judged). */
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/state", GRANT_DENY);
	add(g, "/state/run", GRANT_READ);
	is_str(check(g), "", "control: an exception inside a deny");
	add(g, "/state/run/x", GRANT_WRITE);
	ok(strstr(check(g), "lies beneath read exception"), "a write grant beneath it is refused");
	grant_free(g);
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/state", GRANT_DENY);
	add(g, "/state/run", GRANT_WRITE);
	add(g, "/state/run/x", GRANT_WRITE);
	is_str(check(g), "", "control: beneath a writable exception it is held");
	grant_free(g);

	/* A denied directory that exists inside a write grant: srt's tmpfs
	 * there would be writable. A missing one srt binds read-only. */
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/ws/missing", GRANT_DENY);
	is_str(check(g), "", "control: a missing denied path inside a write grant is held");
	add(g, "/ws/d", GRANT_DENY);
	ok(strstr(check(g), "sandbox_config: srt: denied directory") &&
		   strstr(check(g), "lies inside write grant"),
	   "an existing denied directory inside a write grant is refused");
	grant_free(g);

	/* A write grant on a missing path. */
	g = grant_new();
	add(g, "/ws", GRANT_WRITE);
	add(g, "/missing", GRANT_WRITE);
	ok(strstr(check(g), "sandbox_unavailable: srt: write grant") &&
		   strstr(check(g), "must exist"), "a write grant on a missing path is refused");
	grant_free(g);

	/* Sockets by path. */
	g = grant_new();
	strv_push(&g->sockets, at("/ws/sock"));
	ok(strstr(check(g), "sandbox_unavailable: sockets:"), "a socket by path is refused");
	g->unix_sockets_all = true;
	is_str(check(g), "", "control: with unix_sockets all it is held");
	grant_free(g);
}

static void test_versions(void)
{
	is_int(srt_version_cmp("0.0.83", "0.0.83"), 0, "0.0.83 is 0.0.83");
	is_int(srt_version_cmp("0.0.80", SRT_VERSION_MIN), -1, "0.0.80 is older than the floor");
	is_int(srt_version_cmp("0.0.100", "0.0.83"), 1, "compared as numbers, not text");
	is_int(srt_version_cmp("0.1.0-beta.1", "0.0.83"), 1, "a pre-release suffix is ignored");
	is_int(srt_version_cmp("v0.0.83", "0.0.83"), -2, "a leading v is not a version");
	is_int(srt_version_cmp("0.0", "0.0.83"), -2, "two numbers are not a version");
	is_int(srt_version_cmp("0.0.83x", "0.0.83"), -2, "trailing text is not a version");
}

int main(void)
{
	if (!mkdtemp(lab))
		return 1;
	mkdir(at("/ws"), 0755);
	mkdir(at("/ws/d"), 0755);
	mkdir(at("/ws/d/x"), 0755);
	mkdir(at("/ws/d/x/out"), 0755);
	mkdir(at("/ws/.git"), 0755);
	mkdir(at("/ws/.git/hooks"), 0755);
	mkdir(at("/ws/.git/hooks/x"), 0755);
	mkdir(at("/state"), 0755);
	mkdir(at("/state/run"), 0755);
	mkdir(at("/state/run/x"), 0755);
	test_lists();
	test_refusals();
	test_versions();
	if (fork() == 0)
		execl("/bin/rm", "rm", "-rf", lab, (char *)NULL);
	return done_testing();
}
