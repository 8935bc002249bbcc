/* executor.c: what a binding's executor runs and needs (see executor.h). */
#include "executor/executor.h"

#include "container/contract.h"

#include "host/feeder.h"
#include "host/launch.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/place.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int host_find_program(const char *name, char **out)
{
	const char *path = getenv("PATH");
	_cleanup_free_ char *copy = strdup(path && path[0] ? path : "/usr/local/bin:/usr/bin:/bin");
	char *save = NULL;

	*out = NULL;
	if (!copy)
		return -1;
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *cand = NULL;

		if (dir[0] != '/')
			continue; /* a relative PATH entry names nothing fixed */
		cand = fs_path_join(dir, name);
		if (!cand)
			return -1;
		if (access(cand, X_OK) == 0) {
			*out = cand;
			cand = NULL;
			return 0;
		}
	}
	return -1;
}

int host_claude_path(char **out, struct err **e)
{
	if (host_find_program("claude", out) == 0)
		return 0;
	return err_set(e, ERR_UNAVAILABLE, 0,
		       "claude-code: `claude` is not on the daemon's PATH (npm install -g "
		       "@anthropic-ai/claude-code)");
}

/* Is dir_real the operator's claude config under home, inside it or
 * holding it: by identity (lib/place.h), so a link, a bind mount or any
 * other spelling of ~/.claude is it. -1 when it cannot be told (taken as
 * a yes). */
static int reaches_operator_claude(const char *dir_real, const char *home, struct err **e)
{
	static const char *const names[] = { ".claude", ".claude.json" };

	for (size_t i = 0; i < 2; i++) {
		_cleanup_free_ char *p = fs_path_join(home, names[i]);
		int r = p ? place_overlap(dir_real, p, e) : err_set(e, ERR_INTERNAL, ENOMEM, "path");

		if (r != 0)
			return r;
	}
	return 0;
}

/* The binding's config directory, made if missing (0700), with its links
 * followed: never the operator's ~/.claude or ~/.claude.json, nor holding
 * or inside either, under the daemon's home or the binding's. */
static int claude_config_dir(const struct host_binding *b, char **out, struct err **e)
{
	const char *home = NULL;
	char real[PATH_MAX];

	if (host_home_dir(&home, e) < 0)
		return -1;
	if (mkdir(b->claude_config_dir, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "claude-code: the config directory `%s`",
			       b->claude_config_dir);
	if (!realpath(b->claude_config_dir, real))
		return err_set(e, ERR_UNAVAILABLE, errno, "claude-code: the config directory `%s`",
			       b->claude_config_dir);
	int r = reaches_operator_claude(real, home, e);

	if (r == 0 && b->home)
		r = reaches_operator_claude(real, b->home, e);
	if (r < 0)
		return err_wrap(e, "claude-code: the config directory `%s`", b->claude_config_dir);
	if (r > 0)
		return err_set(e, ERR_DENIED, 0,
			       "claude-code: the config directory `%s` resolves to `%s`, which is, "
			       "holds or lies inside the operator's ~/.claude or ~/.claude.json",
			       b->claude_config_dir, real);
	*out = strdup(real);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "claude-code");
}

/* The operator's ~/.claude and ~/.claude.json (under the daemon's home
 * and a HOME the binding sets), where they lie with links followed (the
 * grant's rules are): denied to every sandboxed binding, whatever its
 * executor. The operator's own claude, outside any sandbox, runs the
 * hooks and servers it finds there. */
static json_t *operator_claude_denies(const struct host_binding *b, struct err **e)
{
	const char *home = NULL;
	json_t *deny = json_array();

	if (!deny || host_home_dir(&home, e) < 0) {
		json_decref(deny);
		if (!deny)
			err_set(e, ERR_INTERNAL, ENOMEM, "needs");
		return NULL;
	}
	for (int k = 0; k < 2; k++) {
		const char *h = k == 0 ? home : b->home;

		for (int f = 0; h && f < 2; f++) {
			_cleanup_free_ char *p = fs_path_join(h, f ? ".claude.json" : ".claude");
			_cleanup_free_ char *canon = NULL;

			if (!p || fs_canonical(p, &canon, e) < 0 ||
			    json_array_push_string(deny, canon) < 0) {
				json_decref(deny);
				if (!*e)
					err_set(e, ERR_CONFIG, 0, "a home is not valid UTF-8");
				return NULL;
			}
		}
	}
	return deny;
}

