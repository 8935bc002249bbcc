/* doctor.c: the Docker provider's doctor (docker.h): whether the
 * daemon a binding names can run its segments here, check by check, each
 * with a fix, in the shape of the process providers' doctors. Two checks
 * run containers for real. shared_path: a file a container running as
 * the operator writes into the state dir must be the operator's on the
 * host (a daemon that remaps users, or that cannot see this machine's
 * files, fails it). preflight: what a segment makes (the private volume,
 * the egress network, the gateway companion, cordon's runtime copied in)
 * and a workload of network mode none under `cordon cinit`, in which
 * `cordon netprobe` resolves nothing and reaches nothing directly (not
 * the outside, not this host by any address it has) while the gateway,
 * through cinit's relay, refuses a host its list does not hold. Both are
 * judged from what they did, never from how the daemon says it set them
 * up. Everything made carries dev.cordon.role=doctor, so that a leftover
 * can be found, and is removed before the doctor returns, whatever
 * happened. */
#include "container/docker/docker.h"
#include "container/docker/internal.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DOCTOR_CALL_TIMEOUT 10L	   /* seconds, per Engine call */
#define DOCTOR_WRITE_WAIT_MS 10000 /* for shared_path's file to show */
#define DOCTOR_RUN_WAIT_MS 30000   /* for the preflight workload to end */
#define DOCTOR_PROBE_MS "2000"	   /* each probe's deadline, inside */
/* The companion's list holds one host; the workload asks for another,
 * which the gateway refuses before it resolves anything. */
#define DOCTOR_ALLOWED "allowed.doctor.cordon.invalid"
#define DOCTOR_DENIED "denied.doctor.cordon.invalid"
/* What the workload tries to resolve: a query for it reaching any
 * resolver is a failure, whatever the answer. */
#define DOCTOR_NAME "example.com"
/* Direct probes of the outside: documentation addresses, which no one
 * answers; with any route at all they time out instead of failing at
 * once, and a time-out fails the check. */
#define DOCTOR_OUTSIDE4 "192.0.2.1:443"
#define DOCTOR_OUTSIDE6 "[2001:db8::1]:443"
#define DOCTOR_HOST_ADDRS 6
#define DOCTOR_PROBES_MAX 32 /* netprobe's own cap */

struct report {
	json_t *checks;
	bool ready;
	bool failed; /* an allocation: the report would lie */
};

static void add(struct report *r, const char *id, bool pass, const char *detail, const char *fix)
{
	json_t *c;

	if (!detail) {
		r->failed = true;
		return;
	}
	c = json_pack("{s:s, s:s, s:s, s:s}", "id", id, "status", pass ? "pass" : "fail",
		      "detail", detail, "fix", pass ? "" : fix);
	/* a detail naming a path that is not UTF-8 */
	if (!c)
		c = json_pack("{s:s, s:s, s:s, s:s}", "id", id, "status", pass ? "pass" : "fail",
			      "detail", "(the detail is not valid UTF-8)", "fix", pass ? "" : fix);
	if (!c || json_array_append_new(r->checks, c) < 0)
		r->failed = true;
	r->ready = r->ready && pass;
}

static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	char *s = NULL;

	va_start(ap, f);
	if (vasprintf(&s, f, ap) < 0)
		s = NULL;
	va_end(ap);
	return s;
}

static const char *msg(const struct err *e)
{
	return e && e->msg ? e->msg : "unknown error";
}

/* "<prefix><8 hex digits>": a name no other run of the doctor takes. */
static int doctor_name(const char *prefix, char out[48])
{
	unsigned char b[4];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b))
		return -1;
	snprintf(out, 48, "%s%02x%02x%02x%02x", prefix, b[0], b[1], b[2], b[3]);
	return 0;
}

static json_t *doctor_labels(void)
{
	return json_pack("{s:s}", CONTAINER_LABEL_ROLE, "doctor");
}

static char *operator_user(void)
{
	return fmt("%d:%d", (int)getuid(), (int)getgid());
}

/* As create.c hardens a segment's containers: every capability
 * dropped, no-new-privileges, a read-only root (a tmpfs /tmp), no
 * restart, the companion's limits. */
