/* job.c: `cordon job ...`, over the management API's client
 * (client/client.h). It prints what the daemon answers; it decides
 * nothing. */
#include "cli/host.h"
#include "client/client.h"
#include "client/tty.h"
#include "daemon/daemon.h"
#include "host/config.h"
#include "host/gitws.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/num.h"
#include "lib/text.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* An error answer, as cordon prints a refusal. */
static int print_error(long status, json_t *j)
{
	const char *why = json_string_value(json_object_get(j, "error"));
	const char *msg = json_string_value(json_object_get(j, "message"));

	/* the message may name what a sandbox made */
	if (status) {
		fputs("cordon: ", stderr);
		text_term_puts(stderr, why ? why : "error", false);
		fputs(": ", stderr);
		text_term_puts(stderr, msg ? msg : "(no message)", true);
		fputc('\n', stderr);
	}
	return 125;
}

static void print_json(json_t *j)
{
	_cleanup_free_ char *t = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);

	if (t)
		printf("%s\n", t);
}

static bool id_ok(const char *id)
{
	return strspn(id, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-") ==
	       strlen(id);
}

/* The status `cordon job wait` exits with: the command's, 125 for a
 * refusal or a loss. */
static int job_status(json_t *job)
{
	const char *r = json_string_value(json_object_get(job, "result"));

	if (r && strcmp(r, "exited") == 0)
		return (int)json_integer_value(json_object_get(job, "code"));
	if (r && strcmp(r, "stopped") == 0)
		return (int)json_integer_value(json_object_get(job, "code"));
	return 125;
}

static int wait_job(struct client *c, const char *id)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "/v1/jobs/%s", id) < 0)
		return 125;
	for (;;) {
		json_t *j = NULL;
		long s = client_call(c, "GET", path, NULL, &j);

		if (s != 200) {
			int rc = print_error(s, j);
			json_decref(j);
			return rc;
		}
		/* (an answer that is no job would never say it ended) */
		if (!json_is_integer(json_object_get(j, "ended_ms"))) {
			fputs("cordon: sandbox_unavailable: the daemon's answer for job ", stderr);
			text_term_puts(stderr, id, false);
			fputs(" is malformed\n", stderr);
			json_decref(j);
			return 125;
		}
		if (json_integer_value(json_object_get(j, "ended_ms")) != 0) {
			int rc = job_status(j);
			json_decref(j);
			return rc;
		}
		json_decref(j);
		nanosleep(&(struct timespec){ 0, 50000000L }, NULL);
	}
}

/* A log is what a sandboxed command wrote: on a terminal, its control
 * bytes, C0 and C1, raw or UTF-8 encoded (escape sequences that set the
 * title or the clipboard, or ask for an answer-back) are shown as \xNN
 * rather than obeyed (lib/text.h). */
static void print_log(const char *p, size_t n, struct text_term *t)
{
	if (!isatty(STDOUT_FILENO)) {
		fwrite(p, 1, n, stdout);
		return;
	}
	text_term_write(stdout, t, p, n, true);
}

/* A piece of the log, as it comes. */
static void show_log(const char *p, size_t n, void *arg)
{
	print_log(p, n, arg);
	fflush(stdout);
}

/* The job's log; with follow, a stream of what it adds until the job has
 * ended (the daemon ends the stream then). A stream cut short is taken
 * up again from where it stopped. */
static int logs(struct client *c, const char *id, bool follow)
{
	unsigned long long offset = 0;
	struct text_term term = { .n = 0 };

	for (;;) {
		json_t *err = NULL;
		size_t got = 0;
		bool whole = false;
		long status = client_log(c, id, offset, follow, show_log, &term, &got, &whole, &err);

		if (status < 0)
			return 125;
		offset += got;
		if (status != 200 && status != 0) {
			int rc = print_error(status, err);

			json_decref(err);
			return rc;
		}
		json_decref(err);
		if (whole && status == 200) {
			if (isatty(STDOUT_FILENO))
				text_term_end(stdout, &term);
			return 0;
		}
		/* cut short: on again while the daemon answers for the job */
		json_t *j = NULL;
		_cleanup_free_ char *job_path = NULL;
		long s2 = asprintf(&job_path, "/v1/jobs/%s", id) < 0
				  ? 0
				  : client_call(c, "GET", job_path, NULL, &j);

		if (s2 != 200) {
			int rc = print_error(s2, j);

			json_decref(j);
			return rc;
		}
		json_decref(j);
		nanosleep(&(struct timespec){ 0, 100000000L }, NULL);
	}
}

