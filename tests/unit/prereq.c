/* prereq.c (test): the native provider's prerequisite checks on this
 * machine, as root and as nobody; prereq_require on hand-made
 * reports, each refusal beside its control; and each probe made to fail
 * for real, by a seccomp filter in a forked child, to show the checks
 * test the kernel rather than trust a setting. */
#include "lib/cleanup.h"
#include "sandbox/confine/landlock.h"
#include "sandbox/prereq.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#endif

#define NOBODY 65534

static const char *const want_ids[] = { "kernel", "userns", "landlock",
					"seccomp", "mount_api", "pids", "cgroup" };
#define N_IDS ((int)(sizeof(want_ids) / sizeof(want_ids[0])))

static void skip(const char *why)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, why);
}

static bool has(const char *s, const char *needle)
{
	return s && strstr(s, needle);
}

static const struct prereq_check *find(const struct prereq_report *r,
				       const char *id)
{
	for (int i = 0; i < r->n; i++)
		if (r->checks[i].id && strcmp(r->checks[i].id, id) == 0)
			return &r->checks[i];
	return NULL;
}

static bool report_passes(const struct prereq_report *r)
{
	_cleanup_err_ struct err *e = NULL;

	return prereq_require(r, &e) == 0;
}

static void diag_report(const struct prereq_report *r)
{
	for (int i = 0; i < r->n; i++)
		diag("%s status=%d: %s [%s]", r->checks[i].id,
		     (int)r->checks[i].status, r->checks[i].detail,
		     r->checks[i].fix);
}

static void test_live(void)
{
	struct prereq_report r;
	bool all_pass = true;
	int abi = confine_landlock_abi();

	prereq_run(&r);
	is_int(r.n, N_IDS, "the report has %d checks", N_IDS);
	for (int i = 0; i < N_IDS && i < r.n; i++)
		is_str(r.checks[i].id, want_ids[i], "check %d is %s", i, want_ids[i]);
	/* the limits' checks warn where no cgroup can be had (a container) */
	for (int i = 0; i < r.n; i++)
		all_pass &= r.checks[i].status == PREREQ_PASS ||
			    (r.checks[i].status == PREREQ_WARN && i >= N_IDS - 2);
	if (geteuid() == 0) {
		if (!ok(all_pass, "as root every check passes on this machine (limits may warn)"))
			diag_report(&r);
	} else {
		skip("not root: the unprivileged run is checked below as nobody");
		diag_report(&r);
	}
	ok(waitpid(-1, NULL, WNOHANG) < 0 && errno == ECHILD,
	   "the probes leave no child behind");
	ok(abi >= 1, "confine_landlock_abi() is at least 1 (got %d)", abi);
	is_int(r.landlock_abi, abi, "the report carries the same Landlock ABI");
	ok(find(&r, "landlock") && has(find(&r, "landlock")->detail, "ABI"),
	   "the landlock detail names the ABI");
	ok(find(&r, "kernel") && has(find(&r, "kernel")->detail, "Linux "),
	   "the kernel detail names the release");
}

static void report_fill(struct prereq_report *r)
{
	memset(r, 0, sizeof(*r));
	r->n = N_IDS;
	r->landlock_abi = 7;
	for (int i = 0; i < N_IDS; i++) {
		r->checks[i].id = want_ids[i];
		r->checks[i].status = PREREQ_PASS;
		snprintf(r->checks[i].detail, sizeof(r->checks[i].detail), "%s fine",
			 want_ids[i]);
	}
}

static void test_require(void)
{
	struct prereq_report r;

	report_fill(&r);
	{
		_cleanup_err_ struct err *e = NULL;

		is_int(prereq_require(&r, &e), 0, "a passing report is accepted");
		ok(e == NULL, "and sets no error");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		r.checks[2].status = PREREQ_WARN;
		snprintf(r.checks[2].fix, sizeof(r.checks[2].fix), "upgrade");
		is_int(prereq_require(&r, &e), 0, "a warning is accepted");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		r.checks[1].status = PREREQ_FAIL;
		snprintf(r.checks[1].detail, sizeof(r.checks[1].detail),
			 "unshare failed: EPERM");
		snprintf(r.checks[1].fix, sizeof(r.checks[1].fix),
			 "sysctl -w user.max_user_namespaces=15000");
		is_int(prereq_require(&r, &e), -1, "one FAIL refuses");
		ok(e && e->reason == ERR_UNAVAILABLE, "as sandbox_unavailable");
		ok(e && has(e->msg, "userns: unshare failed: EPERM"),
		   "the message names the check and its detail (%s)", e ? e->msg : "");
		ok(e && has(e->msg, "sysctl -w user.max_user_namespaces=15000"),
		   "the message carries the fix");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		r.checks[4].status = PREREQ_FAIL;
		snprintf(r.checks[4].fix, sizeof(r.checks[4].fix), "other fix");
		prereq_require(&r, &e);
		ok(e && has(e->msg, "userns") && !has(e->msg, "mount_api"),
		   "with two FAILs the first is named");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		r.checks[1].status = PREREQ_PASS;
		r.checks[4].status = PREREQ_PASS;
		is_int(prereq_require(&r, &e), 0,
		       "control: the same report with the checks set to PASS is accepted");
	}
	{
		_cleanup_err_ struct err *e = NULL;

		r.n = 0;
		is_int(prereq_require(&r, &e), -1,
		       "a report that checked nothing is refused (fail closed)");
		ok(e && e->reason == ERR_UNAVAILABLE, "as sandbox_unavailable");
	}
}