static json_t *hardened(const char *network, json_t *mounts)
{
	return json_pack("{s:[s], s:[s], s:b, s:{s:s}, s:b, s:s, s:s, s:I, s:I, s:I, s:{s:s}, s:o}",
			 "CapDrop", "ALL", "SecurityOpt", "no-new-privileges", "ReadonlyRootfs", 1,
			 "RestartPolicy", "Name", "no", "Privileged", 0, "IpcMode", "private",
			 "NetworkMode", network, "PidsLimit", (json_int_t)DOCKER_GATEWAY_PIDS,
			 "Memory", (json_int_t)DOCKER_GATEWAY_MEMORY, "MemorySwap",
			 (json_int_t)DOCKER_GATEWAY_MEMORY, "Tmpfs", "/tmp", "rw,nosuid,nodev,mode=1777",
			 "Mounts", mounts);
}

/* ---- shared_path ------------------------------------------------------ */

/* A fresh <state>/containers/docker/doctor-XXXXXXXX: *pfd its parent,
 * *name its name, *dir its path. */
static int fresh_dir(const char *state_dir, int *pfd, char name[48], char **dir, struct err **e)
{
	_cleanup_free_ char *canon = NULL;
	_cleanup_close_ int sfd = -1;

	if (fs_canonical(state_dir, &canon, e) < 0)
		return err_wrap(e, "the state dir `%s`", state_dir);
	sfd = fs_open_nofollow(AT_FDCWD, canon, O_PATH | O_DIRECTORY, 0);
	if (sfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the state dir `%s`", canon);
	if ((*pfd = fs_mkdirs_beneath(sfd, "containers/docker", 0755, e)) < 0)
		return err_wrap(e, "the state dir `%s`", canon);
	for (int i = 0; i < 8; i++) {
		if (doctor_name("doctor-", name) < 0)
			return err_set(e, ERR_INTERNAL, errno, "a random name");
		if (mkdirat(*pfd, name, 0700) == 0) {
			*dir = fmt("%s/containers/docker/%s", canon, name);
			return *dir ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "shared path");
		}
		if (errno != EEXIST)
			break;
	}
	name[0] = '\0';
	return err_set(e, ERR_UNAVAILABLE, errno, "make a directory in `%s/containers/docker`",
		       canon);
}

/* The container writes dir/written (the audit log `cordon gateway`
 * opens before it serves): wait until the host sees it, or the container
 * ends, or the time is up. */
static int await_file(struct engine *g, const char *id, int dfd, struct stat *st, char **why,
		      struct err **e)
{
	for (int waited = 0;; waited += 50) {
		struct engine_container c = { 0 };
		int r;

		if (fstatat(dfd, "written", st, AT_SYMLINK_NOFOLLOW) == 0)
			return 1;
		if (waited >= DOCTOR_WRITE_WAIT_MS) {
			*why = fmt("its file did not show on the host within %d s: does the daemon "
				   "see this machine's files (a remote daemon, or one in a VM)?",
				   DOCTOR_WRITE_WAIT_MS / 1000);
			return 0;
		}
		if (waited % 500 == 0) {
			r = engine_container_inspect(g, id, &c, e);
			bool ended = r == ENGINE_FOUND && !c.running;
			int code = c.exit_code;
			engine_container_clear(&c);
			if (r < 0)
				return -1;
			/* it may have written just before it ended */
			if (fstatat(dfd, "written", st, AT_SYMLINK_NOFOLLOW) == 0)
				return 1;
			if (r == ENGINE_GONE || ended) {
				*why = fmt("it ended (status %d) and wrote nothing the host sees: can the "
					   "operator's uid write there through the daemon?",
					   r == ENGINE_GONE ? -1 : code);
				return 0;
			}
		}
		usleep(50 * 1000);
	}
}

/* What shared_path made: started first, judged after the preflight
 * (the container writes while the preflight runs). */
struct shared {
	const char *state_dir;
	char *dir, *file, *user, *id;
	int pfd, dfd;
	char name[48];
	struct err *e;
};

static void shared_begin(struct engine *g, const char *gw, const char *state_dir,
			 struct shared *s)
{
	_cleanup_json_ json_t *spec = NULL;

