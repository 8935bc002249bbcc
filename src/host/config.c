/* config.c: the daemon's bindings (see config.h). Every check names the
 * JSON path of what it refuses; a value is never echoed (an env value or a
 * path may be something the operator would not want in a log). */
#include "host/config.h"
#include "container/contract.h"
#include "container/ssh/target.h"
#include "host/gitws.h"
#include "host/launch.h"
#include "host/places.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/place.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define SECRET_MAX ((size_t)64 * 1024)
#define ENV_NAME_MAX 256

static const char *show(const char *path)
{
	return json_path_show(path);
}

static int oom(struct err **e)
{
	return err_set(e, ERR_INTERNAL, ENOMEM, "config");
}

/* A string without an embedded NUL, or NULL with *e set. */
static const char *string_at(json_t *v, const char *path, struct err **e)
{
	if (!json_is_string(v)) {
		err_set(e, ERR_CONFIG, 0, "%s: must be a string", show(path));
		return NULL;
	}
	if (strlen(json_string_value(v)) != json_string_length(v)) {
		err_set(e, ERR_CONFIG, 0, "%s: holds a NUL byte", show(path));
		return NULL;
	}
	return json_string_value(v);
}

static int absolute_path(json_t *v, const char *path, char **out, struct err **e)
{
	const char *s = string_at(v, path, e);

	if (!s)
		return -1;
	if (s[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "%s: must be an absolute path", show(path));
	if (strlen(s) >= PATH_MAX)
		return err_set(e, ERR_CONFIG, 0, "%s: longer than PATH_MAX", show(path));
	*out = strdup(s);
	return *out ? 0 : oom(e);
}

static bool env_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > ENV_NAME_MAX || (s[0] >= '0' && s[0] <= '9'))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static bool binding_name_ok(const char *s)
{
	size_t n = strlen(s);

	if (n == 0 || n > HOST_BINDING_NAME_MAX ||
	    !((s[0] >= 'a' && s[0] <= 'z') || (s[0] >= 'A' && s[0] <= 'Z') ||
	      (s[0] >= '0' && s[0] <= '9')))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || s[i] == '-' || s[i] == '.' || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= '0' && s[i] <= '9')))
			return false;
	return true;
}

static json_t *object_at(json_t *parent, const char *path, const char *key, bool required,
			 char **kp, struct err **e)
{
	json_t *v = json_object_get(parent, key);

	*kp = json_path_key(path, key);
	if (!*kp) {
		oom(e);
		return NULL;
	}
	if (!v) {
		if (required)
			err_set(e, ERR_CONFIG, 0, "%s: missing", show(*kp));
		return NULL;
	}
	if (!json_is_object(v)) {
		err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(*kp));
		return NULL;
	}
	return v;
}

/* An array of strings at x[key] into *out; absent leaves *out NULL. */
static int strings_at(json_t *x, const char *xp, const char *key, bool may_be_empty,
		      char ***out, struct err **e)
{
	_cleanup_free_ char *ap = json_path_key(xp, key);
	json_t *arr = json_object_get(x, key), *v;
	size_t i;

	if (!ap)
		return oom(e);
	if (!arr)
		return 0;
	if (!json_is_array(arr) || (!may_be_empty && json_array_size(arr) == 0))
		return err_set(e, ERR_CONFIG, 0, "%s: must be a%s array of strings", show(ap),
			       may_be_empty ? "n" : " non-empty");
	if (!*out && !(*out = calloc(1, sizeof(char *))))
		return oom(e);
	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index(ap, i);
		const char *s;

		if (!ip)
			return oom(e);
		if (!(s = string_at(v, ip, e)))
			return -1;
		if (strv_push(out, s) < 0)
			return oom(e);
	}
	return 0;
}