/* Run prereq_run in a forked child prepared by setup() and bring
 * the report back. The ids point into this binary's rodata, which the
 * child shares, so the struct travels as bytes. */
static int run_in_child(int (*setup)(const void *arg), const void *arg,
			struct prereq_report *r)
{
	int fds[2];
	pid_t pid;
	ssize_t n;
	int status;

	memset(r, 0, sizeof(*r));
	if (pipe2(fds, O_CLOEXEC) < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		struct prereq_report cr;

		close(fds[0]);
		if (setup(arg) < 0)
			_exit(2);
		prereq_run(&cr);
		_exit(write(fds[1], &cr, sizeof(cr)) == (ssize_t)sizeof(cr) ? 0 : 3);
	}
	close(fds[1]);
	n = read(fds[0], r, sizeof(*r));
	close(fds[0]);
	if (waitpid(pid, &status, 0) < 0 || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0) {
		diag("child status %#x", status);
		return -1;
	}
	return n == (ssize_t)sizeof(*r) ? 0 : -1;
}

/* Become nobody the way a login would leave us: no supplementary groups,
 * and dumpable (a credential change clears it; an exec'd user process
 * has it, and /proc/self/uid_map is only ours to write when it is set). */
static int become_nobody(const void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/* The same without dumpable: what a daemon that drops to a user in
 * process, without exec, would meet. */
static int become_nobody_undumpable(const void *arg)
{
	(void)arg;
	if (setgroups(0, NULL) < 0 || setgid(NOBODY) < 0 || setuid(NOBODY) < 0)
		return -1;
	return prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static void test_nobody(void)
{
	struct prereq_report r;
	const struct prereq_check *c;

	if (geteuid() != 0) {
		skip("not root: cannot become nobody (the live run above is unprivileged)");
		return;
	}
	if (!ok(run_in_child(become_nobody, NULL, &r) == 0,
		"prereq_run as uid %d answers", NOBODY))
		return;
	c = find(&r, "userns");
	if (!ok(c && c->status == PREREQ_PASS,
		"user namespaces usable by nobody on this machine"))
		diag("userns as nobody: %s", c ? c->detail : "(missing)");
	ok(c && has(c->detail, "uid 65534"), "the probe ran as nobody (%s)",
	   c ? c->detail : "");
	c = find(&r, "mount_api");
	if (!ok(c && c->status == PREREQ_PASS, "the mount API works for nobody"))
		diag("mount_api as nobody: %s", c ? c->detail : "(missing)");

	if (!ok(run_in_child(become_nobody_undumpable, NULL, &r) == 0,
		"prereq_run as an undumpable nobody answers"))
		return;
	c = find(&r, "userns");
	ok(c && c->status == PREREQ_FAIL && has(c->detail, "setgroups") &&
		   has(c->detail, "Permission denied"),
	   "undumpable nobody cannot write its own maps (%s)", c ? c->detail : "");
	ok(c && has(c->fix, "dumpable"), "and the fix says why (%s)", c ? c->fix : "");
}

/* A filter that gives one syscall (and, when arg0 >= 0, only with that
 * first argument) a fixed action, and allows the rest. The tests run on
 * the build's own arch, so the syscall numbers are the native ones. */
struct deny {
	long nr;
	long arg0;
	unsigned int action;
};

static int load_deny(const void *arg)
{
	const struct deny *d = arg;
	struct sock_filter insn[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)d->nr, 0, 4),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned int)d->arg0, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, d->arg0 < 0 ? d->action : SECCOMP_RET_ALLOW),
		BPF_STMT(BPF_RET | BPF_K, d->action),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(insn) / sizeof(insn[0]), .filter = insn };

	/* A probe killed on purpose should not leave a core file behind. */
	if (setrlimit(RLIMIT_CORE, &(struct rlimit){ 0, 0 }) < 0)
		return -1;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

