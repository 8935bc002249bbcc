/* launch.c: the one sequence every launch goes through, whoever asks
 * (`cordon run`, `cordon plan`, the daemon): the paths, the guard, the
 * plan with the provider's part, its digest, and the record and pin.
 * Nothing reaches a provider that did not pass through here. */
#include "host/launch.h"
#include "guard/planted.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "lib/strv.h"
#include "sandbox/none/none.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int host_home_dir(const char **out, struct err **e)
{
	return host_home_from(getenv("HOME"), out, e);
}

int host_home_from(const char *h, const char **out, struct err **e)
{
	struct passwd *pw;

	if (!h || h[0] != '/') {
		pw = getpwuid(getuid());
		h = pw ? pw->pw_dir : NULL;
	}
	if (!h || h[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "HOME is not an absolute path");
	*out = h;
	return 0;
}

/* $XDG_<var>/cordon, else ~/<fallback>/cordon. */
static char *xdg_dir(const char *var, const char *home, const char *fallback)
{
	const char *x = getenv(var);
	char *out = NULL;

	if (x && x[0] == '/')
		return fs_path_join(x, "cordon");
	if (asprintf(&out, "%s/%s/cordon", home, fallback) < 0)
		return NULL;
	return out;
}

static int mkdir_p(const char *path, mode_t mode, struct err **e)
{
	_cleanup_free_ char *copy = strdup(path);

	if (!copy)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mkdir");
	for (char *p = copy + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(copy, 0755) < 0 && errno != EEXIST)
			return err_set(e, ERR_UNAVAILABLE, errno, "mkdir `%s`", copy);
		*p = '/';
	}
	if (mkdir(copy, mode) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "mkdir `%s`", copy);
	return 0;
}

static int canonical_dir(const char *path, char **out, struct err **e)
{
	char buf[PATH_MAX];

	if (!realpath(path, buf))
		return err_set(e, ERR_CONFIG, errno, "`%s`", path);
	*out = strdup(buf);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "path");
}

/* Record and pin; a launching caller (the sandbox root to be) pins its
 * own identity with the plan and leaves the fsync to the launch. */
static int record(struct host_launch *l, bool launching, struct err **e)
{
	struct plan_root root = { .pid = (int)getpid() };

	snprintf(root.provider, sizeof(root.provider), "%s", l->prov->name);

	if (launching && procfs_start_ticks(0, &root.start_ticks, e) < 0)
		return -1;
	if (plan_record(l->plan, &l->paths, launching ? &root : NULL, !launching, e) < 0)
		return -1;
	/* A plan nobody launches here still gets the provider's own files. */
	if (!launching && l->prov->record &&
	    l->prov->record(l->grant, l->plan, l->paths.record_dir, e) < 0)
		return -1;
	return 0;
}

/* A job's files in its run dir (a write grant of every segment): inbox/
 * (what inject leaves), outputs/, and input (empty unless the job gave
 * one, which the daemon wrote first). */
