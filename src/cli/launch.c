/* launch.c: the options launching subcommands share, and the policy they
 * name; the launch itself is the host's sequence (host/launch.c). */
#include "cli/launch.h"
#include "lib/cleanup.h"
#include "lib/strv.h"
#include "policy/policy.h"

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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

int launch_prepare(const struct launch_opts *o, struct host_launch *l, struct err **e)
{
	_cleanup_policy_ struct policy *pol = NULL;
	struct host_launch_req req;

	memset(l, 0, sizeof(*l));
	if (load_policy(o, &pol, e) < 0)
		return -1;
	/* a process sandbox's: none is never `cordon run`'s */
	req = (struct host_launch_req){ .policy = pol, .workspace = o->workspace,
					.state_dir = o->state_dir, .argv = o->argv,
					.prov = provider_find_kind(o->provider, PROVIDER_PROCESS),
					.defer_record = o->defer_record };
	if (!req.prov) {
		char known[128];

		return err_set(e, ERR_USAGE, 0, "unknown provider `%s` (known: %s)", o->provider,
			       provider_names(PROVIDER_PROCESS, known, sizeof(known)));
	}
	return host_launch_prepare(&req, l, e);
}
