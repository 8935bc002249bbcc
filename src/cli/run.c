/* run.c: `cordon run`: the host's steps (policy, guard, plan, record,
 * pin), then the provider launches the recorded plan from this process,
 * which is the sandbox root: signals sent to it reach the sandbox. Also
 * `cordon adopt`, the proof a restarted host asks for. */
#include "cli/cli.h"
#include "cli/launch.h"
#include "lib/cleanup.h"
#include "lib/num.h"
#include "provider/provider.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char run_usage[] =
	"usage: cordon run [-p FILE] [-w DIR] [--provider NAME] [--write PATH]...\n"
	"                  [--deny-read PATH]... [--allow-host HOST]... [--allow-range CIDR]...\n"
	"                  [--limit KEY=VALUE]... [--pass-env NAME]... [--state-dir DIR]\n"
	"                  [-q] -- CMD...\n\n"
	"Run CMD in a sandbox under the policy (FILE, or the embedded default: write\n"
	"the workspace, read the rest but the default denies and cordon's own state,\n"
	"no network). The flags add to the policy. The plan is recorded and pinned\n"
	"under the state dir before anything runs.\n\n"
	"  -p, --policy FILE     the policy\n"
	"  -w, --workspace DIR   the command's working directory (default: .)\n"
	"      --write PATH      add a write grant\n"
	"      --deny-read PATH  add a read deny\n"
	"      --allow-host HOST add a host to network.allow\n"
	"      --allow-range CIDR let listed names resolve into this internal range\n"
	"      --limit KEY=VALUE set a limit: pids=N (default 4096), memory=SIZE (512m),\n"
	"                        cpus=N (1.5)\n"
	"      --pass-env NAME   pass a credential-like variable of the caller through\n"
	"      --state-dir DIR   cordon's state (default: $XDG_STATE_HOME/cordon)\n"
	"      --provider NAME   the process provider: native (default) or srt\n"
	"  -q, --quiet           no notes at exit\n\n"
	"Exit status: the command's (128+N when signal N ended it); 125 when cordon\n"
	"refused or failed (`cordon: <reason>: <message>`); 126 not executable;\n"
	"127 not found.\n";

int cli_run(int argc, char **argv)
{
	struct launch_opts o = { 0 };
	struct host_launch l = { 0 };
	_cleanup_err_ struct err *e = NULL;
	int help = 0, first, code;

	first = launch_parse_args(argc, argv, run_usage, &o, &help);
	if (help || first < 0) {
		if (help)
			fputs(run_usage, stdout);
		launch_opts_clear(&o);
		return help ? 0 : EXIT_CORDON;
	}
	o.argv = argv + first;
	o.defer_record = 1;
	/* The provider's slow start (native: the namespaces) runs alongside
	 * the policy, the guard and the plan. */
	const struct provider *prov = provider_find_kind(o.provider, PROVIDER_PROCESS);
	if (prov && prov->prestart)
		prov->prestart();
	if (launch_prepare(&o, &l, &e) < 0) {
		err_print(stderr, e);
		host_launch_clear(&l);
		launch_opts_clear(&o);
		return EXIT_CORDON;
	}
	code = host_launch_run(&l, o.quiet, false, stderr, &e);
	host_launch_clear(&l);
	launch_opts_clear(&o);
	return code;
}

static const char adopt_usage[] =
	"usage: cordon adopt RECORD_DIR PARENT_PID ROOT_PID\n\n"
	"Prove that ROOT_PID, a child of PARENT_PID, is the sandbox recorded in\n"
	"RECORD_DIR (its record verified against its pin). Exit 0 when it is (or\n"
	"when it has exited and left nothing running); 125 and the reason if not.\n";

int cli_adopt(int argc, char **argv)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char *exec_dir = NULL, *pin = NULL;
	unsigned long segment = 0, parent = 0, root = 0;
	const char *base;
	const struct provider *prov = NULL;
	struct plan_root pinned = { 0 };
	struct plan *p = NULL;
	char *slash;
	int rc = EXIT_CORDON;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(adopt_usage, stdout);
		return 0;
	}
	base = argc == 4 ? strrchr(argv[1], '/') : NULL;
	if (!base || num_parse_ulong(base + 1, 1000000, &segment) < 0 ||
	    num_parse_ulong(argv[2], INT_MAX, &parent) < 0 || parent == 0 ||
	    num_parse_ulong(argv[3], INT_MAX, &root) < 0) {
		fputs(adopt_usage, stderr);
		return EXIT_CORDON;
	}
	/* <exec>/sandbox/<segment> */
	exec_dir = strdup(argv[1]);
	for (int i = 0; exec_dir && i < 2 && (slash = strrchr(exec_dir, '/')); i++)
		*slash = '\0';
	/* The provider is the one the root was pinned with, never guessed
	 * from the plan: a pin that names none, or one this program does not
	 * have (or one that cannot adopt), is refused. */
	if (exec_dir && plan_read_pin_root(exec_dir, (unsigned int)segment, &pin, &pinned, &e) == 0 &&
	    !(prov = provider_find(pinned.provider)))
		err_set(&e, ERR_DENIED, 0, "the pinned provider `%s` is not in this program",
			pinned.provider[0] ? pinned.provider : "(none)");
	else if (prov && !prov->adopt)
		err_set(&e, ERR_DENIED, 0, "the pinned provider `%s` proves no sandbox", prov->name);
	else if (prov && plan_read_record(argv[1], pin, &p, &e) == 0 &&
		 prov->adopt(p, argv[1], (pid_t)parent, (pid_t)root, &e) == 0)
		rc = 0;
	else if (!e)
		err_set(&e, ERR_INTERNAL, ENOMEM, "adopt");
	if (e)
		err_print(stderr, e);
	plan_free(p);
	return rc;
}
