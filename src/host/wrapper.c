/* wrapper.c: the host-side process every daemon segment runs under (see
 * wrapper.h). It is the sandbox root: it prepares, records and pins the
 * plan with itself as the root, tells the daemon the pin, and launches
 * only on the daemon's word, so that the daemon holds the pin in its
 * database before anything runs. After the word it owes the daemon
 * nothing: it outlives it, in a session of its own. */
#include "host/wrapper.h"

#include "host/feeder.h"
#include "host/gitws.h"
#include "host/launch.h"
#include "host/logdrain.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "lib/strv.h"
#include "policy/host.h"
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define REQUEST_MAX ((size_t)256 * 1024)

/* A file of the record dir, written whole or not at all, read-only. */
static int write_record_file(const char *record_dir, const char *name, json_t *j,
			     struct err **e)
{
	_cleanup_free_ char *text = json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII);
	_cleanup_close_ int dfd = -1;

	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "%s", name);
	dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "record `%s`", record_dir);
	return fs_write_atomic(dfd, name, text, strlen(text), 0444, true, e);
}

static void send_json(int ctl, json_t *j)
{
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;

	if (text)
		(void)!send(ctl, text, strlen(text), MSG_NOSIGNAL);
}

static void send_refusal(int ctl, const struct err *e)
{
	_cleanup_json_ json_t *j = json_pack("{s:s, s:s}", "error",
					     e ? err_reason_name(e->reason) : "sandbox_unavailable",
					     "message", e && e->msg ? e->msg : "wrapper");

	send_json(ctl, j);
}

/* The request: what to launch, as host_launch_req says, the policy as a
 * policy document. */
struct request {
	json_t *root;
	struct policy *policy;
	char **argv;
	char **env_names;
	struct needs needs;
	const char *stdin_text;
	struct host_git_clone clone;	/* .url NULL: no clone */
	char **setup;
	struct host_launch_req req;
	bool quiet;
};

static const char *opt_string(json_t *root, const char *key)
{
	json_t *v = json_object_get(root, key);

	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v)
		       ? json_string_value(v)
		       : NULL;
}

/* An executor's needs: {"write", "deny", "hosts"}, each an array of
 * strings (paths absolute). */
static int read_needs(json_t *n, struct needs *out, struct err **e)
{
	static const char *const keys[] = { "write", "deny", "hosts", NULL };
	const char *key;
	json_t *v;

	if (!json_is_object(n))
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: needs: must be an object");
	json_object_foreach(n, key, v) {
		size_t k = 0;
		char **list = NULL;

		while (keys[k] && strcmp(keys[k], key) != 0)
			k++;
		if (!keys[k] || json_to_strv(v, &list) < 0) {
			strv_free(list);
			return err_set(e, ERR_CONFIG, 0, "wrapper: request: needs.%s: %s", key,
				       keys[k] ? "must be an array of strings" : "unknown key");
		}
		for (size_t i = 0; k < 2 && list[i]; i++)
			if (list[i][0] != '/') {
				strv_free(list);
				return err_set(e, ERR_CONFIG, 0,
					       "wrapper: request: needs.%s[%zu]: must be absolute", key, i);
			}
		if (k == 0)
			out->write = list;
		else if (k == 1)
			out->deny = list;
		for (size_t i = 0; k == 2 && list[i]; i++) {
			const char *why = NULL;
			struct host_pattern *h = realloc(out->hosts, (out->n_hosts + 1) * sizeof(*h));

			if (!h) {
				strv_free(list);
				return err_set(e, ERR_INTERNAL, ENOMEM, "needs");
			}
			out->hosts = h;
			if (host_parse(list[i], strlen(list[i]), &h[out->n_hosts], &why) < 0) {
				strv_free(list);
				return err_set(e, ERR_CONFIG, 0, "wrapper: request: needs.hosts[%zu]: %s",
					       i, why ? why : "not a host");
			}
			out->n_hosts++;
		}
		if (k == 2)
			strv_free(list);
	}
	return 0;
}

/* "clone": {"url", "branch", "mode"?, "helper"?, "setup"?}: the
 * workspace the first segment clones. A sandboxed launch takes a clone
 * alone and no setup command: both are refused here again, before
 * anything is made or run. */
