/* request.c: what the daemon hands a wrapper (see daemon.h): its
 * environment (the daemon's less every binding's secrets' sources, the
 * binding's env, its secrets' values), the request on its control socket
 * (the policy, env and secrets by name, the executor's part, a clone),
 * the job's run dir and git's credential helper. */
#include "daemon/internal.h"
#include "executor/executor.h"
#include "host/config.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "policy/policy.h"
#include "provider/provider.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

/* What an unsandboxed command takes of the daemon's environment: who and
 * where it is, nothing more. The rest (the sources of other bindings'
 * secrets among it) stays with the daemon. */
static bool base_variable(const char *kv)
{
	static const char *const names[] = { "PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG",
					     "TZ", "TMPDIR", "XDG_RUNTIME_DIR", NULL };
	size_t n = strcspn(kv, "=");

	if (kv[n] != '=')
		return false;
	if (strncmp(kv, "LC_", 3) == 0)
		return true;
	for (size_t i = 0; names[i]; i++)
		if (strlen(names[i]) == n && strncmp(kv, names[i], n) == 0)
			return true;
	return false;
}

/* Does the binding's env, the executor's or a secret of the binding's
 * set the variable of kv? */
static bool env_set_by(const struct host_binding *b, const struct host_exec *x, const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (int k = 0; k < 2; k++) {
		char *const *v = k == 0 ? b->env : x->env;

		for (size_t i = 0; v && v[i]; i++)
			if (strncmp(v[i], kv, n) == 0 && v[i][n] == '=')
				return true;
	}
	for (size_t i = 0; i < b->n_secrets; i++)
		if (!b->secrets[i].git_only && strlen(b->secrets[i].name) == n &&
		    strncmp(b->secrets[i].name, kv, n) == 0)
			return true;
	return false;
}

/* Is the variable of kv one that a binding's secret names, as its source
 * ({"env": NAME}) or as the name it is given (a git credential's too)?
 * Such a variable of the daemon's environment is a secret, of whichever
 * binding names it: it reaches a job only as that binding's secret, by
 * value, never as the daemon's variable, whatever the policy passes. */
static bool secret_variable(const struct host_config *cfg, const struct host_binding *b,
			    const char *kv)
{
	size_t n = strcspn(kv, "=");

	for (size_t k = 0; k <= (cfg ? cfg->n : 0); k++) {
		const struct host_binding *o = k < (cfg ? cfg->n : 0) ? &cfg->bindings[k] : b;

		for (size_t i = 0; i < o->n_secrets; i++) {
			const struct host_secret *s = &o->secrets[i];

			if ((s->env && strlen(s->env) == n && strncmp(s->env, kv, n) == 0) ||
			    (strlen(s->name) == n && strncmp(s->name, kv, n) == 0))
				return true;
		}
	}
	return false;
}

/* The wrapper's environment: the daemon's (under a sandbox, whose policy
 * says what passes; without one, only its base variables) less every
 * variable a binding of the config, as it is now, names as a secret
 * (secret_variable), the binding's env, and the values of its secrets
 * (read now; they go nowhere else). */
static char **env_of(const struct host_config *cfg, const struct host_binding *b,
		     const struct host_exec *x, struct err **e)
{
	char **env = NULL;

	/* (a variable the binding, the executor or a secret sets is theirs:
	 * the daemon's of that name is left out, never shadowing it) */
	for (size_t i = 0; environ[i]; i++)
		if ((b->provider || base_variable(environ[i])) && !env_set_by(b, x, environ[i]) &&
		    !secret_variable(cfg, b, environ[i]) && strv_push(&env, environ[i]) < 0)
			goto oom;
	for (size_t i = 0; b->env[i]; i++)
		if (strv_push(&env, b->env[i]) < 0)
			goto oom;
	for (size_t i = 0; x->env && x->env[i]; i++)
		if (strv_push(&env, x->env[i]) < 0)
			goto oom;
	for (size_t i = 0; i < b->n_secrets; i++) {
		_cleanup_free_ char *v = NULL;
		char *kv = NULL;

		/* (a git credential's is served to git alone, by the toolbelt) */
		if (b->secrets[i].git_only)
			continue;
		if (host_secret_value(&b->secrets[i], &v, e) < 0) {
			strv_free(env);
			return NULL;
		}
		if (asprintf(&kv, "%s=%s", b->secrets[i].name, v) < 0) {
			explicit_bzero(v, strlen(v));
			goto oom;
		}
		explicit_bzero(v, strlen(v));
		if (strv_push_take(&env, kv) < 0)
			goto oom;
	}
	if (!env && strv_push(&env, "PATH=/usr/bin:/bin") < 0)
		goto oom;
	return env;
oom:
	strv_free(env);
	err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	return NULL;
}

