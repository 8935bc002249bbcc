/* ssh.c: the SSH provider (contract.h): a segment runs on another
 * machine, a "container" there being a run: its records under
 * ~/.cordon/runs/<id> and its copies of the host's paths, mirrored at
 * the same paths. Made unstarted (create), started by the helper
 * (start.c), and inspected, listed, stopped and removed by the host
 * over ssh, each call checking the pinned host key. With isolation
 * "native" (the default) the run is cordon's own sandbox there (its static
 * binary and the recorded plan go with the records; `cordon remote-run`),
 * its network a gateway in the host's helper (start.c); with "none"
 * it is the remote account's, which the config acknowledges: nothing on
 * the remote then holds network.allow or the paths, and the account is
 * that work's (account.c: one binding's, one run at a time, never a
 * native run's after). The stub and the run's environment: stub.c.
 * Nothing the remote answers is read as cordon's unless cordon's script
 * said it once (line_value). */
#include "container/ssh/ssh.h"
#include "container/ssh/internal.h"

#include "container/docker/engine/engine.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "plan/container.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

/* key=value lines of a probe or status answer: the value of key, when
 * one line says it; a key said twice is no answer (what a run on the
 * account could have added never shadows what cordon's script said). */
static const char *line_value(const char *text, const char *key, char *buf, size_t max)
{
	size_t kl = strlen(key);
	const char *found = NULL;

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (strncmp(l, key, kl) == 0 && l[kl] == '=') {
			if (found)
				return NULL;
			found = l + kl + 1;
		}
	}
	if (!found)
		return NULL;
	size_t n = strcspn(found, "\n");

	if (n >= max)
		n = max - 1;
	memcpy(buf, found, n);
	buf[n] = '\0';
	return buf;
}

/* The last pass of the probe, {"time", "home", "userns"}, one per remote
 * and key. */
static char *pass_path(const struct ssh_conn *c)
{
	return ssh_conn_file(c, ".pass");
}

int ssh_probe(const struct ssh_conn *c, const char *state_dir, bool use_pass, char **home,
	      bool *userns, json_t **report, struct err **e)
{
	_cleanup_free_ char *out = NULL, *pp = pass_path(c), *buf = NULL, *probe_dir = NULL;
	_cleanup_json_ json_t *checks = json_array();
	char v[4096];
	int status = 0;
	bool ready = true;

	*home = NULL;
	if (!pp || !checks)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh probe");
	/* the operator's config adds no forward (checked each time: it is
	 * the operator's file, read by ssh on every call) */
	if (ssh_forwards_configured(c, e) < 0)
		return -1;
	size_t blen = 0;
	if (use_pass && fs_read_file(AT_FDCWD, pp, 65536, &buf, &blen, NULL) == 0) {
		struct err *je = NULL;
		_cleanup_json_ json_t *j = json_parse_strict(buf, blen, &je);

		err_free(je);
		json_int_t t = json_integer_value(json_object_get(j, "time"));

		if (str(j, "home") && t > 0 && time(NULL) - (time_t)t < SSH_PASS_SECONDS &&
		    time(NULL) >= (time_t)t) {
			*userns = json_is_true(json_object_get(j, "userns"));
			*home = strdup(str(j, "home"));
			return *home ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "ssh probe");
		}
	}
	if (asprintf(&probe_dir, "%s/containers/ssh", state_dir) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh probe");
	char *const args[] = { probe_dir, NULL };
	if (ssh_call(c, ssh_script_probe, args, NULL, 0, &out, NULL, 65536, &status, e) < 0)
		return -1;
	if (status != 0 || !line_value(out, "done", v, sizeof(v)))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "the remote `%s@%s:%u` did not run cordon's probe (exit %d): its "
			       "account's shell must run /bin/sh",
			       c->t.user, c->t.host, c->t.port, status);
	for (const char *l = out; (l = strstr(l, "missing=")); l++) {
		char one[128];
		size_t n = strcspn(l + 8, "\n");

		snprintf(one, sizeof(one), "%.*s", (int)(n < 100 ? n : 100), l + 8);
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "id", "tools", "status",
							"fail", "detail", one));
		ready = false;
	}
	if (!line_value(out, "records", v, sizeof(v)) || strcmp(v, "ok") != 0) {
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "id", "records", "status",
							"fail", "detail",
							"~/" SSH_RECORDS " is not writable"));
		ready = false;
	}
	if (!line_value(out, "state", v, sizeof(v)) || strcmp(v, "ok") != 0) {
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "id", "shared_path",
							"status", "fail", "detail", probe_dir));
		ready = false;
	}
	if (!line_value(out, "home", v, sizeof(v)) || v[0] != '/')
		return err_set(e, ERR_UNAVAILABLE, 0, "the remote's account has no home");
	if (!(*home = strdup(v)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh probe");
	char uns[16];
	const char *u = line_value(out, "userns", uns, sizeof(uns));
	*userns = u && strcmp(u, "ok") == 0;
	if (report) {
		char sys[256];

		/* whether cordon's native sandbox can run there (isolation
		 * none needs none: a warning, not a failure) */
		json_array_append_new(checks, json_pack("{s:s, s:s, s:s}", "id", "native_sandbox",
							"status", *userns ? "pass" : "warn",
							"detail", *userns
								? "user namespaces work for the account"
								: "no user namespaces for the account: "
								  "isolation native cannot run there"));
		*report = json_pack("{s:s, s:b, s:s, s:s, s:s?, s:O}", "provider", "ssh", "ready", ready,
				    "remote", c->t.host, "fingerprint", c->t.fingerprint, "system",
				    line_value(out, "system", sys, sizeof(sys)), "checks", checks);
	}
	if (!ready) {
		const char *why = json_string_value(json_object_get(json_array_get(checks, 0), "detail"));

		free(*home);
		*home = NULL;
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "the remote `%s@%s:%u` cannot run a segment: %s%s",
			       c->t.user, c->t.host, c->t.port,
			       json_string_value(json_object_get(json_array_get(checks, 0), "id")),
			       why ? why : "");
	}
	/* the pass stands for a while */
	_cleanup_json_ json_t *pass = json_pack("{s:I, s:s, s:b}", "time", (json_int_t)time(NULL),
						"home", *home, "userns", *userns);
	_cleanup_free_ char *text = pass ? json_dumps(pass, JSON_COMPACT) : NULL;
	struct err *we = NULL;
	char *slash = strrchr(pp, '/');
	if (text && slash) {
		*slash = '\0';
		_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, pp, O_PATH | O_DIRECTORY, 0);
		*slash = '/';
		if (dfd < 0 || fs_write_atomic(dfd, slash + 1, text, strlen(text), 0600, false, &we) < 0)
			fprintf(stderr, "cordon: ssh: the probe's pass is not kept (%s)\n",
				we && we->msg ? we->msg : strerror(errno));
	}
	err_free(we);
	return 0;
}