static int parse_executor(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	static const char *const shell_keys[] = { "kind", "args", NULL };
	static const char *const claude_keys[] = { "kind", "prompt", "extra_args", "home_seed",
						   NULL };
	_cleanup_free_ char *xp = NULL, *kp = NULL, *pp = NULL;
	json_t *x = object_at(b, path, "executor", true, &xp, e), *prompt;
	const char *kind;

	if (!x)
		return -1;
	kp = json_path_key(xp, "kind");
	pp = json_path_key(xp, "prompt");
	if (!kp || !pp)
		return oom(e);
	if (!json_object_get(x, "kind"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(kp));
	kind = string_at(json_object_get(x, "kind"), kp, e);
	if (!kind)
		return -1;
	if (strcmp(kind, "shell") == 0) {
		out->executor = HOST_EXEC_SHELL;
		if (json_check_keys(x, xp, shell_keys, e) < 0)
			return -1;
		return strings_at(x, xp, "args", false, &out->args, e);
	}
	if (strcmp(kind, "claude-code") != 0)
		return err_set(e, ERR_CONFIG, 0, "%s: must be \"shell\" or \"claude-code\"",
			       show(kp));
	out->executor = HOST_EXEC_CLAUDE_CODE;
	if (json_check_keys(x, xp, claude_keys, e) < 0 ||
	    strings_at(x, xp, "extra_args", true, &out->extra_args, e) < 0)
		return -1;
	if (json_object_get(x, "home_seed")) {
		_cleanup_free_ char *hp = json_path_key(xp, "home_seed"), *norm = NULL;
		const char *seed = hp ? string_at(json_object_get(x, "home_seed"), hp, e) : NULL;
		const char *why = NULL;

		if (!seed)
			return hp ? -1 : oom(e);
		if (seed[0] != '/' || policy_path_normalise(seed, strlen(seed), &norm, &why) < 0)
			return err_set(e, ERR_CONFIG, 0, "%s: must be an absolute path%s%s",
				       show(hp), why ? ": " : "", why ? why : "");
		out->home_seed = norm;
		norm = NULL;
	}
	/* the default prompt; a job's args replace it */
	prompt = json_object_get(x, "prompt");
	if (prompt) {
		const char *p = string_at(prompt, pp, e);

		if (!p)
			return -1;
		if (!(out->args = calloc(2, sizeof(char *))) || !(out->args[0] = strdup(p)))
			return oom(e);
	}
	return 0;
}

/* The paths claude reads as the operator's own user config: hooks, MCP
 * servers and plugins there run in every session the operator starts.
 * By identity and containment (a link or another spelling of ~/.claude
 * is it); a place that cannot be looked up counts as it. */
static bool in_operator_claude(const char *dir, const char *home)
{
	_cleanup_free_ char *d = fs_path_join(home, ".claude");
	_cleanup_free_ char *j = fs_path_join(home, ".claude.json");
	struct err *e = NULL;
	bool in = !d || !j || place_overlap(dir, d, &e) != 0 || place_overlap(dir, j, &e) != 0;

	err_free(e);
	return in;
}

/* A sandboxed claude-code binding has a config directory of its own:
 * CLAUDE_CONFIG_DIR in its env, absolute, and not, not holding and not
 * inside ~/.claude or ~/.claude.json, under the daemon's home and under
 * a HOME the binding sets. (At launch the directory is checked again with
 * its links followed.) */
static int check_claude_config(const char *path, struct host_binding *out, struct err **e)
{
	_cleanup_free_ char *ep = json_path_key(path, "env"), *cp = NULL, *norm = NULL;
	const char *dir = NULL, *why = NULL, *home = NULL;
	size_t n = strlen("CLAUDE_CONFIG_DIR=");

	if (out->home_seed && !out->container) {
		_cleanup_free_ char *xp = json_path_key(path, "executor");
		_cleanup_free_ char *hp = xp ? json_path_key(xp, "home_seed") : NULL;

		return hp ? err_set(e, ERR_CONFIG, 0,
				    "%s: only for a container binding (its job's home is seeded "
				    "from it)",
				    show(hp))
			  : oom(e);
	}
	if (out->executor == HOST_EXEC_CLAUDE_CODE && out->provider &&
	    strcmp(out->provider, "ssh") == 0) {
		_cleanup_free_ char *xp = json_path_key(path, "executor");

		return xp ? err_set(e, ERR_UNAVAILABLE, 0,
				    "%s: claude-code on an ssh remote is not built (the shell "
				    "executor is)",
				    show(xp))
			  : oom(e);
	}
	/* a HOME the binding sets is its launch's ~ (the operator's claude
	 * config under it is denied to it, whatever its executor) */
	for (size_t i = 0; out->env && out->env[i] && !out->home; i++)
		if (strncmp(out->env[i], "HOME=/", 6) == 0 && !(out->home = strdup(out->env[i] + 5)))
			return oom(e);
	/* (a container's claude has the job's home as its config directory) */
	if (out->executor != HOST_EXEC_CLAUDE_CODE || !out->provider || out->container)
		return 0;
	if (!ep || !(cp = json_path_key(ep, "CLAUDE_CONFIG_DIR")))
		return oom(e);
	for (size_t i = 0; out->env[i]; i++)
		if (strncmp(out->env[i], "CLAUDE_CONFIG_DIR=", n) == 0)
			dir = out->env[i] + n;
	if (!dir)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: a sandboxed claude-code binding needs a config directory of its "
			       "own (the operator's ~/.claude runs hooks and servers as the operator)",
			       show(cp));
	if (dir[0] != '/' || policy_path_normalise(dir, strlen(dir), &norm, &why) < 0)
		return err_set(e, ERR_CONFIG, 0, "%s: must be an absolute path%s%s", show(cp),
			       why ? ": " : "", why ? why : "");
	if (host_home_dir(&home, e) < 0)
		return -1;
	if (in_operator_claude(norm, home) || (out->home && in_operator_claude(norm, out->home)))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must not be, hold or lie inside ~/.claude or ~/.claude.json",
			       show(cp));
	out->claude_config_dir = strdup(norm);
	return out->claude_config_dir ? 0 : oom(e);
}

/* A clone workspace: {"url", "branch", "mode"?, "setup"?}. */
static int parse_git_workspace(json_t *g, const char *gp, struct host_binding *out,
			       struct err **e)
{
	static const char *const keys[] = { "url", "branch", "mode", "setup", NULL };
	_cleanup_free_ char *up = json_path_key(gp, "url"), *bp = json_path_key(gp, "branch");
	_cleanup_free_ char *mp = json_path_key(gp, "mode");
	json_t *mode = json_object_get(g, "mode");
	const char *url, *branch;

	if (!up || !bp || !mp)
		return oom(e);
	if (!json_is_object(g))
		return err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(gp));
	if (json_check_keys(g, gp, keys, e) < 0)
		return -1;
	if (!json_object_get(g, "url"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(up));
	if (!json_object_get(g, "branch"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(bp));
	if (!(url = string_at(json_object_get(g, "url"), up, e)) ||
	    !(branch = string_at(json_object_get(g, "branch"), bp, e)))
		return -1;
	if (!host_git_url_protocol(url))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must be an https, http, ssh, git or file URL, an scp-like "
			       "host:path or an absolute path, without a password (put it in "
			       "git.credentials)",
			       show(up));
	if (!host_git_branch_ok(branch))
		return err_set(e, ERR_CONFIG, 0, "%s: not a branch name (letters, digits, '.', '_', "
						 "'/', '-'; at most %d)",
			       show(bp), HOST_GIT_BRANCH_MAX);
	if (mode) {
		const char *m = string_at(mode, mp, e);

		if (!m)
			return -1;
		if (strcmp(m, "clone") == 0)
			out->git_mode = HOST_GIT_CLONE;
		else if (strcmp(m, "worktree") == 0)
			out->git_mode = HOST_GIT_WORKTREE;
		else if (strcmp(m, "shared") == 0)
			out->git_mode = HOST_GIT_SHARED;
		else
			return err_set(e, ERR_CONFIG, 0,
				       "%s: must be \"clone\" (\"worktree\" and \"shared\" are known, "
				       "not built)",
				       show(mp));
	}
	if (strings_at(g, gp, "setup", false, &out->git_setup, e) < 0)
		return -1;
	out->git_url = strdup(url);
	out->git_branch = strdup(branch);
	return out->git_url && out->git_branch ? 0 : oom(e);
}

