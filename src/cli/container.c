/* container.c: `cordon container` (cordon-host), the lifecycle of a
 * container whichever provider made it, on the provider's ops
 * (contract.h): the segment wrapper of a container binding (wrap), the
 * settling of a segment whose start helper died (settle), and inspect,
 * list, stop and remove of a pin, which the daemon does itself and an
 * operator (or the conformance suite) can do by hand. The provider is
 * the one the pin or config names; one this program does not have is
 * refused, never guessed. */
#include "cli/container.h"

#include "cli/cli.h"
#include "guard/planted.h"
#include "host/wrapper.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/procfs.h"
#include "lib/strv.h"
#include "plan/plan.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char usage[] =
	"usage: cordon container wrap --ctl FD\n"
	"       cordon container settle --record DIR --job ID --segment N\n"
	"       cordon container resume --record DIR --job ID --segment N\n"
	"       cordon container inspect --pin FILE [--job ID --segment N [--digest HEX]]\n"
	"       cordon container list --config FILE --state-dir DIR [--job ID]\n"
	"       cordon container sweep --config-json JSON --state-dir DIR [--live JOB]...\n"
	"       cordon container stop --pin FILE\n"
	"       cordon container remove --pin FILE\n\n"
	"The lifecycle of a container binding's containers, whichever provider made\n"
	"them (the pin's or config's \"provider\").\n"
	"wrap: the segment wrapper of a container binding; the daemon runs it.\n"
	"settle: stop (confirmed) and remove the container of a segment whose start\n"
	"helper ended without its exit file; the daemon runs it.\n"
	"resume: take up, in its dead start helper's place, a container found running\n"
	"after a restart, to its end (its status in the exit file); the daemon runs it.\n"
	"inspect: print what the pinned container is, as JSON: {\"status\": \"created\" |\n"
	"\"running\" | \"exited\" | \"gone\", \"exit_code\", \"started_at\"}. Exits 125 when\n"
	"it cannot be asked or is not the pinned one.\n"
	"list: print the IDs of this state dir's workload containers where the\n"
	"binding's container config (a JSON file) runs them, of one job or all.\n"
	"sweep: remove what the place a binding's container config names holds of\n"
	"this state dir's jobs but the --live ones'; the daemon runs it.\n"
	"stop: kill it; 0 once it is confirmed not running.\n"
	"remove: remove what made it; a container gone already is no error.\n";

static int fail(struct err *e)
{
	err_print(stderr, e);
	err_free(e);
	return EXIT_CORDON;
}

/* A JSON object, strictly (a duplicate key, a NUL refused), or NULL. */
static json_t *parse_object(const char *buf, size_t len)
{
	struct err *pe = NULL;
	json_t *v = json_parse_strict(buf, len, &pe);

	err_free(pe);
	if (v && !json_is_object(v)) {
		json_decref(v);
		v = NULL;
	}
	return v;
}

static json_t *read_json(const char *path, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	size_t len = 0;
	json_t *v;

	if (fs_read_file(AT_FDCWD, path, 1 << 20, &buf, &len, e) < 0)
		return NULL;
	if (!(v = parse_object(buf, len)))
		err_set(e, ERR_CONFIG, 0, "`%s` is not a JSON object", path);
	return v;
}

int container_settle_record(const char *record_dir,
			    const char *job, unsigned int seg, struct err **e)
{
	_cleanup_free_ char *buf = NULL, *digest = NULL, *exec_dir = NULL;
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_json_ json_t *pin = NULL;
	const struct provider *cp;
	size_t len = 0;
	char *slash;
	int st;

	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the record `%s`", record_dir);
	if (fs_read_file(dfd, "container.json", 65536, &buf, &len, e) < 0)
		return -1;
	if (!(pin = parse_object(buf, len)))
		return err_set(e, ERR_DENIED, 0, "its container pin cannot be read");
	if (!(cp = provider_of(pin, PROVIDER_CONTAINER, e)))
		return -1;
	/* <exec_dir>/sandbox/<segment> */
	exec_dir = strdup(record_dir);
	for (int i = 0; exec_dir && i < 2 && (slash = strrchr(exec_dir, '/')); i++)
		*slash = '\0';
	if (!exec_dir || plan_read_pin(exec_dir, seg, &digest, e) < 0)
		return *e ? -1 : err_set(e, ERR_INTERNAL, ENOMEM, "settle");
	st = cp->inspect(pin, digest, job, seg, NULL, e);
	if (st == PROVIDER_RUNNING && cp->stop(pin, e) < 0)
		return -1;
	if (st < 0)
		return -1;
	/* stopped (or never running): what the segment made goes */
	if (cp->remove(pin, e) < 0) {
		err_print(stderr, *e);
		err_free(*e);
		*e = NULL;
	}
	return 0;
}