/* The plan's container part: where it runs, what is copied there and
 * what may come back. */
static int roots_of(const struct grant *g, const struct provider_launch *cl, json_t *c,
		    struct err **e)
{
	_cleanup_json_ json_t *mounts = NULL;
	json_t *roots = json_array(), *skip = json_array(), *grants = json_array(),
	       *kept = json_array(), *copies = json_array(), *m;
	size_t i;
	struct container_mount_input mi = { .g = g, .record_dir = NULL,
					    .toolbelt_dir = cl->toolbelt_dir, .home = cl->home,
					    .empty_dir = "/nonexistent", .empty_file = "/nonexistent" };

	json_object_set_new(c, "roots", roots);
	json_object_set_new(c, "skip", skip);
	json_object_set_new(c, "grants", grants);
	json_object_set_new(c, "kept", kept);
	json_object_set_new(c, "copies", copies);
	if (!roots || !skip || !grants || !kept || !copies)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh plan");
	if (container_mounts(&mi, &mounts, e) < 0)
		return -1;
	json_array_foreach(mounts, i, m) {
		const char *why = str(m, "why"), *target = str(m, "target");

		if (!why || !target)
			continue;
		if (strchr(target, '\n'))
			return err_set(e, ERR_DENIED, 0,
				       "a granted path holds a line break: it is not mirrored to a "
				       "remote");
		if (strcmp(why, "deny") == 0) {
			json_array_append_new(skip, json_string(target));
			json_array_append_new(kept, json_string(target));
			continue;
		}
		if (strcmp(why, "record") == 0)
			continue;
		if (strcmp(target, "/") == 0)
			return err_set(e, ERR_DENIED, 0,
				       "the grant reaches / (%s): a remote's / is never replaced", why);
		json_array_append_new(roots, json_string(target));
		/* the job's own copies go with the run: a shared read copy stays
		 * (another job's run may be reading it) */
		if (strcmp(why, "write") == 0 || strcmp(why, "home") == 0 ||
		    strcmp(why, "toolbelt") == 0)
			json_array_append_new(copies, json_string(target));
		if (strcmp(why, "write") == 0 || strcmp(why, "home") == 0)
			json_array_append_new(grants, json_string(target));
		else if (strcmp(why, "read_only") == 0)
			json_array_append_new(kept, json_string(target));
	}
	return 0;
}

