/* plan.c: `cordon plan`: everything a launch does short of running:
 * the policy merged with the needs and the protected set, checked by the
 * guard, and the plan recorded and pinned under the state dir. */
#include "cli/cli.h"
#include "cli/launch.h"
#include "lib/cleanup.h"
#include "lib/json.h"

#include <stdio.h>

static const char plan_usage[] =
	"usage: cordon plan [-p FILE] [-w DIR] [--state-dir DIR] [--provider NAME]\n"
	"                   [--write PATH]... [--deny-read PATH]... [--allow-host HOST]...\n"
	"                   [--allow-range CIDR]... [--limit KEY=VALUE]... [--pass-env NAME]...\n"
	"                   -- CMD...\n\n"
	"Merge the policy (FILE, or the embedded default) with what the command\n"
	"needs and the host's protected set, check it, record the plan under the\n"
	"state dir and print it as JSON. Nothing is run.\n\n"
	"  -p, --policy FILE    the policy (default: write {workspace}, no hosts)\n"
	"  -w, --workspace DIR  the command's working directory (default: .)\n"
	"      --state-dir DIR  cordon's state (default: $XDG_STATE_HOME/cordon)\n"
	"      --write PATH     add a write grant\n"
	"      --deny-read PATH add a read deny\n"
	"      --allow-host HOST add a host to network.allow\n"
	"      --allow-range CIDR add a range to network.allow_ranges\n"
	"      --limit KEY=VALUE set a limit: pids=N, memory=SIZE (512m), cpus=N (1.5)\n"
	"      --pass-env NAME  pass a credential-like variable through (env.pass)\n"
	"      --provider NAME  the process provider: native (default) or srt; srt's\n"
	"                       settings are written beside the plan\n\n"
	"Exit 0 with the plan on stdout; 125 and `cordon: <reason>: <message>` on a\n"
	"refusal.\n";

int cli_plan(int argc, char **argv)
{
	struct launch_opts o = { 0 };
	struct host_launch l = { 0 };
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *out = NULL;
	_cleanup_free_ char *text = NULL;
	int help = 0, first, rc = EXIT_CORDON;

	first = launch_parse_args(argc, argv, plan_usage, &o, &help);
	if (help) {
		fputs(plan_usage, stdout);
		launch_opts_clear(&o);
		return 0;
	}
	if (first < 0) {
		launch_opts_clear(&o);
		return EXIT_CORDON;
	}
	o.argv = argv + first;
	if (launch_prepare(&o, &l, &e) < 0) {
		err_print(stderr, e);
		goto out;
	}
	out = json_pack("{s:s, s:i, s:s, s:s, s:s, s:o}", "execution", l.paths.execution,
			"segment", (int)l.paths.segment, "record", l.paths.record_dir,
			"run", l.paths.run_dir, "workspace", l.workspace,
			"plan", plan_to_json(l.plan));
	if (out)
		text = json_dumps(out, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	if (!text) {
		fprintf(stderr, "cordon: error: cannot print the plan\n");
		goto out;
	}
	printf("%s\n", text);
	rc = 0;
out:
	host_launch_clear(&l);
	launch_opts_clear(&o);
	return rc;
}