char **hostd_wrapper_env(struct hostd *d, const struct host_binding *b,
			  const struct host_exec *x, struct err **e)
{
	struct host_config *cfg = NULL;
	char **env;

	/* (read again: a binding added since b's config was read names its
	 * sources too; b's own are looked at whatever the file says now) */
	if (host_config_load(d->config, &cfg, e) < 0)
		return NULL;
	env = env_of(cfg, b, x, e);
	host_config_free(cfg);
	return env;
}

/* The wrapper's request: the binding's policy, its env and secrets passed
 * by name (their values are in the wrapper's environment only). */
/* The names of the variables the binding and the executor give the
 * command, and of its secrets: passed by name, never by value. */
static json_t *env_names(const struct host_binding *b, const struct host_exec *x)
{
	json_t *names = json_array();

	for (int k = 0; k < 2; k++) {
		char *const *v = k == 0 ? b->env : x->env;

		for (size_t i = 0; names && v && v[i]; i++) {
			_cleanup_free_ char *name = strndup(v[i], strcspn(v[i], "="));
			if (name)
				json_array_append_new(names, json_string(name));
		}
	}
	for (size_t i = 0; names && i < b->n_secrets; i++)
		if (!b->secrets[i].git_only)
			json_array_append_new(names, json_string(b->secrets[i].name));
	return names;
}

/* The executor's part of a request: its needs and its first input. */
static json_t *with_exec(json_t *req, const struct host_exec *x)
{
	if (req && x->needs && json_object_set(req, "needs", x->needs) < 0) {
		json_decref(req);
		return NULL;
	}
	if (req && x->stdin_text && json_object_set_new(req, "stdin", json_string(x->stdin_text)) < 0) {
		json_decref(req);
		return NULL;
	}
	return req;
}

/* The binding's container config for its wrapper: with the config's
 * other bindings of its provider when the provider takes them (ssh's
 * account check; read again: one added since b's config was read
 * counts). NULL: the config cannot be read, or no memory. */
static json_t *container_request(struct hostd *d, const struct host_binding *b)
{
	const struct provider *p = provider_find_kind(b->provider, PROVIDER_CONTAINER);
	struct host_config *cfg = NULL;
	struct err *e = NULL;
	json_t *c;

	if (!b->provider || !p || !p->launch_config)
		return json_incref(b->container);
	if (host_config_load(d->config, &cfg, &e) < 0) {
		err_free(e);
		return NULL;
	}
	c = host_config_launch_request(cfg, b, p);
	host_config_free(cfg);
	return c;
}