static int ssh_plan(const struct grant *g, const struct plan_paths *paths,
		    const struct provider_launch *cl, struct plan *p, struct err **e)
{
	struct ssh_conn c = { 0 };
	_cleanup_free_ char *home = NULL, *summary = NULL, *line = NULL, *rtb = NULL;
	_cleanup_json_ json_t *pc = NULL;
	_cleanup_strv_ char **keys = NULL;
	const char *iso = str(cl->config, "isolation");
	bool userns = false, native = !iso || strcmp(iso, "native") == 0;
	size_t rt_len = 0;
	char rt_hex[65];
	int r = -1;

	(void)paths;
	if (!native && strcmp(iso, "none") != 0)
		return err_set(e, ERR_CONFIG, 0, "container.isolation: must be \"native\" or \"none\"");
	if (cl->terminal)
		return err_set(e, ERR_UNAVAILABLE, 0, "an attach on an ssh remote is not built");
	if (ssh_conn_from_config(&c, cl->config, cl->state_dir, e) < 0)
		goto out;
	/* the account is the user on the remote machine, whatever key
	 * pins it: every key it presents names it. A none binding's is its
	 * alone (another binding pinned by another of its keys is refused
	 * here, which the config's load cannot see), and an account that
	 * ran isolation none work is that work's: no native run's, no
	 * other binding's */
	if (!(keys = ssh_presented_keys(&c))) {
		if (errno == EKEYREJECTED)
			ssh_key_refused(&c, e);
		else if (errno == ENOKEY)
			err_set(e, ERR_UNAVAILABLE, 0,
				"the remote `%s@%s:%u`'s host keys could not be learned by scanning "
				"its host and port directly (the pinned key was not among what "
				"answered: a remote reached through an ssh_config alias or a jump "
				"host, or no answer in 5 s): its account is known by every key it "
				"presents, so nothing is run there",
				c.t.user, c.t.host, c.t.port);
		else
			err_set(e, ERR_UNAVAILABLE, errno, "cannot ask the remote for its host keys");
		goto out;
	}
	if (ssh_account_peers(&c, cl->config, keys, e) < 0 ||
	    ssh_account_tainted(&c, keys, !native, str(cl->config, "binding"), e) < 0)
		goto out;
	if (ssh_probe(&c, cl->state_dir, true, &home, &userns, NULL, e) < 0)
		goto out;
	if (native) {
		/* cordon's sandbox there, or nothing: a run without it is
		 * the config's to say (isolation none) */
		if (!userns) {
			err_set(e, ERR_UNAVAILABLE, 0,
				"container.isolation: the remote `%s@%s:%u` cannot run cordon's native "
				"sandbox (no user namespaces for its account); see `cordon ssh doctor`",
				c.t.user, c.t.host, c.t.port);
			goto out;
		}
		/* the forwarded gateway's socket must fit a socket address */
		if (strlen(home) + sizeof("/" SSH_RECORDS "/") + 32 + sizeof("/" SSH_CHANNEL) >
		    sizeof(((struct sockaddr_un *)NULL)->sun_path)) {
			err_set(e, ERR_UNAVAILABLE, 0,
				"the remote's home (%s) is too long a path for the run's gateway socket",
				home);
			goto out;
		}
		if (container_runtime(&rtb, &rt_len, rt_hex, e) < 0)
			goto out;
	}
	if (asprintf(&line, "%s %s", c.t.key_type, c.t.key_b64) < 0) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh plan");
		goto out;
	}
	pc = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s}", "provider", "ssh",
		       "remote", str(cl->config, "remote"), "host_key", line, "fingerprint",
		       c.t.fingerprint, "known_hosts", c.known_hosts, "isolation",
		       native ? "native" : "none", "network", native ? "gateway" : "host",
		       "remote_home", home, "record_dir", paths->record_dir);
	if (!pc) {
		err_set(e, ERR_CONFIG, 0, "the remote's plan cannot be recorded (not UTF-8?)");
		goto out;
	}
	/* what runs the sandbox there: cordon's static binary, by digest */
	if (native)
		json_object_set_new(pc, "runtime", json_string(rt_hex));
	/* (the account's keys as the plan saw them: create's lock and mark
	 * are under each) */
	if (json_object_set_new(pc, "account_keys", json_strv(keys)) < 0) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh plan");
		goto out;
	}
	if (c.identity)
		json_object_set_new(pc, "identity", json_string(c.identity));
	if (c.config_file)
		json_object_set_new(pc, "ssh_config", json_string(c.config_file));
	if (cl->home)
		json_object_set_new(pc, "home", json_string(cl->home));
	if (cl->toolbelt_dir)
		json_object_set_new(pc, "toolbelt_dir", json_string(cl->toolbelt_dir));
	if (roots_of(g, cl, pc, e) < 0)
		goto out;
	/* no root may hold the remote's home */
	size_t i;
	json_t *rt;
	json_array_foreach(json_object_get(pc, "roots"), i, rt) {
		if (fs_path_within(home, json_string_value(rt))) {
			err_set(e, ERR_DENIED, 0,
				"`%s` would replace the remote's home (%s) with the host's copy",
				json_string_value(rt), home);
			goto out;
		}
	}
	if (asprintf(&summary, "ssh %s@%s:%u%s", c.t.user, c.t.host, c.t.port,
		     native ? " (native sandbox)" : " (isolation none)") < 0) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh plan");
		goto out;
	}
	r = container_plan_part(p, json_incref(pc), summary, e);
out:
	ssh_conn_clear(&c);
	return r;
}

/* The paths of an array, one per line (none holds a line break: the
 * plan refuses one). */
