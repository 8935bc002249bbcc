/* engine-probe: one call of cordon's Docker Engine client
 * (src/container/engine.h) per run, its result printed as JSON, so a shell
 * test can drive it against a real dockerd.
 *
 * usage: engine-probe endpoint CONTEXT
 *        engine-probe info DAEMON
 *        engine-probe image DAEMON REF
 *        engine-probe create DAEMON NAME IMAGE [LABEL=VALUE...] -- CMD...
 *        engine-probe inspect DAEMON ID
 *        engine-probe list DAEMON LABEL[=VALUE]...
 *        engine-probe start|rm|rm-force DAEMON ID
 *        engine-probe kill DAEMON ID SIGNAL
 *
 * DAEMON is unix:///path, a socket's absolute path, or ctx:NAME (a Docker
 * CLI context). "Not there" prints {"gone": true}; an error is printed as
 * cordon prints a refusal, exit 125; a wrong command line exits 2.
 * ENGINE_PROBE_TIMEOUT sets the calls' timeout in seconds. */
#include "container/engine.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/strv.h"

#include <curl/curl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(void)
{
	fprintf(stderr, "usage: engine-probe endpoint CONTEXT | info DAEMON | image DAEMON REF |\n"
			"       create DAEMON NAME IMAGE [LABEL=VALUE...] -- CMD... |\n"
			"       inspect DAEMON ID | list DAEMON LABEL... | start|rm|rm-force DAEMON ID |\n"
			"       kill DAEMON ID SIGNAL\n");
	return 2;
}

static int print(json_t *j)
{
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(j);
	if (!text)
		return 1;
	printf("%s\n", text);
	return 0;
}

/* The workload's hardening as the Docker provider asks for it. */
static json_t *hardened(const char *image, char **args, int n)
{
	json_t *labels = json_object(), *cmd = json_array();
	int i;

	for (i = 0; i < n && strcmp(args[i], "--") != 0; i++) {
		char *eq = strchr(args[i], '=');

		if (!eq || eq == args[i])
			break;
		*eq = '\0';
		json_object_set_new(labels, args[i], json_string(eq + 1));
	}
	if (i >= n || strcmp(args[i], "--") != 0 || i + 1 >= n) {
		json_decref(labels);
		json_decref(cmd);
		return NULL;
	}
	for (i++; i < n; i++)
		json_array_append_new(cmd, json_string(args[i]));
	return json_pack("{s:s, s:o, s:s, s:o, s:{s:{s:s}, s:[s], s:[s], s:b, s:{s:s}, s:s, s:i}}",
			 "Image", image, "Cmd", cmd, "User", "1000:1000", "Labels", labels,
			 "HostConfig", "RestartPolicy", "Name", "no", "CapDrop", "ALL",
			 "SecurityOpt", "no-new-privileges", "ReadonlyRootfs", 1, "Tmpfs", "/tmp",
			 "rw,nosuid,nodev,size=16m", "NetworkMode", "none", "PidsLimit", 4096);
}

static int signal_of(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = { { "TERM", SIGTERM }, { "KILL", SIGKILL }, { "INT", SIGINT },
		      { "HUP", SIGHUP }, { "USR1", SIGUSR1 } };
	unsigned long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].sig;
	return num_parse_ulong(s, 1000, &v) < 0 ? -1 : (int)v;
}

static int daemon_open(const char *daemon, struct engine **g, struct err **e)
{
	_cleanup_free_ char *ep = NULL, *dir = NULL;

	if (strncmp(daemon, "ctx:", 4) == 0) {
		if (engine_config_dir(&dir, e) < 0 ||
		    engine_context_endpoint(dir, daemon + 4, &ep, e) < 0)
			return -1;
	} else if (daemon[0] == '/') {
		if (asprintf(&ep, "unix://%s", daemon) < 0)
			return -1;
	} else {
		ep = strdup(daemon);
	}
	return ep ? engine_open(ep, g, e) : -1;
}