/* A value of a job for people: control bytes (a job's args or a
 * wrapper's message may carry them) shown as \xNN. */
static void put_text(const char *v)
{
	text_term_puts(stdout, v ? v : "-", false);
}

static void put_time(json_t *ms)
{
	time_t t = (time_t)(json_integer_value(ms) / 1000);
	struct tm tm;
	char buf[32];

	if (json_integer_value(ms) == 0 || !gmtime_r(&t, &tm) ||
	    !strftime(buf, sizeof(buf), "%Y-%m-%d %H:%M:%S UTC", &tm))
		fputs("-", stdout);
	else
		fputs(buf, stdout);
}

static void put_field(const char *name, const char *v)
{
	printf("%-10s", name);
	put_text(v);
	putchar('\n');
}

/* `cordon job ls`: a line a job, newest first. */
static void print_jobs(json_t *j)
{
	json_t *job;
	size_t i;

	printf("%-34s %-16s %-8s %5s  %s\n", "ID", "BINDING", "RESULT", "CODE", "CREATED");
	json_array_foreach(json_object_get(j, "jobs"), i, job) {
		printf("%-34s ", json_string_value(json_object_get(job, "id")));
		printf("%-16.16s ", json_string_value(json_object_get(job, "binding")));
		printf("%-8s %5d  ", json_string_value(json_object_get(job, "result")),
		       (int)json_integer_value(json_object_get(job, "code")));
		put_time(json_object_get(job, "created_ms"));
		putchar('\n');
	}
}

/* `cordon job ls -q`: the ids alone, a line each, newest first (for
 * scripts and the shell's completion). What is not an id of the daemon's
 * form is left out: no other command would take it. */
static void print_ids(json_t *j)
{
	json_t *job;
	size_t i;

	json_array_foreach(json_object_get(j, "jobs"), i, job) {
		const char *id = json_string_value(json_object_get(job, "id"));

		if (id && id[0] && id_ok(id))
			printf("%s\n", id);
	}
}

/* `cordon job bindings`: the names of the config's bindings, a line each,
 * sorted (the config keeps them sorted by name). The config is loaded and
 * checked as `cordon daemon` does at start, from the same default path:
 * one the daemon would refuse is refused here, with its reason. No daemon
 * is asked. */
static int list_bindings(const char *path)
{
	_cleanup_free_ char *dflt = path ? NULL : hostd_default_config();
	_cleanup_err_ struct err *e = NULL;
	struct host_config *cfg = NULL;

	if (!path && !(path = dflt)) {
		fprintf(stderr, "cordon: sandbox_config: no config (set --config or HOME)\n");
		return 125;
	}
	if (host_config_load(path, &cfg, &e) < 0) {
		err_print(stderr, e);
		return 125;
	}
	for (size_t i = 0; i < cfg->n; i++)
		printf("%s\n", cfg->bindings[i].name);
	host_config_free(cfg);
	return fflush(stdout) == 0 ? 0 : 125;
}

