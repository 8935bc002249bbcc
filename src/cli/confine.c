/* confine.c: `cordon confine`, internal: cordon's layer inside an srt
 * sandbox (see sandbox/inner.h). The srt provider's wrapper runs
 * it as srt's command; an operator has no reason to. */
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/num.h"
#include "policy/policy.h"
#include "sandbox/inner.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static const char confine_usage[] =
	"usage: cordon confine [--write PATH]... [--deny PATH]... [--read PATH]...\n"
	"                      [--unix-all] [--scope] [--cgroup DIR]... [--pids N [--pids-strict]]\n"
	"                      -- CMD [ARGS...]\n\n"
	"Internal: run by the srt provider inside srt's sandbox. Close every fd\n"
	"above 2, join the sandbox's cgroups (or set RLIMIT_NPROC), drop every\n"
	"capability, set no_new_privs, apply Landlock (write\n"
	"only beneath the --write paths, each of which must exist and be an\n"
	"absolute path without symbolic links), load cordon's seccomp filter, then\n"
	"execute CMD in place.\n\n"
	"  --write PATH   writable beneath PATH (repeatable)\n"
	"  --deny PATH    never readable, even if the host makes or replaces it\n"
	"                 during the run: reading is granted on what exists at the\n"
	"                 start on the way to it, not beneath it (repeatable)\n"
	"  --read PATH    readable beneath a --deny (an exception; repeatable)\n"
	"  --unix-all     leave socket(AF_UNIX) open (\"unix_sockets\": \"all\")\n"
	"  --scope        require Landlock's scoping of abstract unix sockets and\n"
	"                 signals (ABI 6); without it they are scoped where the\n"
	"                 kernel can\n"
	"  --cgroup DIR   move into this cgroup first (repeatable; DIR must be on\n"
	"                 a cgroup filesystem)\n"
	"  --pids N       RLIMIT_NPROC N, where this is a user namespace of the\n"
	"                 sandbox's own and the user is not root outside it\n"
	"  --pids-strict  refuse when RLIMIT_NPROC cannot hold it (else it is\n"
	"                 not set)\n\n"
	"Exit status: CMD's; 125 when a step failed (nothing was executed);\n"
	"126 not executable; 127 not found.\n";

int cli_confine(int argc, char **argv)
{
	enum { OPT_WRITE = 256, OPT_UNIX_ALL, OPT_SCOPE, OPT_DENY, OPT_READ, OPT_CGROUP, OPT_PIDS,
	       OPT_PIDS_STRICT };
	static const struct option opts[] = {
		{ "write", required_argument, NULL, OPT_WRITE },
		{ "deny", required_argument, NULL, OPT_DENY },
		{ "read", required_argument, NULL, OPT_READ },
		{ "unix-all", no_argument, NULL, OPT_UNIX_ALL },
		{ "scope", no_argument, NULL, OPT_SCOPE },
		{ "cgroup", required_argument, NULL, OPT_CGROUP },
		{ "pids", required_argument, NULL, OPT_PIDS },
		{ "pids-strict", no_argument, NULL, OPT_PIDS_STRICT },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char **write = calloc((size_t)argc + 1, sizeof(*write));
	_cleanup_free_ char **deny = calloc((size_t)argc + 1, sizeof(*deny));
	_cleanup_free_ char **read = calloc((size_t)argc + 1, sizeof(*read));
	_cleanup_free_ char **cgroups = calloc((size_t)argc + 1, sizeof(*cgroups));
	struct inner_layer c = { 0 };
	size_t n = 0, nd = 0, nr = 0;
	int o, code;

	if (!write || !deny || !read || !cgroups) {
		fprintf(stderr, "cordon: error: out of memory\n");
		return EXIT_CORDON;
	}
	optind = 1;
	opterr = 0;
	while ((o = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (o) {
		case OPT_WRITE:
		case OPT_DENY:
		case OPT_READ:
			if (optarg[0] != '/') {
				fprintf(stderr, "cordon: usage: --%s `%s`: not an absolute path\n",
					o == OPT_WRITE ? "write" : o == OPT_DENY ? "deny" : "read",
					optarg);
				return EXIT_CORDON;
			}
			if (o == OPT_WRITE)
				write[n++] = optarg;
			else if (o == OPT_DENY)
				deny[nd++] = optarg;
			else
				read[nr++] = optarg;
			break;
		case OPT_UNIX_ALL:
			c.unix_all = true;
			break;
		case OPT_SCOPE:
			c.scope = true;
			break;
		case OPT_CGROUP:
			if (optarg[0] != '/') {
				fprintf(stderr, "cordon: usage: --cgroup `%s`: not an absolute path\n",
					optarg);
				return EXIT_CORDON;
			}
			cgroups[c.n_cgroups++] = optarg;
			break;
		case OPT_PIDS:
			if (num_parse_ulong(optarg, POLICY_PIDS_MAX, &c.pids) < 0 || c.pids == 0) {
				fprintf(stderr, "cordon: usage: --pids: not a number from 1 to %lu\n",
					POLICY_PIDS_MAX);
				return EXIT_CORDON;
			}
			break;
		case OPT_PIDS_STRICT:
			c.pids_strict = true;
			break;
		case 'h':
			fputs(confine_usage, stdout);
			return 0;
		default:
			fprintf(stderr, "cordon: usage: unknown or incomplete option\n%s", confine_usage);
			return EXIT_CORDON;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cordon: usage: no command given\n%s", confine_usage);
		return EXIT_CORDON;
	}
	c.write = write;
	c.cgroups = cgroups;
	c.n_write = n;
	c.deny = deny;
	c.read = read;
	c.argv = argv + optind;
	code = inner_layer_exec(&c, &e);
	if (code < 0) {
		err_print(stderr, e);
		return EXIT_CORDON;
	}
	fprintf(stderr, "cordon: %s\n", e ? e->msg : "exec failed");
	/* The filter is loaded: leave without exit handlers, which may make
	 * calls it refuses (a sanitizer's leak check stops the world with
	 * ptrace). Nothing is left to release that the kernel does not. */
	fflush(stderr);
	_exit(code);
}