	s->state_dir = state_dir;
	if (!state_dir || fresh_dir(state_dir, &s->pfd, s->name, &s->dir, &s->e) < 0)
		return;
	s->dfd = openat(s->pfd, s->name, O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (s->dfd < 0 || !(s->file = fs_path_join(s->dir, "written")) ||
	    !(s->user = operator_user())) {
		err_set(&s->e, ERR_UNAVAILABLE, errno, "`%s`", s->dir);
		return;
	}
	/* cordon's gateway opens its audit log (a regular file) before it
	 * serves: the file, written by the container's process, is the probe */
	json_t *mounts = json_pack("[{s:s, s:s, s:s, s:b, s:{s:s}}]", "Type", "bind", "Source",
				   s->dir, "Target", s->dir, "ReadOnly", 0, "BindOptions",
				   "Propagation", "rprivate");
	spec = json_pack("{s:s, s:[s], s:[s, s, s, s, s], s:s, s:o, s:o}", "Image", gw,
			 "Entrypoint", "/cordon", "Cmd", "gateway", "--listen",
			 "unix:/tmp/doctor.sock", "--audit", s->file, "User", s->user, "Labels",
			 doctor_labels(), "HostConfig", hardened("none", mounts));
	if (!spec) {
		err_set(&s->e, ERR_CONFIG, 0, "the state dir's path is not UTF-8");
		return;
	}
	if (engine_container_create(g, NULL, spec, &s->id, &s->e) == 0)
		engine_container_start(g, s->id, &s->e);
}

static void shared_end(struct report *r, struct engine *g, struct shared *s)
{
	static const char fix[] =
		"use a Docker daemon on this machine that runs a container's processes as the "
		"uid and gid it is given (no userns-remap, not rootless, not in a VM that "
		"cannot see the state dir)";
	_cleanup_free_ char *why = NULL, *detail = NULL;
	struct err *re = NULL;
	struct stat st = { 0 };
	int seen = -1;

	if (!s->state_dir) {
		add(r, "shared_path", false, "not checked: no state dir given",
		    "give the daemon's state dir (--state-dir)");
		return;
	}
	if (!s->e)
		seen = await_file(g, s->id, s->dfd, &st, &why, &s->e);
	/* whatever happened: the container, then the directory */
	if (s->id && engine_container_remove(g, s->id, true, &re) < 0)
		err_wrap(&re, "remove the doctor's container `%.12s`", s->id);
	if (s->name[0] && fs_remove_tree(s->pfd, s->name, 2) < 0 && !re)
		err_set(&re, ERR_UNAVAILABLE, errno, "remove `%s`", s->dir);
	bool owned = seen == 1 && S_ISREG(st.st_mode) && st.st_uid == getuid() &&
		     st.st_gid == getgid();
	if (seen < 0)
		detail = fmt("a container as the operator writing into `%s`: %s", s->state_dir,
			     msg(s->e));
	else if (seen == 0)
		detail = fmt("a container as %s wrote into `%s`, but %s", s->user, s->dir,
			     why ? why : "nothing showed");
	else if (!owned)
		detail = fmt("a container as %s wrote `%s`, which the host sees owned by %u:%u "
			     "(the daemon maps users, or it is not this machine's file)",
			     s->user, s->file, (unsigned)st.st_uid, (unsigned)st.st_gid);
	else if (re)
		detail = fmt("a container as %s wrote `%s`, but the doctor could not clean up: %s",
			     s->user, s->file, msg(re));
	else
		detail = fmt("a container as %s (every capability dropped, no-new-privileges, a "
			     "read-only root, no network) wrote `%s`, owned by %s on the host",
			     s->user, s->file, s->user);
	add(r, "shared_path", owned && !re, detail, fix);
	err_free(re);
}

static void shared_clear(struct shared *s)
{
	free(s->dir);
	free(s->file);
	free(s->user);
	free(s->id);
	if (s->pfd >= 0)
		close(s->pfd);
	if (s->dfd >= 0)
		close(s->dfd);
	err_free(s->e);
}

/* ---- preflight -------------------------------------------------------- */

/* What the workload printed. */
struct collected {
	char out[16384], err[2048];
	size_t nout, nerr;
};

static void collect(void *ctx, int stream, const void *p, size_t n)
{
	struct collected *c = ctx;
	char *buf = stream == 1 ? c->out : c->err;
	size_t cap = (stream == 1 ? sizeof(c->out) : sizeof(c->err)) - 1;
	size_t *have = stream == 1 ? &c->nout : &c->nerr;

	if (stream != 1 && stream != 2)
		return;
	n = n < cap - *have ? n : cap - *have;
	memcpy(buf + *have, p, n);
	*have += n;
	buf[*have] = '\0';
}

static long long now_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (long long)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* The attach stream until it ends (the workload ended) or the time is up. */
static int read_all(int fd, struct collected *c, struct err **e)
{
	struct engine_demux dm = { 0 };
	long long deadline = now_ms() + DOCTOR_RUN_WAIT_MS;
	char buf[4096];

	for (;;) {
		struct pollfd p = { fd, POLLIN, 0 };
		long long left = deadline - now_ms();
		int r = poll(&p, 1, left > 0 ? (int)left : 0);
		ssize_t n;

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? err_set(e, ERR_UNAVAILABLE, errno, "read the workload's output")
				     : err_set(e, ERR_UNAVAILABLE, 0,
					       "the workload did not end within %d s",
					       DOCTOR_RUN_WAIT_MS / 1000);
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "read the workload's output");
		if (n == 0)
			return 0;
		if (engine_demux_feed(&dm, buf, (size_t)n, collect, c) < 0)
			return err_set(e, ERR_UNAVAILABLE, 0, "the workload's output is malformed");
	}
}