/* `cordon job show`: the job, then each segment with its pin. */
static void print_job(json_t *j)
{
	_cleanup_free_ char *args = json_dumps(json_object_get(j, "args"), JSON_COMPACT);
	char code[16];
	json_t *seg;
	size_t i;

	snprintf(code, sizeof(code), "%d", (int)json_integer_value(json_object_get(j, "code")));
	put_field("job", json_string_value(json_object_get(j, "id")));
	put_field("binding", json_string_value(json_object_get(j, "binding")));
	put_field("args", args);
	put_field("workspace", json_string_value(json_object_get(j, "workspace")));
	/* a clone job's work comes home by its branch */
	const char *ws = json_string_value(json_object_get(j, "workspace"));
	const char *id = json_string_value(json_object_get(j, "id"));
	if (ws && id && host_git_is_clone(ws)) {
		printf("%-10s" HOST_GIT_WORK_PREFIX, "branch");
		put_text(id);
		printf(" (cordon job fetch ");
		put_text(id);
		printf(" brings it into your checkout)\n");
	}
	printf("%-10s", "created");
	put_time(json_object_get(j, "created_ms"));
	printf("\n%-10s", "ended");
	put_time(json_object_get(j, "ended_ms"));
	printf("\n%-10s%s %s\n", "result", json_string_value(json_object_get(j, "result")), code);
	if (json_string_value(json_object_get(j, "reason")))
		put_field("reason", json_string_value(json_object_get(j, "reason")));
	const char *oname;
	json_t *oval;
	json_object_foreach(json_object_get(j, "outputs"), oname, oval) {
		printf("%-10s", "output");
		put_text(oname);
		putchar(' ');
		put_text(json_string_value(oval));
		putchar('\n');
	}
	json_array_foreach(json_object_get(j, "segments"), i, seg) {
		const char *prov = json_string_value(json_object_get(seg, "provider"));
		int sig = (int)json_integer_value(json_object_get(seg, "signal"));

		printf("\nsegment %d (attempt %d): %s %d", (int)json_integer_value(json_object_get(seg, "n")),
		       (int)json_integer_value(json_object_get(seg, "attempt")),
		       json_string_value(json_object_get(seg, "result")),
		       (int)json_integer_value(json_object_get(seg, "code")));
		if (sig)
			printf(", stopped with signal %d", sig);
		putchar('\n');
		printf("  ");
		put_field("provider", prov ? prov : "none (no sandbox)");
		printf("  ");
		put_field("pin", json_string_value(json_object_get(seg, "digest")));
		printf("  ");
		put_field("summary", json_string_value(json_object_get(seg, "summary")));
		printf("  ");
		put_field("record", json_string_value(json_object_get(seg, "record")));
		/* a container's pin: what ran it, on which daemon */
		json_t *c = json_object_get(seg, "container");
		if (json_is_object(c)) {
			printf("  ");
			put_field("container", json_string_value(json_object_get(c, "container")));
			printf("  ");
			put_field("image", json_string_value(json_object_get(c, "image")));
			printf("  ");
			put_field("daemon", json_string_value(json_object_get(c, "daemon")));
		}
		printf("  %-10s", "started");
		put_time(json_object_get(seg, "started_ms"));
		printf("\n  %-10s", "ended");
		put_time(json_object_get(seg, "ended_ms"));
		putchar('\n');
		if (json_string_value(json_object_get(seg, "reason"))) {
			printf("  ");
			put_field("reason", json_string_value(json_object_get(seg, "reason")));
		}
	}
}

/* Attach: the executor's session, run here as the operator (the daemon
 * has refused it for a workspace any sandboxed run wrote). */
static int run_attach(json_t *a)
{
	const char *cwd = json_string_value(json_object_get(a, "cwd"));
	_cleanup_strv_ char **argv = NULL;
	const char *key;
	json_t *v;

	/* a job that ran in a container: its attach container (made by the
	 * daemon) on this terminal, removed when it closes */
	if (json_is_object(json_object_get(a, "container"))) {
		_cleanup_err_ struct err *e = NULL;
		int code = docker_terminal(json_object_get(a, "container"), &e);

		if (code < 0) {
			err_print(stderr, e);
			return 125;
		}
		return code;
	}

	if (!cwd || json_to_strv(json_object_get(a, "argv"), &argv) < 0 || !argv[0] ||
	    argv[0][0] != '/') {
		fprintf(stderr, "cordon: sandbox_unavailable: the daemon's attach answer is malformed\n");
		return 125;
	}
	json_object_foreach(json_object_get(a, "env"), key, v)
		if (json_is_string(v))
			setenv(key, json_string_value(v), 1);
	if (chdir(cwd) < 0) {
		fprintf(stderr, "cordon: sandbox_unavailable: the workspace `%s`: %s\n", cwd,
			strerror(errno));
		return 125;
	}
	fflush(stdout);
	execv(argv[0], argv);
	fprintf(stderr, "cordon: `%s`: %s\n", argv[0], strerror(errno));
	return errno == ENOENT ? 127 : 126;
}

/* The job's work branch into the repository at into. */
static int fetch(struct client *c, const char *id, const char *into)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_err_ struct err *e = NULL;
	const char *ws;
	long s;

	s = asprintf(&path, "/v1/jobs/%s", id) < 0 ? 0 : client_call(c, "GET", path, NULL, &j);
	if (s != 200)
		return print_error(s, j);
	/* while a segment runs, its sandbox may still make what the check
	 * below refuses (a .git/commondir, a .git/.git): only an ended job is fetched */
	if (json_integer_value(json_object_get(j, "ended_ms")) == 0) {
		fprintf(stderr, "cordon: sandbox_denied: job %s has not ended: fetch its work once "
				"it has (cordon job wait %s)\n", id, id);
		return 125;
	}
	ws = json_string_value(json_object_get(j, "workspace"));
	if (!ws) {
		fprintf(stderr, "cordon: sandbox_unavailable: the daemon names no workspace for the job\n");
		return 125;
	}
	if (host_git_fetch(ws, id, into, &e) < 0) {
		err_print(stderr, e);
		return 125;
	}
	printf("%s%s\n", HOST_GIT_WORK_PREFIX, id);
	return fflush(stdout) == 0 ? 0 : 125;
}