static int parse_workspace(json_t *b, const char *path, struct host_binding *out,
			   struct err **e)
{
	static const char *const keys[] = { "dir", "scratch", "git", NULL };
	_cleanup_free_ char *wp = NULL, *dp = NULL, *sp = NULL, *gp = NULL;
	json_t *w = object_at(b, path, "workspace", true, &wp, e);
	json_t *dir, *scratch, *git;

	if (!w || json_check_keys(w, wp, keys, e) < 0)
		return -1;
	dir = json_object_get(w, "dir");
	scratch = json_object_get(w, "scratch");
	git = json_object_get(w, "git");
	dp = json_path_key(wp, "dir");
	sp = json_path_key(wp, "scratch");
	gp = json_path_key(wp, "git");
	if (!dp || !sp || !gp)
		return oom(e);
	if (!!dir + !!scratch + !!git > 1)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: names more than one of dir, scratch and git: one of them",
			       show(wp));
	if (git)
		return parse_git_workspace(git, gp, out, e);
	if (scratch) {
		if (!json_is_true(scratch))
			return err_set(e, ERR_CONFIG, 0, "%s: must be true (or name a dir)", show(sp));
		out->scratch = true;
		return 0;
	}
	if (!dir)
		return err_set(e, ERR_CONFIG, 0, "%s: needs a dir, \"scratch\": true or a git clone",
			       show(wp));
	return absolute_path(dir, dp, &out->workspace, e);
}

/* What a clone workspace may be, now that the sandbox is known: a
 * sandboxed binding takes a clone only, and nothing the host would run
 * in what its agent wrote (a worktree commits through the main
 * checkout's .git, and a setup command runs on the host). */
static int check_git_workspace(const char *path, const struct host_binding *out,
			       struct err **e)
{
	_cleanup_free_ char *wp = json_path_key(path, "workspace"), *gp = NULL, *mp = NULL,
			   *sp = NULL;

	if (!out->git_url)
		return 0;
	if (!wp || !(gp = json_path_key(wp, "git")) || !(mp = json_path_key(gp, "mode")) ||
	    !(sp = json_path_key(gp, "setup")))
		return oom(e);
	if (out->provider && out->git_mode != HOST_GIT_CLONE)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: a sandboxed binding takes a git workspace in clone mode only "
			       "(a %s commits through a checkout's .git outside the sandbox)",
			       show(mp), out->git_mode == HOST_GIT_WORKTREE ? "worktree" : "shared clone");
	if (out->provider && out->git_setup)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: a sandboxed binding takes no setup command (it would run on the "
			       "host, in files the agent writes)",
			       show(sp));
	if (out->git_mode != HOST_GIT_CLONE)
		return err_set(e, ERR_UNAVAILABLE, 0, "%s: the %s mode is not built (clone is)",
			       show(mp), out->git_mode == HOST_GIT_WORKTREE ? "worktree" : "shared");
	return 0;
}

/* "container": {"provider": "ssh", "remote": "user@host[:port]",
 * "host_key": "<type> <base64>", "isolation": "native" | "none",
 * "network": "host", "identity"?, "ssh_config"?, "policy"?}. A run with isolation none
 * is the remote account's, reaching what the remote's firewall allows:
 * the config says so ("network": "host"), and takes no limits. A native
 * one (the default) is cordon's sandbox there, its network the host's
 * gateway; limits there are not built. */
