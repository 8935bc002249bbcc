/* engine-probe: one call of cordon's Docker Engine client
 * (src/container/engine.h) per run, its result printed as JSON, so a shell
 * test can drive it against a real dockerd.
 *
 * usage: engine-probe endpoint CONTEXT
 *        engine-probe info DAEMON
 *        engine-probe image DAEMON REF
 *        engine-probe create|create-io|create-tty DAEMON NAME IMAGE [LABEL=VALUE...] -- CMD...
 *        engine-probe inspect DAEMON ID
 *        engine-probe list DAEMON LABEL[=VALUE]...
 *        engine-probe start|rm|rm-force DAEMON ID
 *        engine-probe kill DAEMON ID SIGNAL
 *        engine-probe wait DAEMON ID next-exit|not-running TIMEOUT
 *        engine-probe attach DAEMON ID [-s] [-r] [-i TEXT]
 *        engine-probe put DAEMON ID PATH TARFILE
 *        engine-probe tar MTIME NAME:MODE:UID:GID=FILE...     (the tar on stdout)
 *        engine-probe import DAEMON TARFILE REPO:TAG|- [CHANGE...]
 *        engine-probe images DAEMON LABEL...
 *        engine-probe image-rm|image-rm-force DAEMON REF
 *        engine-probe net-create DAEMON NAME [-internal] [-ipv6] [-o K=V]... [LABEL=VALUE...]
 *        engine-probe net-inspect|net-rm DAEMON REF
 *        engine-probe net-list|vol-list DAEMON LABEL...
 *        engine-probe vol-create DAEMON NAME [-o K=V]... [LABEL=VALUE...]
 *        engine-probe vol-rm|vol-rm-force DAEMON NAME
 *        engine-probe demux -          (frames on stdin, demultiplexed)
 *
 * create is the workload's hardening; create-io a plain container (its
 * root writable) whose stdin stays open for one attach (OpenStdin,
 * StdinOnce), create-tty the same with a TTY. attach: -i TEXT attaches
 * stdin, writes TEXT and half-closes; -s starts the container once
 * attached; -r reads the stream raw (a TTY's) instead of by frames. It
 * prints what came on each stream, until the daemon ends the stream.
 *
 * DAEMON is unix:///path, tcp://host:port, a socket's absolute path, or
 * ctx:NAME (a Docker CLI context). "Not there" prints {"gone": true}; an
 * error is printed as cordon prints a refusal, exit 125; a wrong command
 * line exits 2. ENGINE_PROBE_TIMEOUT sets the calls' timeout in seconds
 * (and an attach's reading). */
#include "container/docker/engine/engine.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/strv.h"

#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define FILE_MAX ((size_t)64 << 20)

static int usage(void)
{
	fprintf(stderr,
		"usage: engine-probe endpoint CONTEXT | info DAEMON | image DAEMON REF |\n"
		"       create|create-io|create-tty DAEMON NAME IMAGE [LABEL=VALUE...] -- CMD... |\n"
		"       inspect DAEMON ID | list DAEMON LABEL... | start|rm|rm-force DAEMON ID |\n"
		"       kill DAEMON ID SIGNAL | wait DAEMON ID CONDITION TIMEOUT |\n"
		"       attach DAEMON ID [-s] [-r] [-i TEXT] | put DAEMON ID PATH TARFILE |\n"
		"       tar MTIME NAME:MODE:UID:GID=FILE... | import DAEMON TARFILE REPO:TAG|- "
		"[CHANGE...] |\n"
		"       images DAEMON LABEL... | image-rm|image-rm-force DAEMON REF |\n"
		"       net-create DAEMON NAME [-internal] [-ipv6] [-o K=V]... [LABEL=VALUE...] |\n"
		"       net-inspect|net-rm DAEMON REF | net-list|vol-list DAEMON LABEL... |\n"
		"       vol-create DAEMON NAME [-o K=V]... [LABEL=VALUE...] |\n"
		"       vol-rm|vol-rm-force DAEMON NAME | demux -\n");
	return 2;
}

static int print(json_t *j)
{
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS) : NULL;

	json_decref(j);
	if (!text)
		return 1;
	printf("%s\n", text);
	return 0;
}