static int job_dirs(const char *run_dir, struct err **e)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, run_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_close_ int in = -1;

	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run_dir);
	if ((mkdirat(dfd, "inbox", 0700) < 0 && errno != EEXIST) ||
	    (mkdirat(dfd, "outputs", 0700) < 0 && errno != EEXIST))
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run_dir);
	/* made only when missing: what an earlier segment's sandbox left
	 * there (a FIFO, a link) is never opened */
	in = openat(dfd, "input", O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (in < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`: input", run_dir);
	return 0;
}

static int job_env(struct plan *p, const char *run_dir, struct err **e)
{
	static const char *const names[][2] = { { "CORDON_RUN", "" },
						{ "CORDON_INBOX", "/inbox" },
						{ "CORDON_OUTPUTS", "/outputs" },
						{ "CORDON_INPUT", "/input" } };

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++) {
		char *kv = NULL;

		if (asprintf(&kv, "%s=%s%s", names[i][0], run_dir, names[i][1]) < 0 ||
		    strv_push_take(&p->env, kv) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	}
	return 0;
}

/* none's plan: nothing granted (no policy, no guard); the provider
 * records the command, where it runs and the names of its environment. */
static int plan_none(const struct host_launch_req *o, struct host_launch *l, struct err **e)
{
	struct plan *p = calloc(1, sizeof(*p));

	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan");
	l->plan = p;
	p->argv = strv_dup(o->argv);
	return l->prov->plan(NULL, &l->paths, &l->pl, p, e);
}

bool host_plan_unsandboxed(const struct plan *p)
{
	return none_plan_is_none(p);
}

/* The guard's grant for the policy and the executor's needs, its plan,
 * and the provider's part of it. */
static int plan_sandboxed(const struct host_launch_req *o, struct host_launch *l,
			  const char *home, const char *config_canon, struct err **e)
{
	_cleanup_free_ char *own_dir = NULL;
	struct needs exec_needs = { 0 };
	struct guard_input in = { 0 };
	int r;

	if (l->prov->own_dir && !(own_dir = l->prov->own_dir(&l->paths)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	/* Every executor needs its workspace writable; the executor's own
	 * needs come with the request. */
	if (strv_push(&exec_needs.write, l->workspace) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "needs");
	if (o->needs) {
		const struct needs *n = o->needs;

		for (size_t i = 0; n->write && n->write[i]; i++)
			if (strv_push(&exec_needs.write, n->write[i]) < 0)
				goto oom;
		for (size_t i = 0; n->deny && n->deny[i]; i++)
			if (strv_push(&exec_needs.deny, n->deny[i]) < 0)
				goto oom;
		exec_needs.hosts = n->hosts;
		exec_needs.n_hosts = n->n_hosts;
	}
	in = (struct guard_input){
		.policy = o->policy,
		.executor = &exec_needs,
		.home = home,
		.workspace = l->workspace,
		.state_dir = l->state_dir,
		.run_dir = l->paths.run_dir,
		.config_path = config_canon,
		.provider_dir = own_dir,
		.toolbelt_dir = o->toolbelt_dir,
		.toolbelt_socket = o->toolbelt_socket,
		.defaults = { home, getenv("XDG_RUNTIME_DIR"), getenv("SSH_AUTH_SOCK"), getuid() },
	};
	r = guard_launch(&in, &l->grant, e);
	/* (the hosts are the request's) */
	exec_needs.hosts = NULL;
	exec_needs.n_hosts = 0;
	needs_free(&exec_needs);
	if (r == 0)
		r = plan_build(l->grant, o->argv, &l->plan, e);
	/* The provider wraps the command; the digest is the host's, after. */
	if (r == 0)
		r = l->prov->plan(l->grant, &l->paths, &l->pl, l->plan, e);
	return r;
oom:
	exec_needs.hosts = NULL;
	exec_needs.n_hosts = 0;
	needs_free(&exec_needs);
	return err_set(e, ERR_INTERNAL, ENOMEM, "needs");
}

int host_launch_prepare(const struct host_launch_req *o, struct host_launch *l,
			struct err **e)
{
	_cleanup_free_ char *state = NULL, *config = NULL, *exec_id = NULL;
	_cleanup_free_ char *config_canon = NULL;
	const char *home = NULL;
	int r;

	memset(l, 0, sizeof(*l));
	if (!o->prov)
		return err_set(e, ERR_INTERNAL, 0, "a launch names its provider");
	if (o->prov->kind == PROVIDER_NONE && o->policy)
		return err_set(e, ERR_INTERNAL, 0, "an unsandboxed launch takes no policy");
	if (o->prov->kind == PROVIDER_CONTAINER && !o->config)
		return err_set(e, ERR_INTERNAL, 0, "a container launch takes its config");
	l->prov = o->prov;
	if (host_home_dir(&home, e) < 0)
		return -1;
	state = o->state_dir ? strdup(o->state_dir) : xdg_dir("XDG_STATE_HOME", home, ".local/state");
	config = xdg_dir("XDG_CONFIG_HOME", home, ".config");
	if (!state || !config)
		return err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	if (mkdir_p(state, 0700, e) < 0 || canonical_dir(state, &l->state_dir, e) < 0 ||
	    fs_canonical(config, &config_canon, e) < 0 ||
	    canonical_dir(o->workspace ? o->workspace : ".", &l->workspace, e) < 0)
		return err_wrap(e, "prepare");
	if (o->execution && (!o->execution[0] ||
			     strspn(o->execution, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
						  "abcdefghijklmnopqrstuvwxyz-") !=
				     strlen(o->execution)))
		return err_set(e, ERR_INTERNAL, 0, "an execution id is letters, digits and '-'");
	if (o->execution ? !(exec_id = strdup(o->execution)) : plan_new_execution_id(&exec_id, e) < 0)
		return *e ? -1 : err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	if (plan_make_paths(l->state_dir, exec_id, o->segment ? o->segment : 1, &l->paths, e) < 0)
		return -1;
	if (o->job_dirs && job_dirs(l->paths.run_dir, e) < 0)
		return -1;
	l->pl = (struct provider_launch){ .config = o->config,
					  .state_dir = l->state_dir,
					  .workspace = l->workspace,
					  .toolbelt_dir = o->toolbelt_dir,
					  .home = o->home,
					  .env_names = o->env_names,
					  .terminal = o->terminal };
	/* nothing is granted without a sandbox: no guard */
	r = l->prov->kind == PROVIDER_NONE ? plan_none(o, l, e)
					   : plan_sandboxed(o, l, home, config_canon, e);
	/* where the job's files are (the environment is not hashed) */
	if (r == 0 && o->job_dirs)
		r = job_env(l->plan, l->paths.run_dir, e);
	if (r == 0)
		r = plan_digest(l->plan, l->plan->digest, e);
	if (r == 0)
		r = o->defer_record ? 0 : record(l, false, e);
	if (r < 0)
		plan_paths_remove(&l->paths); /* nothing of a refused launch stays */
	return r;
}

int host_launch_record(void *launch, struct err **e)
{
	return record(launch, true, e);
}

/* The provider's create, start and wait, the plan recorded (and pinned)
 * between create and start unless it was already: the command's status,
 * or -1 with *e when it never ran. */
static int launch(struct host_launch *l, bool recorded, struct err **e)
{
	struct provider_exit x = { 0 };
	int r = 0;

	if (!l->run)
		r = host_launch_create(l, e);
	if (r == 0 && !recorded)
		r = host_launch_record(l, e);
	if (r == 0 && l->prov->start)
		r = l->prov->start(l->run, e);
	if (r < 0) {
		host_launch_discard(l);
		return -1;
	}
	r = l->prov->wait(l->run, &x, e);
	l->run = NULL;
	l->interrupted = x.interrupted;
	return r < 0 ? -1 : x.code;
}

int host_launch_run(struct host_launch *l, bool quiet, bool recorded, FILE *notes,
		    struct err **e)
{
	struct planted_state *planted = NULL;
	struct err *perr = NULL;
	int code;

	l->pl.quiet = quiet;
	/* Without a sandbox the command is the operator's own: no look at
	 * what it leaves, and its record stays whatever happens. */
	if (l->prov->kind == PROVIDER_NONE) {
		code = launch(l, recorded, e);
		if (code < 0) {
			err_print(notes, *e);
			code = HOST_EXIT_CORDON;
		}
		return code;
	}

	/* What can change the host's git or tools by appearing in the
	 * workspace, as it stands before anything runs; nothing runs when
	 * it cannot be looked at. */
	if (planted_before(l->workspace, &planted, e) < 0) {
		err_print(notes, *e);
		plan_paths_remove(&l->paths);
		return HOST_EXIT_CORDON;
	}
	/* a container was created already (host_launch_create) and the
	 * plan recorded before it was */
	if (l->prov->kind == PROVIDER_CONTAINER && (!l->run || !recorded))
		code = err_set(e, ERR_INTERNAL, 0, "a container launch not created");
	else
		code = launch(l, recorded, e);
	if (code < 0)
		err_print(notes, *e);
	/* Whatever ran is done; before cordon reports, what it left for the
	 * host is moved out or named. The exit status stays the command's. */
	if (planted_after(planted, l->paths.record_dir, notes, &perr) < 0)
		err_print(notes, perr);
	err_free(perr);
	planted_state_free(planted);
	if (code < 0) {
		plan_paths_remove(&l->paths);
		code = HOST_EXIT_CORDON;
	}
	return code;
}

int host_launch_create(struct host_launch *l, struct err **e)
{
	if (l->run)
		return err_set(e, ERR_INTERNAL, 0, "a launch created already");
	return l->prov->create(l->grant, l->plan, &l->paths, &l->pl, &l->run, &l->pin, e);
}

void host_launch_discard(struct host_launch *l)
{
	if (l->run)
		l->prov->discard(l->run);
	l->run = NULL;
}

void host_launch_release(struct host_launch *l)
{
	if (l->run && l->prov->release)
		l->prov->release(l->run);
	else if (l->run)
		l->prov->discard(l->run);
	l->run = NULL;
}

void host_launch_clear(struct host_launch *l)
{
	host_launch_discard(l);
	json_decref(l->pin);
	grant_free(l->grant);
	plan_free(l->plan);
	plan_paths_clear(&l->paths);
	free(l->state_dir);
	free(l->workspace);
	memset(l, 0, sizeof(*l));
}
