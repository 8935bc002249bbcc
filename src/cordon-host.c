/* main.c: cordon-host, the part of cordon that serves and calls the
 * management API: `cordon daemon` and `cordon job` run it (it is linked
 * with libmicrohttpd and libcurl, which `cordon run` has no use for and
 * would otherwise load at every launch). */
#include "container/docker/docker.h"
#include "cli/container.h"
#include "container/ssh/ssh.h"
#include "client/client.h"
#include "daemon/daemon.h"

#include <curl/curl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char daemon_usage[] =
	"usage: cordon daemon [--state-dir DIR] [--config FILE]\n\n"
	"Serve the management API on DIR/management.sock (default state dir:\n"
	"$XDG_STATE_HOME/cordon; config: $XDG_CONFIG_HOME/cordon/config.json) and\n"
	"run jobs through the config's bindings, in the foreground. TERM or INT\n"
	"stops the daemon; the jobs' wrappers go on.\n";

static int daemon_cmd(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	char *state = NULL, *config = NULL;
	int o, rc;

	optind = 1;
	while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if (o == 's') {
			free(state);
			state = strdup(optarg);
		} else if (o == 'c') {
			free(config);
			config = strdup(optarg);
		} else {
			fputs(daemon_usage, o == 'h' ? stdout : stderr);
			free(state);
			free(config);
			return o == 'h' ? 0 : 125;
		}
	}
	if (optind != argc) {
		fputs(daemon_usage, stderr);
		free(state);
		free(config);
		return 125;
	}
	if (!state)
		state = hostd_default_state_dir();
	if (!config)
		config = hostd_default_config();
	if (!state || !config) {
		fprintf(stderr, "cordon: sandbox_config: no state dir or config (set HOME)\n");
		free(state);
		free(config);
		return 125;
	}
	rc = hostd_daemon_main(state, config);
	free(state);
	free(config);
	return rc;
}

/* The container providers this program has. */
const struct container_provider *const container_providers[] = { &docker_provider, &ssh_provider,
								     NULL };

int main(int argc, char **argv)
{
	/* The daemon hands nothing it inherited on: whatever its starter
	 * left open without close-on-exec (a file of the operator's) would
	 * otherwise reach every wrapper, the host's git and every command
	 * run without a sandbox. Closed before anything here opens one. */
	if (argc >= 2 && strcmp(argv[1], "daemon") == 0 &&
	    syscall(SYS_close_range, 3U, ~0U, 0U) < 0) {
		fprintf(stderr, "cordon: sandbox_unavailable: daemon: close inherited descriptors\n");
		return 125;
	}
	if (argc >= 2 && strcmp(argv[1], "daemon") == 0)
		return daemon_cmd(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "job") == 0)
		return hostd_job_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "docker") == 0)
		return docker_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "ssh") == 0)
		return ssh_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "container") == 0) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		return container_main(argc - 1, argv + 1, container_providers);
	}
	fprintf(stderr, "usage: cordon-host daemon|job ... (run through `cordon daemon` and `cordon job`)\n");
	return 125;
}