/* settle's and resume's --record DIR --job ID --segment N. */
static int segment_args(int argc, char **argv, const char **record, const char **job,
			unsigned long *seg)
{
	for (int i = 1; i + 1 < argc; i += 2) {
		if (strcmp(argv[i], "--record") == 0)
			*record = argv[i + 1];
		else if (strcmp(argv[i], "--job") == 0)
			*job = argv[i + 1];
		else if (strcmp(argv[i], "--segment") == 0)
			*seg = strtoul(argv[i + 1], NULL, 10);
	}
	if (!*record || !*job || *seg == 0 || *seg > 1000000 || argc % 2 == 0) {
		fputs(usage, stderr);
		return -1;
	}
	return 0;
}

/* settle: the daemon's child for a segment whose start helper ended
 * without its exit file; its verdict in the record dir, settle.json
 * ({"verified"}), which the daemon reads once this has ended. */
static int settle(int argc, char **argv)
{
	const char *record = NULL, *job = NULL;
	unsigned long seg = 0;
	struct err *e = NULL;

	if (segment_args(argc, argv, &record, &job, &seg) < 0)
		return EXIT_CORDON;
	bool ok = container_settle_record(record, job, (unsigned int)seg, &e) == 0;
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record, O_PATH | O_DIRECTORY, 0);
	const char *v = ok ? "{\"verified\": true}\n" : "{\"verified\": false}\n";

	if (!ok)
		err_print(stderr, e);
	err_free(e);
	e = NULL;
	if (dfd < 0 || fs_write_atomic(dfd, "settle.json", v, strlen(v), 0600, true, &e) < 0)
		return fail(e);
	return ok ? 0 : EXIT_CORDON;
}

/* resume: the daemon's child for a segment found running after a
 * restart whose start helper had died, when its provider can take it up
 * (an SSH remote's run goes on without its connection): this process
 * is the segment's from then on, the exit file its own as the helper's
 * would have been, its output the segment's log. What the run leaves in
 * the workspace for host tools is looked for as after any launch; the
 * look before is taken here, which for a provider that copies changes
 * back at the end (SSH) is the workspace before any of them. */