static char *lines_of(const json_t *arr)
{
	char *buf = NULL;
	size_t len = 0, i;
	json_t *v;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	json_array_foreach(arr, i, v) {
		fprintf(f, "%s\n", json_string_value(v));
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int new_id(char out[33], struct err **e)
{
	unsigned char r[16];

	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh: random");
	for (int i = 0; i < 16; i++)
		snprintf(out + (size_t)2 * (size_t)i, 3, "%02x", r[i]);
	return 0;
}

static int run_status(const struct ssh_conn *c, const json_t *pin, bool check,
		      struct ssh_run_status *st, struct err **e);

/* A job's run while another of it runs is refused (container_running);
 * its ended ones are removed first. With whole (an isolation none run's
 * account), a run of any other job there, of any host, refuses too
 * (container_busy): the account holds one run at a time. A listing that
 * fails refuses. */
static int one_at_a_time(const struct ssh_conn *c, const json_t *pc, const char *host,
			 const char *job, bool whole, struct err **e)
{
	_cleanup_free_ char *out = NULL;
	char *const args[] = { (char *)(whole ? "" : host), (char *)(whole ? "" : job), NULL };
	int status = 0;

	if (ssh_call(c, ssh_script_list, args, NULL, 0, &out, NULL, (size_t)4 << 20, &status, e) < 0)
		return -1;
	if (status != 0)
		return err_set(e, ERR_UNAVAILABLE, 0, "the remote could not list its runs (exit %d)",
			       status);
	for (char *l = out, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		struct ssh_run_status st;

		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (strspn(l, "0123456789abcdef") != 32 || l[32] != ' ')
			continue;
		l[32] = '\0';
		if (whole && strcmp(l + 33, job) != 0) {
			for (char *ch = l + 33; *ch; ch++)
				if ((unsigned char)*ch < ' ' || *ch == 0x7f)
					*ch = ' ';
			return err_set(e, ERR_DENIED, 0,
				       "container_busy: the remote account `%s@%s:%u` holds a run of "
				       "job %.64s (isolation none: one run at a time; a sweep of the "
				       "host that made it removes it once that job ended)",
				       c->t.user, c->t.host, c->t.port, l + 33);
		}
		_cleanup_json_ json_t *pin = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?}", "container",
						       l, "remote", str(pc, "remote"), "host_key",
						       str(pc, "host_key"), "known_hosts",
						       c->known_hosts, "identity", c->identity,
						       "ssh_config", c->config_file);
		if (!pin)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh create");
		if (run_status(c, pin, false, &st, e) < 0)
			return -1;
		if (st.state == PROVIDER_RUNNING)
			return err_set(e, ERR_DENIED, 0,
				       "container_running: a run of this job runs on the remote");
		if (ssh_remove(pin, e) < 0)
			return -1;
	}
	return 0;
}

/* The account's keys the plan recorded; the pinned one alone when none
 * is (NULL: no memory). */
static char **account_keys(const json_t *pc, const struct ssh_conn *c)
{
	_cleanup_strv_ char **keys = NULL;
	_cleanup_free_ char *pinned = NULL;

	if (asprintf(&pinned, "%s %s", c->t.key_type, c->t.key_b64) < 0 ||
	    (json_is_array(json_object_get(pc, "account_keys")) &&
	     json_to_strv(json_object_get(pc, "account_keys"), &keys) < 0))
		return NULL;
	if (!strv_contains(keys, pinned) && strv_push(&keys, pinned) < 0)
		return NULL;
	return steal_pointer(&keys);
}

static int ssh_create(const struct plan *p, const struct plan_paths *paths,
		      const struct provider_launch *cl, json_t **pin, struct err **e)
{
	const json_t *pc = json_object_get(p->data, "container");
	struct ssh_conn c = { 0 };
	_cleanup_free_ char *stub = NULL, *labels = NULL, *rec = NULL, *out = NULL,
			   *copies = lines_of(json_object_get(pc, "copies"));
	_cleanup_free_ void *tar = NULL;
	_cleanup_free_ char *rt = NULL, *plan_text = NULL;
	_cleanup_json_ json_t *made = NULL;
	_cleanup_strv_ char **keys = NULL;
	size_t stub_len = 0, tar_len = 0, rt_len = 0, plan_len = 0;
	const char *iso = str(pc, "isolation");
	bool native = iso && strcmp(iso, "native") == 0;
	char id[33], host[17], rt_hex[65];
	int status = 0, r = -1;

	*pin = NULL;
	if (!pc || ssh_conn_from_pin(&c, pc, e) < 0)
		goto out;
	if (!(keys = account_keys(pc, &c))) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh create");
		goto out;
	}
	/* a none run's account: one run at a time (the remote's listing
	 * first, which says container_running for a run of the same job,
	 * then the host's lock), and never a native run's again; a native
	 * run's: never one that ran none work */
	if (new_id(id, e) < 0 || container_host_label(cl->state_dir, host, e) < 0 ||
	    ssh_account_tainted(&c, keys, !native, str(cl->config, "binding"), e) < 0 ||
	    one_at_a_time(&c, pc, host, paths->execution, !native, e) < 0 ||
	    (!native && ssh_account_take(&c, keys, paths->execution, str(cl->config, "binding"), e) < 0))
		goto out;
	if (asprintf(&rec, "%s/" SSH_RECORDS "/%s", str(pc, "remote_home"), id) < 0 ||
	    asprintf(&labels, "host=%s\njob=%s\nsegment=%u\ndigest=%s\n", host, paths->execution,
		     paths->segment, p->digest) < 0 ||
	    !(stub = ssh_make_stub(rec, str(p->data, "workspace"), p->argv, native ? p->digest : NULL,
			       &stub_len)) ||
	    !copies) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh create");
		goto out;
	}
	/* a native run: cordon's static binary (the one the plan names) and
	 * the plan as recorded, which it reads back against the digest */
	if (native) {
		_cleanup_free_ char *pp = fs_path_join(paths->record_dir, "plan.json");

		if (container_runtime(&rt, &rt_len, rt_hex, e) < 0)
			goto out;
		if (!str(pc, "runtime") || strcmp(rt_hex, str(pc, "runtime")) != 0) {
			err_set(e, ERR_DENIED, 0,
				"cordon's static binary is not the one the plan names (rebuilt since?)");
			goto out;
		}
		if (!pp || fs_read_file(AT_FDCWD, pp, (size_t)4 << 20, &plan_text, &plan_len, e) < 0)
			goto out;
	}
	struct engine_tar_file files[] = {
		{ "labels", 0600, 0, 0, labels, strlen(labels) },
		{ "stub", 0600, 0, 0, stub, stub_len },
		{ "copies", 0600, 0, 0, copies, strlen(copies) },
		{ "plan.json", 0400, 0, 0, plan_text, plan_len },
		{ "cordon", 0500, 0, 0, rt, rt_len },
	};
	if (engine_tar_build(files, native ? 5 : 3, (long long)time(NULL), &tar, &tar_len, e) < 0)
		goto out;
	char *const cargs[] = { id, NULL };
	if (ssh_call(&c, ssh_script_create, cargs, tar, tar_len, &out, NULL, 4096, &status, e) < 0)
		goto wipe;
	if (status != 0) {
		/* (the remote's words: printable only) */
		for (char *ch = out; ch && *ch; ch++)
			if ((unsigned char)*ch < ' ' || *ch == 0x7f)
				*ch = ' ';
		err_set(e, status == 3 ? ERR_DENIED : ERR_UNAVAILABLE, 0,
			"the remote refused the run's records (exit %d)%s%.200s", status,
			out && out[0] ? ": " : "", out ? out : "");
		goto out;
	}
	made = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:s, s:O}", "provider",
			 "ssh", "container", id, "remote", str(pc, "remote"), "host_key",
			 str(pc, "host_key"), "known_hosts", c.known_hosts, "host", host, "job",
			 paths->execution, "segment", (json_int_t)paths->segment, "digest",
			 p->digest, "remote_home", str(pc, "remote_home"), "copies",
			 json_object_get(pc, "copies"));
	if (made && c.identity)
		json_object_set_new(made, "identity", json_string(c.identity));
	if (made && c.config_file)
		json_object_set_new(made, "ssh_config", json_string(c.config_file));
	if (!made) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh create");
		goto wipe;
	}
	if (ssh_upload(&c, pc, made, paths, e) < 0 || container_write_pin(paths, made, e) < 0)
		goto wipe;
	*pin = steal_pointer(&made);
	r = 0;
	goto out;
