/* create.c: a segment's containers, made from its recorded plan
 * and not started: the private volume (a small tmpfs owned by the
 * operator), the egress network, the gateway companion (started: it
 * serves the volume's socket), the runtime copied into the volume, and
 * the workload. No second container: a running one of the same job
 * refuses, stopped ones are removed first. The secrets go to a file in
 * the run dir the runtime removes, never into the container's
 * environment as the API shows it. */
#include "container/docker/docker.h"
#include "container/docker/internal.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/sha256.h"
#include "lib/strv.h"
#include "policy/envfilter.h"

#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static const char *str(const json_t *o, const char *k)
{
	return json_string_value(json_object_get(o, k));
}

int docker_job_key(const char *host, const char *job, char out[DOCKER_KEY_LEN + 1])
{
	_cleanup_free_ char *hk = NULL;
	char hex[SHA256_HEX_LEN + 1];

	if (asprintf(&hk, "%s/%s", host, job) < 0 || sha256_hex(hk, strlen(hk), hex) < 0)
		return -1;
	memcpy(out, hex, DOCKER_KEY_LEN);
	out[DOCKER_KEY_LEN] = '\0';
	return 0;
}

bool docker_name_of_job(const char *name, const char *host, const char *job)
{
	char key[DOCKER_KEY_LEN + 1], prefix[DOCKER_KEY_LEN + 16];
	size_t n;

	if (!name || !host || !job || docker_job_key(host, job, key) < 0)
		return false;
	if (name[0] == '/')
		name++;
	snprintf(prefix, sizeof(prefix), "cordon-%s-", key);
	if (strncmp(name, prefix, strlen(prefix)) != 0)
		return false;
	name += strlen(prefix);
	n = strspn(name, "0123456789");
	return n > 0 && n <= 7 && (!name[n] || strcmp(name + n, "-gw") == 0);
}

static json_t *labels(const char *host, const char *job, unsigned int seg, const char *digest,
		      const char *role)
{
	char n[16];

	snprintf(n, sizeof(n), "%u", seg);
	json_t *l = json_pack("{s:s, s:s, s:s, s:s}", CONTAINER_LABEL_HOST, host,
			      CONTAINER_LABEL_JOB, job, CONTAINER_LABEL_SEGMENT, n,
			      CONTAINER_LABEL_ROLE, role);
	if (l && digest)
		json_object_set_new(l, CONTAINER_LABEL_DIGEST, json_string(digest));
	return l;
}

/* A workspace as a label: the first 16 hex digits of its path's hash. */
static int workspace_label(const char *ws, char out[17])
{
	char hex[65];

	if (sha256_hex(ws, strlen(ws), hex) < 0)
		return -1;
	memcpy(out, hex, 16);
	out[16] = '\0';
	return 0;
}

/* Is an attach of another job running on this workspace? Its container
 * is the operator's session, but the agent runs in it and writes the
 * workspace: Docker resolves a new container's mounts by path, after
 * cordon checked them, so none is made there beside it (as the daemon
 * refuses a job beside another live one). A container takes every label
 * of its image that its create does not set: the workspace label counts
 * only on a container whose role cordon set to attach (an agent's image
 * that carries another workspace's label would otherwise lock it). 0
 * none, -1 *e. */
