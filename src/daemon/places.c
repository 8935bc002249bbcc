/* places.c: where a launch may run beside what others ran and run (see
 * daemon.h): the places sandboxed runs wrote (the history), what a live
 * segment may write, the container and operator's-claude checks against
 * the live segments, and the operator's claude against everything a
 * sandbox wrote. By identity and containment (lib/place.h). */
#include "daemon/internal.h"
#include "executor/executor.h"
#include "host/config.h"
#include "host/places.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "plan/plan.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Where sandboxed runs wrote, as the history says: every workspace of a
 * job with a sandboxed (or container) segment, and every write grant such
 * a segment's plan had (read back against its pin). A record that
 * retention removed leaves its job's workspace only; the grants of the
 * bindings as the config says now are counted beside. */
struct wrote_walk {
	char ***written;
	struct err **e;
};

static int wrote_add(void *ctx, const char *ws, const char *record, const char *digest)
{
	struct wrote_walk *w = ctx;
	struct plan *p = NULL;
	struct stat st;
	json_t *v;
	size_t i;

	if (ws && !strv_contains(*w->written, ws) && strv_push(w->written, ws) < 0)
		return err_set(w->e, ERR_INTERNAL, ENOMEM, "history");
	if (!record || (lstat(record, &st) < 0 && errno == ENOENT))
		return 0;
	if (plan_read_record(record, digest, &p, w->e) < 0)
		return err_wrap(w->e, "a sandboxed run's record");
	json_array_foreach(json_object_get(p->data, "write"), i, v) {
		const char *g = json_string_value(v);

		if (g && !strv_contains(*w->written, g) && strv_push(w->written, g) < 0) {
			plan_free(p);
			return err_set(w->e, ERR_INTERNAL, ENOMEM, "history");
		}
	}
	plan_free(p);
	return 0;
}

/* What a live segment of another job may write: its job's workspace
 * and, sandboxed, the write grants its pinned record says it had (read
 * back against its pin), or, not pinned yet, its binding's as the config
 * says now. */
static int seg_writes(const struct seg *s, const json_t *job,
		      const struct host_binding *ob, char ***out, struct err **e)
{
	const char *ws = json_string_value(json_object_get(job, "workspace"));
	struct wrote_walk w = { out, e };
	json_t *g;
	size_t i;

	if (ws && !strv_contains(*out, ws) && strv_push(out, ws) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "places");
	if (!s->sandboxed)
		return 0;
	json_array_foreach(json_object_get(job, "segments"), i, g)
		if (json_integer_value(json_object_get(g, "n")) == (json_int_t)s->n &&
		    json_string_value(json_object_get(g, "provider")))
			return wrote_add(&w, NULL, json_string_value(json_object_get(g, "record")),
					 json_string_value(json_object_get(g, "digest")));
	return ob ? host_binding_writes(ob, out, e) : 0;
}

/* May this launch run beside the live segments of other jobs?
 * - A container's mounts (a copy back's targets) are resolved by their
 *   paths after cordon checked them: a sandbox writing there could swap
 *   one (a read-only cover, a nested grant) for a link in between. A
 *   container job starts only on a workspace no other live job runs on
 *   nor any of their sandboxes may write; and no other job starts on, or
 *   with a grant reaching, a live container job's workspace.
 * - The operator's claude outside any sandbox runs what it finds in its
 *   workspace and config as the operator: no sandboxed launch may write
 *   where a live unsandboxed claude job runs or takes its config from
 *   (operator_claude_check is the other order).
 * By identity and containment (lib/place.h). 0, or -1 with *e
 * (ERR_UNAVAILABLE for a container's workspace in use, ERR_DENIED for a
 * live operator's claude, naming the other job). */
