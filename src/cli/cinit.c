/* cinit.c: `cordon cinit`, internal: cordon's runtime as a container's
 * pid 1 (see sandbox/cinit/cinit.h). The Docker provider makes it the
 * entry point of the containers it creates; an operator has no reason to
 * run it. Arguments only: the work is sandbox/cinit's. */
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "sandbox/cinit/cinit.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

static const char cinit_usage[] =
	"usage: cordon cinit --run DIR --channel SOCKPATH [--write PATH]... [--deny PATH]...\n"
	"                    [--read PATH]... [--unix-all] -- CMD [ARGS...]\n\n"
	"Internal: a container's pid 1, made by the Docker provider. Take the\n"
	"secrets file DIR/.cordon-secrets (a JSON object of NAME: value, mode\n"
	"0600) into the command's environment and remove it; relay\n"
	"127.0.0.1:3128 (HTTP proxy) and 127.0.0.1:1080 (SOCKS5) to the gateway's\n"
	"unix socket SOCKPATH and point the command's proxy variables there; run\n"
	"CMD under cordon's Landlock and seccomp layer (as `cordon confine`) with\n"
	"the container's stdin, stdout and stderr; reap every process; pass TERM\n"
	"(after writing DIR/.cordon-term), INT, HUP, QUIT, USR1, USR2 and WINCH on\n"
	"to CMD.\n\n"
	"  --run DIR          the run dir (absolute, no symbolic links)\n"
	"  --channel SOCKPATH the gateway companion's unix socket\n"
	"  --write PATH       writable beneath PATH (repeatable)\n"
	"  --deny PATH        never readable (repeatable)\n"
	"  --read PATH        readable beneath a --deny (repeatable)\n"
	"  --unix-all         leave socket(AF_UNIX) open (\"unix_sockets\": \"all\")\n\n"
	"Exit status: CMD's (128 + N when signal N ended it); 125 when cordon\n"
	"failed (nothing was executed); 126 not executable; 127 not found.\n";

int cli_cinit(int argc, char **argv)
{
	enum { OPT_RUN = 256, OPT_CHANNEL, OPT_WRITE, OPT_DENY, OPT_READ, OPT_UNIX_ALL };
	static const struct option opts[] = {
		{ "run", required_argument, NULL, OPT_RUN },
		{ "channel", required_argument, NULL, OPT_CHANNEL },
		{ "write", required_argument, NULL, OPT_WRITE },
		{ "deny", required_argument, NULL, OPT_DENY },
		{ "read", required_argument, NULL, OPT_READ },
		{ "unix-all", no_argument, NULL, OPT_UNIX_ALL },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_free_ char **write = calloc((size_t)argc + 1, sizeof(*write));
	_cleanup_free_ char **deny = calloc((size_t)argc + 1, sizeof(*deny));
	_cleanup_free_ char **read = calloc((size_t)argc + 1, sizeof(*read));
	struct cinit_args a = { 0 };
	size_t nd = 0, nr = 0;
	int o;

	if (!write || !deny || !read) {
		fprintf(stderr, "cordon: error: out of memory\n");
		return EXIT_CORDON;
	}
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		const char *name = NULL;

		switch (o) {
		case OPT_RUN:
			name = "run";
			a.run_dir = optarg;
			break;
		case OPT_CHANNEL:
			name = "channel";
			a.channel = optarg;
			break;
		case OPT_WRITE:
			name = "write";
			write[a.confine.n_write++] = optarg;
			break;
		case OPT_DENY:
			name = "deny";
			deny[nd++] = optarg;
			break;
		case OPT_READ:
			name = "read";
			read[nr++] = optarg;
			break;
		case OPT_UNIX_ALL:
			a.confine.unix_all = true;
			break;
		case 'h':
			fputs(cinit_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "cordon: usage: unknown or incomplete option\n%s", cinit_usage);
			return EXIT_CORDON;
		}
		if (name && optarg[0] != '/') {
			fprintf(stderr, "cordon: usage: --%s `%s`: not an absolute path\n", name,
				optarg);
			return EXIT_CORDON;
		}
	}
	if (!a.run_dir || !a.channel) {
		fprintf(stderr, "cordon: usage: --run and --channel are required\n%s", cinit_usage);
		return EXIT_CORDON;
	}
	if (optind >= argc) {
		fprintf(stderr, "cordon: usage: no command given\n%s", cinit_usage);
		return EXIT_CORDON;
	}
	a.confine.write = write;
	a.confine.deny = deny;
	a.confine.read = read;
	a.confine.argv = argv + optind;
	return cinit_run(&a);
}