static int read_clone(struct request *r, bool unsandboxed, struct err **e)
{
	static const char *const keys[] = { "url", "branch", "mode", "helper", "setup", NULL };
	json_t *c = json_object_get(r->root, "clone"), *v;
	const char *key;

	if (!json_is_object(c))
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: clone: must be an object");
	json_object_foreach(c, key, v) {
		size_t k = 0;

		while (keys[k] && strcmp(keys[k], key) != 0)
			k++;
		if (!keys[k])
			return err_set(e, ERR_CONFIG, 0, "wrapper: request: clone.%s: unknown key", key);
	}
	r->clone.url = opt_string(c, "url");
	r->clone.branch = opt_string(c, "branch");
	r->clone.helper = opt_string(c, "helper");
	if (!r->clone.url || !r->clone.branch || (json_object_get(c, "helper") && !r->clone.helper))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: clone: url and branch (and helper) are strings");
	/* (a worktree or shared clone commits through a .git outside the
	 * workspace: never for a sandbox, and not built without one) */
	const char *mode = opt_string(c, "mode");
	if (mode && strcmp(mode, "clone") != 0)
		return err_set(e, unsandboxed ? ERR_UNAVAILABLE : ERR_CONFIG, 0,
			       unsandboxed ? "the git workspace's %s mode is not built (clone is)"
					   : "a sandboxed binding takes a git workspace in clone mode "
					     "only, not %s",
			       mode);
	if (json_object_get(c, "setup")) {
		if (!unsandboxed)
			return err_set(e, ERR_CONFIG, 0,
				       "a sandboxed binding takes no setup command (it would run on "
				       "the host, in files the agent writes)");
		if (json_to_strv(json_object_get(c, "setup"), &r->setup) < 0 || !r->setup[0])
			return err_set(e, ERR_CONFIG, 0,
				       "wrapper: request: clone.setup: a non-empty array of strings");
	}
	return 0;
}

/* "container": the binding's container config, for the provider it
 * names, which this program must have (cordon-host's wrapper). */
static const struct provider *read_container(json_t *c, struct err **e)
{
	const char *name = json_string_value(json_object_get(c, "provider"));
	const struct provider *p = name ? provider_find_kind(name, PROVIDER_CONTAINER) : NULL;

	if (!json_is_object(c) || !name)
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: container: an object naming its provider"),
		       NULL;
	if (!p)
		err_set(e, ERR_UNAVAILABLE, 0,
			"wrapper: the container provider `%s` is not in this program", name);
	return p;
}

/* "provider": a process sandbox's, this program's (NULL: the default). */
static const struct provider *read_process(const char *name, struct err **e)
{
	const struct provider *p = provider_find_kind(name, PROVIDER_PROCESS);
	char known[128];

	if (!p)
		err_set(e, ERR_USAGE, 0, "unknown provider `%s` (known: %s)", name,
			provider_names(PROVIDER_PROCESS, known, sizeof(known)));
	return p;
}

/* "unsandboxed": the provider of no sandbox, which this program must
 * have. */
static const struct provider *read_none(struct err **e)
{
	for (size_t i = 0; providers[i]; i++)
		if (providers[i]->kind == PROVIDER_NONE)
			return providers[i];
	err_set(e, ERR_UNAVAILABLE, 0, "wrapper: a launch without a sandbox is not in this program");
	return NULL;
}