wipe:
	/* what was made goes: the records (and any copy) */
	if (made) {
		struct err *re = NULL;

		if (ssh_remove(made, &re) < 0)
			err_print(stderr, re);
		err_free(re);
	}
out:
	ssh_conn_clear(&c);
	return r;
}

static void ssh_discard(const struct plan_paths *paths, const json_t *pin)
{
	struct err *e = NULL;

	(void)paths;
	if (ssh_remove(pin, &e) < 0)
		err_print(stderr, e);
	err_free(e);
}

int ssh_status(const struct ssh_conn *c, const json_t *pin, struct ssh_run_status *st,
	       struct err **e)
{
	return run_status(c, pin, true, st, e);
}

/* ... with its labels checked against the pin's, or not (a run of the
 * job found by listing, whose pin the host does not hold). */
static int run_status(const struct ssh_conn *c, const json_t *pin, bool check,
		      struct ssh_run_status *st, struct err **e)
{
	_cleanup_free_ char *out = NULL;
	char *const args[] = { (char *)str(pin, "container"), (char *)str(pin, "container"), NULL };
	char v[256];
	int status = 0;

	memset(st, 0, sizeof(*st));
	if (!args[0])
		return err_set(e, ERR_DENIED, 0, "the pin names no run");
	if (ssh_call(c, ssh_script_status, args, NULL, 0, &out, NULL, 65536, &status, e) < 0)
		return -1;
	if (status != 0 || !line_value(out, "state", v, sizeof(v)))
		return err_set(e, ERR_UNAVAILABLE, 0, "the remote did not say how the run is (exit %d)",
			       status);
	if (strcmp(v, "gone") == 0) {
		st->state = PROVIDER_GONE;
		return 0;
	}
	st->state = strcmp(v, "created") == 0	? PROVIDER_CREATED
		    : strcmp(v, "running") == 0 ? PROVIDER_RUNNING
						: PROVIDER_EXITED;
	st->term = line_value(out, "term", v, sizeof(v)) != NULL;
	if (line_value(out, "started", v, sizeof(v)))
		st->started_ms = strtoll(v, NULL, 10);
	st->code = 137;
	if (line_value(out, "code", v, sizeof(v))) {
		char *end = NULL;
		long code = strtol(v, &end, 10);

		if (end && !*end && code >= 0 && code <= 255)
			st->code = (int)code;
	}
	if (!check)
		return 0;
	/* labels ("label." lines): the host's, job's, segment's and
	 * digest's, as pinned */
	char want[256];
	static const char *const keys[] = { "host", "job", "digest", NULL };
	for (size_t i = 0; keys[i]; i++) {
		char lk[32];

		snprintf(lk, sizeof(lk), "label.%s", keys[i]);
		if (!line_value(out, lk, v, sizeof(v)) || !str(pin, keys[i]) ||
		    strcmp(v, str(pin, keys[i])) != 0)
			return err_set(e, ERR_DENIED, 0,
				       "the remote's run of the pinned ID is not the pinned one (its "
				       "%s differs)",
				       keys[i]);
	}
	snprintf(want, sizeof(want), "%lld", (long long)json_integer_value(json_object_get(pin, "segment")));
	if (!line_value(out, "label.segment", v, sizeof(v)) || strcmp(v, want) != 0)
		return err_set(e, ERR_DENIED, 0,
			       "the remote's run of the pinned ID is not the pinned one (its segment "
			       "differs)");
	return 0;
}

