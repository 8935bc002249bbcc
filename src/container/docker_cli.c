/* docker_cli.c: `cordon docker` (cordon-host): gateway-image makes the
 * gateway image for this cordon from its static binary (no registry, no
 * pull) and prints its ID; doctor prints the provider's checks
 * (docker_doctor) as JSON; wrap is the segment wrapper of a container
 * binding (the daemon starts it, as it starts `cordon wrap`). */
#include "container/docker.h"

#include "cli/cli.h"
#include "hostd/daemon.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <curl/curl.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char docker_usage[] =
	"usage: cordon docker gateway-image [--endpoint URL | --context NAME]\n"
	"       cordon docker doctor [--endpoint URL | --context NAME] [--state-dir DIR]\n"
	"                            [--image ID]\n"
	"       cordon docker sweep --state-dir DIR [--endpoint URL | --context NAME]\n"
	"                           [--live JOB]...\n"
	"       cordon docker settle --record DIR --job ID --segment N\n\n"
	"gateway-image: make (when missing) the image of cordon's gateway companion\n"
	"on the Docker daemon, from cordon's static binary alone, and print its ID.\n"
	"A container binding's segments run their gateway from it.\n"
	"doctor: check that the daemon can run a container binding's segments\n"
	"(daemon, image, gateway_image, shared_path, preflight; a few containers\n"
	"are run and removed) and print the report as JSON. Exits 0 when ready,\n"
	"125 when not.\n"
	"sweep: remove what the daemon holds of this state dir's jobs (containers,\n"
	"companions, networks, volumes) but the --live ones'; the daemon runs it.\n"
	"settle: stop (confirmed) and remove the container of a segment whose start\n"
	"helper ended without its exit file; the daemon runs it.\n\n"
	"  --endpoint URL  the daemon: unix:///path or tcp://host:port\n"
	"  --context NAME  a Docker CLI context (default: \"default\")\n"
	"  --state-dir DIR cordon's state (default: $XDG_STATE_HOME/cordon)\n"
	"  --image ID      the binding's image, pinned (sha256:... or name@sha256:...)\n";

