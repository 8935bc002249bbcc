/* launch.c: policy, paths, guard, plan and record for one launch. */
#include "cli/launch.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/procfs.h"
#include "lib/strv.h"
#include "policy/policy.h"
#include "sandbox/provider.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { OPT_STATE = 256, OPT_WRITE, OPT_DENY_READ, OPT_ALLOW_HOST, OPT_PROVIDER,
       OPT_ALLOW_RANGE, OPT_LIMIT, OPT_PASS_ENV };

int launch_parse_args(int argc, char **argv, const char *usage,
		      struct launch_opts *o, int *help)
{
	static const struct option opts[] = {
		{ "policy", required_argument, NULL, 'p' },
		{ "workspace", required_argument, NULL, 'w' },
		{ "state-dir", required_argument, NULL, OPT_STATE },
		{ "write", required_argument, NULL, OPT_WRITE },
		{ "deny-read", required_argument, NULL, OPT_DENY_READ },
		{ "allow-host", required_argument, NULL, OPT_ALLOW_HOST },
		{ "provider", required_argument, NULL, OPT_PROVIDER },
		{ "allow-range", required_argument, NULL, OPT_ALLOW_RANGE },
		{ "limit", required_argument, NULL, OPT_LIMIT },
		{ "pass-env", required_argument, NULL, OPT_PASS_ENV },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	int c;

	*help = 0;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+p:w:qh", opts, NULL)) != -1) {
		int r = 0;

		switch (c) {
		case 'p':
			o->policy_file = optarg;
			break;
		case 'w':
			o->workspace = optarg;
			break;
		case OPT_STATE:
			o->state_dir = optarg;
			break;
		case OPT_WRITE:
			r = strv_push(&o->write, optarg);
			break;
		case OPT_DENY_READ:
			r = strv_push(&o->deny_read, optarg);
			break;
		case OPT_ALLOW_HOST:
			r = strv_push(&o->allow_host, optarg);
			break;
		case OPT_PROVIDER:
			o->provider = optarg;
			break;
		case OPT_ALLOW_RANGE:
			r = strv_push(&o->allow_range, optarg);
			break;
		case OPT_LIMIT:
			r = strv_push(&o->limit, optarg);
			break;
		case OPT_PASS_ENV:
			r = strv_push(&o->pass_env, optarg);
			break;
		case 'q':
			o->quiet = 1;
			break;
		case 'h':
			*help = 1;
			return 0;
		default:
			fprintf(stderr, "cordon: usage: unknown or incomplete option\n%s", usage);
			return -1;
		}
		if (r < 0) {
			fprintf(stderr, "cordon: error: out of memory\n");
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cordon: usage: no command given\n%s", usage);
		return -1;
	}
	return optind;
}

void launch_opts_clear(struct launch_opts *o)
{
	strv_free(o->write);
	strv_free(o->deny_read);
	strv_free(o->allow_host);
	strv_free(o->allow_range);
	strv_free(o->limit);
	strv_free(o->pass_env);
	memset(o, 0, sizeof(*o));
}

static int home_dir(const char **out, struct err **e)
{
	const char *h = getenv("HOME");
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

static int load_policy(const struct launch_opts *o, struct policy **out,
		       struct err **e)
{
	_cleanup_policy_ struct policy *p = NULL;
	int r = 0;

	r = o->policy_file ? policy_load_file(o->policy_file, &p, e) : policy_default(&p, e);
	if (r < 0)
		return -1;
	for (size_t i = 0; r == 0 && o->write && o->write[i]; i++)
		r = policy_add_path(&p->write, o->write[i], "--write", e);
	for (size_t i = 0; r == 0 && o->deny_read && o->deny_read[i]; i++)
		r = policy_add_path(&p->read_deny, o->deny_read[i], "--deny-read", e);
	for (size_t i = 0; r == 0 && o->allow_host && o->allow_host[i]; i++)
		r = policy_add_host(&p->net_allow, &p->n_net_allow, o->allow_host[i],
				    "--allow-host", e);
	for (size_t i = 0; r == 0 && o->allow_range && o->allow_range[i]; i++)
		r = policy_add_range(&p->allow_ranges, &p->n_allow_ranges, o->allow_range[i],
				     "--allow-range", e);
	for (size_t i = 0; r == 0 && o->limit && o->limit[i]; i++)
		r = policy_set_limit(&p->limits, o->limit[i], "--limit", e);
	for (size_t i = 0; r == 0 && o->pass_env && o->pass_env[i]; i++)
		r = policy_add_env_pass(&p->env_pass, o->pass_env[i], "--pass-env", e);
	if (r < 0)
		return -1;
	*out = steal_pointer(&p);
	return 0;
}

/* Record and pin; a launching caller (the sandbox root to be) pins its
 * own identity with the plan and leaves the fsync to the launch. */
static int record(struct launch *l, bool launching, struct err **e)
{
	struct plan_root root = { .pid = (int)getpid() };

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

int launch_prepare(const struct launch_opts *o, struct launch *l,
		   struct err **e)
{
	_cleanup_policy_ struct policy *pol = NULL;
	_cleanup_free_ char *state = NULL, *config = NULL, *exec_id = NULL;
	_cleanup_free_ char *config_canon = NULL, *own_dir = NULL;
	struct needs exec_needs = { 0 };
	struct guard_input in = { 0 };
	const char *home = NULL;
	int r;

	const struct provider *prov = provider_find(o->provider);

	memset(l, 0, sizeof(*l));
	if (!prov)
		return err_set(e, ERR_USAGE, 0, "unknown provider `%s` (known: %s)",
			       o->provider, provider_names);
	l->prov = prov;
	if (home_dir(&home, e) < 0 || load_policy(o, &pol, e) < 0)
		return -1;
	state = o->state_dir ? strdup(o->state_dir) : xdg_dir("XDG_STATE_HOME", home, ".local/state");
	config = xdg_dir("XDG_CONFIG_HOME", home, ".config");
	if (!state || !config)
		return err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	if (mkdir_p(state, 0700, e) < 0 || canonical_dir(state, &l->state_dir, e) < 0 ||
	    fs_canonical(config, &config_canon, e) < 0 ||
	    canonical_dir(o->workspace ? o->workspace : ".", &l->workspace, e) < 0)
		return err_wrap(e, "prepare");
	if (plan_new_execution_id(&exec_id, e) < 0 ||
	    plan_make_paths(l->state_dir, exec_id, 1, &l->paths, e) < 0)
		return -1;
	if (prov->own_dir && !(own_dir = prov->own_dir(&l->paths)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	/* The shell executor needs its workspace writable. */
	if (strv_push(&exec_needs.write, l->workspace) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "needs");
	in = (struct guard_input){
		.policy = pol,
		.executor = &exec_needs,
		.home = home,
		.workspace = l->workspace,
		.state_dir = l->state_dir,
		.run_dir = l->paths.run_dir,
		.config_path = config_canon,
		.provider_dir = own_dir,
		.defaults = { home, getenv("XDG_RUNTIME_DIR"), getenv("SSH_AUTH_SOCK"), getuid() },
	};
	r = guard_launch(&in, &l->grant, e);
	needs_free(&exec_needs);
	if (r == 0)
		r = plan_build(l->grant, o->argv, &l->plan, e);
	/* The provider wraps the command; the digest is the host's, after. */
	if (r == 0)
		r = prov->plan(l->grant, &l->paths, l->plan, e);
	if (r == 0)
		r = plan_digest(l->plan, l->plan->digest, e);
	if (r == 0)
		r = o->defer_record ? 0 : record(l, false, e);
	if (r < 0)
		plan_paths_remove(&l->paths); /* nothing of a refused launch stays */
	return r;
}

int launch_record(void *launch, struct err **e)
{
	return record(launch, true, e);
}

void launch_clear(struct launch *l)
{
	grant_free(l->grant);
	plan_free(l->plan);
	plan_paths_clear(&l->paths);
	free(l->state_dir);
	free(l->workspace);
	memset(l, 0, sizeof(*l));
}