static const char job_usage[] =
	"usage: cordon job start BINDING [--wait] [-- ARGS...]\n"
	"       cordon job ls [--json | -q|--quiet]\n"
	"       cordon job show ID [--json]\n"
	"       cordon job wait ID\n"
	"       cordon job stop ID\n"
	"       cordon job interrupt ID\n"
	"       cordon job inject ID TEXT\n"
	"       cordon job logs ID [-f]\n"
	"       cordon job attach ID\n"
	"       cordon job fetch ID [--into DIR]\n"
	"       cordon job doctor                 (each binding: can it run here?)\n"
	"       cordon job bindings [--config FILE]\n"
	"every one takes --state-dir DIR (default: $XDG_STATE_HOME/cordon)\n\n"
	"Talk to `cordon daemon` on its management socket. start prints the job's\n"
	"id (with --wait it exits as the job did); wait exits with the job's\n"
	"status: its command's, 125 for a refusal. stop sends TERM to the job's\n"
	"segment, and KILL once its binding's grace is over; interrupt sends TERM\n"
	"only and prints whether the command's handler runs (term) or not (kill);\n"
	"inject leaves TEXT in the job's inbox ($CORDON_INBOX inside); logs prints\n"
	"the job's output (-f: until it ends); attach resumes a claude job's\n"
	"session: on the host, refused for a workspace a sandboxed run wrote; for\n"
	"a job that ran in a container, in a container of its own on this\n"
	"terminal, removed when it closes. fetch brings a clone job's work branch (cordon/ID)\n"
	"into the repository at DIR (default: here), its objects and that one\n"
	"ref, with git trusting nothing of the job's. ls and show print for\n"
	"people; --json prints the daemon's answer as it is; ls -q the jobs' ids\n"
	"alone, a line each. bindings prints the names of the bindings in the\n"
	"config `cordon daemon` reads (default: $XDG_CONFIG_HOME/cordon/config.json),\n"
	"a line each, sorted, checked as the daemon checks it; no daemon is asked.\n";