static int gateway_image(int argc, char **argv)
{
	_cleanup_json_ json_t *cfg = json_object();
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_free_ char *id = NULL;
	struct err *e = NULL;

	for (int i = 1; i < argc; i++) {
		if ((strcmp(argv[i], "--endpoint") == 0 || strcmp(argv[i], "--context") == 0) &&
		    i + 1 < argc) {
			json_object_set_new(cfg, argv[i] + 2, json_string(argv[i + 1]));
			i++;
		} else {
			fputs(docker_usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
			return strcmp(argv[i], "--help") == 0 ? 0 : EXIT_CORDON;
		}
	}
	if (!cfg || docker_open(cfg, &g, NULL, &e) < 0 || docker_gateway_image(g, true, &id, &e) < 0) {
		err_print(stderr, e);
		err_free(e);
		return EXIT_CORDON;
	}
	printf("%s\n", id);
	return 0;
}

static int doctor(int argc, char **argv)
{
	_cleanup_json_ json_t *cfg = json_object(), *report = NULL;
	_cleanup_free_ char *state = NULL, *text = NULL;
	struct err *e = NULL;

	for (int i = 1; i < argc; i++) {
		bool conf = strcmp(argv[i], "--endpoint") == 0 || strcmp(argv[i], "--context") == 0 ||
			    strcmp(argv[i], "--image") == 0;

		if ((conf || strcmp(argv[i], "--state-dir") == 0) && i + 1 < argc) {
			if (conf && json_object_set_new(cfg, argv[i] + 2, json_string(argv[i + 1])) < 0) {
				fprintf(stderr, "cordon: usage: %s: not UTF-8\n", argv[i]);
				return EXIT_CORDON;
			}
			if (!conf) {
				free(state);
				state = strdup(argv[i + 1]);
			}
			i++;
		} else {
			fputs(docker_usage, strcmp(argv[i], "--help") == 0 ? stdout : stderr);
			return strcmp(argv[i], "--help") == 0 ? 0 : EXIT_CORDON;
		}
	}
	if (!state)
		state = hostd_default_state_dir();
	/* a relative one from here (the doctor binds the absolute path) */
	if (state && state[0] != '/') {
		char *abs = realpath(state, NULL);

		if (abs) {
			free(state);
			state = abs;
		}
	}
	if (cfg)
		report = docker_doctor(cfg, state, &e);
	if (report)
		text = json_dumps(report, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
	if (!text) {
		if (e)
			err_print(stderr, e);
		else
			fprintf(stderr, "cordon: error: cannot encode the report as JSON\n");
		err_free(e);
		return EXIT_CORDON;
	}
	printf("%s\n", text);
	return json_is_true(json_object_get(report, "ready")) ? 0 : EXIT_CORDON;
}

/* settle: the daemon's child for a segment whose start helper ended
 * without its exit file; its verdict in the record dir, settle.json
 * ({"verified"}), which the daemon reads once this has ended. */
static int settle(int argc, char **argv)
{
	const char *record = NULL, *job = NULL;
	unsigned long seg = 0;
	struct err *e = NULL;

	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--record") == 0)
			record = argv[i + 1];
		else if (strcmp(argv[i], "--job") == 0)
			job = argv[i + 1];
		else if (strcmp(argv[i], "--segment") == 0)
			seg = strtoul(argv[i + 1], NULL, 10);
	}
	if (!record || !job || seg == 0 || seg > 1000000 || argc % 2 == 0) {
		fputs(docker_usage, stderr);
		return EXIT_CORDON;
	}
	bool ok = docker_settle_record(record, job, (unsigned int)seg, &e) == 0;
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record, O_PATH | O_DIRECTORY, 0);
	const char *v = ok ? "{\"verified\": true}\n" : "{\"verified\": false}\n";

	if (!ok)
		err_print(stderr, e);
	err_free(e);
	e = NULL;
	if (dfd < 0 || fs_write_atomic(dfd, "settle.json", v, strlen(v), 0600, true, &e) < 0) {
		err_print(stderr, e);
		err_free(e);
		return EXIT_CORDON;
	}
	return ok ? 0 : EXIT_CORDON;
}

static int sweep(int argc, char **argv)
{
	_cleanup_json_ json_t *cfg = json_object();
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_strv_ char **live = NULL;
	_cleanup_free_ char *state = NULL;
	struct err *e = NULL;
	unsigned int removed = 0;
	char host[17];

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (i + 1 >= argc) {
			fputs(docker_usage, stderr);
			return EXIT_CORDON;
		}
		if (strcmp(o, "--endpoint") == 0 || strcmp(o, "--context") == 0)
			json_object_set_new(cfg, o + 2, json_string(argv[++i]));
		else if (strcmp(o, "--state-dir") == 0 && !state)
			state = realpath(argv[++i], NULL);
		else if (strcmp(o, "--live") == 0)
			(void)strv_push(&live, argv[++i]);
		else {
			fputs(docker_usage, stderr);
			return EXIT_CORDON;
		}
	}
	if (!state || container_host_label(state, host, &e) < 0 ||
	    docker_open(cfg, &g, NULL, &e) < 0 || docker_sweep(g, host, live, &removed, &e) < 0) {
		if (!e)
			fprintf(stderr, "cordon: sweep: --state-dir names no directory\n");
		err_print(stderr, e);
		err_free(e);
		return EXIT_CORDON;
	}
	if (removed)
		fprintf(stderr, "cordon: docker sweep: removed %u left by ended jobs\n", removed);
	return 0;
}

int docker_main(int argc, char **argv)
{
	static const struct container_provider *const known[] = { &docker_provider, NULL };

	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (argc >= 2 && strcmp(argv[1], "gateway-image") == 0)
		return gateway_image(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "doctor") == 0)
		return doctor(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "sweep") == 0)
		return sweep(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "settle") == 0)
		return settle(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "wrap") == 0)
		return cli_wrap_with(argc - 1, argv + 1, known);
	fputs(docker_usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
	return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : EXIT_CORDON;
}