static int resume(int argc, char **argv)
{
	const char *record = NULL, *job = NULL;
	unsigned long seg = 0;
	_cleanup_free_ char *buf = NULL, *digest = NULL, *exec_dir = NULL, *run_dir = NULL,
			   *log = NULL, *pp = NULL;
	_cleanup_json_ json_t *pin = NULL, *stamp = NULL;
	_cleanup_free_ char *stamp_text = NULL;
	_cleanup_close_ int rdfd = -1;
	unsigned long long ticks = 0;
	struct planted_state *planted = NULL;
	const struct provider *cp;
	struct plan *p = NULL;
	struct err *e = NULL, *perr = NULL;
	struct provider_exit x = { 0 };
	size_t len = 0;
	char *slash;
	int code = EXIT_CORDON;

	if (segment_args(argc, argv, &record, &job, &seg) < 0)
		return EXIT_CORDON;
	/* <exec_dir>/sandbox/<segment>; its log <exec_dir>/log */
	exec_dir = strdup(record);
	for (int i = 0; exec_dir && i < 2 && (slash = strrchr(exec_dir, '/')); i++)
		*slash = '\0';
	if (!exec_dir || !(run_dir = fs_path_join(exec_dir, "run")) ||
	    !(log = fs_path_join(exec_dir, "log"))) {
		err_set(&e, ERR_INTERNAL, ENOMEM, "resume");
		return fail(e);
	}
	/* a group of its own, as the helper's: a stop's TERM to it reaches it */
	(void)setsid();
	int lfd = open(log, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	if (lfd >= 0) {
		(void)dup2(lfd, STDOUT_FILENO);
		(void)dup2(lfd, STDERR_FILENO);
		close(lfd);
	}
	struct plan_paths paths = { .execution = (char *)job, .segment = (unsigned int)seg,
				    .exec_dir = exec_dir, .run_dir = run_dir,
				    .record_dir = (char *)record };
	if (plan_read_pin(exec_dir, (unsigned int)seg, &digest, &e) < 0 ||
	    plan_read_record(record, digest, &p, &e) < 0)
		goto out;
	if (!(pp = fs_path_join(record, "container.json")) ||
	    fs_read_file(AT_FDCWD, pp, 65536, &buf, &len, &e) < 0)
		goto out;
	if (!(pin = parse_object(buf, len))) {
		err_set(&e, ERR_DENIED, 0, "its container pin cannot be read");
		goto out;
	}
	if (!(cp = provider_of(pin, PROVIDER_CONTAINER, &e)))
		goto out;
	if (!cp->resume) {
		err_set(&e, ERR_UNAVAILABLE, 0, "the %s provider cannot take a run up again",
			cp->name);
		goto out;
	}
	/* who took it up, for the next restart to end before another does */
	rdfd = fs_open_nofollow(AT_FDCWD, record, O_PATH | O_DIRECTORY, 0);
	if (procfs_start_ticks(0, &ticks, &e) < 0 ||
	    !(stamp = json_pack("{s:i, s:I}", "pid", (int)getpid(), "start_ticks", (json_int_t)ticks)) ||
	    !(stamp_text = json_dumps(stamp, JSON_COMPACT)) || rdfd < 0 ||
	    fs_write_atomic(rdfd, "resume.json", stamp_text, strlen(stamp_text), 0600, true, &e) < 0) {
		if (!e)
			err_set(&e, ERR_UNAVAILABLE, errno, "resume: its stamp");
		goto out;
	}
	const char *ws = json_string_value(json_object_get(p->data, "workspace"));
	if (!ws || planted_before(ws, &planted, &e) < 0)
		goto out;
	fprintf(stderr, "cordon: taken up again after a restart (its start helper was gone): "
			"its output since is not here\n");
	code = cp->resume(p, &paths, pin, &x, &e) < 0 ? -1 : x.code;
	if (planted_after(planted, record, stderr, &perr) < 0)
		err_print(stderr, perr);
	err_free(perr);
	if (code < 0)
		goto out;
	/* what the helper would have written */
	host_wrapper_write_exit(record, code, NULL, x.interrupted);
	planted_state_free(planted);
	plan_free(p);
	return code;
out:
	/* no exit file: the daemon settles the segment (its container
	 * stopped, confirmed) */
	planted_state_free(planted);
	plan_free(p);
	return fail(e);
}

/* The options of inspect, list, stop and remove. */
struct opts {
	const char *pin, *config, *state, *job, *digest;
	unsigned long seg;
};

static int parse(int argc, char **argv, struct opts *o)
{
	for (int i = 1; i < argc; i++) {
		const char *k = argv[i], **slot = NULL;

		if (strcmp(k, "--pin") == 0)
			slot = &o->pin;
		else if (strcmp(k, "--config") == 0)
			slot = &o->config;
		else if (strcmp(k, "--state-dir") == 0)
			slot = &o->state;
		else if (strcmp(k, "--job") == 0)
			slot = &o->job;
		else if (strcmp(k, "--digest") == 0)
			slot = &o->digest;
		else if (strcmp(k, "--segment") == 0 && i + 1 < argc) {
			char *end = NULL;

			o->seg = strtoul(argv[++i], &end, 10);
			if (!end || *end || o->seg == 0 || o->seg > 1000000)
				return -1;
			continue;
		}
		if (!slot || i + 1 >= argc)
			return -1;
		*slot = argv[++i];
	}
	return 0;
}

static const char *status_name(int st)
{
	switch (st) {
	case PROVIDER_CREATED:
		return "created";
	case PROVIDER_RUNNING:
		return "running";
	case PROVIDER_EXITED:
		return "exited";
	default:
		return "gone";
	}
}

static int on_pin(const char *cmd,
		  const struct opts *o)
{
	_cleanup_json_ json_t *pin = NULL, *out = NULL;
	_cleanup_free_ char *text = NULL;
	const struct provider *cp;
	struct provider_state st = { 0 };
	struct err *e = NULL;
	int r;

	if (!o->pin || o->config || o->state || (strcmp(cmd, "inspect") != 0 && (o->job || o->seg)))
		return fputs(usage, stderr), EXIT_CORDON;
	if (!(pin = read_json(o->pin, &e)) || !(cp = provider_of(pin, PROVIDER_CONTAINER, &e)))
		return fail(e);
	if (strcmp(cmd, "stop") == 0)
		return cp->stop(pin, &e) < 0 ? fail(e) : 0;
	if (strcmp(cmd, "remove") == 0)
		return cp->remove(pin, &e) < 0 ? fail(e) : 0;
	if ((r = cp->inspect(pin, o->digest, o->job, (unsigned int)o->seg, &st, &e)) < 0)
		return fail(e);
	out = json_pack("{s:s}", "status", status_name(r));
	if (out && (r == PROVIDER_EXITED))
		json_object_set_new(out, "exit_code", json_integer(st.exit_code));
	if (out && st.started_at)
		json_object_set_new(out, "started_at", json_string(st.started_at));
	provider_state_clear(&st);
	if (!out || !(text = json_dumps(out, JSON_COMPACT | JSON_PRESERVE_ORDER)))
		return err_set(&e, ERR_INTERNAL, ENOMEM, "inspect"), fail(e);
	printf("%s\n", text);
	return 0;
}

static int list(const struct opts *o)
{
	_cleanup_json_ json_t *cfg = NULL;
	_cleanup_free_ char *state = NULL;
	_cleanup_strv_ char **ids = NULL;
	const struct provider *cp;
	struct err *e = NULL;
	char host[17];

	if (!o->config || !o->state || o->pin || o->seg || o->digest)
		return fputs(usage, stderr), EXIT_CORDON;
	if (!(state = realpath(o->state, NULL)))
		return err_set(&e, ERR_CONFIG, errno, "--state-dir `%s`", o->state), fail(e);
	if (!(cfg = read_json(o->config, &e)) || !(cp = provider_of(cfg, PROVIDER_CONTAINER, &e)) ||
	    container_host_label(state, host, &e) < 0 || cp->list(cfg, state, host, o->job, &ids, &e) < 0)
		return fail(e);
	for (size_t i = 0; ids && ids[i]; i++)
		printf("%s\n", ids[i]);
	return 0;
}

static int sweep(int argc, char **argv)
{
	_cleanup_json_ json_t *cfg = NULL;
	_cleanup_strv_ char **live = NULL;
	_cleanup_free_ char *state = NULL;
	const struct provider *cp;
	struct err *e = NULL;
	unsigned int removed = 0;
	char host[17];

	for (int i = 1; i < argc; i++) {
		const char *o = argv[i];

		if (i + 1 >= argc)
			return fputs(usage, stderr), EXIT_CORDON;
		if (strcmp(o, "--config-json") == 0 && !cfg) {
			cfg = parse_object(argv[i + 1], strlen(argv[i + 1]));
			i++;
		} else if (strcmp(o, "--state-dir") == 0 && !state)
			state = realpath(argv[++i], NULL);
		else if (strcmp(o, "--live") == 0)
			(void)strv_push(&live, argv[++i]);
		else
			return fputs(usage, stderr), EXIT_CORDON;
	}
	if (!cfg || !state)
		return err_set(&e, ERR_CONFIG, 0, "sweep: --config-json and --state-dir name nothing"),
		       fail(e);
	if (!(cp = provider_of(cfg, PROVIDER_CONTAINER, &e)) || container_host_label(state, host, &e) < 0 ||
	    cp->sweep(cfg, state, host, live, &removed, &e) < 0)
		return fail(e);
	if (removed)
		fprintf(stderr, "cordon: container sweep: removed %u left by ended jobs\n", removed);
	return 0;
}

int container_main(int argc, char **argv)
{
	struct opts o = { 0 };
	const char *cmd = argc >= 2 ? argv[1] : "";

	if (strcmp(cmd, "wrap") == 0)
		return cli_wrap(argc - 1, argv + 1);
	if (strcmp(cmd, "settle") == 0)
		return settle(argc - 1, argv + 1);
	if (strcmp(cmd, "resume") == 0)
		return resume(argc - 1, argv + 1);
	if (strcmp(cmd, "sweep") == 0)
		return sweep(argc - 1, argv + 1);
	if (strcmp(cmd, "--help") == 0)
		return fputs(usage, stdout), 0;
	if (parse(argc - 1, argv + 1, &o) < 0)
		return fputs(usage, stderr), EXIT_CORDON;
	if (strcmp(cmd, "list") == 0)
		return list(&o);
	if (strcmp(cmd, "inspect") == 0 || strcmp(cmd, "stop") == 0 || strcmp(cmd, "remove") == 0)
		return on_pin(cmd, &o);
	fputs(usage, stderr);
	return EXIT_CORDON;
}