static int ssh_inspect(const json_t *pin, const char *digest, const char *job, unsigned int seg,
		       struct provider_state *cs, struct err **e)
{
	struct ssh_conn c = { 0 };
	struct ssh_run_status st;
	int r = -1;

	if (ssh_conn_from_pin(&c, pin, e) < 0 || ssh_status(&c, pin, &st, e) < 0)
		goto out;
	r = st.state;
	if (r == PROVIDER_GONE)
		goto out;
	if ((digest && strcmp(digest, str(pin, "digest")) != 0) ||
	    (job && strcmp(job, str(pin, "job")) != 0) ||
	    (seg && (json_int_t)seg != json_integer_value(json_object_get(pin, "segment")))) {
		r = err_set(e, ERR_DENIED, 0, "the pinned run is not this segment's");
		goto out;
	}
	if (cs) {
		cs->exit_code = st.code;
		if (r != PROVIDER_CREATED && st.started_ms > 0) {
			time_t t = (time_t)(st.started_ms / 1000);
			struct tm tm;
			char buf[40];

			if (gmtime_r(&t, &tm) && strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%S", &tm) &&
			    asprintf(&cs->started_at, "%s.%03lldZ", buf, st.started_ms % 1000) < 0)
				cs->started_at = NULL;
		}
	}
out:
	ssh_conn_clear(&c);
	return r;
}

/* The runs of host (of job, or all) on a config's remote: their ids,
 * and their jobs in *jobs when it is not NULL. */
static int list_runs(const json_t *config, const char *state_dir, const char *host,
		     const char *job, char ***ids, char ***jobs, struct err **e)
{
	struct ssh_conn c = { 0 };
	_cleanup_free_ char *out = NULL;
	char *const args[] = { (char *)host, (char *)(job ? job : ""), NULL };
	int status = 0, r = -1;

	*ids = NULL;
	if (ssh_conn_from_config(&c, config, state_dir, e) < 0)
		goto out;
	if (ssh_call(&c, ssh_script_list, args, NULL, 0, &out, NULL, (size_t)4 << 20, &status,
		     e) < 0)
		goto out;
	if (status != 0) {
		err_set(e, ERR_UNAVAILABLE, 0, "the remote could not list its runs (exit %d)", status);
		goto out;
	}
	if (!(*ids = calloc(1, sizeof(**ids))) || (jobs && !(*jobs = calloc(1, sizeof(**jobs))))) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh list");
		goto out;
	}
	for (char *l = out, *nl; l && *l; l = nl ? nl + 1 : NULL) {
		nl = strchr(l, '\n');
		if (nl)
			*nl = '\0';
		if (strspn(l, "0123456789abcdef") != 32 || l[32] != ' ')
			continue;
		l[32] = '\0';
		if (strv_push(ids, l) < 0 || (jobs && strv_push(jobs, l + 33) < 0)) {
			err_set(e, ERR_INTERNAL, ENOMEM, "ssh list");
			goto out;
		}
	}
	r = 0;
out:
	if (r < 0) {
		strv_free(*ids);
		*ids = NULL;
		if (jobs) {
			strv_free(*jobs);
			*jobs = NULL;
		}
	}
	ssh_conn_clear(&c);
	return r;
}

static int ssh_list(const json_t *config, const char *state_dir, const char *host,
		    const char *job, char ***ids, struct err **e)
{
	return list_runs(config, state_dir, host, job, ids, NULL, e);
}

/* Reconcile on a remote: the runs of jobs that are not live removed
 * (their group killed, their records and the copies they name). */
static int ssh_sweep(const json_t *config, const char *state_dir, const char *host,
		     char *const *live, unsigned int *removed, struct err **e)
{
	_cleanup_strv_ char **ids = NULL, **jobs = NULL;
	struct ssh_conn c = { 0 };
	int r = 0;

	*removed = 0;
	if (list_runs(config, state_dir, host, NULL, &ids, &jobs, e) < 0 ||
	    ssh_conn_from_config(&c, config, state_dir, e) < 0) {
		ssh_conn_clear(&c);
		return -1;
	}
	for (size_t i = 0; ids[i] && jobs[i]; i++) {
		bool keep = false;

		for (size_t j = 0; live && live[j]; j++)
			keep = keep || strcmp(live[j], jobs[i]) == 0;
		if (keep)
			continue;
		_cleanup_json_ json_t *pin = json_pack("{s:s, s:s, s:s, s:s, s:s?, s:s?}", "container",
						       ids[i], "remote", str(config, "remote"),
						       "host_key", str(config, "host_key"),
						       "known_hosts", c.known_hosts, "identity",
						       str(config, "identity"), "ssh_config",
						       str(config, "ssh_config"));
		struct err *re = NULL;

		if (!pin || ssh_remove(pin, &re) < 0) {
			err_print(stderr, re);
			err_free(re);
			r = -1;
			continue;
		}
		(*removed)++;
	}
	ssh_conn_clear(&c);
	return r < 0 ? err_set(e, ERR_UNAVAILABLE, 0, "sweep: a run could not be removed") : 0;
}

