/* remote.c: `cordon remote-run`, internal: a segment's native sandbox on
 * an SSH remote. The SSH provider copies cordon's static binary and the
 * plan the host recorded into the run's records there; the run's stub
 * starts this. Nothing is decided here that the plan does not say: the
 * grant is the plan's, read back against the pinned digest, with the
 * remote account's own home denied beside it (the host's denies name the
 * host's credentials, not the remote's). The sandbox's proxies relay to
 * the host's gateway through a unix socket ssh forwards back to the host,
 * so the allowlist, the address guard and the audit log are the host's. */
#include "cli/cli.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "sandbox/native/native.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char remote_usage[] =
	"usage: cordon remote-run --record DIR --digest HEX --channel SOCKPATH\n\n"
	"Internal: the SSH provider's runtime on a remote. Read the plan the host\n"
	"recorded (DIR/plan.json, whose digest must be HEX), and run its command in\n"
	"cordon's native sandbox under the plan's grant, the remote account's home\n"
	"denied as well; the sandbox's proxies relay to SOCKPATH, the host's\n"
	"gateway forwarded by ssh.\n\n"
	"Exit status: the command's (128 + N when signal N ended it); 125 when\n"
	"cordon refused or failed (nothing was executed); 126 not executable; 127\n"
	"not found.\n";

static int recorded(void *ctx, struct err **e)
{
	(void)ctx;
	(void)e;
	return 0; /* the host recorded and pinned the plan before it came here */
}

int cli_remote_run(int argc, char **argv)
{
	const char *record = NULL, *digest = NULL, *channel = NULL;
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *data = NULL;
	_cleanup_free_ char *exec_dir = NULL;
	struct plan_paths paths = { 0 };
	struct plan *p = NULL;
	struct grant *g = NULL;
	const char *home, *iso;
	json_t *pc;
	int code = EXIT_CORDON;

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(remote_usage, stdout);
		return 0;
	}
	for (int i = 1; i + 1 < argc; i += 2) {
		const char **slot = strcmp(argv[i], "--record") == 0	? &record
				    : strcmp(argv[i], "--digest") == 0	? &digest
				    : strcmp(argv[i], "--channel") == 0 ? &channel
									: NULL;

		if (!slot || *slot) {
			record = NULL;
			break;
		}
		*slot = argv[i + 1];
	}
	if (argc != 7 || !record || !digest || !channel || record[0] != '/' || channel[0] != '/') {
		fputs(remote_usage, stderr);
		return EXIT_CORDON;
	}
	if (plan_read_record(record, digest, &p, &e) < 0)
		goto out;
	pc = json_object_get(p->data, "container");
	home = json_string_value(json_object_get(pc, "remote_home"));
	iso = json_string_value(json_object_get(pc, "isolation"));
	if (!home || home[0] != '/' || !iso || strcmp(iso, "native") != 0) {
		err_set(&e, ERR_DENIED, 0, "the recorded plan is not a native run on a remote");
		goto out;
	}
	/* the grant is the plan's data but for the provider's part */
	if (!(data = json_deep_copy(p->data)) || json_object_del(data, "container") < 0) {
		err_set(&e, ERR_INTERNAL, ENOMEM, "remote-run");
		goto out;
	}
	if (grant_from_json(data, &g, &e) < 0 ||
	    grant_add(g, home, GRANT_DENY, "the remote account's home", &e) < 0)
		goto out;
	grant_sort(g);
	/* <state>/runs/<execution>/run: the run dir the host mirrored */
	char *slash;
	if (!(exec_dir = strdup(g->run_dir)) || !(slash = strrchr(exec_dir, '/')) ||
	    slash == exec_dir) {
		err_set(&e, ERR_DENIED, 0, "the recorded plan's run dir is not a run dir");
		goto out;
	}
	*slash = '\0';
	paths.execution = strrchr(exec_dir, '/') + 1;
	paths.exec_dir = exec_dir;
	paths.run_dir = g->run_dir;
	paths.record_dir = (char *)record;
	if (native_provider.plan(g, &paths, NULL, p, &e) < 0)
		goto out;
	struct provider_record rec = { .fn = recorded, .ctx = NULL, .quiet = true };
	code = native_run_relayed(g, p, &paths, &rec, channel, &e);
	if (code < 0)
		code = EXIT_CORDON;
out:
	if (e)
		err_print(stderr, e);
	grant_free(g);
	plan_free(p);
	return code;
}