static bool push_probe(char ***v, const char *kind, const char *a, const char *b)
{
	char *p = fmt("%s%s%s", kind, a, b ? b : "");

	if (!p || strv_contains(*v, p) || strv_len(*v) >= DOCTOR_PROBES_MAX) {
		free(p);
		return p != NULL;
	}
	return strv_push_take(v, p) == 0;
}

/* An address as netprobe takes it: IPv6 in brackets when a port follows. */
static bool push_addr(char ***v, const char *kind, int family, const void *addr,
		      const char *port)
{
	char ip[INET6_ADDRSTRLEN], b[INET6_ADDRSTRLEN + 2];

	if (!inet_ntop(family, addr, ip, sizeof(ip)))
		return true;
	if (family == AF_INET6 && port)
		snprintf(b, sizeof(b), "[%s]", ip);
	else
		snprintf(b, sizeof(b), "%s", ip);
	return push_probe(v, kind, b, port);
}

/* An address, as text, to push: only a literal netprobe can parse. */
static bool push_text(char ***v, const char *kind, const char *ip, const char *port)
{
	struct in_addr a4;
	struct in6_addr a6;

	if (inet_pton(AF_INET, ip, &a4) == 1)
		return push_addr(v, kind, AF_INET, &a4, port);
	if (inet_pton(AF_INET6, ip, &a6) == 1)
		return push_addr(v, kind, AF_INET6, &a6, port);
	return true;
}

/* What the workload probes: the name through its own resolv.conf, this
 * host's resolvers and the host's address on the egress network; the
 * outside directly; this host by every address it has (and the daemon's
 * own port when it is reached over tcp); and, through the relay, a host
 * the gateway's list does not hold. */