static int print_flag(const char *key)
{
	return print(json_pack("{s:b}", key, 1));
}

/* KEY=VALUE arguments (up to "--" or the end) into an object; *used how
 * many were taken. NULL when one is not KEY=VALUE. */
static json_t *pairs(char **args, int n, int *used)
{
	json_t *o = json_object();
	int i;

	for (i = 0; o && i < n && strcmp(args[i], "--") != 0; i++) {
		char *eq = strchr(args[i], '=');

		if (!eq || eq == args[i]) {
			json_decref(o);
			return NULL;
		}
		*eq = '\0';
		json_object_set_new(o, args[i], json_string(eq + 1));
		*eq = '=';
	}
	*used = i;
	return o;
}

/* The workload's hardening as the Docker provider asks for it (create),
 * or a plain container with stdin open for one attach (create-io, and
 * create-tty with a TTY). */
static json_t *container_config(const char *kind, const char *image, char **args, int n)
{
	json_t *labels, *cmd = json_array();
	int i = 0;

	labels = pairs(args, n, &i);
	if (!labels || i >= n || strcmp(args[i], "--") != 0 || i + 1 >= n || !cmd) {
		json_decref(labels);
		json_decref(cmd);
		return NULL;
	}
	for (i++; i < n; i++)
		json_array_append_new(cmd, json_string(args[i]));
	if (strcmp(kind, "create") != 0)
		return json_pack("{s:s, s:o, s:o, s:b, s:b, s:b, s:b, s:b, s:b, s:{s:s}}", "Image",
				 image, "Cmd", cmd, "Labels", labels, "OpenStdin", 1, "StdinOnce", 1,
				 "AttachStdin", 1, "AttachStdout", 1, "AttachStderr", 1, "Tty",
				 strcmp(kind, "create-tty") == 0, "HostConfig", "NetworkMode", "none");
	return json_pack("{s:s, s:o, s:s, s:o, s:{s:{s:s}, s:[s], s:[s], s:b, s:{s:s}, s:s, s:i}}",
			 "Image", image, "Cmd", cmd, "User", "1000:1000", "Labels", labels,
			 "HostConfig", "RestartPolicy", "Name", "no", "CapDrop", "ALL",
			 "SecurityOpt", "no-new-privileges", "ReadonlyRootfs", 1, "Tmpfs", "/tmp",
			 "rw,nosuid,nodev,size=16m", "NetworkMode", "none", "PidsLimit", 4096);
}

static int signal_of(const char *s)
{
	static const struct {
		const char *name;
		int sig;
	} names[] = { { "TERM", SIGTERM }, { "KILL", SIGKILL }, { "INT", SIGINT },
		      { "HUP", SIGHUP }, { "USR1", SIGUSR1 } };
	unsigned long v;

	for (size_t i = 0; i < sizeof(names) / sizeof(*names); i++)
		if (strcmp(s, names[i].name) == 0)
			return names[i].sig;
	return num_parse_ulong(s, 1000, &v) < 0 ? -1 : (int)v;
}

static int read_path(const char *path, char **buf, size_t *len, struct err **e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return err_set(e, ERR_USAGE, errno, "open %s", path);
	return fs_read_fd(fd, path, FILE_MAX, buf, len, e);
}

/* --- the attach stream's bytes ------------------------------------------- */

struct streams {
	char *p[3];
	size_t n[3];
	bool nomem;
};

static void take(void *ctx, int stream, const void *p, size_t n)
{
	struct streams *s = ctx;
	char *q = realloc(s->p[stream], s->n[stream] + n + 1);

	if (!q) {
		s->nomem = true;
		return;
	}
	memcpy(q + s->n[stream], p, n);
	s->n[stream] += n;
	q[s->n[stream]] = '\0';
	s->p[stream] = q;
}

static json_t *stream_text(const struct streams *s, int i)
{
	json_t *j = json_stringn(s->p[i] ? s->p[i] : "", s->n[i]);

	return j ? j : json_string("(not UTF-8)");
}