static int read_request(int ctl, struct request *r, struct err **e)
{
	static const char *const keys[] = { "policy", "workspace", "state_dir", "execution",
					    "segment", "argv", "provider", "quiet", "job_dirs",
					    "unsandboxed", "env_names", "needs", "stdin", "toolbelt",
					    "clone", "container", "home", "attach", NULL };
	_cleanup_free_ char *buf = malloc(REQUEST_MAX);
	json_t *argv, *v, *seg;
	const char *key;
	ssize_t n;
	size_t i;

	if (!buf)
		return err_set(e, ERR_INTERNAL, ENOMEM, "request");
	do
		n = recv(ctl, buf, REQUEST_MAX, MSG_TRUNC);
	while (n < 0 && errno == EINTR);
	if (n <= 0 || (size_t)n > REQUEST_MAX)
		return err_set(e, ERR_CONFIG, n < 0 ? errno : 0, "wrapper: no request, or too large");
	r->root = json_parse_strict(buf, (size_t)n, e);
	if (!r->root)
		return err_wrap(e, "wrapper: request");
	if (!json_is_object(r->root))
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: (root): must be an object");
	json_object_foreach(r->root, key, v) {
		size_t k = 0;

		while (keys[k] && strcmp(keys[k], key) != 0)
			k++;
		if (!keys[k])
			return err_set(e, ERR_CONFIG, 0, "wrapper: request: %s: unknown key", key);
	}
	bool unsandboxed = json_is_true(json_object_get(r->root, "unsandboxed"));
	if (unsandboxed) {
		/* nothing of a sandbox comes with it: a request that mixes
		 * the two is refused, never half run */
		if (json_object_get(r->root, "policy") || json_object_get(r->root, "provider"))
			return err_set(e, ERR_CONFIG, 0,
				       "wrapper: request: an unsandboxed launch takes no policy or provider");
		json_t *names = json_object_get(r->root, "env_names");

		if (names && json_to_strv(names, &r->env_names) < 0)
			return err_set(e, ERR_CONFIG, 0,
				       "wrapper: request: env_names: must be an array of strings");
	} else if (json_object_get(r->root, "env_names")) {
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: env_names: only without a sandbox");
	} else if (policy_from_value(json_object_get(r->root, "policy"),
				     "wrapper: request: policy", &r->policy, e) < 0) {
		return -1;
	}
	argv = json_object_get(r->root, "argv");
	if (!json_is_array(argv) || json_array_size(argv) == 0)
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: argv: must be a non-empty array");
	json_array_foreach(argv, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v))
			return err_set(e, ERR_CONFIG, 0,
				       "wrapper: request: argv[%zu]: must be a string", i);
		if (strv_push(&r->argv, json_string_value(v)) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "request");
	}
	if (json_object_get(r->root, "needs") &&
	    (unsandboxed || read_needs(json_object_get(r->root, "needs"), &r->needs, e) < 0))
		return *e ? -1
			  : err_set(e, ERR_CONFIG, 0, "wrapper: request: needs: only with a sandbox");
	if (json_object_get(r->root, "stdin") && !(r->stdin_text = opt_string(r->root, "stdin")))
		return err_set(e, ERR_CONFIG, 0, "wrapper: request: stdin: must be a string");
	json_t *tb = json_object_get(r->root, "toolbelt");
	const char *tb_dir = json_string_value(json_object_get(tb, "dir"));
	const char *tb_sock = json_string_value(json_object_get(tb, "socket"));
	if (tb && (unsandboxed || !json_is_object(tb) || json_object_size(tb) != 2 || !tb_dir ||
		   !tb_sock || tb_dir[0] != '/' || tb_sock[0] != '/'))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: toolbelt: {\"dir\", \"socket\"}, absolute, with a "
			       "sandbox");
	if (json_object_get(r->root, "clone") && read_clone(r, unsandboxed, e) < 0)
		return -1;
	json_t *cont = json_object_get(r->root, "container");
	const struct provider *prov = NULL;
	if (cont && (unsandboxed || json_object_get(r->root, "provider")))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: a container launch takes a policy, no process provider");
	if (cont && !(prov = read_container(cont, e)))
		return -1;
	/* a container job's home: mounted read-write in its container */
	const char *home = opt_string(r->root, "home");
	if (json_object_get(r->root, "home") && (!cont || !home || home[0] != '/'))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: home: an absolute path, with a container");
	/* an attach: its container made with a terminal for the operator's
	 * client to start; nothing fed, no toolbelt */
	bool attach = json_is_true(json_object_get(r->root, "attach"));
	if (attach && (!cont || tb || r->stdin_text || json_object_get(r->root, "clone")))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: attach: a container only, without a toolbelt, "
			       "input or clone");
	seg = json_object_get(r->root, "segment");
	if (seg && (!json_is_integer(seg) || json_integer_value(seg) < 1 ||
		    json_integer_value(seg) > 1000000))
		return err_set(e, ERR_CONFIG, 0,
			       "wrapper: request: segment: must be an integer from 1 to 1000000");
	r->quiet = json_is_true(json_object_get(r->root, "quiet"));
	if (!prov && unsandboxed)
		prov = read_none(e);
	else if (!prov)
		prov = read_process(opt_string(r->root, "provider"), e);
	if (!prov)
		return -1;
	r->req = (struct host_launch_req){
		.policy = r->policy,
		.workspace = opt_string(r->root, "workspace"),
		.state_dir = opt_string(r->root, "state_dir"),
		.execution = opt_string(r->root, "execution"),
		.segment = seg ? (unsigned int)json_integer_value(seg) : 0,
		.argv = r->argv,
		.prov = prov,
		.defer_record = true,
		.job_dirs = json_is_true(json_object_get(r->root, "job_dirs")),
		.env_names = r->env_names,
		.needs = json_object_get(r->root, "needs") ? &r->needs : NULL,
		.toolbelt_dir = tb ? tb_dir : NULL,
		.toolbelt_socket = tb ? tb_sock : NULL,
		.config = cont,
		.home = home,
		.terminal = attach,
	};
	return 0;
}

