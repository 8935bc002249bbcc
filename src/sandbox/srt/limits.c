/* limits.c (srt): see srt/limits.h. */
#include "sandbox/srt/limits.h"
#include "lib/cleanup.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

int srt_limits_args(const struct limits_plan *lp, const struct grant *g, char ***argv)
{
	char n[32];

	for (size_t i = 0; i < lp->n; i++)
		if (strv_push(argv, "--cgroup") < 0 || strv_push(argv, lp->dirs[i].dir) < 0)
			return -1;
	if (!lp->nproc)
		return 0;
	snprintf(n, sizeof(n), "%lu", lp->nproc);
	if (strv_push(argv, "--pids") < 0 || strv_push(argv, n) < 0)
		return -1;
	return g->pids_default ? 0 : strv_push(argv, "--pids-strict");
}

int srt_limits_check_plan(const struct plan *p, const struct limits_plan *lp,
			  const struct grant *g, struct err **e)
{
	_cleanup_strv_ char **want = NULL, **got = NULL;
	size_t at = 0, n = strv_len(p->argv);
	int r = srt_limits_args(lp, g, &want) < 0 ? -1 : 0;

	/* confine's own flags run from "confine" to its "--" */
	while (at < n && strcmp(p->argv[at], "confine") != 0)
		at++;
	for (size_t i = at; r == 0 && i < n && strcmp(p->argv[i], "--") != 0; i++) {
		const char *a = p->argv[i];
		bool valued = strcmp(a, "--cgroup") == 0 || strcmp(a, "--pids") == 0;

		if (valued || strcmp(a, "--pids-strict") == 0)
			r = strv_push(&got, a);
		if (r == 0 && valued && i + 1 < n)
			r = strv_push(&got, p->argv[++i]);
	}
	if (r < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt limits");
	bool same = at < n && strv_len(got) == strv_len(want);
	for (size_t i = 0; same && got && want && i < strv_len(want); i++)
		same = strcmp(got[i], want[i]) == 0;
	if (!same)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "limits: the cgroups this host offers changed since the plan; "
			       "plan the launch again");
	return 0;
}

int srt_limits_settings(json_t *settings, const struct plan *p, struct err **e)
{
	json_t *w = json_object_get(json_object_get(settings, "filesystem"), "allowWrite");
	size_t n = strv_len(p->argv), at = 0;

	while (at < n && strcmp(p->argv[at], "confine") != 0)
		at++;
	for (size_t i = at; i + 1 < n && strcmp(p->argv[i], "--") != 0; i++)
		if (strcmp(p->argv[i], "--cgroup") == 0 &&
		    (!w || json_array_append_new(w, json_pack("{s:s, s:b}", "path", p->argv[++i],
							     "literal", 1)) < 0))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	return 0;
}