/* Read fd to its end (or the timeout), raw or by frames; print what came. */
static int drain(int fd, bool raw, long timeout, struct err **e)
{
	struct engine_demux d = { 0 };
	struct streams s = { 0 };
	char buf[4096];
	bool bad = false;
	int r;

	for (;;) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, (int)timeout * 1000) == 0) {
			r = err_set(e, ERR_UNAVAILABLE, 0, "attach: the stream did not end in time");
			goto out;
		}
		n = read(fd, buf, sizeof(buf));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = err_set(e, ERR_UNAVAILABLE, errno, "attach: read");
			goto out;
		}
		if (n == 0)
			break;
		if (raw)
			take(&s, 1, buf, (size_t)n);
		else if (engine_demux_feed(&d, buf, (size_t)n, take, &s) < 0)
			bad = true;
		if (bad)
			break;
	}
	if (bad) {
		r = err_set(e, ERR_UNAVAILABLE, 0, "attach: a malformed frame header");
		goto out;
	}
	r = s.nomem ? -1
		    : print(json_pack("{s:o, s:o, s:b}", "stdout", stream_text(&s, 1), "stderr",
				      stream_text(&s, 2), "idle", raw || engine_demux_idle(&d)));
out:
	for (int i = 0; i < 3; i++)
		free(s.p[i]);
	return r;
}

static int do_attach(struct engine *g, int argc, char **argv, long timeout, struct err **e)
{
	const char *text = NULL;
	bool start = false, raw = false;
	_cleanup_close_ int fd = -1;
	int r;

	for (int i = 4; i < argc; i++) {
		if (strcmp(argv[i], "-s") == 0)
			start = true;
		else if (strcmp(argv[i], "-r") == 0)
			raw = true;
		else if (strcmp(argv[i], "-i") == 0 && i + 1 < argc)
			text = argv[++i];
		else
			return usage();
	}
	r = engine_container_attach(g, argv[3], text != NULL, &fd, e);
	if (r != 0)
		return r < 0 ? -1 : print_flag("gone");
	if ((fcntl(fd, F_GETFD) & FD_CLOEXEC) == 0)
		return err_set(e, ERR_INTERNAL, 0, "attach: the fd is not close-on-exec");
	if (start && engine_container_start(g, argv[3], e) < 0)
		return -1;
	if (text) {
		if (fs_write_exact(fd, text, strlen(text)) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "attach: write");
		/* the end of stdin: the daemon closes the container's */
		if (shutdown(fd, SHUT_WR) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "attach: shutdown");
	}
	return drain(fd, raw, timeout, e);
}

/* demux: stdin through the demultiplexer, in pieces of 3 bytes (so frames
 * and headers are cut across calls). */
static int do_demux(struct err **e)
{
	struct engine_demux d = { 0 };
	struct streams s = { 0 };
	char buf[3];
	ssize_t n;
	int r = 0;

	while ((n = read(0, buf, sizeof(buf))) > 0)
		if (engine_demux_feed(&d, buf, (size_t)n, take, &s) < 0) {
			r = err_set(e, ERR_UNAVAILABLE, 0, "demux: a malformed frame header");
			break;
		}
	if (r == 0)
		r = s.nomem ? -1
			    : print(json_pack("{s:o, s:o, s:b}", "stdout", stream_text(&s, 1),
					      "stderr", stream_text(&s, 2), "idle",
					      engine_demux_idle(&d)));
	for (int i = 0; i < 3; i++)
		free(s.p[i]);
	return r;
}

/* NAME:MODE:UID:GID (MODE in octal) into f; spec is cut at its colons. */
static int tar_spec(char *spec, struct engine_tar_file *f)
{
	char *mode = strchr(spec, ':'), *uid = mode ? strchr(mode + 1, ':') : NULL;
	char *gid = uid ? strchr(uid + 1, ':') : NULL, *end = NULL;
	unsigned long m, u, g;

	if (!gid || mode == spec)
		return -1;
	*mode++ = '\0';
	*uid++ = '\0';
	*gid++ = '\0';
	errno = 0;
	m = strtoul(mode, &end, 8);
	if (errno || end == mode || *end || num_parse_ulong(uid, 1UL << 31, &u) < 0 ||
	    num_parse_ulong(gid, 1UL << 31, &g) < 0 || m > 07777)
		return -1;
	*f = (struct engine_tar_file){ .name = spec, .mode = (unsigned)m, .uid = (unsigned)u,
				       .gid = (unsigned)g };
	return 0;
}

