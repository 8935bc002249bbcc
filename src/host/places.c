/* places.c: what a tenant writes against what the operator's claude reads
 * (see places.h). */
#include "host/places.h"

#include "host/launch.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/place.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int oom(struct err **e)
{
	return err_set(e, ERR_INTERNAL, ENOMEM, "places");
}

static int push_unique(char ***out, const char *p, struct err **e)
{
	if (strv_contains(*out, p))
		return 0;
	return strv_push(out, p) < 0 ? oom(e) : 0;
}

/* A variable of the binding's env, or NULL. */
static const char *env_of(const struct host_binding *b, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; b->env && b->env[i]; i++)
		if (strncmp(b->env[i], name, n) == 0 && b->env[i][n] == '=')
			return b->env[i] + n + 1;
	return NULL;
}

int host_binding_home(const struct host_binding *b, const char **out, struct err **e)
{
	const char *h = env_of(b, "HOME");

	/* the wrapper's environment is the daemon's with the binding's env
	 * over it: the launch's ~ is what host_home_dir finds there */
	return h ? host_home_from(h, out, e) : host_home_dir(out, e);
}

int host_binding_writes(const struct host_binding *b, char ***out, struct err **e)
{
	const char *home = NULL;

	if (!b->provider)
		return 0;
	if (host_binding_home(b, &home, e) < 0)
		return -1;
	if (b->workspace && push_unique(out, b->workspace, e) < 0)
		return -1;
	if (b->claude_config_dir && push_unique(out, b->claude_config_dir, e) < 0)
		return -1;
	for (size_t i = 0; b->policy && b->policy->write && b->policy->write[i]; i++) {
		const char *t = b->policy->write[i];
		_cleanup_free_ char *p = NULL;

		if (t[0] == '~')
			p = fs_path_join(home, t[1] == '/' ? t + 2 : t + 1);
		else if (strncmp(t, "{workspace}", 11) == 0 && b->workspace)
			p = fs_path_join(b->workspace, t[11] == '/' ? t + 12 : t + 11);
		else if (t[0] == '/')
			p = strdup(t);
		else
			continue; /* the job's own, in the state dir */
		if (!p || push_unique(out, p, e) < 0)
			return p ? -1 : oom(e);
	}
	return 0;
}

int host_claude_operator_places(const struct host_binding *b, const char *ws, char ***out,
				struct err **e)
{
	const char *dir = env_of(b, "CLAUDE_CONFIG_DIR"), *home = env_of(b, "HOME");

	if (ws && push_unique(out, ws, e) < 0)
		return -1;
	if (dir && dir[0] == '/')
		return push_unique(out, dir, e);
	if (dir) {
		/* relative: the workspace's (a per-job one is the job's own) */
		const char *base = ws ? ws : b->workspace;
		_cleanup_free_ char *p = base ? fs_path_join(base, dir) : NULL;

		return !base ? 0 : p ? push_unique(out, p, e) : oom(e);
	}
	if ((!home || home[0] != '/') && host_home_dir(&home, e) < 0)
		return -1;
	for (int i = 0; i < 2; i++) {
		_cleanup_free_ char *p = fs_path_join(home, i ? ".claude.json" : ".claude");

		if (!p || push_unique(out, p, e) < 0)
			return p ? -1 : oom(e);
	}
	return 0;
}

int host_places_meet(char *const *places, char *const *written, const char **place,
		     const char **wrote, struct err **e)
{
	for (size_t i = 0; places && places[i]; i++)
		for (size_t k = 0; written && written[k]; k++) {
			int r = place_overlap(places[i], written[k], e);

			if (r != 0) {
				*place = places[i];
				*wrote = written[k];
				return r;
			}
		}
	return 0;
}

int host_config_check_places(const struct host_config *c, struct err **e)
{
	bool any = false;

	for (size_t i = 0; i < c->n; i++)
		any = any || c->bindings[i].provider;
	if (!any)
		return 0; /* nothing sandboxed: nothing to meet */
	for (size_t u = 0; u < c->n; u++) {
		const struct host_binding *ub = &c->bindings[u];
		_cleanup_strv_ char **places = NULL;
		_cleanup_free_ char *bp = json_path_key("", "bindings");
		_cleanup_free_ char *kp = bp ? json_path_key(bp, ub->name) : NULL;
		_cleanup_free_ char *ep = kp ? json_path_key(kp, "env") : NULL;
		_cleanup_free_ char *cp = ep ? json_path_key(ep, "CLAUDE_CONFIG_DIR") : NULL;

		if (ub->provider || ub->executor != HOST_EXEC_CLAUDE_CODE)
			continue;
		if (!cp)
			return oom(e);
		/* its workspace (its .claude/, .mcp.json) and its config */
		if (host_claude_operator_places(ub, ub->workspace, &places, e) < 0)
			return -1;
		for (size_t s = 0; s < c->n; s++) {
			_cleanup_strv_ char **w = NULL;
			const char *place = NULL, *wrote = NULL;
			int r;

			if (host_binding_writes(&c->bindings[s], &w, e) < 0)
				return -1;
			r = host_places_meet(places, w, &place, &wrote, e);
			/* (the paths are not echoed: the JSON paths name them) */
			if (r < 0)
				return err_wrap(e, "%s", json_path_show(cp));
			if (r > 0)
				return err_set(e, ERR_CONFIG, 0,
					       "%s: this claude runs without a sandbox, and its workspace or "
					       "config directory (or, unset, ~/.claude) is, holds or lies "
					       "inside "
					       "a place sandboxed binding `%s` may write: hooks put there "
					       "would run as the operator",
					       json_path_show(cp), c->bindings[s].name);
		}
	}
	return 0;
}
