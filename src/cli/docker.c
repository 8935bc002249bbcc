/* docker.c: `cordon docker` (cordon-host): gateway-image makes the
 * gateway image for this cordon from its static binary (no registry, no
 * pull) and prints its ID; doctor prints the provider's checks
 * (docker_doctor) as JSON. */
#include "cli/host.h"
#include "container/docker/docker.h"

#include "cli/cli.h"
#include "daemon/daemon.h"
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
	"\n"
	"gateway-image: make (when missing) the image of cordon's gateway companion\n"
	"on the Docker daemon, from cordon's static binary alone, and print its ID.\n"
	"A container binding's segments run their gateway from it.\n"
	"doctor: check that the daemon can run a container binding's segments\n"
	"(daemon, image, gateway_image, shared_path, preflight; a few containers\n"
	"are run and removed) and print the report as JSON. Exits 0 when ready,\n"
	"125 when not.\n"
	"\n"
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
	if (!cfg || docker_open(cfg, &g, NULL, &e) < 0 || docker_gateway_image(g, true, &id, NULL, &e) < 0) {
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

int docker_main(int argc, char **argv)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
	if (argc >= 2 && strcmp(argv[1], "gateway-image") == 0)
		return gateway_image(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "doctor") == 0)
		return doctor(argc - 1, argv + 1);
	fputs(docker_usage, argc >= 2 && strcmp(argv[1], "--help") == 0 ? stdout : stderr);
	return argc >= 2 && strcmp(argv[1], "--help") == 0 ? 0 : EXIT_CORDON;
}