static int probes(const char *endpoint, const char *bridge_gw, char ***v)
{
	_cleanup_fclose_ FILE *f = fopen("/etc/resolv.conf", "re");
	struct ifaddrs *ifs = NULL;
	char line[256], ns[INET6_ADDRSTRLEN + 1], port[8] = ":80", host[64] = "";
	bool ok = push_probe(v, "dns:", DOCTOR_NAME, NULL);
	int n = 0;

	while (ok && f && n < 3 && fgets(line, sizeof(line), f))
		if (sscanf(line, " nameserver %46s", ns) == 1 && ++n)
			ok = push_text(v, "dns:" DOCTOR_NAME "@", ns, NULL);
	/* tcp://IP[:PORT]: the daemon's own port (2375 when none is
	 * given), on every address probed */
	if (endpoint && strncmp(endpoint, "tcp://", 6) == 0) {
		const char *hp = endpoint + 6, *colon = strrchr(hp, ':');
		size_t hl = colon ? (size_t)(colon - hp) : strlen(hp);

		if (colon && colon[1] && strlen(colon + 1) <= 5 &&
		    strspn(colon + 1, "0123456789") == strlen(colon + 1)) {
			snprintf(port, sizeof(port), "%s", colon);
		} else {
			snprintf(port, sizeof(port), ":2375");
			hl = strlen(hp);
		}
		if (hl >= 2 && hp[0] == '[' && hp[hl - 1] == ']') {
			hp++;
			hl -= 2;
		}
		if (hl < sizeof(host)) {
			memcpy(host, hp, hl);
			host[hl] = '\0';
			ok = ok && push_text(v, "tcp:", host, port);
		}
	}
	if (bridge_gw)
		ok = ok && push_text(v, "dns:" DOCTOR_NAME "@", bridge_gw, NULL) &&
		     push_text(v, "tcp:", bridge_gw, port);
	ok = ok && push_probe(v, "tcp:", DOCTOR_OUTSIDE4, NULL) &&
	     push_probe(v, "tcp:", DOCTOR_OUTSIDE6, NULL);
	n = 0;
	if (getifaddrs(&ifs) == 0)
		for (struct ifaddrs *i = ifs; ok && i && n < DOCTOR_HOST_ADDRS; i = i->ifa_next) {
			const void *sa = i->ifa_addr;

			if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET) {
				const struct in_addr *a = &((const struct sockaddr_in *)sa)->sin_addr;
				if ((ntohl(a->s_addr) >> 24) != 127 && a->s_addr != 0 && ++n)
					ok = push_addr(v, "tcp:", AF_INET, a, port);
			} else if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET6) {
				const struct in6_addr *a = &((const struct sockaddr_in6 *)sa)->sin6_addr;
				if (!IN6_IS_ADDR_LOOPBACK(a) && !IN6_IS_ADDR_LINKLOCAL(a) &&
				    !IN6_IS_ADDR_V4MAPPED(a) && ++n)
					ok = push_addr(v, "tcp:", AF_INET6, a, port);
			}
		}
	freeifaddrs(ifs);
	/* last, and always: the relay to the gateway */
	if (ok && strv_len(*v) >= DOCTOR_PROBES_MAX) {
		free((*v)[DOCTOR_PROBES_MAX - 1]);
		(*v)[DOCTOR_PROBES_MAX - 1] = NULL;
	}
	return ok && push_probe(v, "http:", DOCTOR_DENIED "@127.0.0.1:3128", NULL) ? 0 : -1;
}

/* Make what a segment makes, run the workload, and collect its output:
 * -1 with *e when something could not be made or run. */
static int preflight_run(struct engine *g, const char *gw, const char *endpoint,
			 struct docker_made *m, struct collected *out, int *code, struct err **e)
{
	_cleanup_free_ char *user = operator_user(), *opts = NULL, *bytes = NULL;
	_cleanup_free_ void *tar = NULL;
	_cleanup_json_ json_t *labels = doctor_labels(), *gspec = NULL, *wspec = NULL, *cmd = NULL;
	_cleanup_strv_ char **pv = NULL;
	_cleanup_close_ int afd = -1;
	struct engine_network net = { 0 };
	char base[48], name[64], hex[65];
	size_t len = 0, tlen = 0;
	int r;