int ssh_signal_run(const struct ssh_conn *c, const json_t *pin, const char *sig, bool group,
		   struct err **e)
{
	_cleanup_free_ char *out = NULL;
	char *const args[] = { (char *)str(pin, "container"), (char *)str(pin, "container"),
			       (char *)sig, (char *)(group ? "group" : "one"), NULL };
	int status = 0;

	if (ssh_call(c, ssh_script_signal, args, NULL, 0, &out, NULL, 4096, &status, e) < 0)
		return -1;
	if (status == 3)
		return 1; /* not started yet */
	if (status != 0)
		return err_set(e, ERR_UNAVAILABLE, 0, "the remote could not signal the run (exit %d)",
			       status);
	return 0;
}

static int ssh_stop(const json_t *pin, struct err **e)
{
	struct ssh_conn c = { 0 };
	struct ssh_run_status st;
	int r = -1;

	if (ssh_conn_from_pin(&c, pin, e) < 0)
		goto out;
	for (int i = 0; i < 100; i++) {
		if (ssh_status(&c, pin, &st, e) < 0)
			goto out;
		if (st.state != PROVIDER_RUNNING) {
			r = 0;
			goto out;
		}
		if (i == 0 && ssh_signal_run(&c, pin, "KILL", true, e) < 0)
			goto out;
		struct timespec ts = { 0, 100L * 1000 * 1000 };
		nanosleep(&ts, NULL);
	}
	err_set(e, ERR_UNAVAILABLE, 0, "container_stop_unverified: the run still runs after KILL");
out:
	ssh_conn_clear(&c);
	return r;
}

int ssh_remove(const json_t *pin, struct err **e)
{
	struct ssh_conn c = { 0 };
	_cleanup_free_ char *out = NULL;
	_cleanup_strv_ char **args = NULL;
	size_t i;
	json_t *v;
	int status = 0, r = -1;

	if (ssh_conn_from_pin(&c, pin, e) < 0)
		goto out;
	if (!str(pin, "container") || strv_push(&args, str(pin, "container")) < 0 ||
	    strv_push(&args, str(pin, "container")) < 0) {
		err_set(e, ERR_INTERNAL, ENOMEM, "ssh remove");
		goto out;
	}
	json_array_foreach(json_object_get(pin, "copies"), i, v)
		if (json_is_string(v) && strv_push(&args, json_string_value(v)) < 0) {
			err_set(e, ERR_INTERNAL, ENOMEM, "ssh remove");
			goto out;
		}
	if (ssh_call(&c, ssh_script_remove, args, NULL, 0, &out, NULL, 4096, &status, e) < 0)
		goto out;
	if (status != 0) {
		err_set(e, ERR_UNAVAILABLE, 0, "the remote could not remove the run (exit %d)", status);
		goto out;
	}
	r = 0;
out:
	ssh_conn_clear(&c);
	return r;
}

static int ssh_create_op(const struct grant *g, const struct plan *p,
			 const struct plan_paths *paths, const struct provider_launch *pl,
			 struct provider_run **run, json_t **pin, struct err **e)
{
	return container_run_create(ssh_create, ssh_discard, p, paths, pl, run, pin, e);
}

static int ssh_wait(struct provider_run *run, struct provider_exit *x, struct err **e)
{
	return container_run_wait(ssh_start, run, x, e);
}

static void ssh_discard_op(struct provider_run *run)
{
	container_run_discard(ssh_discard, run);
}

static int ssh_resume_op(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
			 struct provider_exit *x, struct err **e)
{
	return container_run_resume(ssh_resume, p, paths, pin, x, e);
}

/* A daemon's doctor never waits on a remote: the last pass of the
 * checks a launch to it ran. */
static json_t *ssh_doctor_op(const json_t *config, const char *state_dir)
{
	return ssh_last_pass(config, state_dir);
}

/* One report per remote and host key. */
static char *ssh_doctor_key(const json_t *config)
{
	char *key = NULL;

	if (asprintf(&key, "ssh %s %s", json_string_value(json_object_get(config, "remote")),
		     json_string_value(json_object_get(config, "host_key"))) < 0)
		return NULL;
	return key;
}

/* The config a launch of binding is given: its own, with its name
 * ("binding") and its peers' ("peers": [{"binding", "remote", "host_key",
 * "isolation"}]), for the launch-time account check (which learns the
 * remote's keys, as the load cannot). NULL: no memory. */