static int parse_ssh(json_t *c, const char *cp, struct host_binding *out, struct err **e)
{
	static const char *const keys[] = { "provider", "remote", "host_key", "isolation",
					    "network", "identity", "ssh_config", "policy", NULL };
	static const char *const names[] = { "remote", "host_key", "isolation", "network",
					     "identity", "ssh_config", NULL };
	_cleanup_free_ char *polp = json_path_key(cp, "policy"), *isop = json_path_key(cp, "isolation"),
			   *netp = json_path_key(cp, "network");
	struct ssh_target t = { 0 };
	const char *iso, *net;

	if (!polp || !isop || !netp)
		return oom(e);
	if (json_check_keys(c, cp, keys, e) < 0)
		return -1;
	for (size_t i = 0; names[i]; i++) {
		_cleanup_free_ char *kp = json_path_key(cp, names[i]);
		json_t *v = json_object_get(c, names[i]);

		if (!kp)
			return oom(e);
		if (v && !string_at(v, kp, e))
			return -1;
	}
	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *kp = json_path_key(cp, names[i]);
		const char *v = json_string_value(json_object_get(c, names[i]));

		if (!kp)
			return oom(e);
		if (!v)
			return err_set(e, ERR_CONFIG, 0, "%s: missing", show(kp));
		int r = i == 0 ? ssh_target_remote(&t, v, show(kp), e)
			       : ssh_target_key(&t, v, show(kp), e);
		ssh_target_clear(&t);
		if (r < 0)
			return -1;
	}
	iso = json_string_value(json_object_get(c, "isolation"));
	net = json_string_value(json_object_get(c, "network"));
	bool native = !iso || strcmp(iso, "native") == 0;
	if (!native && strcmp(iso, "none") != 0)
		return err_set(e, ERR_CONFIG, 0, "%s: must be \"native\" or \"none\"", show(isop));
	/* native: the run's network is the host's gateway, nothing to say */
	if (native && net)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: only with isolation none (a native run reaches the network "
			       "through the host's gateway, under network.allow)",
			       show(netp));
	if (!native && (!net || strcmp(net, "host") != 0))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must be \"host\" with isolation none: the run reaches whatever "
			       "the remote's own firewall allows, and nothing there holds "
			       "network.allow",
			       show(netp));
	for (size_t k = 0; k < 2; k++) {
		_cleanup_free_ char *kp = json_path_key(cp, k ? "ssh_config" : "identity");
		const char *v = json_string_value(json_object_get(c, k ? "ssh_config" : "identity"));

		if (!kp)
			return oom(e);
		if (v && v[0] != '/')
			return err_set(e, ERR_CONFIG, 0, "%s: must be an absolute path", show(kp));
		for (const char *ch = v; ch && *ch; ch++)
			if ((unsigned char)*ch <= ' ' || strchr("\"'%\\", *ch) || *ch == 0x7f)
				return err_set(e, ERR_CONFIG, 0,
					       "%s: no space, quote, '%%' or backslash (ssh reads it "
					       "as an option's value)",
					       show(kp));
	}
	out->provider = strdup("ssh");
	out->container = json_deep_copy(c);
	if (!out->provider || !out->container)
		return oom(e);
	json_object_del(out->container, "policy");
	json_t *pol = json_object_get(c, "policy");
	if ((pol ? policy_from_value(pol, show(polp), &out->policy, e)
		 : policy_default(&out->policy, e)) < 0)
		return -1;
	const struct policy_limits *l = &out->policy->limits;
	if ((l->pids || l->memory || l->cpu_millis) && !native)
		return err_set(e, ERR_CONFIG, 0,
			       "%s: limits: nothing on the remote holds them with isolation none",
			       show(polp));
	if (l->pids || l->memory || l->cpu_millis)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "%s: limits: a remote's cgroups are not built (the remote's "
			       "account may not own any)",
			       show(polp));
	return 0;
}

/* "container": {"provider": "docker", "image", "context" | "endpoint",
 * "policy"?}: the image pinned by digest or image ID. */
static int parse_container(json_t *c, const char *cp, struct host_binding *out, struct err **e)
{
	static const char *const keys[] = { "provider", "image", "context", "endpoint", "policy",
					    NULL };
	_cleanup_free_ char *pp = json_path_key(cp, "provider"), *ip = json_path_key(cp, "image"),
			   *polp = json_path_key(cp, "policy"), *xp = json_path_key(cp, "context"),
			   *ep = json_path_key(cp, "endpoint");
	const char *prov, *image, *ctx = NULL, *endpoint = NULL;

	if (!pp || !ip || !polp || !xp || !ep)
		return oom(e);
	if (!json_is_object(c))
		return err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(cp));
	if (!json_object_get(c, "provider"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(pp));
	if (!(prov = string_at(json_object_get(c, "provider"), pp, e)))
		return -1;
	if (strcmp(prov, "ssh") == 0)
		return parse_ssh(c, cp, out, e);
	if (strcmp(prov, "docker") != 0)
		return err_set(e, ERR_CONFIG, 0, "%s: must be \"docker\" or \"ssh\"", show(pp));
	if (json_check_keys(c, cp, keys, e) < 0)
		return -1;
	if (!json_object_get(c, "image"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(ip));
	if (!(image = string_at(json_object_get(c, "image"), ip, e)))
		return -1;
	/* an image is what it is pinned to, never what a tag names today */
	if (!container_image_pinned(image))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: must be pinned: an image ID (sha256:<64 hex>) or "
			       "name@sha256:<64 hex>",
			       show(ip));
	if (json_object_get(c, "context") && !(ctx = string_at(json_object_get(c, "context"), xp, e)))
		return -1;
	if (json_object_get(c, "endpoint") &&
	    !(endpoint = string_at(json_object_get(c, "endpoint"), ep, e)))
		return -1;
	if (ctx && endpoint)
		return err_set(e, ERR_CONFIG, 0, "%s: names both a context and an endpoint: one of them",
			       show(cp));
	if (endpoint && strncmp(endpoint, "unix:///", 8) != 0 && strncmp(endpoint, "tcp://", 6) != 0)
		return err_set(e, ERR_CONFIG, 0, "%s: must be unix:///<path> or tcp://<host>:<port>",
			       show(ep));
	out->provider = strdup("docker");
	out->container = json_pack("{s:s, s:s}", "provider", "docker", "image", image);
	if (!out->provider || !out->container)
		return oom(e);
	if (ctx)
		json_object_set_new(out->container, "context", json_string(ctx));
	if (endpoint)
		json_object_set_new(out->container, "endpoint", json_string(endpoint));
	json_t *pol = json_object_get(c, "policy");
	if (!pol)
		return policy_default(&out->policy, e);
	return policy_from_value(pol, show(polp), &out->policy, e);
}

/* The program's process providers as a config error names them:
 * "native" or "srt". */