static int attach_on_workspace(struct engine *g, const char *host, const char *job,
			       const char *ws, struct err **e)
{
	_cleanup_free_ char *lh = NULL, *lw = NULL;
	_cleanup_strv_ char **ids = NULL;
	char wsl[17];

	if (!ws)
		return 0;
	if (workspace_label(ws, wsl) < 0 || asprintf(&lh, "%s=%s", CONTAINER_LABEL_HOST, host) < 0 ||
	    asprintf(&lw, "%s=%s", DOCKER_LABEL_WORKSPACE, wsl) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	char *const want[] = { lh, lw, NULL };
	if (engine_container_list(g, want, &ids, e) < 0)
		return err_wrap(e, "list the attaches on the workspace");
	for (size_t i = 0; ids[i]; i++) {
		struct engine_container c = { 0 };
		int r = engine_container_inspect(g, ids[i], &c, e);
		const char *other = r == ENGINE_FOUND
					    ? json_string_value(json_object_get(c.labels,
										CONTAINER_LABEL_JOB))
					    : NULL;
		const char *role = r == ENGINE_FOUND
					   ? json_string_value(json_object_get(c.labels,
									       CONTAINER_LABEL_ROLE))
					   : NULL;
		bool busy = r == ENGINE_FOUND && c.running && role && strcmp(role, "attach") == 0 &&
			    (!other || strcmp(other, job) != 0);

		if (busy)
			err_set(e, ERR_UNAVAILABLE, 0,
				"the workspace `%s` is in use by an attach of job %s: a container "
				"is made only on a workspace no other job runs on",
				ws, other ? other : "(unknown)");
		engine_container_clear(&c);
		if (r < 0)
			return err_wrap(e, "inspect an attach on the workspace");
		if (busy)
			return -1;
	}
	return 0;
}

static void made_clear(struct docker_made *m)
{
	free(m->workload);
	free(m->gateway);
	free(m->network);
	free(m->volume);
	memset(m, 0, sizeof(*m));
}

int docker_remove_made(struct engine *g, const struct docker_made *m, struct err **e)
{
	struct err *first = NULL, *one = NULL;

	/* the containers first: a network or volume in use stays */
	if (m->workload && engine_container_remove(g, m->workload, true, &one) < 0 && !first)
		first = steal_pointer(&one);
	err_free(steal_pointer(&one));
	if (m->gateway && engine_container_remove(g, m->gateway, true, &one) < 0 && !first)
		first = steal_pointer(&one);
	err_free(steal_pointer(&one));
	if (m->network && engine_network_remove(g, m->network, &one) < 0 && !first)
		first = steal_pointer(&one);
	err_free(steal_pointer(&one));
	if (m->volume && engine_volume_remove(g, m->volume, true, &one) < 0 && !first)
		first = steal_pointer(&one);
	err_free(steal_pointer(&one));
	if (first) {
		*e = first;
		return -1;
	}
	return 0;
}

int docker_clear_job(struct engine *g, const char *host, const char *job, struct err **e)
{
	_cleanup_free_ char *lh = NULL, *lj = NULL;
	_cleanup_strv_ char **ids = NULL, **nets = NULL, **vols = NULL;

	if (asprintf(&lh, "%s=%s", CONTAINER_LABEL_HOST, host) < 0 ||
	    asprintf(&lj, "%s=%s", CONTAINER_LABEL_JOB, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	char *const want[] = { lh, lj, NULL };
	/* a listing that fails never reads as "none" */
	if (engine_container_list(g, want, &ids, e) < 0)
		return err_wrap(e, "list the job's containers");
	for (size_t i = 0; ids[i]; i++) {
		struct engine_container c = { 0 };
		int r = engine_container_inspect(g, ids[i], &c, e);
		const char *role = r == ENGINE_FOUND
					   ? json_string_value(json_object_get(c.labels,
									       CONTAINER_LABEL_ROLE))
					   : NULL;
		/* a companion is never "a second container"; anything else is */
		bool running = r == ENGINE_FOUND && c.running && !(role && strcmp(role, "gateway") == 0);

		engine_container_clear(&c);
		if (r < 0)
			return err_wrap(e, "inspect the job's container `%.12s`", ids[i]);
		if (running)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "container_running: the job's container `%.12s` is running; "
				       "a second one is never started beside it",
				       ids[i]);
	}
	/* stopped ones go, but only those cordon made (by their name): one
	 * that has the labels from its image is not the job's to remove */
	for (size_t i = 0; ids[i]; i++) {
		struct engine_container c = { 0 };
		int r = engine_container_inspect(g, ids[i], &c, e);
		bool ours = r == ENGINE_FOUND && docker_name_of_job(c.name, host, job);

		engine_container_clear(&c);
		if (r < 0)
			return err_wrap(e, "inspect the job's container `%.12s`", ids[i]);
		if (ours && engine_container_remove(g, ids[i], true, e) < 0)
			return err_wrap(e, "remove the job's stopped container `%.12s`", ids[i]);
	}
	if (engine_network_list(g, want, &nets, e) < 0)
		return err_wrap(e, "list the job's networks");
	for (size_t i = 0; nets[i]; i++)
		if (engine_network_remove(g, nets[i], e) < 0)
			return err_wrap(e, "remove the job's network");
	if (engine_volume_list(g, want, &vols, e) < 0)
		return err_wrap(e, "list the job's volumes");
	for (size_t i = 0; vols[i]; i++)
		if (engine_volume_remove(g, vols[i], true, e) < 0)
			return err_wrap(e, "remove the job's volume");
	return 0;
}

/* The command's environment, split: what the API may show, and the
 * credential-like entries, which go to the secrets file (names upper
 * case: the runtime takes no other). */
static int split_env(const struct plan *p, char ***shown, json_t **secrets, struct err **e)
{
	_cleanup_strv_ char **pass = NULL, **env = NULL;
	_cleanup_json_ json_t *sec = json_object();
	const char *home = str(json_object_get(p->data, "container"), "home");

	if (!sec || json_to_strv(json_object_get(p->data, "env_pass"), &pass) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	if (envfilter_for_command(environ, pass, p->env, NULL, &env) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
	/* a job's home is its HOME and claude's config directory (set here,
	 * not in the launch's environment, where HOME is the operator's and
	 * names what the policy protects) */
	if (home) {
		char *kv = NULL;

		if (asprintf(&kv, "HOME=%s", home) < 0 || strv_push_take(shown, kv) < 0 ||
		    asprintf(&kv, "CLAUDE_CONFIG_DIR=%s", home) < 0 || strv_push_take(shown, kv) < 0)
			goto oom;
	}
	for (size_t i = 0; env[i]; i++) {
		size_t n = strcspn(env[i], "=");

		if (home && (strncmp(env[i], "HOME=", 5) == 0 ||
			     strncmp(env[i], "CLAUDE_CONFIG_DIR=", 18) == 0))
			continue;

		if (!envfilter_is_credential(env[i])) {
			if (strv_push(shown, env[i]) < 0)
				goto oom;
			continue;
		}
		_cleanup_free_ char *name = strndup(env[i], n);
		if (!name)
			goto oom;
		if (!n || strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") != n ||
		    (name[0] >= '0' && name[0] <= '9')) {
			envfilter_scrub(env);
			return err_set(e, ERR_CONFIG, 0,
				       "the credential `%s` must have an upper-case name to reach a "
				       "container (through its secrets file)",
				       name);
		}
		if (json_object_set_new(sec, name, json_string(env[i] + n + 1)) < 0) {
			envfilter_scrub(env);
			return err_set(e, ERR_CONFIG, 0, "the credential `%s` is not valid UTF-8",
				       name);
		}
	}
	envfilter_scrub(env);
	*secrets = steal_pointer(&sec);
	return 0;
oom:
	envfilter_scrub(env);
	return err_set(e, ERR_INTERNAL, ENOMEM, "environment");
}

void docker_drop_secrets(const char *run_dir)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, run_dir, O_PATH | O_DIRECTORY, 0);

	if (dfd >= 0)
		(void)unlinkat(dfd, CONTAINER_SECRETS_FILE, 0);
}

void docker_discard(const struct plan_paths *paths, const json_t *pin)
{
	struct err *e = NULL;

	docker_drop_secrets(paths->run_dir);
	if (docker_remove(pin, &e) < 0) {
		err_wrap(&e, "remove the segment's containers");
		err_print(stderr, e);
	}
	err_free(e);
}

/* The secrets file in the run dir, 0600, made new: whatever an earlier
 * segment's container left at that name is removed first, never opened. */
static int write_secrets(const char *run_dir, json_t *secrets, struct err **e)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, run_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;

	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir `%s`", run_dir);
	if (unlinkat(dfd, CONTAINER_SECRETS_FILE, 0) < 0 && errno != ENOENT)
		return err_set(e, ERR_UNAVAILABLE, errno, "run dir: remove `%s`",
			       CONTAINER_SECRETS_FILE);
	if (json_object_size(secrets) == 0)
		return 0;
	text = json_dumps(secrets, JSON_COMPACT);
	fd = openat(dfd, CONTAINER_SECRETS_FILE, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (!text || fd < 0 || fs_write_exact(fd, text, strlen(text)) < 0) {
		int saved = errno;

		if (text)
			explicit_bzero(text, strlen(text));
		(void)unlinkat(dfd, CONTAINER_SECRETS_FILE, 0);
		return err_set(e, ERR_UNAVAILABLE, saved, "run dir: write `%s`",
			       CONTAINER_SECRETS_FILE);
	}
	explicit_bzero(text, strlen(text));
	return 0;
}

static json_t *bind_mount(const char *src, const char *dst, bool ro)
{
	return json_pack("{s:s, s:s, s:s, s:b, s:{s:s}}", "Type", "bind", "Source", src, "Target",
			 dst, "ReadOnly", ro, "BindOptions", "Propagation", "rprivate");
}

static json_t *hardened(const json_t *c, long long pids, long long memory, long long nano_cpus)
{
	json_t *h = json_pack("{s:[s], s:[s], s:b, s:{s:s}, s:b, s:s}", "CapDrop", "ALL",
			      "SecurityOpt", "no-new-privileges", "ReadonlyRootfs", 1,
			      "RestartPolicy", "Name", "no", "Privileged", 0, "IpcMode", "private");

	if (h && pids > 0)
		json_object_set_new(h, "PidsLimit", json_integer(pids));
	if (h && memory > 0) {
		json_object_set_new(h, "Memory", json_integer(memory));
		json_object_set_new(h, "MemorySwap", json_integer(memory));
	}
	if (h && nano_cpus > 0)
		json_object_set_new(h, "NanoCpus", json_integer(nano_cpus));
	(void)c;
	return h;
}

static char *user_of(const json_t *c)
{
	char *u = NULL;

	if (asprintf(&u, "%d:%d", (int)json_integer_value(json_object_get(c, "uid")),
		     (int)json_integer_value(json_object_get(c, "gid"))) < 0)
		return NULL;
	return u;
}

/* The companion's argv: cordon's gateway on the volume's socket, with
 * the segment's lists. */
static json_t *gateway_cmd(const json_t *data, const char *audit)
{
	json_t *cmd = json_pack("[s, s, s, s, s]", "gateway", "--listen",
				"unix:" DOCKER_CHANNEL_SOCK, "--audit", audit), *v;
	static const char *const lists[][2] = { { "hosts", "--allow" },
						 { "deny_hosts", "--deny" },
						 { "allow_ranges", "--allow-range" } };
	size_t i;

	for (size_t k = 0; cmd && k < sizeof(lists) / sizeof(*lists); k++)
		json_array_foreach(json_object_get(data, lists[k][0]), i, v) {
			json_array_append_new(cmd, json_string(lists[k][1]));
			json_array_append(cmd, v);
		}
	/* the host's addresses are its own to the companion too: a name
	 * resolving to one of them is refused as it is on the host */
	struct ifaddrs *ifa = NULL;
	size_t nh = 0;
	if (cmd && getifaddrs(&ifa) == 0) {
		for (const struct ifaddrs *a = ifa; a && nh < 64; a = a->ifa_next) {
			char ip[INET6_ADDRSTRLEN];
			const void *bytes = !a->ifa_addr ? NULL
					    : a->ifa_addr->sa_family == AF_INET
						    ? (const void *)&((struct sockaddr_in *)a->ifa_addr)->sin_addr
					    : a->ifa_addr->sa_family == AF_INET6
						    ? (const void *)&((struct sockaddr_in6 *)a->ifa_addr)->sin6_addr
						    : NULL;

			if (bytes && inet_ntop(a->ifa_addr->sa_family, bytes, ip, sizeof(ip))) {
				json_array_append_new(cmd, json_string("--host-address"));
				json_array_append_new(cmd, json_string(ip));
				nh++;
			}
		}
		freeifaddrs(ifa);
	}
	if (cmd && str(data, "toolbelt")) {
		json_array_append_new(cmd, json_string("--toolbelt-socket"));
		json_array_append(cmd, json_object_get(data, "toolbelt"));
	}
	return cmd;
}

static int make_all(struct engine *g, const struct plan *p, const struct plan_paths *paths,
		    const char *host, const char *key, json_t *secrets_env_shown,
		    struct docker_made *m, struct err **e)
{
	const json_t *data = p->data, *c = json_object_get(data, "container");
	const char *tbdir = NULL;
	_cleanup_free_ char *vol = NULL, *net = NULL, *wname = NULL, *gname = NULL, *user = NULL,
			   *audit_dir = NULL, *audit = NULL, *opts = NULL, *bytes = NULL;
	_cleanup_free_ void *tar = NULL;
	_cleanup_json_ json_t *vl = NULL, *gl = NULL, *wl = NULL, *gspec = NULL, *wspec = NULL;
	size_t len = 0, tlen = 0;
	char hex[65];
	unsigned int seg = paths->segment;

	if (asprintf(&vol, "cordon-%s-%u-ch", key, seg) < 0 ||
	    asprintf(&net, "cordon-%s-%u-net", key, seg) < 0 ||
	    asprintf(&wname, "cordon-%s-%u", key, seg) < 0 ||
	    asprintf(&gname, "cordon-%s-%u-gw", key, seg) < 0 || !(user = user_of(c)) ||
	    asprintf(&audit_dir, "%s/%s/%u-gateway", paths->exec_dir, CONTAINER_RECORDS_DIR, seg) < 0 ||
	    !(audit = fs_path_join(audit_dir, "audit.log")) ||
	    asprintf(&opts, "size=16m,uid=%d,gid=%d,mode=0700",
		     (int)json_integer_value(json_object_get(c, "uid")),
		     (int)json_integer_value(json_object_get(c, "gid"))) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker create");
	/* the runtime the plan names, and no other */
	if (container_runtime(&bytes, &len, hex, e) < 0)
		return -1;
	if (strcmp(hex, str(c, "runtime")) != 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "cordon's static binary changed since the plan was made");
	/* the gateway's audit log: in the job's container records */
	{
		_cleanup_close_ int xfd = fs_open_nofollow(AT_FDCWD, paths->exec_dir,
							   O_PATH | O_DIRECTORY, 0);
		_cleanup_free_ char *rel = NULL;
		if (xfd < 0 || asprintf(&rel, "%s/%u-gateway", CONTAINER_RECORDS_DIR, seg) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "`%s`", paths->exec_dir);
		int afd = fs_mkdirs_beneath(xfd, rel, 0700, e);
		if (afd < 0)
			return -1;
		close(afd);
	}
	vl = labels(host, paths->execution, seg, NULL, "channel");
	gl = labels(host, paths->execution, seg, NULL, "gateway");
	/* an attach's container runs on the operator's terminal */
	bool tty = json_is_true(json_object_get(c, "terminal"));
	wl = labels(host, paths->execution, seg, p->digest, tty ? "attach" : "workload");
	if (!vl || !gl || !wl)
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	/* an attach names its workspace: no other job's container is made on
	 * it while the attach runs (see attach_on_workspace) */
	char wsl[17];
	if (tty && str(data, "workspace") &&
	    (workspace_label(str(data, "workspace"), wsl) < 0 ||
	     json_object_set_new(wl, DOCKER_LABEL_WORKSPACE, json_string(wsl)) < 0))
		return err_set(e, ERR_INTERNAL, ENOMEM, "labels");
	/* 1. the private volume: a small tmpfs of the operator's */
	json_t *vo = json_pack("{s:s, s:s, s:s}", "type", "tmpfs", "device", "tmpfs", "o", opts);
	int r = vo ? engine_volume_create(g, vol, vl, vo, e) : -1;
	json_decref(vo);
	if (r < 0)
		return err_wrap(e, "create the channel volume");
	m->volume = steal_pointer(&vol);
	/* 2. the egress network, the companion's alone */
	if (engine_network_create(g, net, gl, false, NULL, false, &m->network, e) < 0)
		return err_wrap(e, "create the egress network");
	/* 3. the companion, hardened as the workload, started */
	json_t *gmounts = json_pack("[{s:s, s:s, s:s, s:b}]", "Type", "volume", "Source", m->volume,
				    "Target", DOCKER_VOLUME_PATH, "ReadOnly", 0);
	json_array_append_new(gmounts, bind_mount(audit_dir, audit_dir, false));
	tbdir = str(data, "toolbelt") ? str(c, "toolbelt_dir") : NULL;
	if (tbdir)
		json_array_append_new(gmounts, bind_mount(tbdir, tbdir, true));
	json_t *gh = hardened(c, DOCKER_GATEWAY_PIDS, DOCKER_GATEWAY_MEMORY, 0);
	if (gh) {
		json_object_set_new(gh, "NetworkMode", json_string(m->network));
		json_object_set_new(gh, "Mounts", gmounts);
	} else {
		json_decref(gmounts);
	}
	gspec = json_pack("{s:s, s:[s], s:o, s:s, s:O, s:o}", "Image", str(c, "gateway_image"),
			  "Entrypoint", "/cordon", "Cmd", gateway_cmd(data, audit), "User", user,
			  "Labels", gl, "HostConfig", gh);
	if (!gspec)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker create");
	if (engine_container_create(g, gname, gspec, &m->gateway, e) < 0)
		return err_wrap(e, "create the gateway companion");
	if (engine_container_start(g, m->gateway, e) < 0)
		return err_wrap(e, "start the gateway companion");
	/* 4. the runtime into the volume, through the companion's mount
	 * (the workload mounts it read-only) */
	struct engine_tar_file f = { .name = "cordon", .mode = 0555, .data = bytes, .len = len };
	if (engine_tar_build(&f, 1, 0, &tar, &tlen, e) < 0 ||
	    engine_container_put_archive(g, m->gateway, DOCKER_VOLUME_PATH, tar, tlen, e) < 0)
		return err_wrap(e, "copy cordon's runtime into the channel volume");
	/* 5. the workload: no network, the runtime its pid 1 */
	json_t *wmounts = json_array(), *mv;
	size_t i;
	json_array_foreach(json_object_get(c, "mounts"), i, mv) {
		json_array_append_new(wmounts, bind_mount(str(mv, "source"), str(mv, "target"),
						    json_is_true(json_object_get(mv, "read_only"))));
	}
	json_array_append_new(wmounts, json_pack("{s:s, s:s, s:s, s:b}", "Type", "volume", "Source",
						 m->volume, "Target", DOCKER_VOLUME_PATH,
						 "ReadOnly", 1));
	const json_t *lim = json_object_get(c, "limits");
	json_t *wh = hardened(c, json_integer_value(json_object_get(lim, "pids")),
			      json_integer_value(json_object_get(lim, "memory")),
			      json_integer_value(json_object_get(lim, "cpu_millis")) * 1000000LL);
	if (wh) {
		json_object_set_new(wh, "NetworkMode", json_string("none"));
		json_object_set_new(wh, "Mounts", wmounts);
		json_object_set_new(wh, "Tmpfs", json_pack("{s:s}", "/tmp",
							   "rw,nosuid,nodev,mode=1777"));
	} else {
		json_decref(wmounts);
	}
	json_t *argv = json_array();
	for (size_t k = 1; p->argv[k]; k++)
		json_array_append_new(argv, json_string(p->argv[k]));
	wspec = json_pack("{s:s, s:[s], s:o, s:O, s:s, s:s, s:O, s:b, s:b, s:b, s:b, s:b, s:b, "
			  "s:o}",
			  "Image", str(c, "image"), "Entrypoint", p->argv[0], "Cmd", argv, "Env",
			  secrets_env_shown, "WorkingDir", str(data, "workspace"), "User", user,
			  "Labels", wl, "OpenStdin", 1, "StdinOnce", 1, "AttachStdin", 1,
			  "AttachStdout", 1, "AttachStderr", 1, "Tty", tty, "HostConfig", wh);
	/* the image's healthcheck off: the daemon would run its command in
	 * the container beside cinit, outside its Landlock and seccomp */
	if (!wspec || json_object_set_new(wspec, "Healthcheck",
					  json_pack("{s:[s]}", "Test", "NONE")) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "docker create");
	if (engine_container_create(g, wname, wspec, &m->workload, e) < 0)
		return err_wrap(e, "create the container");
	return 0;
}

int docker_create(const struct plan *p, const struct plan_paths *paths,
		  const struct provider_launch *cl, json_t **pin, struct err **e)
{
	const json_t *c = json_object_get(p->data, "container");
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_strv_ char **shown = NULL;
	_cleanup_json_ json_t *secrets = NULL;
	struct engine_info info = { 0 };
	struct docker_made m = { 0 };
	char host[17], key[DOCKER_KEY_LEN + 1];
	int r = -1;

	if (!c || !str(c, "endpoint") || !str(c, "daemon"))
		return err_set(e, ERR_INTERNAL, 0, "the plan holds no container");
	if (container_host_label(cl->state_dir, host, e) < 0)
		return -1;
	if (docker_job_key(host, paths->execution, key) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "names");
	json_t *ep = json_pack("{s:s}", "endpoint", str(c, "endpoint"));
	r = ep ? docker_open(ep, &g, NULL, e) : err_set(e, ERR_INTERNAL, ENOMEM, "endpoint");
	json_decref(ep);
	if (r < 0)
		return -1;
	r = -1;
	/* the daemon the plan was made on, and no other */
	if (engine_info(g, &info, e) < 0)
		goto out;
	if (strcmp(info.id, str(c, "daemon")) != 0) {
		err_set(e, ERR_UNAVAILABLE, 0, "the Docker daemon changed since the plan was made");
		goto out;
	}
	if (docker_clear_job(g, host, paths->execution, e) < 0 ||
	    attach_on_workspace(g, host, paths->execution, str(p->data, "workspace"), e) < 0)
		goto out;
	if (split_env(p, &shown, &secrets, e) < 0)
		goto out;
	json_t *shown_j = json_strv(shown ? shown : (char *[]){ NULL });
	if (!shown_j) {
		err_set(e, ERR_CONFIG, 0, "the environment is not valid UTF-8");
		goto out;
	}
	if (write_secrets(paths->run_dir, secrets, e) < 0 ||
	    make_all(g, p, paths, host, key, shown_j, &m, e) < 0) {
		json_decref(shown_j);
		struct err *re = NULL;
		if (docker_remove_made(g, &m, &re) < 0)
			err_print(stderr, re);
		err_free(re);
		write_secrets(paths->run_dir, NULL, &re);
		err_free(re);
		goto out;
	}
	json_decref(shown_j);
	*pin = json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:s, s:I}", "provider", "docker",
			 "endpoint", str(c, "endpoint"), "daemon", info.id, "image", str(c, "image"),
			 "container", m.workload, "gateway", m.gateway, "network", m.network,
			 "volume", m.volume, "host", host, "time", (json_int_t)time(NULL));
	if (!*pin) {
		err_set(e, ERR_INTERNAL, ENOMEM, "pin");
		goto out;
	}
	/* the container record, beside the plan's */
	{
		if (container_write_pin(paths, *pin, e) < 0) {
			json_decref(*pin);
			*pin = NULL;
			struct err *re = NULL;
			if (docker_remove_made(g, &m, &re) < 0)
				err_print(stderr, re);
			err_free(re);
			goto out;
		}
	}
	r = 0;
out:
	made_clear(&m);
	engine_info_clear(&info);
	return r;
}