static json_t *ssh_launch_config(const json_t *config, const char *binding, json_t *const *peers,
				 const char *const *peer_names, size_t n)
{
	json_t *req = json_deep_copy(config), *arr = json_array();

	if (!req || !arr || json_object_set_new(req, "binding", json_string(binding)) < 0 ||
	    json_object_set(req, "peers", arr) < 0)
		goto fail;
	for (size_t i = 0; i < n; i++) {
		json_t *one = json_pack("{s:s, s:O?, s:O?, s:O?}", "binding", peer_names[i], "remote",
					json_object_get(peers[i], "remote"), "host_key",
					json_object_get(peers[i], "host_key"), "isolation",
					json_object_get(peers[i], "isolation"));

		if (!one || json_array_append_new(arr, one) < 0)
			goto fail;
	}
	json_decref(arr);
	return req;
fail:
	json_decref(arr);
	json_decref(req);
	return NULL;
}

const struct provider ssh_provider = {
	.name = "ssh",
	.kind = PROVIDER_CONTAINER,
	.launch_config = ssh_launch_config,
	.plan = ssh_plan,
	.create = ssh_create_op,
	.wait = ssh_wait,
	.discard = ssh_discard_op,
	.release = container_run_release,
	.resume = ssh_resume_op,
	.inspect = ssh_inspect,
	.list = ssh_list,
	.stop = ssh_stop,
	.remove = ssh_remove,
	.sweep = ssh_sweep,
	.doctor = ssh_doctor_op,
	.doctor_key = ssh_doctor_key,
};

json_t *ssh_last_pass(const json_t *config, const char *state_dir)
{
	struct ssh_conn c = { 0 };
	struct err *e = NULL;
	_cleanup_free_ char *pp = NULL, *buf = NULL;
	_cleanup_json_ json_t *j = NULL;
	const char *iso = str(config, "isolation");
	bool native = !iso || strcmp(iso, "native") == 0;
	const char *detail = NULL;
	json_int_t t = 0;
	bool ready = false;

	if (ssh_conn_from_config(&c, config, state_dir, &e) < 0) {
		json_t *r = json_pack("{s:s, s:s?, s:b, s:s}", "provider", "ssh", "remote",
				      str(config, "remote"), "ready", false, "detail",
				      e && e->msg ? e->msg : "the config cannot be read");
		err_free(e);
		return r;
	}
	size_t blen = 0;
	if ((pp = pass_path(&c)) && fs_read_file(AT_FDCWD, pp, 65536, &buf, &blen, &e) == 0)
		j = json_parse_strict(buf, blen, &e);
	err_free(e);
	t = json_integer_value(json_object_get(j, "time"));
	if (!j || t <= 0 || time(NULL) < (time_t)t || time(NULL) - (time_t)t >= SSH_PASS_SECONDS)
		detail = "no pass of its checks within ten minutes: a launch runs them (or `cordon "
			 "ssh doctor`)";
	else if (native && !json_is_true(json_object_get(j, "userns")))
		detail = "user namespaces do not work for its account: isolation native cannot run "
			 "there";
	else
		ready = true;
	json_t *r = json_pack("{s:s, s:s, s:s, s:s, s:b, s:s?}", "provider", "ssh", "remote",
			      str(config, "remote"), "fingerprint", c.t.fingerprint, "isolation",
			      native ? "native" : "none", "ready", ready, "detail", detail);
	if (r && t > 0)
		json_object_set_new(r, "checked", json_integer(t));
	ssh_conn_clear(&c);
	return r;
}

static const char ssh_usage[] =
	"usage: cordon ssh doctor --config-json JSON --state-dir DIR\n\n"
	"Check that the remote a binding's container config names can run its\n"
	"segments: reachable with the pinned host key, the tools a run needs (sh,\n"
	"setsid, ps, GNU tar and find, env), its records and the state dir's path\n"
	"writable, its system, whether a native sandbox could run there. Prints the\n"
	"report as JSON; exits 0 when ready, 125 when not. A launch runs the same\n"
	"checks (a pass stands for ten minutes).\n";

int ssh_main(int argc, char **argv)
{
	_cleanup_json_ json_t *cfg = NULL, *report = NULL;
	_cleanup_free_ char *state = NULL, *home = NULL, *text = NULL;
	struct ssh_conn c = { 0 };
	struct err *e = NULL;
	bool userns = false;

	if (argc < 2 || strcmp(argv[1], "doctor") != 0) {
		bool help = argc >= 2 && strcmp(argv[1], "--help") == 0;

		fputs(ssh_usage, help ? stdout : stderr);
		return help ? 0 : 125;
	}
	for (int i = 2; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--config-json") == 0 && !cfg) {
			struct err *je = NULL;

			cfg = json_parse_strict(argv[i + 1], strlen(argv[i + 1]), &je);
			err_free(je);
		}
		else if (strcmp(argv[i], "--state-dir") == 0 && !state)
			state = realpath(argv[i + 1], NULL);
	}
	if (!cfg || !state || argc % 2 != 0) {
		fputs(ssh_usage, stderr);
		return 125;
	}
	int r = ssh_conn_from_config(&c, cfg, state, &e);
	if (r == 0)
		r = ssh_probe(&c, state, false, &home, &userns, &report, &e);
	ssh_conn_clear(&c);
	if (report && (text = json_dumps(report, JSON_INDENT(2) | JSON_PRESERVE_ORDER)))
		printf("%s\n", text);
	if (r < 0) {
		err_print(stderr, e);
		err_free(e);
		return 125;
	}
	return 0;
}