int hostd_live_places_check(struct hostd *d, const struct host_binding *b, const char *job,
			     const char *workspace, struct err **e)
{
	_cleanup_strv_ char **mine = NULL;
	struct host_config *cfg = NULL;
	int r = 0;

	if (workspace && strv_push(&mine, workspace) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "places");
	if (b->provider && host_binding_writes(b, &mine, e) < 0)
		return -1;
	for (struct seg *s = d->segs; r == 0 && s; s = s->next) {
		_cleanup_json_ json_t *j = NULL;
		_cleanup_strv_ char **theirs = NULL, **ows = NULL, **op = NULL;
		const struct host_binding *ob = NULL;
		const char *ws, *place = NULL, *wrote = NULL;
		bool op_claude = s->claude && !s->sandboxed;

		if (strcmp(s->job, job) == 0 || (!b->container && !s->container &&
						 !(b->provider && op_claude)))
			continue;
		if (!(j = host_db_job_json(d->db, s->job, e)) ||
		    (!cfg && host_config_load(d->config, &cfg, e) < 0)) {
			r = -1;
			break;
		}
		ob = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
		ws = json_string_value(json_object_get(j, "workspace"));
		if (ws && strv_push(&ows, ws) < 0) {
			r = err_set(e, ERR_INTERNAL, ENOMEM, "places");
			break;
		}
		if (b->container) {
			/* this container's workspace against all the other may write */
			char *const one[] = { (char *)workspace, NULL };

			r = seg_writes(s, j, ob, &theirs, e);
			if (r == 0 && workspace)
				r = host_places_meet(one, theirs, &place, &wrote, e);
		}
		if (r == 0 && s->container)
			/* the live container's workspace against all this may write */
			r = host_places_meet(ows, mine, &place, &wrote, e);
		if (r > 0) {
			r = err_set(e, ERR_UNAVAILABLE, 0,
				    "the workspace `%s` is in use by job %s: a container is made "
				    "only on a workspace no other job runs on or may write",
				    b->container ? workspace : place, s->job);
			break;
		}
		if (r == 0 && b->provider && op_claude) {
			r = ob && ob->executor == HOST_EXEC_CLAUDE_CODE && !ob->provider
				    ? host_claude_operator_places(ob, ws, &op, e)
				    : ws && strv_push(&op, ws) < 0 ? err_set(e, ERR_INTERNAL, ENOMEM, "places")
								    : 0;
			if (r == 0)
				r = host_places_meet(op, mine, &place, &wrote, e);
			if (r > 0)
				r = err_set(e, ERR_DENIED, 0,
					    "job %s runs claude without a sandbox in, or with its config "
					    "in, `%s`, and this sandboxed binding may write `%s`: what it "
					    "left there would run as the operator",
					    s->job, place, wrote);
		}
	}
	host_config_free(cfg);
	if (r < 0)
		return err_wrap(e, "the places of live jobs");
	return 0;
}

/* A claude that runs as the operator (an unsandboxed claude-code job's,
 * or an attach's) never starts in, nor takes its config from, a place a
 * sandboxed run wrote or a sandboxed binding of cfg may write: it would
 * run the hooks and servers left there as the operator. By identity and
 * containment: `ws/`, a link, a subdirectory and a grant holding it are
 * that place. b NULL (or not an unsandboxed claude-code binding): the
 * workspace alone. 0, or -1 with *e (ERR_DENIED naming both places). */
int hostd_operator_claude_check(struct hostd *d, const struct host_config *cfg,
				 const struct host_binding *b, const char *ws, struct err **e)
{
	_cleanup_strv_ char **places = NULL, **written = NULL;
	struct wrote_walk w = { &written, e };
	const char *place = NULL, *wrote = NULL;
	int r;

	if (b && (b->provider || b->executor != HOST_EXEC_CLAUDE_CODE))
		b = NULL; /* (its workspace is all there is to compare) */
	if (!b && !ws)
		return 0;
	if ((b ? host_claude_operator_places(b, ws, &places, e)
	       : strv_push(&places, ws) < 0 ? err_set(e, ERR_INTERNAL, ENOMEM, "places") : 0) < 0 ||
	    host_db_sandboxed(d->db, wrote_add, &w, e) < 0)
		return -1;
	for (size_t i = 0; b && cfg && i < cfg->n; i++)
		if (host_binding_writes(&cfg->bindings[i], &written, e) < 0)
			return -1;
	r = host_places_meet(places, written, &place, &wrote, e);
	if (r < 0)
		return err_wrap(e, "claude without a sandbox: where it runs");
	if (r > 0)
		return err_set(e, ERR_DENIED, 0,
			       "claude runs here without a sandbox, in or with its config in `%s`, "
			       "and a sandboxed run wrote (or a sandboxed binding may write) `%s`: "
			       "what it left there would run as the operator",
			       place, wrote);
	return 0;
}