	opts = fmt("size=16m,uid=%d,gid=%d,mode=0700", (int)getuid(), (int)getgid());
	if (!user || !opts || !labels || doctor_name("cordon-doctor-", base) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "preflight");
	/* 1. the private volume, a small tmpfs of the operator's */
	snprintf(name, sizeof(name), "%s-ch", base);
	json_t *vo = json_pack("{s:s, s:s, s:s}", "type", "tmpfs", "device", "tmpfs", "o", opts);
	r = vo ? engine_volume_create(g, name, labels, vo, e) : -1;
	json_decref(vo);
	if (r < 0)
		return err_wrap(e, "create the channel volume");
	if (!(m->volume = strdup(name)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "preflight");
	/* 2. the egress network; its gateway is this host's address on it */
	snprintf(name, sizeof(name), "%s-net", base);
	if (engine_network_create(g, name, labels, false, NULL, false, &m->network, e) < 0)
		return err_wrap(e, "create the egress network");
	r = engine_network_inspect(g, m->network, &net, e);
	if (r == ENGINE_FOUND)
		r = probes(endpoint, net.gateway, &pv) < 0
			    ? err_set(e, ERR_INTERNAL, ENOMEM, "the probes")
			    : 0;
	else if (r == ENGINE_GONE)
		r = err_set(e, ERR_UNAVAILABLE, 0, "the egress network went away");
	engine_network_clear(&net);
	if (r < 0)
		return -1;
	/* 3. the companion on it, serving the volume's socket, its list one host */
	json_t *gm = json_pack("[{s:s, s:s, s:s, s:b}]", "Type", "volume", "Source", m->volume,
			       "Target", DOCKER_VOLUME_PATH, "ReadOnly", 0);
	gspec = json_pack("{s:s, s:[s], s:[s, s, s, s, s], s:s, s:O, s:o}", "Image", gw,
			  "Entrypoint", "/cordon", "Cmd", "gateway", "--listen",
			  "unix:" DOCKER_CHANNEL_SOCK, "--allow", DOCTOR_ALLOWED, "User", user,
			  "Labels", labels, "HostConfig", hardened(m->network, gm));
	snprintf(name, sizeof(name), "%s-gw", base);
	if (!gspec || engine_container_create(g, name, gspec, &m->gateway, e) < 0 ||
	    engine_container_start(g, m->gateway, e) < 0)
		return *e ? err_wrap(e, "the gateway companion")
			  : err_set(e, ERR_INTERNAL, ENOMEM, "preflight");
	/* 4. cordon's runtime into the volume, through the companion */
	struct engine_tar_file tf = { .name = "cordon", .mode = 0555 };
	if (container_runtime(&bytes, &len, hex, e) < 0)
		return -1;
	tf.data = bytes;
	tf.len = len;
	if (engine_tar_build(&tf, 1, 0, &tar, &tlen, e) < 0 ||
	    engine_container_put_archive(g, m->gateway, DOCKER_VOLUME_PATH, tar, tlen, e) != 0)
		return *e ? err_wrap(e, "copy cordon's runtime into the channel volume")
			  : err_set(e, ERR_UNAVAILABLE, 0, "the gateway companion went away");
	/* 5. the workload: no network, cinit its pid 1, the probe its command */
	cmd = json_pack("[s, s, s, s, s, s, s, s, s, s, s, s]", "cinit", "--run", "/tmp",
			"--channel", DOCKER_CHANNEL_SOCK, "--write", "/tmp", "--", DOCKER_RUNTIME_PATH,
			"netprobe", "--timeout", DOCTOR_PROBE_MS);
	for (size_t i = 0; cmd && pv[i]; i++)
		json_array_append_new(cmd, json_string(pv[i]));
	json_t *wm = json_pack("[{s:s, s:s, s:s, s:b}]", "Type", "volume", "Source", m->volume,
			       "Target", DOCKER_VOLUME_PATH, "ReadOnly", 1);
	wspec = json_pack("{s:s, s:[s], s:O, s:s, s:O, s:b, s:b, s:b, s:o}", "Image", gw,
			  "Entrypoint", DOCKER_RUNTIME_PATH, "Cmd", cmd, "User", user, "Labels",
			  labels, "AttachStdout", 1, "AttachStderr", 1, "Tty", 0, "HostConfig",
			  hardened("none", wm));
	if (!wspec)
		return err_set(e, ERR_INTERNAL, ENOMEM, "preflight");
	if (engine_container_create(g, base, wspec, &m->workload, e) < 0)
		return err_wrap(e, "create the workload");
	/* attached first: nothing it prints is missed */
	if (engine_container_attach(g, m->workload, false, &afd, e) != 0 ||
	    engine_container_start(g, m->workload, e) < 0)
		return *e ? err_wrap(e, "start the workload")
			  : err_set(e, ERR_UNAVAILABLE, 0, "the workload went away");
	if (read_all(afd, out, e) < 0)
		return -1;
	r = engine_container_wait(g, m->workload, "not-running", 10, code, e);
	if (r < 0)
		return -1;
	if (r != ENGINE_WAIT_EXITED)
		return err_set(e, ERR_UNAVAILABLE, 0, "the workload's status is unknown");
	return 0;
}

static bool loopback_server(const char *probe)
{
	const char *at = strrchr(probe, '@');

	return at && (strncmp(at + 1, "127.", 4) == 0 || strcmp(at + 1, "::1") == 0);
}

/* The outcomes, judged: *bad lists what the workload reached. */
static bool judge(const json_t *res, char **bad, int *ndns, int *ntcp, const char **relay)
{
	static const char *const none[] = { "unreachable", "no_address", "unsupported", "no_server",
					    NULL };
	const char *k;
	json_t *v;
	bool ok = true;

	*ndns = *ntcp = 0;
	*relay = NULL;
	json_object_foreach((json_t *)res, k, v) {
		const char *o = json_string_value(v);
		bool fine = false;

		if (!o)
			return false;
		for (size_t i = 0; none[i]; i++)
			fine = fine || strcmp(o, none[i]) == 0;
		if (strncmp(k, "dns:", 4) == 0) {
			(*ndns)++;
			/* the workload's own loopback, where nothing listens */
			fine = fine || (strcmp(o, "refused") == 0 && loopback_server(k));
		} else if (strncmp(k, "tcp:", 4) == 0) {
			(*ntcp)++;
		} else if (strncmp(k, "http:", 5) == 0) {
			/* the gateway's refusal names its reason */
			fine = strncmp(o, "403 ", 4) == 0 && o[4];
			*relay = o;
		}
		if (!fine) {
			char *more = fmt("%s%s%s: %s", *bad ? *bad : "", *bad ? "; " : "", k, o);
			free(*bad);
			*bad = more;
			ok = false;
		}
	}
	return ok && *relay && *ndns && *ntcp;
}

/* The preflight's verdict; *detail says why (NULL: out of memory). */
static bool preflight(struct engine *g, const char *gw, const char *endpoint, char **detail)
{
	_cleanup_free_ char *bad = NULL;
	_cleanup_json_ json_t *res = NULL;
	struct collected *out = calloc(1, sizeof(*out));
	struct docker_made m = { 0 };
	struct err *ce = NULL, *re = NULL;
	const char *relay = NULL;
	int code = -1, ndns = 0, ntcp = 0;
	bool pass = false;

	if (!out)
		return false;
	int rc = preflight_run(g, gw, endpoint, &m, out, &code, &ce);
	/* whatever happened: everything made, containers first */
	if (docker_remove_made(g, &m, &re) < 0)
		err_wrap(&re, "remove what the preflight made");
	free(m.workload);
	free(m.gateway);
	free(m.network);
	free(m.volume);
	if (rc == 0 && code == 0)
		res = json_parse_strict(out->out, strcspn(out->out, "\n"), NULL);
	if (rc < 0)
		*detail = fmt("a segment's containers could not be made or run: %s", msg(ce));
	else if (code != 0 || !json_is_object(res))
		*detail = fmt("the workload (cinit, then netprobe) ended with status %d: %.400s", code,
			      out->nerr ? out->err : out->out);
	else if (!judge(res, &bad, &ndns, &ntcp, &relay))
		*detail = fmt("a workload of network mode none reached what it must not, or not "
			      "the gateway: %s",
			      bad ? bad : "a probe is missing");
	else if (re)
		*detail = fmt("the probes passed, but the doctor could not clean up: %s", msg(re));
	else {
		pass = true;
		*detail = fmt("a workload of network mode none under cinit resolved nothing (%d DNS "
			      "queries) and reached nothing directly (%d addresses: the outside, "
			      "this host's), and the gateway companion, through cinit's relay, "
			      "refused a host outside its list (%s)",
			      ndns, ntcp, relay);
	}
	free(out);
	err_free(ce);
	err_free(re);
	return pass;
}

/* ---- the doctor --------------------------------------------------------- */

static void skipped(struct report *r, const char *id, const char *why, const char *fix)
{
	_cleanup_free_ char *d = fmt("not checked: %s", why);

	add(r, id, false, d, fix);
}

json_t *docker_doctor(const json_t *config, const char *state_dir, struct err **e)
{
	static const char daemon_fix[] =
		"start the Docker daemon, or name the one to use (container.endpoint or "
		"container.context; --endpoint or --context); the user running cordon must be "
		"able to use its socket";
	static const char preflight_fix[] =
		"the daemon must give a container of network mode none nothing but its own "
		"loopback, and run cordon's gateway companion on a bridge network; see the detail";
	static const char image_fix[] =
		"load or build the image on this daemon, and name it by its image ID "
		"(sha256:...) or as name@sha256:<digest>";
	_cleanup_engine_ struct engine *g = NULL;
	_cleanup_free_ char *endpoint = NULL, *gw = NULL, *detail = NULL, *gfix = NULL,
			   *fix = NULL, *pdetail = NULL, *note = NULL;
	struct shared sp = { .pfd = -1, .dfd = -1 };
	_cleanup_json_ json_t *checks = json_array();
	struct report r = { .checks = checks, .ready = true };
	struct engine_info info = { 0 };
	struct engine_image img = { 0 };
	const char *image = json_string_value(json_object_get(config, "image"));
	const char *ep = json_string_value(json_object_get(config, "endpoint"));
	const char *ctx = json_string_value(json_object_get(config, "context"));
	struct err *ce = NULL;
	unsigned int others = 0;
	int found;

	if (!checks) {
		err_set(e, ERR_INTERNAL, ENOMEM, "doctor");
		return NULL;
	}
	gfix = ep    ? fmt("cordon docker gateway-image --endpoint %s", ep)
	       : ctx ? fmt("cordon docker gateway-image --context %s", ctx)
		     : fmt("cordon docker gateway-image");
	if (!gfix) {
		err_set(e, ERR_INTERNAL, ENOMEM, "doctor");
		return NULL;
	}
	/* 1. the daemon */
	if (docker_open(config, &g, &endpoint, &ce) == 0) {
		engine_set_timeout(g, DOCTOR_CALL_TIMEOUT);
		if (engine_info(g, &info, &ce) == 0)
			detail = fmt("daemon %s, Docker %s, at %s (API %s)", info.id, info.version,
				     endpoint, engine_daemon_api(g));
	}
	engine_info_clear(&info);
	if (!detail) {
		detail = fmt("%s", msg(ce));
		add(&r, "daemon", false, detail, daemon_fix);
		if (image)
			skipped(&r, "image", "the daemon cannot be asked", daemon_fix);
		skipped(&r, "gateway_image", "the daemon cannot be asked", daemon_fix);
		skipped(&r, "shared_path", "the daemon cannot be asked", daemon_fix);
		skipped(&r, "preflight", "the daemon cannot be asked", daemon_fix);
		goto out;
	}
	add(&r, "daemon", true, detail, "");
	free(steal_pointer(&detail));
	err_free(steal_pointer(&ce));
	/* 2. the binding's image */
	if (image) {
		found = container_image_pinned(image) ? engine_image_inspect(g, image, &img, &ce) : -2;
		detail = found == ENGINE_FOUND ? fmt("`%s` is on the daemon (%s)", image, img.id)
			 : found == ENGINE_GONE ? fmt("`%s` is not on the daemon", image)
			 : found == -2		? fmt("`%s` must be pinned: an image ID (sha256:...) "
						      "or name@sha256:<digest>", image)
						: fmt("`%s`: %s", image, msg(ce));
		add(&r, "image", found == ENGINE_FOUND, detail, image_fix);
		engine_image_clear(&img);
		free(steal_pointer(&detail));
		err_free(steal_pointer(&ce));
	}
	/* 3. the gateway image of this cordon, by what it holds */
	found = docker_gateway_image(g, false, &gw, &others, &ce);
	note = others ? fmt("; %u other image(s) carry its label but hold something else, and "
			    "are never taken",
			    others)
		      : fmt("%s", "");
	detail = !note	       ? NULL
		 : found == ENGINE_FOUND
			 ? fmt("%s (cordon's gateway for this cordon's runtime: its one layer "
			       "is cordon-static, its config cordon's own)%s",
			       gw, note)
		 : found == ENGINE_GONE
			 ? fmt("no gateway image for this cordon's runtime on the daemon%s",
			       note)
			 : fmt("%s", msg(ce));
	fix = found == ENGINE_GONE ? fmt("%s", gfix)
				   : fmt("cordon-static (make build/cordon-static) must be beside "
					 "cordon-host and the daemon must answer; then %s", gfix);
	add(&r, "gateway_image", found == ENGINE_FOUND, detail, fix ? fix : "");
	err_free(steal_pointer(&ce));
	if (found != ENGINE_FOUND) {
		skipped(&r, "shared_path", "no gateway image to run", fix ? fix : "");
		skipped(&r, "preflight", "no gateway image to run", fix ? fix : "");
		goto out;
	}
	/* 4, 5: containers, for real; shared_path's writes while the
	 * preflight runs (about a second less in all) */
	shared_begin(g, gw, state_dir, &sp);
	bool pass = preflight(g, gw, endpoint, &pdetail);
	shared_end(&r, g, &sp);
	add(&r, "preflight", pass, pdetail, preflight_fix);
out:
	shared_clear(&sp);
	err_free(ce);
	if (r.failed) {
		err_set(e, ERR_INTERNAL, ENOMEM, "the doctor's report");
		return NULL;
	}
	return json_pack("{s:s, s:b, s:O}", "provider", "docker", "ready", r.ready, "checks",
			 checks);
}