json_t *hostd_wrap_request(struct hostd *d, const struct host_binding *b, const char *job,
			    unsigned int n, const char *workspace, const struct host_exec *x)
{
	json_t *pol, *env, *pass, *argj = json_strv(x->argv);

	if (!b->provider) {
		/* no policy: the names of what its environment carries are
		 * recorded, never their values */
		json_t *names = env_names(b, x);

		return with_exec(argj && names
					 ? json_pack("{s:b, s:o, s:s, s:s, s:s, s:i, s:o, s:b, s:b}",
						     "unsandboxed", 1, "env_names", names, "workspace",
						     workspace, "state_dir", d->state, "execution", job,
						     "segment", (int)n, "argv", argj, "quiet", 1,
						     "job_dirs", 1)
					 : (json_decref(argj), json_decref(names), NULL),
				 x);
	}
	pol = policy_to_json(b->policy);

	if (!pol || !argj) {
		json_decref(pol);
		json_decref(argj);
		return NULL;
	}
	env = json_object_get(pol, "env");
	if (!env) {
		env = json_object();
		json_object_set_new(pol, "env", env);
	}
	pass = json_object_get(env, "pass");
	if (!pass) {
		pass = json_array();
		json_object_set_new(env, "pass", pass);
	}
	json_t *names = env_names(b, x);

	if (!names || json_array_extend(pass, names) < 0) {
		json_decref(names);
		json_decref(pol);
		json_decref(argj);
		return NULL;
	}
	json_decref(names);
	/* a container binding names its container, not a process provider */
	json_t *req = json_pack("{s:o, s:s, s:s, s:s, s:i, s:o, s:b, s:b}", "policy", pol,
				"workspace", workspace, "state_dir", d->state, "execution", job,
				"segment", (int)n, "argv", argj, "quiet", 1, "job_dirs", 1);
	if (req && (b->container ? json_object_set_new(req, "container", container_request(d, b))
				 : json_object_set_new(req, "provider", json_string(b->provider))) < 0) {
		json_decref(req);
		req = NULL;
	}
	return with_exec(req, x);
}

/* The job's run dir, with its input when it has one (the wrapper makes
 * the rest of the job's files). */
int hostd_job_run_dir(struct hostd *d, const char *job, const char *input, struct err **e)
{
	_cleanup_free_ char *run = NULL;
	_cleanup_close_ int dfd = -1;

	if (asprintf(&run, "%s/runs/%s/run", d->state, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "run dir");
	if (mkdir(run, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run);
	dfd = fs_open_nofollow(AT_FDCWD, run, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run);
	return input ? fs_write_atomic(dfd, "input", input, strlen(input), 0600, false, e) : 0;
}

int hostd_git_helper_env(struct hostd *d, struct host_exec *x)
{
	char *kv = NULL;

	if (strchr(d->self, '\'') ||
	    asprintf(&kv, "GIT_CONFIG_VALUE_1=!'%s' tb git-credential", d->self) < 0)
		return -1;
	if (strv_push_take(&x->env, kv) < 0)
		return -1;
	static const char *const fixed[] = { "GIT_CONFIG_COUNT=3", "GIT_CONFIG_KEY_0=credential.helper",
					     "GIT_CONFIG_VALUE_0=", "GIT_CONFIG_KEY_1=credential.helper",
					     "GIT_CONFIG_KEY_2=credential.useHttpPath",
					     "GIT_CONFIG_VALUE_2=true", "GIT_TERMINAL_PROMPT=0", NULL };
	for (size_t i = 0; fixed[i]; i++)
		if (strv_push(&x->env, fixed[i]) < 0)
			return -1;
	return 0;
}

/* What the wrapper clones: {"url", "branch", "mode", "helper"?,
 * "setup"?}. */
json_t *hostd_clone_request(struct hostd *d, const struct host_binding *b, bool toolbelt)
{
	static const char *const modes[] = { "clone", "worktree", "shared" };
	json_t *c = json_pack("{s:s, s:s, s:s}", "url", b->git_url, "branch", b->git_branch, "mode",
			      modes[b->git_mode]);

	if (c && toolbelt && b->n_git_creds > 0)
		json_object_set_new(c, "helper", json_string(d->self));
	if (c && b->git_setup)
		json_object_set_new(c, "setup", json_strv(b->git_setup));
	return c;
}

/* A wrapper's environment, its secrets' values wiped before it goes. */
void hostd_env_scrub_free(char **env)
{
	for (size_t i = 0; env && env[i]; i++)
		explicit_bzero(env[i], strlen(env[i]));
	strv_free(env);
}