/* tar MTIME NAME:MODE:UID:GID=FILE...: the tar on stdout. */
static int do_tar(int argc, char **argv, struct err **e)
{
	struct engine_tar_file f[32];
	char *bufs[32] = { 0 };
	_cleanup_free_ void *tar = NULL;
	unsigned long mtime;
	size_t len = 0;
	int n = argc - 3, r = -1;

	if (n < 1 || n > 32 || num_parse_ulong(argv[2], 1UL << 40, &mtime) < 0)
		return usage();
	for (int i = 0; i < n; i++) {
		char *eq = strchr(argv[3 + i], '=');

		if (!eq) {
			r = usage();
			goto out;
		}
		*eq = '\0';
		if (tar_spec(argv[3 + i], &f[i]) < 0) {
			r = usage();
			goto out;
		}
		if (read_path(eq + 1, &bufs[i], &f[i].len, e) < 0)
			goto out;
		f[i].data = bufs[i];
	}
	if (engine_tar_build(f, (size_t)n, (long long)mtime, &tar, &len, e) < 0)
		goto out;
	r = fwrite(tar, 1, len, stdout) == len && fflush(stdout) == 0
		    ? 0
		    : err_set(e, ERR_INTERNAL, errno, "tar: write");
out:
	for (int i = 0; i < n; i++)
		free(bufs[i]);
	return r;
}

/* [-internal] [-ipv6] [-o K=V]... [LABEL=VALUE...] */
static int do_net_create(struct engine *g, int argc, char **argv, bool volume, struct err **e)
{
	_cleanup_json_ json_t *labels = json_object(), *opts = json_object();
	_cleanup_free_ char *id = NULL;
	bool internal = false, ipv6 = false;

	for (int i = 4; i < argc; i++) {
		char *eq = strchr(argv[i], '=');

		if (!volume && strcmp(argv[i], "-internal") == 0) {
			internal = true;
		} else if (!volume && strcmp(argv[i], "-ipv6") == 0) {
			ipv6 = true;
		} else if (eq && eq != argv[i] && argv[i][0] != '-') {
			*eq = '\0';
			json_object_set_new(labels, argv[i], json_string(eq + 1));
		} else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc &&
			   (eq = strchr(argv[i + 1], '=')) && eq != argv[i + 1]) {
			*eq = '\0';
			json_object_set_new(opts, argv[++i], json_string(eq + 1));
		} else {
			return usage();
		}
	}
	if (volume) {
		if (engine_volume_create(g, argv[3], labels, opts, e) < 0)
			return -1;
		return print_flag("created");
	}
	if (engine_network_create(g, argv[3], labels, internal, opts, ipv6, &id, e) < 0)
		return -1;
	return print(json_pack("{s:s}", "id", id));
}

static int do_net_inspect(struct engine *g, const char *ref, struct err **e)
{
	struct engine_network n;
	int r = engine_network_inspect(g, ref, &n, e);

	if (r != ENGINE_FOUND)
		return r < 0 ? -1 : print_flag("gone");
	r = print(json_pack("{s:s, s:s, s:b, s:b, s:s?, s:s?, s:O, s:O}", "id", n.id, "name",
			    n.name, "internal", n.internal, "ipv6", n.ipv6, "subnet", n.subnet,
			    "gateway", n.gateway, "labels", n.labels, "options", n.options));
	engine_network_clear(&n);
	return r;
}

static int do_inspect(struct engine *g, const char *id, struct err **e)
{
	struct engine_container c;
	int r = engine_container_inspect(g, id, &c, e);

	if (r != ENGINE_FOUND)
		return r < 0 ? -1 : print_flag("gone");
	r = print(json_pack("{s:s, s:s, s:s, s:s, s:s, s:s, s:b, s:b, s:I, s:i, s:O}", "id", c.id,
			    "name", c.name, "image", c.image, "status", c.status, "started_at",
			    c.started_at, "finished_at", c.finished_at, "running", c.running,
			    "oom_killed", c.oom_killed, "pid", (json_int_t)c.pid, "exit_code",
			    c.exit_code, "labels", c.labels));
	engine_container_clear(&c);
	return r;
}