/* One probe made to fail: the check id fails, its detail holds each of
 * the needles, and a fix is given. */
static void expect_fail(const char *what, const struct deny *d, const char *id,
			const char *needle1, const char *needle2)
{
	struct prereq_report r;
	const struct prereq_check *c;
	_cleanup_err_ struct err *e = NULL;

	if (!ok(run_in_child(load_deny, d, &r) == 0, "%s: the checks answer", what))
		return;
	c = find(&r, id);
	ok(c && c->status == PREREQ_FAIL, "%s: %s fails", what, id);
	if (!c || c->status != PREREQ_FAIL) {
		diag_report(&r);
		return;
	}
	ok(has(c->detail, needle1) && has(c->detail, needle2),
	   "%s: the detail says why (%s)", what, c->detail);
	ok(c->fix[0] != '\0', "%s: a fix is given (%s)", what, c->fix);
	ok(prereq_require(&r, &e) < 0 && e && has(e->msg, id),
	   "%s: the launch is refused naming %s", what, id);
}

static void test_probes_fail(void)
{
	const struct deny unshare_eperm = { SYS_unshare, -1,
					    SECCOMP_RET_ERRNO | EPERM };
	const struct deny mount_eperm = { SYS_mount, -1, SECCOMP_RET_ERRNO | EPERM };
	const struct deny open_tree_enosys = { SYS_open_tree, -1,
					       SECCOMP_RET_ERRNO | ENOSYS };
	const struct deny setattr_enosys = { SYS_mount_setattr, -1,
					     SECCOMP_RET_ERRNO | ENOSYS };
	const struct deny landlock_enosys = { SYS_landlock_create_ruleset, -1,
					      SECCOMP_RET_ERRNO | ENOSYS };
	const struct deny seccomp_einval = { SYS_prctl, PR_SET_SECCOMP,
					     SECCOMP_RET_ERRNO | EINVAL };
	const struct deny unshare_kill = { SYS_unshare, -1,
					   SECCOMP_RET_KILL_PROCESS };
	const struct deny uname_eperm = { SYS_uname, -1, SECCOMP_RET_ERRNO | EPERM };
	const struct deny control = { SYS_uname, 12345, SECCOMP_RET_ERRNO | EPERM };
	struct prereq_report r;
	const struct prereq_check *c;

	/* Control: the same machinery with a filter that denies nothing we use. */
	if (!ok(run_in_child(load_deny, &control, &r) == 0 && report_passes(&r),
		"control: under a filter that matches nothing the report passes"))
		diag_report(&r);

	expect_fail("unshare EPERM", &unshare_eperm, "userns", "unshare", "not permitted");
	expect_fail("mount EPERM (an LSM-style refusal after unshare)", &mount_eperm,
		    "userns", "MS_PRIVATE", "not permitted");
	expect_fail("open_tree ENOSYS", &open_tree_enosys, "mount_api", "open_tree",
		    "not implemented");
	expect_fail("mount_setattr ENOSYS", &setattr_enosys, "mount_api",
		    "mount_setattr", "not implemented");
	expect_fail("Landlock ENOSYS", &landlock_enosys, "landlock", "not enabled",
		    "not implemented");
	expect_fail("PR_SET_SECCOMP EINVAL", &seccomp_einval, "seccomp",
		    "PR_SET_SECCOMP", "Invalid argument");
	expect_fail("unshare kills", &unshare_kill, "userns", "did not answer",
		    "signal");
	expect_fail("uname EPERM", &uname_eperm, "kernel", "uname", "not permitted");

	/* Without a user namespace the mount API is still looked for. */
	if (run_in_child(load_deny, &unshare_eperm, &r) == 0) {
		c = find(&r, "mount_api");
		ok(c && c->status == PREREQ_PASS && has(c->detail, "not exercised"),
		   "no userns: mount_api says the calls exist, not exercised");
		is_int(r.landlock_abi, confine_landlock_abi(),
		       "no userns: the other checks still run");
	}
	if (run_in_child(load_deny, &landlock_enosys, &r) == 0)
		is_int(r.landlock_abi, 0, "Landlock ENOSYS: the report's ABI is 0");
}

int main(void)
{
	test_live();
	test_require();
	test_nobody();
	test_probes_fail();
	return done_testing();
}