static const char *process_names(char *buf, size_t size)
{
	size_t used = 0, n = 0, k = 0;

	buf[0] = '\0';
	for (size_t i = 0; providers[i]; i++)
		n += providers[i]->kind == PROVIDER_PROCESS;
	for (size_t i = 0; providers[i] && used < size; i++) {
		if (providers[i]->kind != PROVIDER_PROCESS)
			continue;
		int w = snprintf(buf + used, size - used, "%s\"%s\"",
				 k == 0 ? "" : k + 1 == n ? " or " : ", ", providers[i]->name);
		if (w < 0 || (size_t)w >= size - used) {
			buf[used] = '\0';	/* whole names only */
			break;
		}
		used += (size_t)w;
		k++;
	}
	return buf;
}

static int parse_sandbox(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	static const char *const keys[] = { "provider", "policy", NULL };
	_cleanup_free_ char *sp = NULL, *pp = NULL, *polp = NULL, *cp = NULL;
	json_t *s = object_at(b, path, "sandbox", false, &sp, e), *pol;
	const char *provider;

	if (*e)
		return -1;
	if (json_object_get(b, "container")) {
		cp = json_path_key(path, "container");
		if (!cp)
			return oom(e);
		if (s)
			return err_set(e, ERR_CONFIG, 0,
				       "%s: declares both a sandbox and a container: one of them",
				       show(path));
		return parse_container(json_object_get(b, "container"), cp, out, e);
	}
	if (!s)
		return 0;
	if (json_check_keys(s, sp, keys, e) < 0)
		return -1;
	pp = json_path_key(sp, "provider");
	polp = json_path_key(sp, "policy");
	if (!pp || !polp)
		return oom(e);
	if (!json_object_get(s, "provider"))
		return err_set(e, ERR_CONFIG, 0, "%s: missing", show(pp));
	provider = string_at(json_object_get(s, "provider"), pp, e);
	if (!provider)
		return -1;
	/* a process provider of the program's (none is a binding without a
	 * sandbox section, never one named) */
	if (!provider_find_kind(provider, PROVIDER_PROCESS)) {
		char known[128];

		return err_set(e, ERR_CONFIG, 0, "%s: must be %s", show(pp),
			       process_names(known, sizeof(known)));
	}
	out->provider = strdup(provider);
	if (!out->provider)
		return oom(e);
	pol = json_object_get(s, "policy");
	/* without one, the embedded default */
	if (!pol)
		return policy_default(&out->policy, e);
	return policy_from_value(pol, show(polp), &out->policy, e);
}

static int parse_env(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	_cleanup_free_ char *ep = NULL;
	json_t *env = object_at(b, path, "env", false, &ep, e), *v;
	const char *key;

	if (*e)
		return -1;
	json_object_foreach(env, key, v) {
		_cleanup_free_ char *kp = json_path_key(ep, key);
		_cleanup_free_ char *kv = NULL;
		const char *s;

		if (!kp)
			return oom(e);
		if (!env_name_ok(key))
			return err_set(e, ERR_CONFIG, 0,
				       "%s: not a variable name (letters, digits, _; not a digit first)",
				       show(kp));
		if (!(s = string_at(v, kp, e)))
			return -1;
		if (asprintf(&kv, "%s=%s", key, s) < 0)
			return oom(e);
		if (strv_push(&out->env, kv) < 0)
			return oom(e);
	}
	return 0;
}

static bool env_has(char *const *env, const char *name)
{
	size_t n = strlen(name);

	for (size_t i = 0; env && env[i]; i++)
		if (strncmp(env[i], name, n) == 0 && env[i][n] == '=')
			return true;
	return false;
}

static int parse_secrets(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	static const char *const keys[] = { "file", "env", NULL };
	_cleanup_free_ char *sp = NULL;
	json_t *secrets = object_at(b, path, "secrets", false, &sp, e), *v;
	const char *key;

	if (*e)
		return -1;
	if (!secrets)
		return 0;
	out->secrets = calloc(json_object_size(secrets), sizeof(*out->secrets));
	if (!out->secrets && json_object_size(secrets) > 0)
		return oom(e);
	json_object_foreach(secrets, key, v) {
		_cleanup_free_ char *kp = json_path_key(sp, key), *fp = NULL, *vp = NULL;
		struct host_secret *s = &out->secrets[out->n_secrets];
		json_t *file, *var;

		if (!kp || !(fp = json_path_key(kp, "file")) || !(vp = json_path_key(kp, "env")))
			return oom(e);
		if (!env_name_ok(key))
			return err_set(e, ERR_CONFIG, 0,
				       "%s: not a variable name (letters, digits, _; not a digit first)",
				       show(kp));
		if (env_has(out->env, key))
			return err_set(e, ERR_CONFIG, 0, "%s: also set in env: one of them", show(kp));
		/* the places the host compares (a grant's ~, claude's config
		 * dir) are read from the binding's env: a secret of that name
		 * would move them where no check looked */
		if (strcmp(key, "HOME") == 0 || strcmp(key, "CLAUDE_CONFIG_DIR") == 0)
			return err_set(e, ERR_CONFIG, 0,
				       "%s: a place the host checks, not a secret: set it in env",
				       show(kp));
		if (!json_is_object(v))
			return err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(kp));
		if (json_check_keys(v, kp, keys, e) < 0)
			return -1;
		file = json_object_get(v, "file");
		var = json_object_get(v, "env");
		if (!!file == !!var)
			return err_set(e, ERR_CONFIG, 0, "%s: needs one of file and env", show(kp));
		s->name = strdup(key);
		if (!s->name)
			return oom(e);
		out->n_secrets++;
		if (file && absolute_path(file, fp, &s->file, e) < 0)
			return -1;
		if (var) {
			const char *name = string_at(var, vp, e);

			if (!name)
				return -1;
			if (!env_name_ok(name))
				return err_set(e, ERR_CONFIG, 0, "%s: not a variable name", show(vp));
			s->env = strdup(name);
			if (!s->env)
				return oom(e);
		}
	}
	return 0;
}

