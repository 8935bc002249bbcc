/* main.c: top-level dispatch, --help and --version. */
#include "cli.h"
#include "cli/tb.h"
#include "lib/text.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct subcommand {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;	/* NULL: internal, not listed */
};

/* `cordon daemon` and `cordon job` are cordon-host, beside this binary. */
static int host_part(int argc, char **argv)
{
	char self[4096], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 32);

	if (n <= 0 || !(slash = memrchr(self, '/', (size_t)n))) {
		fprintf(stderr, "cordon: error: cannot find cordon-host beside cordon\n");
		return EXIT_CORDON;
	}
	snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "cordon-host");
	/* argv[0] is the subcommand: cordon-host takes it as its first word */
	char **v = calloc((size_t)argc + 2, sizeof(*v));
	if (!v)
		return EXIT_CORDON;
	v[0] = self;
	for (int i = 0; i < argc; i++)
		v[i + 1] = argv[i];
	execv(self, v);
	fprintf(stderr, "cordon: error: run `%s`: %s\n", self, strerror(errno));
	free(v);
	return EXIT_CORDON;
}

static const struct subcommand subcommands[] = {
	{ "run", cli_run, "run a command in a sandbox under a policy" },
	{ "policy", cli_policy, "check a policy, print the default one, import srt settings" },
	{ "plan", cli_plan, "merge, check and record a launch plan; run nothing" },
	{ "doctor", cli_doctor, "check that this machine can run a sandbox provider" },
	{ "gateway", cli_gateway, "serve cordon's egress proxy on its own" },
	{ "adopt", cli_adopt, "prove a running process is a recorded sandbox" },
	{ "daemon", host_part, "run jobs through bindings and serve the management API" },
	{ "job", host_part, "start, list, show and wait for the daemon's jobs" },
	{ "tb", cli_tb, "call the job's toolbelt (from inside a job)" },
	{ "docker", host_part, "the Docker provider's own commands (gateway-image, doctor)" },
	{ "ssh", host_part, "the SSH provider's own commands (doctor)" },
	{ "container", host_part, "a container binding's containers: inspect, list, stop, remove" },
	{ "confine", cli_confine, NULL },	/* internal: the srt provider's inner layer */
	{ "netprobe", cli_netprobe, NULL },	/* internal: the Docker doctor's preflight probe */
	{ "wrap", cli_wrap, NULL },		/* internal: a daemon segment's wrapper */
	{ "cinit", cli_cinit, NULL },	/* internal: a container's pid 1 */
	{ "remote-run", cli_remote_run, NULL },	/* internal: an SSH remote's sandbox */
};

static void usage(FILE *f)
{
	fprintf(f, "usage: cordon [--help] [--version] <command> [<args>]\n\n"
		   "cordon runs untrusted commands under a policy that is the whole grant.\n\n"
		   "commands:\n");
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (subcommands[i].summary)
			fprintf(f, "  %-10s %s\n", subcommands[i].name, subcommands[i].summary);
	fprintf(f, "\n'cordon <command> --help' describes a command.\n");
}

int cli_main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return EXIT_CORDON;
	}
	if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		usage(stdout);
		return 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		printf("cordon %s\n", CORDON_VERSION);
		return 0;
	}
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (strcmp(argv[1], subcommands[i].name) == 0)
			return subcommands[i].fn(argc - 1, argv + 1);
	/* a listed command one edit away is named */
	for (size_t i = 0; i < sizeof(subcommands) / sizeof(subcommands[0]); i++)
		if (subcommands[i].summary && text_one_edit(argv[1], subcommands[i].name)) {
			fprintf(stderr, "cordon: usage: unknown command '%s' (did you mean \"%s\"?)\n",
				argv[1], subcommands[i].name);
			return EXIT_CORDON;
		}
	fprintf(stderr, "cordon: usage: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return EXIT_CORDON;
}
