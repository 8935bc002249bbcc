/* srt.c: the srt provider's table: plan (the wrapper argv, srt.h),
 * record (the settings beside a plan nobody launches), adopt, doctor. */
#include "sandbox/srt/srt.h"
#include "sandbox/adopt.h"
#include "sandbox/confine/landlock.h"
#include "sandbox/prereq.h"
#include "sandbox/srt/limits.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char *settings_path(const char *record_dir)
{
	return fs_path_join(record_dir, SRT_SETTINGS_FILE);
}

/* cordon's own binary, which srt runs as the layer inside its sandbox:
 * it must be readable there. */
int srt_self_exe(const struct grant *g, char **out, struct err **e)
{
	char buf[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	const struct grant_rule *r;

	if (n <= 0 || buf[0] != '/')
		return err_set(e, ERR_UNAVAILABLE, errno, "srt: cannot name cordon's own binary");
	buf[n] = '\0';
	if (strstr(buf, " (deleted)"))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt: cordon's own binary `%s` was replaced since it started", buf);
	r = grant_holder(g, buf, ~0u);
	if (r && r->kind == GRANT_DENY)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "srt: cordon's own binary `%s` lies in denied `%s`; srt runs it "
			       "inside the sandbox", buf, r->path);
	*out = strdup(buf);
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "srt plan");
}

/* env(1) takes a word with '=' before the command for an assignment. */
static int check_env_word(const char *w, const char *what, struct err **e)
{
	if (strchr(w, '='))
		return err_set(e, ERR_CONFIG, 0,
			       "srt: %s `%s` holds '='; env(1), which srt's wrapper runs it "
			       "through, would read it as an assignment", what, w);
	return 0;
}

/* "/usr/bin/env -C <workspace> [-u K]... -- [K=V]...": the command in
 * its workspace (srt itself starts outside every grant), with its own
 * values of the keys the wrapper set for srt, or their absence. */
static int push_child_env(char ***argv, const char *workspace)
{
	int r = strv_push(argv, "/usr/bin/env") < 0 || strv_push(argv, "-C") < 0 ||
			strv_push(argv, workspace) < 0 ? -1 : 0;

	for (size_t i = 0; r == 0 && srt_wrapper_keys[i]; i++)
		if (!getenv(srt_wrapper_keys[i]))
			r = strv_push(argv, "-u") < 0 ? -1 : strv_push(argv, srt_wrapper_keys[i]);
	if (r == 0)
		r = strv_push(argv, "--");
	for (size_t i = 0; r == 0 && srt_wrapper_keys[i]; i++) {
		const char *v = getenv(srt_wrapper_keys[i]);
		char *kv = NULL;

		if (v && (asprintf(&kv, "%s=%s", srt_wrapper_keys[i], v) < 0 ||
			  strv_push_take(argv, kv) < 0))
			r = -1;
	}
	return r;
}