/* A credential's host as git sends it: a name or an address (IPv6 in
 * brackets), then ":port" when it is not the scheme's; lower case. */
static bool cred_host_ok(const char *h)
{
	size_t n = strlen(h);

	if (n == 0 || n > 255 || h[0] == '-' || h[0] == '.' || h[0] == ':')
		return false;
	return strspn(h, "abcdefghijklmnopqrstuvwxyz0123456789.-:[]") == n;
}

/* "git": {"credentials": [{"host", "secret", "username"?, "path"?}]}:
 * each secret one of the binding's, served to git only. */
static int parse_git(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	static const char *const keys[] = { "credentials", NULL };
	static const char *const ckeys[] = { "host", "secret", "username", "path", NULL };
	_cleanup_free_ char *gp = NULL, *cp = NULL;
	json_t *g = object_at(b, path, "git", false, &gp, e), *creds, *v;
	size_t i;

	if (*e)
		return -1;
	if (!g)
		return 0;
	if (json_check_keys(g, gp, keys, e) < 0)
		return -1;
	cp = json_path_key(gp, "credentials");
	if (!cp)
		return oom(e);
	creds = json_object_get(g, "credentials");
	if (!json_is_array(creds) || json_array_size(creds) == 0 || json_array_size(creds) > 64)
		return err_set(e, ERR_CONFIG, 0, "%s: must be an array of 1 to 64 objects", show(cp));
	out->git_creds = calloc(json_array_size(creds), sizeof(*out->git_creds));
	if (!out->git_creds)
		return oom(e);
	json_array_foreach(creds, i, v) {
		_cleanup_free_ char *ip = json_path_index(cp, i), *hp = NULL, *sp = NULL,
				   *up = NULL, *pp = NULL;
		struct host_git_cred *c = &out->git_creds[out->n_git_creds];
		const char *host, *secret, *user = "x-access-token", *rpath = NULL;
		struct host_secret *s = NULL;

		if (!ip || !(hp = json_path_key(ip, "host")) || !(sp = json_path_key(ip, "secret")) ||
		    !(up = json_path_key(ip, "username")) || !(pp = json_path_key(ip, "path")))
			return oom(e);
		if (!json_is_object(v))
			return err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(ip));
		if (json_check_keys(v, ip, ckeys, e) < 0)
			return -1;
		if (!json_object_get(v, "host") || !json_object_get(v, "secret"))
			return err_set(e, ERR_CONFIG, 0, "%s: missing",
				       show(json_object_get(v, "host") ? sp : hp));
		if (!(host = string_at(json_object_get(v, "host"), hp, e)) ||
		    !(secret = string_at(json_object_get(v, "secret"), sp, e)) ||
		    (json_object_get(v, "username") &&
		     !(user = string_at(json_object_get(v, "username"), up, e))) ||
		    (json_object_get(v, "path") &&
		     !(rpath = string_at(json_object_get(v, "path"), pp, e))))
			return -1;
		if (!cred_host_ok(host))
			return err_set(e, ERR_CONFIG, 0,
				       "%s: a host as git names it: lower-case name or address, "
				       "\":port\" when not 443",
				       show(hp));
		for (size_t k = 0; k < out->n_secrets && !s; k++)
			if (strcmp(out->secrets[k].name, secret) == 0)
				s = &out->secrets[k];
		if (!s)
			return err_set(e, ERR_CONFIG, 0, "%s: names no secret of this binding", show(sp));
		if (!user[0] || strpbrk(user, "\n\r") || strlen(user) > 256)
			return err_set(e, ERR_CONFIG, 0, "%s: 1 to 256 characters, one line", show(up));
		while (rpath && rpath[0] == '/')
			rpath++;
		if (rpath && (!rpath[0] || strpbrk(rpath, "\n\r") || strlen(rpath) > 1024))
			return err_set(e, ERR_CONFIG, 0, "%s: a repository's path, one line", show(pp));
		s->git_only = true;
		c->secret = s;
		out->n_git_creds++;
		c->host = strdup(host);
		c->username = strdup(user);
		c->path = rpath ? strdup(rpath) : NULL;
		if (!c->host || !c->username || (rpath && !c->path))
			return oom(e);
	}
	/* git's settings from the environment are cordon's to give here
	 * (the helper): one layer, not two that race */
	for (size_t k = 0; out->env[k]; k++)
		if (strncmp(out->env[k], "GIT_CONFIG_COUNT=", 17) == 0 ||
		    strncmp(out->env[k], "GIT_CONFIG_KEY_", 15) == 0 ||
		    strncmp(out->env[k], "GIT_CONFIG_VALUE_", 17) == 0 ||
		    strncmp(out->env[k], "GIT_CONFIG_PARAMETERS=", 22) == 0) {
			_cleanup_free_ char *ep = json_path_key(path, "env");
			return err_set(e, ERR_CONFIG, 0,
				       "%s: sets git's GIT_CONFIG_* settings, which cordon sets for "
				       "git.credentials (git's credential helper): use the GIT_* "
				       "variables git reads (GIT_SSL_CAINFO, ...) instead",
				       ep ? show(ep) : "env");
		}
	/* the credentials are served by the git.credential operation */
	out->ops |= HOST_OP_GIT_CREDENTIAL;
	return 0;
}

