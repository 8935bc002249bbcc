/* cordon-host.c: main() of cordon-host, the part of cordon that serves
 * and calls the management API: `cordon daemon` and `cordon job` run it
 * (it is linked with libmicrohttpd and libcurl, which `cordon run` has no
 * use for and would otherwise load at every launch). It dispatches to a
 * subcommand, and names the providers it has (its registry: the
 * container providers beside the process sandboxes and none). */
#include "cli/container.h"
#include "cli/host.h"
#include "container/docker/docker.h"
#include "container/ssh/ssh.h"
#include "sandbox/providers.h"

#include <curl/curl.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The first is the default (a launch that names none). */
const struct provider *const providers[] = { SANDBOX_PROVIDERS, &docker_provider, &ssh_provider,
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
		return cli_daemon(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "job") == 0)
		return cli_job(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "docker") == 0)
		return docker_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "ssh") == 0)
		return ssh_main(argc - 1, argv + 1);
	if (argc >= 2 && strcmp(argv[1], "container") == 0) {
		curl_global_init(CURL_GLOBAL_DEFAULT);
		return container_main(argc - 1, argv + 1);
	}
	fprintf(stderr, "usage: cordon-host daemon|job ... (run through `cordon daemon` and `cordon job`)\n");
	return 125;
}