static int wrapper_argv(const struct grant *g, const struct srt_env *t, const char *self,
			const char *settings, const struct plan_paths *paths,
			const struct limits_plan *lp, char *const *cmd, char ***out, struct err **e)
{
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *path_kv = NULL, *tmp_kv = NULL;
	_cleanup_free_ char *dir = srt_run_sockdir(paths);
	const char *record_dir = paths->record_dir;
	int r;

	if (!cmd || !cmd[0])
		return err_set(e, ERR_USAGE, 0, "srt: no command");
	if (check_env_word(t->srt, "srt's path", e) < 0 ||
	    check_env_word(cmd[0], "the command", e) < 0)
		return -1;
	/* srt's sockets in this launch's own socket dir */
	if (!dir || asprintf(&path_kv, "PATH=%s", t->path) < 0 ||
	    asprintf(&tmp_kv, "TMPDIR=%s", dir) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt plan");
	r = strv_push(&argv, "/usr/bin/env");
	/* srt prints its debug log on stderr when SRT_DEBUG is set, and takes
	 * a proxy variable for its parent proxy. */
	for (size_t i = 0; r == 0 && srt_cleared_keys[i]; i++)
		r = strv_push(&argv, "-u") < 0 ? -1 : strv_push(&argv, srt_cleared_keys[i]);
	/* srt works out denies of its own from its working directory and
	 * makes mount points there: it starts in the record dir, outside
	 * every grant. */
	if (r == 0)
		r = strv_push(&argv, "-C") < 0 ? -1 : strv_push(&argv, record_dir);
	if (r == 0)
		r = strv_push(&argv, path_kv) < 0 || strv_push(&argv, tmp_kv) < 0 ||
		    strv_push(&argv, t->srt) < 0 || strv_push(&argv, "--settings") < 0 ||
		    strv_push(&argv, settings) < 0 || strv_push(&argv, "--") < 0 ||
		    strv_push(&argv, self) < 0 || strv_push(&argv, "confine") < 0 ? -1 : 0;
	for (size_t i = 0; r == 0 && i < g->n_rules; i++)
		if (g->rules[i].kind == GRANT_WRITE)
			r = strv_push(&argv, "--write") < 0 ? -1
							    : strv_push(&argv, g->rules[i].path);
	/* /tmp is the sandbox's own (srt_settings_tmp_private), writable */
	if (r == 0 && srt_settings_tmp_private(g))
		r = strv_push(&argv, "--write") < 0 ? -1 : strv_push(&argv, "/tmp");
	/* Landlock's read side: the denies stay unreadable whatever the host
	 * does to them during the run (confine.h) */
	_cleanup_strv_ char **denies = NULL, **exceptions = NULL;
	if (r == 0 && grant_read_side(g, srt_settings_tmp_private(g), &denies, &exceptions, e) < 0)
		return -1;
	for (size_t i = 0; r == 0 && denies && denies[i]; i++)
		r = strv_push(&argv, "--deny") < 0 ? -1 : strv_push(&argv, denies[i]);
	for (size_t i = 0; r == 0 && exceptions && exceptions[i]; i++)
		r = strv_push(&argv, "--read") < 0 ? -1 : strv_push(&argv, exceptions[i]);
	if (r == 0 && g->unix_sockets_all)
		r = strv_push(&argv, "--unix-all");
	if (r == 0 && confine_landlock_abi() >= LANDLOCK_ABI_SCOPE)
		r = strv_push(&argv, "--scope");
	/* the sandbox's cgroups confine joins, or its RLIMIT_NPROC */
	if (r == 0)
		r = srt_limits_args(lp, g, &argv);
	if (r == 0)
		r = strv_push(&argv, "--");
	if (r == 0)
		r = push_child_env(&argv, g->workspace);
	for (size_t i = 0; r == 0 && cmd[i]; i++)
		r = strv_push(&argv, cmd[i]);
	if (r < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt plan");
	*out = steal_pointer(&argv);
	return 0;
}

static int srt_plan(const struct grant *g, const struct plan_paths *paths,
		    const struct provider_launch *pl, struct plan *p, struct err **e)
{
	struct srt_env t = { 0 };
	struct srt_helpers h;
	struct limits_plan lp = { 0 };
	_cleanup_json_ json_t *settings = NULL;
	_cleanup_free_ char *self = NULL, *file = NULL, *summary = NULL;
	char **argv = NULL;
	int r = -1;

	if (srt_locate(&t, true, e) < 0)
		goto out;
	/* limits this host cannot enforce are refused with nothing recorded */
	if (limits_decide(NULL, g, paths->execution, &lp, e) < 0)
		goto out;
	/* What srt cannot hold is refused here, before anything is recorded. */
	if (srt_self_exe(g, &self, e) < 0)
		goto out;
	h = (struct srt_helpers){ t.bwrap, t.socat, t.rg, self };
	if (srt_settings_build(g, &h, NULL, &settings, e) < 0)
		goto out;
	file = settings_path(paths->record_dir);
	if (!file || asprintf(&summary, "srt %s: %s", t.version, p->summary) < 0) {
		err_set(e, ERR_INTERNAL, ENOMEM, "srt plan");
		goto out;
	}
	if (wrapper_argv(g, &t, self, file, paths, &lp, p->argv, &argv, e) < 0)
		goto out;
	strv_free(p->argv);
	p->argv = argv;
	free(p->summary);
	p->summary = steal_pointer(&summary);
	/* srt starts the command in a session of its own and passes on only
	 * INT and TERM, and not to the command itself: stopping is a kill. */
	p->signals = PLAN_SIGNALS_KILL;
	r = 0;
out:
	limits_clear(&lp);
	srt_env_clear(&t);
	return r;
}

/* `cordon plan`: the settings a launch would use, but for the gateway's
 * ports, which only a launch binds. */
static int srt_record(const struct grant *g, const struct plan *p, const char *record_dir,
		      struct err **e)
{
	struct srt_env t = { 0 };
	struct srt_helpers h;
	_cleanup_json_ json_t *settings = NULL;
	_cleanup_free_ char *self = NULL;
	int r;

	r = srt_locate(&t, false, e);
	if (r == 0)
		r = srt_self_exe(g, &self, e);
	h = (struct srt_helpers){ t.bwrap, t.socat, t.rg, self };
	if (r == 0)
		r = srt_settings_build(g, &h, NULL, &settings, e);
	if (r == 0)
		r = srt_limits_settings(settings, p, e);
	if (r == 0)
		r = srt_settings_write(record_dir, settings, true, e);
	srt_env_clear(&t);
	return r;
}

bool srt_plan_is_srt(const struct plan *p, const char *record_dir)
{
	_cleanup_free_ char *file = settings_path(record_dir);
	size_t n = strv_len(p->argv);

	if (!file || n < 6 || strcmp(p->argv[0], "/usr/bin/env") != 0)
		return false;
	for (size_t i = 1; i + 1 < n; i++) {
		if (strcmp(p->argv[i], "--") == 0)
			return false;
		if (strcmp(p->argv[i], "--settings") == 0)
			return strcmp(p->argv[i + 1], file) == 0;
	}
	return false;
}

/* Does pid run srt with this settings file? Its command line holds
 * "--settings <file>" before the first "--". */
static bool runs_srt_with(pid_t pid, const char *file)
{
	char path[64], *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = -1;
	bool found = false;

	snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fs_read_fd(fd, path, 1 << 20, &text, &len, NULL) < 0)
		return false;
	for (size_t off = 0; off < len;) {
		const char *w = text + off;
		size_t wl = strnlen(w, len - off);
		size_t next = off + wl + 1;

		if (strcmp(w, "--") == 0)
			break;
		if (strcmp(w, "--settings") == 0) {
			found = next < len && strcmp(text + next, file) == 0;
			break;
		}
		off = next;
	}
	free(text);
	return found;
}

/* Some process beneath pid, breadth first and bounded, in namespaces of
 * its own: srt's helpers (socat, bwrap's monitor) stay in the host's. */
static bool sandboxed_beneath(pid_t pid)
{
	pid_t queue[128];
	int head = 0, tail = 0;

	queue[tail++] = pid;
	while (head < tail) {
		pid_t kids[32];
		int n = adopt_children(queue[head++], kids, 32);

		for (int i = 0; i < n; i++) {
			if (adopt_namespaces_differ(kids[i]))
				return true;
			if (tail < 128)
				queue[tail++] = kids[i];
		}
	}
	return false;
}

/* The root (cordon, serving the gateway) has one child, the keeper (a
 * fork of the root, run.c), whose one child runs srt with this record's
 * settings, and beneath srt is a process in mount, network, pid and user
 * namespaces all its own. */
static int srt_adopt(const struct plan *p, const char *record_dir, pid_t parent, pid_t root,
		     struct err **e)
{
	_cleanup_free_ char *file = settings_path(record_dir);
	pid_t kids[4], srt[4];
	int n, r;

	if (!file)
		return err_set(e, ERR_INTERNAL, ENOMEM, "adopt");
	if (!srt_plan_is_srt(p, record_dir))
		return err_set(e, ERR_DENIED, 0, "the plan is not an srt plan for `%s`", record_dir);
	r = adopt_check_root(p, record_dir, parent, root, e);
	if (r != 0)
		return r < 0 ? -1 : 0;
	n = adopt_children(root, kids, 4);
	if (n < 1 || adopt_children(kids[0], srt, 4) < 1)
		return err_set(e, ERR_DENIED, 0, "pid %d has no srt beneath it yet", (int)root);
	if (n != 1 || adopt_children(kids[0], srt, 4) != 1 || !runs_srt_with(srt[0], file))
		return err_set(e, ERR_DENIED, 0, "pid %d runs something besides srt with `%s`",
			       (int)root, file);
	if (!sandboxed_beneath(srt[0]))
		return err_set(e, ERR_DENIED, 0, "nothing beneath srt (pid %d) is sandboxed",
			       (int)srt[0]);
	return 0;
}

/* ---- doctor ------------------------------------------------------------ */

static json_t *check(const char *id, const char *status, const char *code,
		     const char *detail, const char *fix)
{
	return json_pack("{s:s, s:s, s:s, s:s, s:s}", "id", id, "status", status, "code",
			 code, "detail", detail, "fix", fix);
}

/* /usr/bin/true under a grant of nothing: srt's machinery, not a policy. */
static json_t *doctor_preflight(const struct srt_env *t)
{
	struct grant empty = { 0 };
	struct srt_helpers h = { t->bwrap, t->socat, t->rg, NULL };
	_cleanup_json_ json_t *s = NULL;
	_cleanup_free_ char *text = NULL, *file = NULL;
	char dir[] = SRT_SCRATCH "/cordon-srt-doctor.XXXXXX";
	/* srt's bridge sockets: a fresh directory, which no one else can
	 * have made first, outside the /tmp its sandbox gets private */
	char sockdir[] = "/var/tmp/cordon-srt-doctor.XXXXXX";
	bool made;
	struct err *e = NULL;
	json_t *c;
	int fd = -1;

	/* srt runs in a directory of its own, as a launch starts it */
	if (srt_settings_build(&empty, &h, NULL, &s, &e) < 0 || !(text = srt_settings_text(s)) ||
	    !mkdtemp(dir) || !(file = fs_path_join(dir, "settings.json")) ||
	    (fd = open(file, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600)) < 0) {
		err_free(e);
		if (file)
			rmdir(dir);
		return check("preflight", "fail", "preflight_failed",
			     "cannot write an empty policy's settings", "see that /tmp is writable");
	}
	bool written = write(fd, text, strlen(text)) == (ssize_t)strlen(text);
	close(fd);
	made = written && mkdtemp(sockdir);
	if (!made || srt_preflight(t, file, dir, NULL, sockdir, &e) < 0) {
		c = check("preflight", "fail", "preflight_failed",
			  e ? e->msg : "cannot write an empty policy's settings",
			  "run `srt --settings <file> -- /usr/bin/true` with an empty policy "
			  "to see what srt says");
	} else {
		c = check("preflight", "pass", "", "/usr/bin/true runs under an empty policy", "");
	}
	err_free(e);
	unlink(file);
	rmdir(dir);
	if (made)
		srt_sockdir_remove(sockdir);
	return c;
}

static json_t *doctor_kernel(const char *id, const char *code)
{
	struct prereq_report r;

	prereq_run(&r);
	for (int i = 0; i < r.n; i++) {
		const struct prereq_check *c = &r.checks[i];
		if (strcmp(c->id, id) != 0)
			continue;
		return check(id, c->status == PREREQ_FAIL ? "fail" : "pass",
			     c->status == PREREQ_FAIL ? code : "", c->detail,
			     c->status == PREREQ_FAIL ? c->fix : "");
	}
	return check(id, "fail", code, "not checked", "");
}

/* How the limits are enforced under srt: as for native, but for where
 * RLIMIT_NPROC is set (srt's user namespace, by cordon confine). */
static void doctor_limits(json_t *checks)
{
	struct prereq_check c[2] = { { .id = "pids" }, { .id = "cgroup" } };
	static const char *const code[2] = { "pids_unenforced", "limits_unavailable" };

	limits_doctor(NULL, &c[0], &c[1]);
	for (int i = 0; i < 2; i++)
		json_array_append_new(checks, check(c[i].id, c[i].status == PREREQ_PASS ? "pass" : "warn",
						    c[i].status == PREREQ_PASS ? "" : code[i],
						    c[i].detail, c[i].fix));
}

static json_t *srt_doctor(const json_t *config, const char *state_dir)
{
	struct srt_env t = { 0 };
	struct err *e = NULL;
	json_t *checks = json_array(), *out;
	char detail[512];
	bool found, ready = true;

	found = srt_locate(&t, true, &e) == 0;
	if (found) {
		snprintf(detail, sizeof(detail), "srt %s at %s; bwrap, socat and rg at %s, %s, %s",
			 t.version, t.srt, t.bwrap, t.socat, t.rg);
		json_array_append_new(checks, check("srt", "pass", "", detail, ""));
		if (t.vs_tested > 0) {
			snprintf(detail, sizeof(detail),
				 "srt %s is newer than " SRT_VERSION_TESTED ", the version cordon "
				 "was tested with", t.version);
			json_array_append_new(checks, check("version", "warn", "untested_version",
							    detail,
							    "install @anthropic-ai/sandbox-runtime@"
							    SRT_VERSION_TESTED ", or run cordon's "
							    "isolation suite against this one"));
		} else {
			json_array_append_new(checks, check("version", "pass", "",
							    "tested with " SRT_VERSION_TESTED, ""));
		}
	} else {
		json_array_append_new(checks, check("srt", "fail", "srt_unavailable", e->msg,
						    "run scripts/deps (npm install -g "
						    "@anthropic-ai/sandbox-runtime@" SRT_VERSION_TESTED
						    "; apt-get install bubblewrap socat ripgrep), or "
						    "set CORDON_SRT"));
	}
	err_free(e);
	json_array_append_new(checks, doctor_kernel("userns", "userns_unavailable"));
	json_array_append_new(checks, doctor_kernel("seccomp", "seccomp_unavailable"));
	doctor_limits(checks);
	if (found)
		json_array_append_new(checks, doctor_preflight(&t));
	for (size_t i = 0; i < json_array_size(checks); i++) {
		const char *st = json_string_value(json_object_get(json_array_get(checks, i),
								   "status"));
		ready = ready && st && strcmp(st, "fail") != 0;
	}
	out = json_pack("{s:s, s:b, s:s?, s:s?, s:o}", "provider", "srt", "ready", ready,
			"version", t.version, "path", t.srt, "checks", checks);
	srt_env_clear(&t);
	return out;
}

static char *srt_own_dir(const struct plan_paths *paths)
{
	return srt_run_sockdir(paths);
}

const struct provider srt_provider = {
	.name = "srt",
	.kind = PROVIDER_PROCESS,
	.own_dir = srt_own_dir,
	.plan = srt_plan,
	.record = srt_record,
	.create = srt_create,
	.start = srt_start,
	.wait = srt_wait,
	.discard = srt_discard,
	.adopt = srt_adopt,
	.doctor = srt_doctor,
};