static int parse_numbers(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	json_t *r = json_object_get(b, "retries"), *g = json_object_get(b, "grace");

	out->grace_ms = HOST_GRACE_DEFAULT_MS;
	if (r) {
		_cleanup_free_ char *rp = json_path_key(path, "retries");

		if (!rp)
			return oom(e);
		if (!json_is_integer(r) || json_integer_value(r) < 0 ||
		    json_integer_value(r) > (json_int_t)HOST_RETRIES_MAX)
			return err_set(e, ERR_CONFIG, 0, "%s: must be an integer from 0 to %u",
				       show(rp), HOST_RETRIES_MAX);
		out->retries = (unsigned int)json_integer_value(r);
	}
	if (g) {
		_cleanup_free_ char *gp = json_path_key(path, "grace");
		double s = json_is_number(g) ? json_number_value(g) : -1.0;

		if (!gp)
			return oom(e);
		if (!(s >= 0.0 && s <= HOST_GRACE_MAX_MS / 1000.0))
			return err_set(e, ERR_CONFIG, 0, "%s: must be seconds from 0 to %u",
				       show(gp), HOST_GRACE_MAX_MS / 1000);
		out->grace_ms = (unsigned int)(s * 1000.0 + 0.5);
	}
	return 0;
}

static void binding_clear(struct host_binding *b)
{
	free(b->name);
	strv_free(b->args);
	free(b->provider);
	json_decref(b->container);
	policy_free(b->policy);
	free(b->workspace);
	free(b->git_url);
	free(b->git_branch);
	strv_free(b->git_setup);
	for (size_t i = 0; i < b->n_git_creds; i++) {
		free(b->git_creds[i].host);
		free(b->git_creds[i].path);
		free(b->git_creds[i].username);
	}
	free(b->git_creds);
	strv_free(b->extra_args);
	free(b->claude_config_dir);
	free(b->home_seed);
	free(b->home);
	strv_free(b->env);
	for (size_t i = 0; i < b->n_secrets; i++) {
		free(b->secrets[i].name);
		free(b->secrets[i].file);
		free(b->secrets[i].env);
	}
	free(b->secrets);
	memset(b, 0, sizeof(*b));
}

static const char *const op_names[] = { "job.status", "job.output", "notify",
				       "git.credential" };

unsigned int host_op_bit(const char *name)
{
	for (unsigned int i = 0; i < sizeof(op_names) / sizeof(*op_names); i++)
		if (strcmp(name, op_names[i]) == 0)
			return 1u << i;
	return 0;
}

const char *host_op_name(unsigned int bit)
{
	for (unsigned int i = 0; i < sizeof(op_names) / sizeof(*op_names); i++)
		if (bit == 1u << i)
			return op_names[i];
	return "?";
}

/* "operations": the toolbelt's, by name, each known. */
static int parse_ops(json_t *b, const char *path, struct host_binding *out, struct err **e)
{
	_cleanup_free_ char *op = json_path_key(path, "operations");
	_cleanup_strv_ char **names = NULL;

	if (!op)
		return oom(e);
	if (strings_at(b, path, "operations", true, &names, e) < 0)
		return -1;
	for (size_t i = 0; names && names[i]; i++) {
		unsigned int bit = host_op_bit(names[i]);
		_cleanup_free_ char *ip = json_path_index(op, i);

		if (!ip)
			return oom(e);
		if (!bit)
			return err_set(e, ERR_CONFIG, 0,
				       "%s: not an operation (job.status, job.output, notify, "
				       "git.credential)",
				       show(ip));
		out->ops |= bit;
	}
	return 0;
}

static int parse_binding(const char *name, json_t *v, const char *path, struct host_binding *out,
			 struct err **e)
{
	static const char *const keys[] = { "executor", "workspace", "sandbox", "container",
					    "env", "secrets", "retries", "grace", "operations",
					    "git", NULL };

	if (!binding_name_ok(name))
		return err_set(e, ERR_CONFIG, 0,
			       "%s: a binding's name is 1 to %d letters, digits, '.', '_' or '-', "
			       "a letter or digit first",
			       show(path), HOST_BINDING_NAME_MAX);
	if (!json_is_object(v))
		return err_set(e, ERR_CONFIG, 0, "%s: must be an object", show(path));
	if (json_check_keys(v, path, keys, e) < 0)
		return -1;
	out->name = strdup(name);
	out->env = calloc(1, sizeof(char *));
	if (!out->name || !out->env)
		return oom(e);
	if (parse_executor(v, path, out, e) < 0 || parse_workspace(v, path, out, e) < 0 ||
	    parse_sandbox(v, path, out, e) < 0 || parse_env(v, path, out, e) < 0 ||
	    parse_secrets(v, path, out, e) < 0 || parse_numbers(v, path, out, e) < 0 ||
	    parse_ops(v, path, out, e) < 0 || parse_git(v, path, out, e) < 0 ||
	    check_git_workspace(path, out, e) < 0 || check_claude_config(path, out, e) < 0)
		return -1;
	return 0;
}

static int binding_cmp(const void *a, const void *b)
{
	return strcmp(((const struct host_binding *)a)->name,
		      ((const struct host_binding *)b)->name);
}

/* A remote account that runs isolation none work is one binding's only
 * (container/ssh/target.h). */
static int ssh_accounts(const struct host_config *c, struct err **e)
{
	_cleanup_json_ json_t *cs = json_array();
	_cleanup_free_ const char **names = calloc(c->n + 1, sizeof(*names));
	size_t n = 0;

	if (!cs || !names)
		return oom(e);
	for (size_t i = 0; i < c->n; i++)
		if (c->bindings[i].provider && strcmp(c->bindings[i].provider, "ssh") == 0 &&
		    c->bindings[i].container) {
			if (json_array_append(cs, c->bindings[i].container) < 0)
				return oom(e);
			names[n++] = c->bindings[i].name;
		}
	return sshcfg_accounts_check(cs, names, e);
}