int cli_job(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "state-dir", required_argument, NULL, 's' },
		{ "wait", no_argument, NULL, 'w' },
		{ "json", no_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "config", required_argument, NULL, 'c' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *state = NULL, *config = NULL;
	bool wait = false, as_json = false, quiet = false;
	struct client c = { 0 };
	int o, rc = 125;

	optind = 1;
	while ((o = getopt_long(argc, argv, "+hq", opts, NULL)) != -1) {
		if (o == 's')
			state = optarg;
		else if (o == 'c')
			config = optarg;
		else if (o == 'q')
			quiet = true;
		else if (o == 'w')
			wait = true;
		else if (o == 'j')
			as_json = true;
		else if (o == 'h') {
			fputs(job_usage, stdout);
			return 0;
		} else {
			fputs(job_usage, stderr);
			return 125;
		}
	}
	/* options may follow the subcommand too */
	if (optind >= argc) {
		fputs(job_usage, stderr);
		return 125;
	}
	const char *cmd = argv[optind++];
	const char *arg = NULL, *arg2 = NULL, *into = NULL;
	bool follow = false;
	char **rest = NULL;
	while (optind < argc) {
		if (strcmp(argv[optind], "--") == 0) {
			rest = argv + optind + 1;
			break;
		}
		if (strcmp(argv[optind], "--wait") == 0) {
			wait = true;
		} else if (strcmp(argv[optind], "--json") == 0) {
			as_json = true;
		} else if (strcmp(argv[optind], "-q") == 0 || strcmp(argv[optind], "--quiet") == 0) {
			quiet = true;
		} else if (strcmp(argv[optind], "-f") == 0 || strcmp(argv[optind], "--follow") == 0) {
			follow = true;
		} else if (strcmp(argv[optind], "--state-dir") == 0 && optind + 1 < argc) {
			state = argv[++optind];
		} else if (strcmp(argv[optind], "--into") == 0 && optind + 1 < argc) {
			into = argv[++optind];
		} else if (strcmp(argv[optind], "--config") == 0 && optind + 1 < argc) {
			config = argv[++optind];
		} else if (!arg) {
			arg = argv[optind];
		} else if (!arg2) {
			arg2 = argv[optind];
		} else {
			fputs(job_usage, stderr);
			return 125;
		}
		optind++;
	}
	/* bindings reads the config alone; --config is its flag only */
	if (strcmp(cmd, "bindings") == 0 && !arg && !rest)
		return list_bindings(config);
	if (config || strcmp(cmd, "bindings") == 0) {
		fputs(job_usage, stderr);
		return 125;
	}
	if (client_open(&c, state) < 0) {
		client_close(&c);
		return 125;
	}
	client_global_init();
	json_t *j = NULL;
	long s;
	if (strcmp(cmd, "start") == 0 && arg) {
		_cleanup_json_ json_t *req = json_pack("{s:s}", "binding", arg);
		_cleanup_free_ char *body = NULL;

		if (req && rest && rest[0])
			json_object_set_new(req, "args", json_strv(rest));
		body = req ? json_dumps(req, JSON_COMPACT) : NULL;
		s = body ? client_call(&c, "POST", "/v1/jobs", body, &j) : 0;
		if (s != 201) {
			rc = print_error(s, j);
		} else {
			const char *id = json_string_value(json_object_get(j, "id"));

			printf("%s\n", id ? id : "");
			fflush(stdout);
			rc = wait && id ? wait_job(&c, id) : 0;
		}
	} else if ((strcmp(cmd, "show") == 0 || strcmp(cmd, "wait") == 0) && arg && !arg2 &&
		   id_ok(arg)) {
		if (strcmp(cmd, "wait") == 0) {
			rc = wait_job(&c, arg);
		} else {
			_cleanup_free_ char *path = NULL;

			s = asprintf(&path, "/v1/jobs/%s", arg) < 0 ? 0 : client_call(&c, "GET", path, NULL, &j);
			if (s == 200) {
				if (as_json)
					print_json(j);
				else
					print_job(j);
				rc = 0;
			} else {
				rc = print_error(s, j);
			}
		}
	} else if ((strcmp(cmd, "stop") == 0 || strcmp(cmd, "interrupt") == 0 ||
		    strcmp(cmd, "attach") == 0) &&
		   arg && !arg2 && id_ok(arg)) {
		_cleanup_free_ char *path = NULL;

		s = asprintf(&path, "/v1/jobs/%s/%s", arg, cmd) < 0 ? 0 : client_call(&c, "POST", path, "", &j);
		if (s == 200 && strcmp(cmd, "attach") == 0) {
			rc = run_attach(j);
			json_decref(j);
			j = NULL;
		} else {
			rc = s == 202 ? 0 : print_error(s, j);
		}
		if (s == 202 && strcmp(cmd, "interrupt") == 0)
			printf("%s\n", json_string_value(json_object_get(j, "signals")));
	} else if (strcmp(cmd, "inject") == 0 && arg && arg2 && id_ok(arg)) {
		_cleanup_free_ char *path = NULL, *body = NULL;
		_cleanup_json_ json_t *req = json_pack("{s:s}", "text", arg2);

		body = req ? json_dumps(req, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
		s = body && asprintf(&path, "/v1/jobs/%s/inject", arg) >= 0
			    ? client_call(&c, "POST", path, body, &j)
			    : 0;
		rc = s == 202 ? 0 : print_error(s, j);
	} else if (strcmp(cmd, "fetch") == 0 && arg && !arg2 && id_ok(arg)) {
		rc = fetch(&c, arg, into ? into : ".");
	} else if (strcmp(cmd, "logs") == 0 && arg && !arg2 && id_ok(arg)) {
		rc = logs(&c, arg, follow);
	} else if (strcmp(cmd, "doctor") == 0 && !arg) {
		s = client_call(&c, "GET", "/v1/doctor", NULL, &j);
		if (s == 200) {
			json_t *bs = json_object_get(j, "bindings"), *b;
			size_t i;

			rc = 0;
			json_array_foreach(bs, i, b) {
				bool ready = json_is_true(json_object_get(b, "ready"));
				const char *why = json_string_value(json_object_get(b, "why"));

				printf("%-24s %-7s %s%s%s\n", json_string_value(json_object_get(b, "binding")),
				       json_string_value(json_object_get(b, "provider"))
					       ? json_string_value(json_object_get(b, "provider"))
					       : "-",
				       ready ? "ready" : "not ready", why ? ": " : "", why ? why : "");
				if (!ready)
					rc = 1;
			}
		} else {
			rc = print_error(s, j);
		}
	} else if (strcmp(cmd, "ls") == 0 && !arg && !(quiet && as_json)) {
		s = client_call(&c, "GET", "/v1/jobs", NULL, &j);
		if (s == 200) {
			if (quiet)
				print_ids(j);
			else if (as_json)
				print_json(j);
			else
				print_jobs(j);
			rc = 0;
		} else {
			rc = print_error(s, j);
		}
	} else {
		fputs(job_usage, stderr);
	}
	json_decref(j);
	client_global_cleanup();
	client_close(&c);
	return rc;
}