static int claude_needs(const struct host_binding *b, const char *config_dir, json_t **out,
			struct err **e)
{
	json_t *deny = operator_claude_denies(b, e);

	if (!deny)
		return err_wrap(e, "claude-code");
	*out = json_pack("{s:[s], s:o, s:[s]}", "write", config_dir, "deny", deny, "hosts",
			 HOST_CLAUDE_API_HOST);
	return *out ? 0 : err_set(e, ERR_CONFIG, 0, "claude-code: a path is not valid UTF-8");
}

static char *joined(char *const *v)
{
	size_t n = 1;
	char *out, *p;

	for (size_t i = 0; v && v[i]; i++)
		n += strlen(v[i]) + 1;
	out = calloc(1, n);
	if (!out)
		return NULL;
	p = out;
	for (size_t i = 0; v && v[i]; i++)
		p += sprintf(p, "%s%s", i ? " " : "", v[i]);
	return out;
}

/* claude's MCP config: the toolbelt's server, `cordon tb mcp`. */
static int mcp_config(const char *run_dir, const char *cordon, char **out, struct err **e)
{
	_cleanup_json_ json_t *j = json_pack("{s:{s:{s:s, s:[s, s]}}}", "mcpServers", "cordon",
					     "command", cordon, "args", "tb", "mcp");
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, run_dir, O_PATH | O_DIRECTORY, 0);

	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mcp config");
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run_dir);
	if (fs_write_atomic(dfd, "mcp.json", text, strlen(text), 0600, false, e) < 0)
		return -1;
	*out = fs_path_join(run_dir, "mcp.json");
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "mcp config");
}

/* In a container: claude from the image's PATH, the job's home as its
 * HOME and config directory (the container mounts it), the container's
 * /tmp for its temporary files; it needs only the API host. */
static int claude_in_container(const struct host_binding *b, const char *home,
			       struct host_exec *x, struct err **e)
{
	json_t *deny = NULL;

	if (!home)
		return err_set(e, ERR_INTERNAL, 0, "claude-code in a container: no home");
	/* (HOME and CLAUDE_CONFIG_DIR are the provider's to set from the
	 * home it mounts: here HOME is the operator's, the policy's ~; the
	 * operator's claude config there is denied, as under a process
	 * provider: a grant mounts or copies back host paths) */
	if (b && !(deny = operator_claude_denies(b, e)))
		return err_wrap(e, "claude-code");
	x->needs = deny ? json_pack("{s:[s], s:o}", "hosts", HOST_CLAUDE_API_HOST, "deny", deny)
			: json_pack("{s:[s]}", "hosts", HOST_CLAUDE_API_HOST);
	if (!x->needs || strv_push(&x->argv, "claude") < 0 || strv_push(&x->env, "TMPDIR=/tmp") < 0 ||
	    strv_push(&x->env, "CLAUDE_CODE_TMPDIR=/tmp") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "claude-code");
	return 0;
}

static int build_claude(const struct host_binding *b, char *const *job_args, const char *run_dir,
			const char *session, const char *home, const char *tb_cordon,
			struct host_exec *x, struct err **e)
{
	static const char *const fixed[] = { "-p", "--output-format", "stream-json",
					     "--input-format", "stream-json", "--verbose", NULL };
	_cleanup_free_ char *claude = NULL, *tmp = NULL, *prompt = NULL, *dir = NULL;
	char *kv = NULL;

