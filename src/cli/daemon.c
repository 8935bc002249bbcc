/* daemon.c: `cordon daemon` (cordon-host): its options, then the daemon
 * (daemon/daemon.h) in the foreground. */
#include "cli/host.h"
#include "daemon/daemon.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char daemon_usage[] =
	"usage: cordon daemon [--state-dir DIR] [--config FILE]\n\n"
	"Serve the management API on DIR/management.sock (default state dir:\n"
	"$XDG_STATE_HOME/cordon; config: $XDG_CONFIG_HOME/cordon/config.json) and\n"
	"run jobs through the config's bindings, in the foreground. TERM or INT\n"
	"stops the daemon; the jobs' wrappers go on.\n";

int cli_daemon(int argc, char **argv)
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