static void request_clear(struct request *r)
{
	json_decref(r->root);
	policy_free(r->policy);
	strv_free(r->argv);
	strv_free(r->env_names);
	needs_free(&r->needs);
	strv_free(r->setup);
	memset(r, 0, sizeof(*r));
}

/* Record with this process as the root, durably, and stamp it. */
static int record_and_stamp(struct host_launch *l, struct err **e)
{
	unsigned long long ticks = 0;
	_cleanup_json_ json_t *stamp = NULL;

	if (host_launch_record(l, e) < 0 || plan_sync_record(l->paths.record_dir, e) < 0 ||
	    procfs_start_ticks(0, &ticks, e) < 0)
		return -1;
	stamp = json_pack("{s:i, s:I}", "pid", (int)getpid(), "start_ticks", (json_int_t)ticks);
	if (!stamp)
		return err_set(e, ERR_INTERNAL, ENOMEM, "stamp");
	return write_record_file(l->paths.record_dir, HOST_WRAPPER_STAMP, stamp, e);
}

void host_wrapper_write_exit(const char *record_dir, int code, const struct err *refusal,
			     bool interrupted)
{
	_cleanup_json_ json_t *j = json_pack("{s:i}", "code", code);
	struct err *e = NULL;

	/* a container that got a TERM the host did not send */
	if (j && interrupted)
		json_object_set_new(j, "interrupted", json_true());
	if (j && refusal) {
		json_object_set_new(j, "error", json_string(err_reason_name(refusal->reason)));
		json_object_set_new(j, "message", json_string(refusal->msg ? refusal->msg : ""));
	}
	if (!j || write_record_file(record_dir, HOST_WRAPPER_EXIT, j, &e) < 0) {
		if (e)
			err_print(stderr, e);
		err_free(e);
	}
}