	prompt = joined(job_args ? job_args : b->args);
	if (!prompt)
		return err_set(e, ERR_INTERNAL, ENOMEM, "prompt");
	if (!prompt[0])
		return err_set(e, ERR_CONFIG, 0,
			       "claude-code: no prompt: give one (the job's args) or set the "
			       "binding's executor.prompt");
	if (b->container) {
		/* the toolbelt's MCP server is the container's own cordon */
		if (tb_cordon)
			tb_cordon = CONTAINER_RUNTIME_PATH;
		if (claude_in_container(b, home, x, e) < 0)
			return -1;
	} else if (host_claude_path(&claude, e) < 0 ||
		   (b->provider && (claude_config_dir(b, &dir, e) < 0 ||
				    claude_needs(b, dir, &x->needs, e) < 0))) {
		return -1;
	} else if (strv_push(&x->argv, claude) < 0) {
		return err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	}
	for (size_t i = 0; fixed[i]; i++)
		if (strv_push(&x->argv, fixed[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	for (size_t i = 0; b->extra_args && b->extra_args[i]; i++)
		if (strv_push(&x->argv, b->extra_args[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	if (session && (strv_push(&x->argv, "--resume") < 0 || strv_push(&x->argv, session) < 0))
		return err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	if (tb_cordon) {
		_cleanup_free_ char *mcp = NULL;

		if (mcp_config(run_dir, tb_cordon, &mcp, e) < 0)
			return -1;
		if (strv_push(&x->argv, "--mcp-config") < 0 || strv_push(&x->argv, mcp) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	}
	/* its temporary files in the segment's own directory (a
	 * container's in its own /tmp) */
	if (!b->container) {
		tmp = fs_path_join(run_dir, "tmp");
		if (!tmp)
			return err_set(e, ERR_INTERNAL, ENOMEM, "tmp");
		if (mkdir(tmp, 0700) < 0 && errno != EEXIST)
			return err_set(e, ERR_UNAVAILABLE, errno, "claude-code: `%s`", tmp);
		if (asprintf(&kv, "TMPDIR=%s", tmp) < 0 || strv_push_take(&x->env, kv) < 0 ||
		    asprintf(&kv, "CLAUDE_CODE_TMPDIR=%s", tmp) < 0 ||
		    strv_push_take(&x->env, kv) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	}
	if (strv_push(&x->env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	x->stdin_text = host_claude_user_message(prompt);
	if (!x->stdin_text)
		return err_set(e, ERR_CONFIG, 0, "claude-code: the prompt is not valid UTF-8");
	return 0;
}

int host_exec_attach(const struct host_binding *b, const char *session, const char *home,
		     struct host_exec *out, struct err **e)
{
	int r = 0;

	memset(out, 0, sizeof(*out));
	if (b->executor != HOST_EXEC_CLAUDE_CODE || !b->container || !session)
		return err_set(e, ERR_INTERNAL, 0, "attach: claude-code in a container, a session");
	if (claude_in_container(b, home, out, e) < 0)
		r = -1;
	for (size_t i = 0; r == 0 && b->extra_args && b->extra_args[i]; i++)
		if (strv_push(&out->argv, b->extra_args[i]) < 0)
			r = err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	if (r == 0 && (strv_push(&out->argv, "--resume") < 0 || strv_push(&out->argv, session) < 0 ||
		       strv_push(&out->env, "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1") < 0))
		r = err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	if (r < 0)
		host_exec_clear(out);
	return r;
}

int host_exec_build(const struct host_binding *b, char *const *job_args, const char *run_dir,
		    const char *session, const char *home, const char *toolbelt_cordon,
		    struct host_exec *out, struct err **e)
{
	int r;

	memset(out, 0, sizeof(*out));
	if (b->executor == HOST_EXEC_CLAUDE_CODE) {
		r = build_claude(b, job_args, run_dir, session, home, toolbelt_cordon, out, e);
	} else {
		char *const *v = job_args ? job_args : b->args;

		r = 0;
		if (!v || !v[0])
			return err_set(e, ERR_CONFIG, 0, "the binding names no args: give them");
		/* under any provider: never the operator's claude config (a
		 * container's grants are host paths too: a Docker mount, an
		 * SSH remote's copy back) */
		if (b->provider) {
			json_t *deny = operator_claude_denies(b, e);

			out->needs = deny ? json_pack("{s:o}", "deny", deny) : NULL;
			if (!out->needs)
				return deny ? err_set(e, ERR_INTERNAL, ENOMEM, "needs") : -1;
		}
		for (size_t i = 0; r == 0 && v[i]; i++)
			if (strv_push(&out->argv, v[i]) < 0)
				r = err_set(e, ERR_INTERNAL, ENOMEM, "argv");
	}
	if (r < 0)
		host_exec_clear(out);
	return r;
}

void host_exec_clear(struct host_exec *x)
{
	strv_free(x->argv);
	json_decref(x->needs);
	strv_free(x->env);
	free(x->stdin_text);
	memset(x, 0, sizeof(*x));
}