static int run(int argc, char **argv, struct err **e)
{
	const char *cmd = argv[1], *timeout = getenv("ENGINE_PROBE_TIMEOUT");
	_cleanup_engine_ struct engine *g = NULL;
	unsigned long secs = 0;
	int r;

	if (strcmp(cmd, "endpoint") == 0) {
		_cleanup_free_ char *dir = NULL, *ep = NULL;

		if (engine_config_dir(&dir, e) < 0 || engine_context_endpoint(dir, argv[2], &ep, e) < 0)
			return -1;
		return print(json_pack("{s:s}", "endpoint", ep));
	}
	if (daemon_open(argv[2], &g, e) < 0)
		return -1;
	if (timeout && num_parse_ulong(timeout, 3600, &secs) == 0)
		engine_set_timeout(g, (long)secs);
	if (strcmp(cmd, "info") == 0) {
		struct engine_info i;

		if (engine_info(g, &i, e) < 0)
			return -1;
		r = print(json_pack("{s:s, s:s, s:s}", "id", i.id, "version", i.version, "api",
				    engine_daemon_api(g)));
		engine_info_clear(&i);
		return r;
	}
	if (strcmp(cmd, "image") == 0 && argc == 4) {
		struct engine_image im;

		r = engine_image_inspect(g, argv[3], &im, e);
		if (r != ENGINE_FOUND)
			return r < 0 ? -1 : print(json_pack("{s:b}", "gone", 1));
		r = print(json_pack("{s:s, s:o}", "id", im.id, "repo_digests",
				    json_strv(im.repo_digests)));
		engine_image_clear(&im);
		return r;
	}
	if (strcmp(cmd, "create") == 0 && argc >= 7) {
		_cleanup_json_ json_t *config = hardened(argv[4], argv + 5, argc - 5);
		_cleanup_free_ char *id = NULL;

		if (!config)
			return usage();
		if (engine_container_create(g, argv[3], config, &id, e) < 0)
			return -1;
		return print(json_pack("{s:s}", "id", id));
	}
	if (strcmp(cmd, "inspect") == 0 && argc == 4) {
		struct engine_container c;

		r = engine_container_inspect(g, argv[3], &c, e);
		if (r != ENGINE_FOUND)
			return r < 0 ? -1 : print(json_pack("{s:b}", "gone", 1));
		r = print(json_pack("{s:s, s:s, s:s, s:s, s:s, s:b, s:I, s:i, s:O}", "id", c.id,
				    "name", c.name, "image", c.image, "status", c.status,
				    "started_at", c.started_at, "running", c.running, "pid",
				    (json_int_t)c.pid, "exit_code", c.exit_code, "labels", c.labels));
		engine_container_clear(&c);
		return r;
	}
	if (strcmp(cmd, "list") == 0) {
		_cleanup_strv_ char **ids = NULL;

		if (engine_container_list(g, argv + 3, &ids, e) < 0)
			return -1;
		return print(json_strv(ids));
	}
	if (strcmp(cmd, "start") == 0 && argc == 4) {
		if ((r = engine_container_start(g, argv[3], e)) < 0)
			return -1;
		return print(json_pack("{s:b}", r == 0 ? "started" : "running_already", 1));
	}
	if (strcmp(cmd, "kill") == 0 && argc == 5) {
		if ((r = engine_container_kill(g, argv[3], signal_of(argv[4]), e)) < 0)
			return -1;
		return print(json_pack("{s:b}", r == 0 ? "sent" : "not_running", 1));
	}
	if ((strcmp(cmd, "rm") == 0 || strcmp(cmd, "rm-force") == 0) && argc == 4) {
		if ((r = engine_container_remove(g, argv[3], cmd[2] == '-', e)) < 0)
			return -1;
		return print(json_pack("{s:b}", r == 0 ? "removed" : "gone", 1));
	}
	return usage();
}

int main(int argc, char **argv)
{
	struct err *e = NULL;
	int r;

	if (argc < 3)
		return usage();
	curl_global_init(CURL_GLOBAL_NOTHING);
	r = run(argc, argv, &e);
	curl_global_cleanup();
	if (r < 0) {
		if (e)
			err_print(stderr, e);
		else
			fprintf(stderr, "engine-probe: out of memory\n");
		err_free(e);
		return 125;
	}
	return r;
}