json_t *host_config_launch_request(const struct host_config *c, const struct host_binding *b,
				   const struct provider *p)
{
	_cleanup_free_ json_t **peers = calloc(c->n + 1, sizeof(json_t *));
	_cleanup_free_ const char **names = calloc(c->n + 1, sizeof(*names));
	size_t n = 0;

	if (!peers || !names || !b->provider)
		return NULL;
	for (size_t i = 0; i < c->n; i++) {
		const struct host_binding *o = &c->bindings[i];

		if (strcmp(o->name, b->name) == 0 || !o->provider ||
		    strcmp(o->provider, b->provider) != 0 || !o->container)
			continue;
		peers[n] = o->container;
		names[n++] = o->name;
	}
	return p->launch_config(b->container, b->name, peers, names, n);
}

int host_config_parse(const char *buf, size_t len, struct host_config **out, struct err **e)
{
	static const char *const keys[] = { "bindings", "retention_days", NULL };
	_cleanup_json_ json_t *root = json_parse_strict(buf, len, e);
	_cleanup_free_ char *bp = NULL;
	struct host_config *c;
	json_t *bindings, *v;
	const char *name;

	if (!root)
		return -1;
	if (!json_is_object(root))
		return err_set(e, ERR_CONFIG, 0, "(root): must be an object");
	if (json_check_keys(root, "", keys, e) < 0)
		return -1;
	bindings = object_at(root, "", "bindings", true, &bp, e);
	if (!bindings)
		return -1;
	c = calloc(1, sizeof(*c));
	if (!c)
		return oom(e);
	c->bindings = calloc(json_object_size(bindings) + 1, sizeof(*c->bindings));
	if (!c->bindings) {
		free(c);
		return oom(e);
	}
	json_object_foreach(bindings, name, v) {
		_cleanup_free_ char *kp = json_path_key(bp, name);

		if (!kp || parse_binding(name, v, kp, &c->bindings[c->n++], e) < 0) {
			if (!kp)
				oom(e);
			host_config_free(c);
			return -1;
		}
	}
	qsort(c->bindings, c->n, sizeof(*c->bindings), binding_cmp);
	if (ssh_accounts(c, e) < 0) {
		host_config_free(c);
		return -1;
	}
	c->retention_ms = HOST_RETENTION_DEFAULT_DAYS * 86400000ULL;
	v = json_object_get(root, "retention_days");
	if (v && (!json_is_number(v) || !(json_number_value(v) > 0.0) ||
		  json_number_value(v) > HOST_RETENTION_MAX_DAYS)) {
		host_config_free(c);
		return err_set(e, ERR_CONFIG, 0,
			       "retention_days: must be a number of days above 0, at most %u",
			       HOST_RETENTION_MAX_DAYS);
	}
	if (v)
		c->retention_ms = (unsigned long long)(json_number_value(v) * 86400000.0);
	/* across bindings: the operator's claude never reads what a
	 * sandboxed one writes */
	if (host_config_check_places(c, e) < 0) {
		host_config_free(c);
		return -1;
	}
	*out = c;
	return 0;
}

int host_config_load(const char *path, struct host_config **out, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0;

	if (fd < 0)
		return err_set(e, ERR_CONFIG, errno, "config `%s`", path);
	if (fs_read_fd(fd, path, HOST_CONFIG_MAX, &buf, &len, e) < 0)
		return err_reclass(e, ERR_CONFIG);
	if (host_config_parse(buf, len, out, e) < 0)
		return err_wrap(e, "config `%s`", path);
	return 0;
}

void host_config_free(struct host_config *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		binding_clear(&c->bindings[i]);
	free(c->bindings);
	free(c);
}

const struct host_binding *host_config_find(const struct host_config *c, const char *name)
{
	struct host_binding key = { .name = (char *)name };

	if (!c || c->n == 0)
		return NULL;
	return bsearch(&key, c->bindings, c->n, sizeof(*c->bindings), binding_cmp);
}

const struct host_git_cred *host_git_cred_find(const struct host_binding *b, const char *protocol,
					       const char *host, const char *path)
{
	if (!protocol || strcmp(protocol, "https") != 0 || !host)
		return NULL;
	while (path && path[0] == '/')
		path++;
	for (size_t i = 0; i < b->n_git_creds; i++) {
		const struct host_git_cred *c = &b->git_creds[i];

		if (strcasecmp(c->host, host) != 0)
			continue;
		if (c->path && (!path || strcmp(c->path, path) != 0))
			continue;
		return c;
	}
	return NULL;
}

const char *host_executor_name(enum host_executor x)
{
	return x == HOST_EXEC_CLAUDE_CODE ? "claude-code" : "shell";
}

int host_secret_value(const struct host_secret *s, char **out, struct err **e)
{
	*out = NULL;
	if (s->env) {
		const char *v = getenv(s->env);

		if (!v)
			return err_set(e, ERR_CONFIG, 0,
				       "secret `%s`: the daemon's environment has no %s", s->name,
				       s->env);
		*out = strdup(v);
		return *out ? 0 : oom(e);
	}
	_cleanup_close_ int fd = open(s->file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	size_t len = 0;

	if (fd < 0)
		return err_set(e, ERR_CONFIG, errno, "secret `%s`: its file", s->name);
	if (fs_read_fd(fd, "secret", SECRET_MAX, out, &len, e) < 0) {
		err_free(*e);
		*e = NULL;
		return err_set(e, ERR_CONFIG, 0, "secret `%s`: its file cannot be read (at most %zu bytes)",
			       s->name, SECRET_MAX);
	}
	if (strlen(*out) != len) {
		explicit_bzero(*out, len);
		free(*out);
		*out = NULL;
		return err_set(e, ERR_CONFIG, 0, "secret `%s`: its file holds a NUL byte", s->name);
	}
	if (len > 0 && (*out)[len - 1] == '\n')
		(*out)[len - 1] = '\0';
	return 0;
}