static int do_image(struct engine *g, const char *ref, struct err **e)
{
	struct engine_image im;
	int r = engine_image_inspect(g, ref, &im, e);

	if (r != ENGINE_FOUND)
		return r < 0 ? -1 : print_flag("gone");
	r = print(json_pack("{s:s, s:o}", "id", im.id, "repo_digests", json_strv(im.repo_digests)));
	engine_image_clear(&im);
	return r;
}

static int do_import(struct engine *g, int argc, char **argv, struct err **e)
{
	_cleanup_free_ char *tar = NULL, *id = NULL;
	size_t len = 0;

	if (read_path(argv[3], &tar, &len, e) < 0 ||
	    engine_image_import(g, tar, len, strcmp(argv[4], "-") == 0 ? NULL : argv[4],
				argc > 5 ? argv + 5 : NULL, &id, e) < 0)
		return -1;
	return print(json_pack("{s:s}", "id", id));
}

static int do_wait(struct engine *g, char **argv, struct err **e)
{
	unsigned long secs;
	int code = -1, r;

	if (num_parse_ulong(argv[5], 86400, &secs) < 0)
		return usage();
	r = engine_container_wait(g, argv[3], argv[4], (long)secs, &code, e);
	if (r < 0)
		return -1;
	if (r == ENGINE_WAIT_GONE)
		return print_flag("gone");
	if (r == ENGINE_WAIT_TIMEOUT)
		return print_flag("timeout");
	return print(json_pack("{s:b, s:i}", "exited", 1, "code", code));
}

static int do_put(struct engine *g, char **argv, struct err **e)
{
	_cleanup_free_ char *tar = NULL;
	size_t len = 0;
	int r;

	if (read_path(argv[5], &tar, &len, e) < 0)
		return -1;
	r = engine_container_put_archive(g, argv[3], argv[4], tar, len, e);
	if (r < 0)
		return -1;
	return print_flag(r == 0 ? "put" : "gone");
}

/* "removed" on 0, "gone" on 1. */
static int removed(int r)
{
	return r < 0 ? -1 : print_flag(r == 0 ? "removed" : "gone");
}

/* A list's result: the call is made first, then its *ids read. */
static int listed(int r, char ***ids)
{
	int p = r < 0 ? -1 : print(json_strv(*ids));

	strv_free(*ids);
	*ids = NULL;
	return p;
}

static int daemon_open(const char *daemon, struct engine **g, struct err **e)
{
	_cleanup_free_ char *ep = NULL, *dir = NULL;

	if (strncmp(daemon, "ctx:", 4) == 0) {
		if (engine_config_dir(&dir, e) < 0 ||
		    engine_context_endpoint(dir, daemon + 4, &ep, e) < 0)
			return -1;
	} else if (daemon[0] == '/') {
		if (asprintf(&ep, "unix://%s", daemon) < 0)
			return -1;
	} else {
		ep = strdup(daemon);
	}
	return ep ? engine_open(ep, g, e) : -1;
}

