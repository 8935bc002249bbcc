/* none.c: the provider of no sandbox (none.h): its plan (what ran, where,
 * the names of its environment, never a value) and its run, the command
 * as a child of the wrapper with the stops held back. */
#include "sandbox/none/none.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/sigfwd.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* cordon's own status when the command could not be started (env(1)'s). */
#define NONE_EXIT_CORDON 125

/* What an unsandboxed launch records: the command (p->argv, the host's),
 * where it runs, the names of what its environment carries (never a
 * value), and that no sandbox held it. g is NULL: nothing is granted. */
static int none_plan(const struct grant *g, const struct plan_paths *paths,
		     const struct provider_launch *pl, struct plan *p, struct err **e)
{
	static char *const none[] = { NULL };

	p->signals = PLAN_SIGNALS_TERM;
	p->env = calloc(1, sizeof(char *));
	if (!p->argv || !p->env ||
	    asprintf(&p->summary, "no sandbox: runs as uid %u in %s", (unsigned int)getuid(),
		     pl->workspace) < 0) {
		p->summary = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan");
	}
	json_t *argv = json_strv(p->argv),
	       *names = json_strv(pl->env_names ? pl->env_names : none);
	if (!argv || !names) {
		json_decref(argv);
		json_decref(names);
		return err_set(e, ERR_CONFIG, 0,
			       "argv or an environment name is not valid UTF-8; a plan records it as text");
	}
	json_decref(argv);
	p->data = json_pack("{s:s, s:s, s:s, s:o}", "sandbox", "none", "workspace", pl->workspace,
			    "run_dir", paths->run_dir, "env", names);
	if (!p->data)
		return err_set(e, ERR_CONFIG, 0,
			       "the workspace cannot be recorded: its path is not valid UTF-8");
	return 0;
}

bool none_plan_is_none(const struct plan *p)
{
	const char *v = json_string_value(json_object_get(p->data, "sandbox"));

	return v && strcmp(v, "none") == 0;
}

/* Between create and wait: the plan and where it runs. */
struct provider_run {
	const struct plan *p;
	const char *workspace;
};

static int none_create(const struct grant *g, const struct plan *p,
		       const struct plan_paths *paths, const struct provider_launch *pl,
		       struct provider_run **run, json_t **pin, struct err **e)
{
	struct provider_run *r = malloc(sizeof(*r));

	if (!r)
		return err_set(e, ERR_INTERNAL, ENOMEM, "launch");
	*r = (struct provider_run){ p, pl->workspace };
	*run = r;
	return 0;
}

static void none_discard(struct provider_run *run)
{
	free(run);
}

/* The command as a child of this process (the wrapper, which leads its
 * process group), in the workspace, with this process's environment and
 * the plan's. The wrapper holds back the signals a stop sends the group,
 * so that it outlives the command and writes its status; the command
 * gets them. */
static int run_unsandboxed(const struct plan *plan, const char *workspace, struct err **e)
{
	_cleanup_strv_ char **env = NULL;
	_cleanup_close_ int rfd = -1;
	sigset_t stops, none;
	int pfd[2], status = 0, child_errno = 0;
	ssize_t n;
	pid_t pid;

	for (size_t i = 0; environ[i]; i++)
		if (strv_push(&env, environ[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	for (size_t i = 0; plan->env[i]; i++)
		if (strv_push(&env, plan->env[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	if (!env && strv_push(&env, "PATH=/usr/bin:/bin") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	sigemptyset(&none);
	sigemptyset(&stops);
	sigfwd_add(&stops, SIGFWD_STOP);
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "launch");
	sigprocmask(SIG_BLOCK, &stops, NULL);
	pid = fork();
	if (pid == 0) {
		int err;

		sigprocmask(SIG_SETMASK, &none, NULL);
		if (chdir(workspace) < 0) {
			err = -errno;
		} else {
			execvpe(plan->argv[0], plan->argv, env);
			err = errno;
		}
		(void)!write(pfd[1], &err, sizeof(err));
		_exit(err < 0 ? NONE_EXIT_CORDON : err == ENOENT ? 127 : 126);
	}
	close(pfd[1]);
	rfd = pfd[0];
	if (pid < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "launch");
	do
		n = read(rfd, &child_errno, sizeof(child_errno));
	while (n < 0 && errno == EINTR);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, ERR_UNAVAILABLE, errno, "launch: wait");
	if (n == (ssize_t)sizeof(child_errno) && child_errno < 0)
		return err_set(e, ERR_UNAVAILABLE, -child_errno, "workspace `%s`", workspace);
	if (n == (ssize_t)sizeof(child_errno))
		fprintf(stderr, "cordon: `%s`: %s\n", plan->argv[0],
			child_errno == ENOENT ? "not found" : strerror(child_errno));
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

static int none_wait(struct provider_run *run, struct provider_exit *x, struct err **e)
{
	int code = run_unsandboxed(run->p, run->workspace, e);

	free(run);
	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code };
	return 0;
}

const struct provider none_provider = {
	.name = "none",
	.kind = PROVIDER_NONE,
	.plan = none_plan,
	.create = none_create,
	.wait = none_wait,
	.discard = none_discard,
};