int host_wrapper_main(int ctl)
{
	struct request r = { 0 };
	struct host_launch l = { 0 };
	struct host_logdrain drain = { .done = -1, .log = -1 };
	_cleanup_err_ struct err *e = NULL;
	json_t *pin;
	char go = 0;
	ssize_t n;
	int code = HOST_EXIT_CORDON;

	/* the control socket came in without close-on-exec (as fd 3): the
	 * stub forked below must not carry it */
	(void)fcntl(ctl, F_SETFD, FD_CLOEXEC);
	/* a session and process group of its own: the daemon's end (and a
	 * terminal's signals) do not reach it */
	if (setsid() < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "wrapper: a session of its own");
		goto refuse;
	}
	if (read_request(ctl, &r, &e) < 0)
		goto refuse;
	/* the command's output reaches the job's log through the host's
	 * drain: it never holds the log itself. Before anything is forked
	 * (prestart's helper keeps this process's fds 1 and 2 as they are) */
	if (host_logdrain_start(&drain, &e) < 0)
		goto refuse;
	/* (not for a command whose stdin is fed: what prestart forks takes
	 * this process's stdin as it is now) */
	if (r.req.prov->prestart && !r.stdin_text)
		r.req.prov->prestart();
	/* a clone workspace: made now, before anything is planned */
	if (r.clone.url) {
		r.clone.job = r.req.execution;
		r.clone.workspace = r.req.workspace;
		r.clone.toolbelt_token = getenv("CORDON_TOOLBELT");
		r.clone.setup = r.setup;
		r.clone.setup_env = environ;
		if (!r.clone.job || !r.clone.workspace) {
			err_set(&e, ERR_CONFIG, 0, "wrapper: request: a clone needs the execution and workspace");
			goto refuse;
		}
		if (r.clone.helper && !r.clone.toolbelt_token)
			r.clone.helper = NULL;
		if (host_git_clone(&r.clone, &e) < 0)
			goto refuse;
	}
	if (host_launch_prepare(&r.req, &l, &e) < 0)
		goto refuse;
	if (record_and_stamp(&l, &e) < 0) {
		plan_paths_remove(&l.paths);
		goto refuse;
	}
	/* A container is made now, not started: its pin goes with the plan's.
	 * A process sandbox is made after the host's word (host_launch_run):
	 * its pin is the record's, and what it forks takes this process's
	 * stdin as the feeder leaves it. */
	if (l.prov->kind == PROVIDER_CONTAINER && host_launch_create(&l, &e) < 0) {
		host_wrapper_write_exit(l.paths.record_dir, HOST_EXIT_CORDON, e, false);
		goto refuse;
	}
	pin = json_pack("{s:s, s:s, s:i, s:s, s:s, s:i}", "execution", l.paths.execution,
			"record", l.paths.record_dir, "segment", (int)l.paths.segment, "digest",
			l.plan->digest, "summary", l.plan->summary, "pid", (int)getpid());
	/* the provider (none's is the pin's lack of one: the daemon's
	 * database holds no provider for a segment without a sandbox) */
	if (pin && l.prov->kind != PROVIDER_NONE)
		json_object_set_new(pin, "provider", json_string(l.prov->name));
	if (pin && l.pin)
		json_object_set(pin, "container", l.pin);
	send_json(ctl, pin);
	json_decref(pin);
	/* The daemon's word: it has the pin. Anything else runs nothing. */
	do
		n = recv(ctl, &go, 1, 0);
	while (n < 0 && errno == EINTR);
	close(ctl);
	if (n != 1 || go != 'g') {
		err_set(&e, ERR_UNAVAILABLE, 0, "wrapper: the host did not confirm the launch");
		err_print(stderr, e);
		host_wrapper_write_exit(l.paths.record_dir, HOST_EXIT_CORDON, e, false);
		host_launch_discard(&l);
		goto out;
	}
	/* an attach's container is the operator's client's to start */
	if (r.req.terminal) {
		host_launch_release(&l);
		code = 0;
		goto out;
	}
	/* an executor that takes its input as a stream gets it fed */
	if (r.stdin_text) {
		_cleanup_free_ char *inbox = fs_path_join(l.paths.run_dir, "inbox");
		_cleanup_free_ char *log = fs_path_join(l.paths.exec_dir, "log");

		if (!inbox || !log || host_feeder_start(r.stdin_text, inbox, log, &e) < 0) {
			if (!e)
				err_set(&e, ERR_INTERNAL, ENOMEM, "the command's input");
			err_print(stderr, e);
			host_logdrain_finish(&drain, false);
			host_wrapper_write_exit(l.paths.record_dir, HOST_EXIT_CORDON, e, false);
			host_launch_discard(&l);
			goto out;
		}
	}
	code = host_launch_run(&l, r.quiet, true, stderr, &e);
	/* all of it in the log before the exit file says the segment ended */
	host_logdrain_finish(&drain, true);
	host_wrapper_write_exit(l.paths.record_dir, code, code == HOST_EXIT_CORDON ? e : NULL, l.interrupted);
	goto out;
refuse:
	host_logdrain_finish(&drain, false);
	send_refusal(ctl, e);
	err_print(stderr, e);
	close(ctl);
out:
	host_logdrain_finish(&drain, false);
	host_launch_clear(&l);
	request_clear(&r);
	return code;
}
