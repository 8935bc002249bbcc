/* native.c: the native provider's row: plan (the command itself; the
 * sandbox is built in process by the launch), create, start, wait and
 * discard (launch.c: the sandbox up to where it waits for its filter,
 * then the go), adopt, doctor. */
#include "sandbox/native/native.h"
#include "sandbox/adopt.h"
#include "sandbox/limits.h"
#include "sandbox/prereq.h"
#include "sandbox/native/stub.h"
#include "sandbox/forward.h"
#include "lib/cleanup.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int native_plan(const struct grant *g, const struct plan_paths *paths,
		       const struct provider_launch *pl, struct plan *p, struct err **e)
{
	struct limits_plan lp = { 0 };
	char *summary = NULL;
	int r;

	/* Fail closed: nothing of the plan may go unenforced. */
	if (strv_len(g->sockets) > 0 && !g->unix_sockets_all)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "sockets: `%s`: on Linux a unix socket cannot be allowed by path; "
			       "set \"unix_sockets\": \"all\" to reach the sockets left visible",
			       g->sockets[0]);
	/* Limits this host cannot hold are refused here, before anything is
	 * recorded (the launch decides again, with what it then finds). The
	 * default pids limit alone is never refused: that launch decides once. */
	if (g->limits.memory || g->limits.cpu_millis || !g->pids_default) {
		r = limits_decide(NULL, g, paths->execution, &lp, e);
		limits_clear(&lp);
		if (r < 0)
			return -1;
	}
	if (asprintf(&summary, "native: %s", p->summary) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "native plan");
	free(p->summary);
	p->summary = summary;
	p->signals = PLAN_SIGNALS_TERM;
	/* With hosts (or the toolbelt, which the gateway serves), every
	 * client is pointed at the gateway's listeners in the sandbox's own
	 * network namespace; they are the only way out. */
	if (g->n_hosts > 0 || g->toolbelt) {
		for (size_t i = 0; sandbox_proxy_env[i]; i++)
			if (strv_push(&p->env, sandbox_proxy_env[i]) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "native plan");
	}
	return 0;
}

static json_t *native_doctor(const json_t *config, const char *state_dir)
{
	static const char *const names[] = { "pass", "warn", "fail" };
	struct prereq_report r;
	json_t *checks = json_array();
	bool ready;

	prereq_run(&r);
	/* fail closed: a report that checked nothing proves nothing */
	ready = r.n > 0;
	for (int i = 0; checks && i < r.n; i++) {
		ready = ready && r.checks[i].status != PREREQ_FAIL;
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s, s:s}",
							"id", r.checks[i].id,
							"status", names[r.checks[i].status],
							"detail", r.checks[i].detail,
							"fix", r.checks[i].fix));
	}
	return json_pack("{s:s, s:b, s:i, s:o}", "provider", "native", "ready", ready,
			 "landlock_abi", r.landlock_abi, "checks", checks);
}

/* Native: the root's child is the sandbox's pid 1, made in its own
 * namespaces before anything of the command ran. */
int native_adopt(const struct plan *p, const char *record_dir, pid_t parent,
		 pid_t root, struct err **e)
{
	pid_t kids[16];
	int r = adopt_check_root(p, record_dir, parent, root, e);

	if (r != 0)
		return r < 0 ? -1 : 0;
	if (adopt_children(root, kids, 16) < 1)
		return err_set(e, ERR_DENIED, 0, "pid %d has no sandbox beneath it yet", (int)root);
	if (!adopt_namespaces_differ(kids[0]))
		return err_set(e, ERR_DENIED, 0, "the process beneath pid %d is not sandboxed",
			       (int)root);
	return 0;
}

const struct provider native_provider = {
	.name = "native",
	.kind = PROVIDER_PROCESS,
	.prestart = native_stub_start,
	.plan = native_plan,
	.create = native_create,
	.start = native_start,
	.wait = native_wait,
	.discard = native_discard,
	.adopt = native_adopt,
	.doctor = native_doctor,
};