static int run(int argc, char **argv, struct err **e)
{
	const char *cmd = argv[1], *timeout = getenv("ENGINE_PROBE_TIMEOUT");
	_cleanup_engine_ struct engine *g = NULL;
	char **ids = NULL;
	unsigned long secs = 0;
	int r;

	if (strcmp(cmd, "endpoint") == 0) {
		_cleanup_free_ char *dir = NULL, *ep = NULL;

		if (engine_config_dir(&dir, e) < 0 || engine_context_endpoint(dir, argv[2], &ep, e) < 0)
			return -1;
		return print(json_pack("{s:s}", "endpoint", ep));
	}
	if (strcmp(cmd, "demux") == 0)
		return do_demux(e);
	if (strcmp(cmd, "tar") == 0)
		return do_tar(argc, argv, e);
	if (timeout && num_parse_ulong(timeout, 3600, &secs) < 0)
		return usage();
	if (daemon_open(argv[2], &g, e) < 0)
		return -1;
	if (secs)
		engine_set_timeout(g, (long)secs);
	if (strcmp(cmd, "info") == 0) {
		struct engine_info i;

		if (engine_info(g, &i, e) < 0)
			return -1;
		r = print(json_pack("{s:s, s:s, s:s}", "id", i.id, "version", i.version, "api",
				    engine_daemon_api(g)));
		engine_info_clear(&i);
		return r;
	}
	if (strcmp(cmd, "image") == 0 && argc == 4)
		return do_image(g, argv[3], e);
	if (strncmp(cmd, "create", 6) == 0 && argc >= 7) {
		_cleanup_json_ json_t *config = container_config(cmd, argv[4], argv + 5, argc - 5);
		_cleanup_free_ char *id = NULL;

		if (!config)
			return usage();
		if (engine_container_create(g, argv[3], config, &id, e) < 0)
			return -1;
		return print(json_pack("{s:s}", "id", id));
	}
	if (strcmp(cmd, "inspect") == 0 && argc == 4)
		return do_inspect(g, argv[3], e);
	if (strcmp(cmd, "list") == 0)
		return listed(engine_container_list(g, argv + 3, &ids, e), &ids);
	if (strcmp(cmd, "start") == 0 && argc == 4) {
		if ((r = engine_container_start(g, argv[3], e)) < 0)
			return -1;
		return print_flag(r == 0 ? "started" : "running_already");
	}
	if (strcmp(cmd, "kill") == 0 && argc == 5) {
		if ((r = engine_container_kill(g, argv[3], signal_of(argv[4]), e)) < 0)
			return -1;
		return print_flag(r == 0 ? "sent" : "not_running");
	}
	if ((strcmp(cmd, "rm") == 0 || strcmp(cmd, "rm-force") == 0) && argc == 4)
		return removed(engine_container_remove(g, argv[3], cmd[2] == '-', e));
	if (strcmp(cmd, "wait") == 0 && argc == 6)
		return do_wait(g, argv, e);
	if (strcmp(cmd, "attach") == 0 && argc >= 4)
		return do_attach(g, argc, argv, secs ? (long)secs : 60, e);
	if (strcmp(cmd, "put") == 0 && argc == 6)
		return do_put(g, argv, e);
	if (strcmp(cmd, "import") == 0 && argc >= 5)
		return do_import(g, argc, argv, e);
	if (strcmp(cmd, "images") == 0)
		return listed(engine_image_list(g, argv + 3, &ids, e), &ids);
	if ((strcmp(cmd, "image-rm") == 0 || strcmp(cmd, "image-rm-force") == 0) && argc == 4)
		return removed(engine_image_remove(g, argv[3], cmd[8] == '-', e));
	if ((strcmp(cmd, "net-create") == 0 || strcmp(cmd, "vol-create") == 0) && argc >= 4)
		return do_net_create(g, argc, argv, cmd[0] == 'v', e);
	if (strcmp(cmd, "net-inspect") == 0 && argc == 4)
		return do_net_inspect(g, argv[3], e);
	if (strcmp(cmd, "net-rm") == 0 && argc == 4)
		return removed(engine_network_remove(g, argv[3], e));
	if (strcmp(cmd, "net-list") == 0)
		return listed(engine_network_list(g, argv + 3, &ids, e), &ids);
	if ((strcmp(cmd, "vol-rm") == 0 || strcmp(cmd, "vol-rm-force") == 0) && argc == 4)
		return removed(engine_volume_remove(g, argv[3], cmd[6] == '-', e));
	if (strcmp(cmd, "vol-list") == 0)
		return listed(engine_volume_list(g, argv + 3, &ids, e), &ids);
	return usage();
}

int main(int argc, char **argv)
{
	struct err *e = NULL;
	int r;

	if (argc < 3)
		return usage();
	curl_global_init(CURL_GLOBAL_NOTHING);
	r = run(argc, argv, &e);
	curl_global_cleanup();
	if (r < 0) {
		if (e)
			err_print(stderr, e);
		else
			fprintf(stderr, "engine-probe: out of memory\n");
		err_free(e);
		return 125;
	}
	return r;
}
