/* prereq.c: the native provider's prerequisite checks (prereq.h). A
 * setting can say yes while the kernel still says no (an LSM may let
 * unshare succeed and refuse the first mount), so beside reading sysctls
 * each check performs the real operations in a throwaway forked child:
 * the caller's namespaces, filters and no_new_privs stay untouched, and a
 * single-threaded child is what unshare(CLONE_NEWUSER) requires. */
#include "sandbox/prereq.h"
#include "lib/fs.h"
#include "sandbox/confine/landlock.h"
#include "sandbox/limits.h"

#include "lib/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/landlock.h>
#include <linux/seccomp.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

/* Linux 5.13 is the first with Landlock; everything else cordon needs
 * (pidfd_open and clone3 5.3, openat2 5.6, close_range 5.9, mount_setattr
 * 5.12) is older. */
#define KERNEL_MIN_MAJOR 5
#define KERNEL_MIN_MINOR 13

static void check_set(struct prereq_check *c, enum prereq_status status,
		      const char *fix, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void check_set(struct prereq_check *c, enum prereq_status status,
		      const char *fix, const char *fmt, ...)
{
	va_list ap;

	c->status = status;
	snprintf(c->fix, sizeof(c->fix), "%s", fix ? fix : "");
	va_start(ap, fmt);
	/* clang 14's analyzer does not see va_start above */
	vsnprintf(c->detail, sizeof(c->detail), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
}

/* ---- forked probes ---------------------------------------------------- */

/* What a probe child reports: the step that failed (0: none) and its
 * errno. A pair per check, so one child can probe two things. */
struct probe_result {
	int step[2];
	int err[2];
};

/* Write all of res to fd and leave: a probe child never returns into the
 * caller's code, and _exit skips the parent's atexit handlers and stdio
 * buffers, which belong to the parent. */
static _Noreturn void probe_reply(int fd, const struct probe_result *res)
{
	const char *p = (const char *)res;
	size_t left = sizeof(*res);

	while (left > 0) {
		ssize_t n = write(fd, p, left);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(1);
		p += n;
		left -= (size_t)n;
	}
	_exit(0);
}

/* Run child(fd, arg) in a forked process and collect its probe_result.
 * Returns 0, or -1 with *err set when the probe itself could not run (fork
 * failed, or the child died without a full answer). The child is always
 * reaped, so no probe outlives the call. Children make only
 * async-signal-safe calls (anything formatted is prepared before the
 * fork), so this stays correct from a threaded caller too. */
static int probe_run(void (*child)(int fd, const void *arg), const void *arg,
		     struct probe_result *res, int *err)
{
	int fds[2];
	pid_t pid;
	ssize_t n;
	int status = 0;

	memset(res, 0, sizeof(*res));
	if (pipe2(fds, O_CLOEXEC) < 0) {
		*err = errno;
		return -1;
	}
	pid = fork();
	if (pid < 0) {
		*err = errno;
		close(fds[0]);
		close(fds[1]);
		return -1;
	}
	if (pid == 0) {
		close(fds[0]);
		child(fds[1], arg);
		_exit(127);
	}
	close(fds[1]);
	n = fs_read_exact(fds[0], res, sizeof(*res)) == 0 ? (ssize_t)sizeof(*res) : -1;
	*err = errno;
	close(fds[0]);
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (n == (ssize_t)sizeof(*res))
		return 0;
	/* A short answer: the child was killed (a seccomp filter that kills,
	 * say) or could not write. Name the signal when there was one. */
	*err = WIFSIGNALED(status) ? -WTERMSIG(status) : (n < 0 && *err ? *err : EPIPE);
	return -1;
}

/* The fix when a probe child could not run or was killed: something
 * around cordon (a seccomp filter, an LSM, a process limit) stopped it. */
#define PROBE_LOST_FIX                                                         \
	"lift what stops the probe (a seccomp filter or LSM confining "        \
	"cordon, a process limit)"

/* "Operation not permitted" or "killed by signal 31". */
static const char *probe_errstr(int err, char *buf, size_t len)
{
	if (err < 0)
		snprintf(buf, len, "killed by signal %d", -err);
	else
		snprintf(buf, len, "%s", strerror(err));
	return buf;
}

/* ---- kernel ----------------------------------------------------------- */

/* Parse "6.8.0-41-generic" into major and minor; -1 when it is not
 * that shape. strtoul rather than sscanf so a bad number is caught. */
static int kernel_parse(const char *release, unsigned long *major,
			unsigned long *minor)
{
	char *end = NULL;

	errno = 0;
	*major = strtoul(release, &end, 10);
	if (errno || end == release || *end != '.')
		return -1;
	release = end + 1;
	*minor = strtoul(release, &end, 10);
	if (errno || end == release)
		return -1;
	return 0;
}

static void check_kernel(struct prereq_check *c)
{
	static const char fix[] = "upgrade to Linux 5.13 or later";
	struct utsname u;
	unsigned long major, minor;

	if (uname(&u) < 0) {
		check_set(c, PREREQ_FAIL, "find what refuses uname(2) to cordon",
			  "uname failed: %s", strerror(errno));
		return;
	}
	if (kernel_parse(u.release, &major, &minor) < 0) {
		check_set(c, PREREQ_FAIL, fix, "cannot read the release '%s'",
			  u.release);
		return;
	}
	if (major < KERNEL_MIN_MAJOR ||
	    (major == KERNEL_MIN_MAJOR && minor < KERNEL_MIN_MINOR)) {
		check_set(c, PREREQ_FAIL, fix,
			  "Linux %s is older than 5.13 (Landlock, the new mount API)",
			  u.release);
		return;
	}
	check_set(c, PREREQ_PASS, "", "Linux %s", u.release);
}

/* ---- user namespaces and the new mount API ---------------------------- */

enum ns_step {
	NS_OK,
	NS_UNSHARE,
	NS_SETGROUPS,
	NS_UID_MAP,
	NS_GID_MAP,
	NS_MOUNT_PRIVATE,
	MNT_OPEN_TREE,
	MNT_SETATTR,
	MNT_MOVE,
};

static const char *const ns_step_names[] = {
	[NS_OK] = "",
	[NS_UNSHARE] = "unshare(CLONE_NEWUSER|CLONE_NEWNS|CLONE_NEWPID|CLONE_NEWNET)",
	[NS_SETGROUPS] = "write /proc/self/setgroups",
	[NS_UID_MAP] = "write /proc/self/uid_map",
	[NS_GID_MAP] = "write /proc/self/gid_map",
	[NS_MOUNT_PRIVATE] = "mount(\"/\", MS_REC|MS_PRIVATE)",
	[MNT_OPEN_TREE] = "open_tree(\"/\", OPEN_TREE_CLONE|AT_RECURSIVE)",
	[MNT_SETATTR] = "mount_setattr(MOUNT_ATTR_RDONLY)",
	[MNT_MOVE] = "move_mount",
};

/* Which half of probe_result each check uses. */
enum { PROBE_USERNS = 0, PROBE_MOUNT_API = 1 };

static const char *ns_step_name(int step)
{
	if (step < 0 || (size_t)step >= sizeof(ns_step_names) / sizeof(ns_step_names[0]))
		return "unknown step";
	return ns_step_names[step];
}

/* Record errno for the step that failed and name the step. */
static int step_failed(int step, int *err)
{
	*err = errno;
	return step;
}

static int write_file(const char *path, const char *text)
{
	_cleanup_close_ int fd = open(path, O_WRONLY | O_CLOEXEC);
	size_t len = strlen(text);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, text, len);
	if (n < 0)
		return -1;
	if ((size_t)n != len) {
		errno = EIO;
		return -1;
	}
	return 0;
}

/* The maps the probe writes: our own ids mapped to themselves, formatted
 * in the parent, before unshare makes them read as the overflow id. */
struct ns_maps {
	char uid[32];
	char gid[32];
};

/* Enter the same namespaces a launch creates and become root in them the
 * way the launcher does (deny setgroups, map our own ids). An LSM that
 * restricts unprivileged user namespaces (Ubuntu's AppArmor) lets unshare
 * succeed and strips the capabilities, so only a mount tells. */
static int ns_enter(const struct ns_maps *maps, int *err)
{
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET) < 0)
		return step_failed(NS_UNSHARE, err);
	if (write_file("/proc/self/setgroups", "deny") < 0)
		return step_failed(NS_SETGROUPS, err);
	if (write_file("/proc/self/uid_map", maps->uid) < 0)
		return step_failed(NS_UID_MAP, err);
	if (write_file("/proc/self/gid_map", maps->gid) < 0)
		return step_failed(NS_GID_MAP, err);
	if (mount("none", "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		return step_failed(NS_MOUNT_PRIVATE, err);
	return NS_OK;
}

/* Clone the root, make the clone read-only and attach it: the three new
 * mount API calls the child setup builds its root with. Recursive,
 * because in a user namespace the copied mounts are locked together and
 * a non-recursive clone of "/" is refused (EINVAL). Harmless: all of it
 * happens in the probe's private mount namespace, which dies with it. */
static int mount_api_exercise(int *err)
{
	struct mount_attr attr = { .attr_set = MOUNT_ATTR_RDONLY };
	_cleanup_close_ int fd = (int)syscall(SYS_open_tree, AT_FDCWD, "/",
					      OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC |
						      AT_RECURSIVE);

	if (fd < 0)
		return step_failed(MNT_OPEN_TREE, err);
	if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH | AT_RECURSIVE,
		    &attr, sizeof(attr)) < 0)
		return step_failed(MNT_SETATTR, err);
	if (syscall(SYS_move_mount, fd, "", AT_FDCWD, "/",
		    MOVE_MOUNT_F_EMPTY_PATH) < 0)
		return step_failed(MNT_MOVE, err);
	return NS_OK;
}

static void ns_probe_child(int fd, const void *arg)
{
	struct probe_result res = { { 0, 0 }, { 0, 0 } };

	res.step[PROBE_USERNS] = ns_enter(arg, &res.err[PROBE_USERNS]);
	if (res.step[PROBE_USERNS] == NS_OK)
		res.step[PROBE_MOUNT_API] = mount_api_exercise(&res.err[PROBE_MOUNT_API]);
	probe_reply(fd, &res);
}

/* An integer sysctl; -1 with errno (ENOENT when the kernel lacks it). */
static int sysctl_read(const char *path, long *val)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	char buf[32];
	char *end = NULL;
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	if (n < 0)
		return -1;
	buf[n] = '\0';
	errno = 0;
	*val = strtol(buf, &end, 10);
	if (errno || end == buf) {
		errno = EINVAL;
		return -1;
	}
	return 0;
}

/* The sysctls that switch user namespaces off for everyone or for the
 * unprivileged; they give a better fix than the probe's errno. Returns 1
 * when one of them failed c. */
static int userns_sysctls(struct prereq_check *c)
{
	long v;

	if (sysctl_read("/proc/sys/user/max_user_namespaces", &v) == 0 && v == 0) {
		check_set(c, PREREQ_FAIL, "sysctl -w user.max_user_namespaces=15000",
			  "user.max_user_namespaces is 0");
		return 1;
	}
	if (geteuid() == 0)
		return 0;
	if (sysctl_read("/proc/sys/kernel/unprivileged_userns_clone", &v) == 0 &&
	    v == 0) {
		check_set(c, PREREQ_FAIL, "sysctl -w kernel.unprivileged_userns_clone=1",
			  "kernel.unprivileged_userns_clone is 0: unprivileged "
			  "user namespaces are off");
		return 1;
	}
	if (sysctl_read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns",
			&v) == 0 &&
	    v == 1) {
		check_set(c, PREREQ_FAIL,
			  "sysctl -w kernel.apparmor_restrict_unprivileged_userns=0, "
			  "or an AppArmor profile for cordon with `userns,`",
			  "kernel.apparmor_restrict_unprivileged_userns is 1: "
			  "AppArmor restricts unprivileged user namespaces");
		return 1;
	}
	return 0;
}

static void report_userns(struct prereq_check *c, const struct probe_result *res)
{
	int step = res->step[PROBE_USERNS];
	int err = res->err[PROBE_USERNS];
	const char *fix = "allow user namespaces for this user (user.max_user_namespaces, "
			  "kernel.unprivileged_userns_clone, AppArmor's userns "
			  "restriction) or run cordon as root";
	char buf[64];

	if (step == NS_OK) {
		check_set(c, PREREQ_PASS, "",
			  "user, mount, pid and net namespaces usable by uid %u",
			  (unsigned)geteuid());
		return;
	}
	/* A process that changed uid without exec is not dumpable, so its
	 * /proc files belong to root and it cannot write its own maps. */
	if (err == EACCES && step >= NS_SETGROUPS && step <= NS_GID_MAP &&
	    prctl(PR_GET_DUMPABLE, 0, 0, 0, 0) == 0)
		fix = "this process is not dumpable (it changed uid without exec): "
		      "run cordon directly as the user";
	check_set(c, PREREQ_FAIL, fix, "%s failed: %s", ns_step_name(step),
		  probe_errstr(err, buf, sizeof(buf)));
}

/* Without a usable user namespace the calls cannot be exercised; what
 * can still be told is whether the kernel has them at all: bad arguments
 * give EBADF/ENOENT/EINVAL from a kernel that has the call, ENOSYS from
 * one that lacks it (or a filter that hides it). */
static int mount_api_present(int *err)
{
	static const struct {
		long nr;
		int step;
	} calls[] = {
		{ SYS_open_tree, MNT_OPEN_TREE },
		{ SYS_mount_setattr, MNT_SETATTR },
		{ SYS_move_mount, MNT_MOVE },
	};

	for (size_t i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		long r = syscall(calls[i].nr, -1, NULL, 0, NULL, 0);

		if (r >= 0)
			close((int)r);
		if (r < 0 && errno == ENOSYS)
			return step_failed(calls[i].step, err);
	}
	return NS_OK;
}

static void report_mount_api(struct prereq_check *c, const struct probe_result *res)
{
	static const char fix[] = "upgrade to Linux 5.13 or later; if a seccomp "
				  "filter around cordon hides these calls, allow them";
	int step = res->step[PROBE_MOUNT_API];
	int err = res->err[PROBE_MOUNT_API];
	char buf[64];

	if (res->step[PROBE_USERNS] != NS_OK) {
		step = mount_api_present(&err);
		if (step == NS_OK) {
			check_set(c, PREREQ_PASS, "",
				  "open_tree, mount_setattr, move_mount present "
				  "(not exercised: no user namespace)");
			return;
		}
	}
	if (step == NS_OK) {
		check_set(c, PREREQ_PASS, "",
			  "open_tree, mount_setattr, move_mount work in a user namespace");
		return;
	}
	check_set(c, PREREQ_FAIL, fix, "%s failed: %s", ns_step_name(step),
		  probe_errstr(err, buf, sizeof(buf)));
}

static void check_userns_and_mount_api(struct prereq_check *userns,
				       struct prereq_check *mnt)
{
	struct probe_result res = { { 0, 0 }, { 0, 0 } };
	struct ns_maps maps;
	int err = 0;
	char buf[64];

	if (userns_sysctls(userns)) {
		/* No namespace to exercise the calls in; say whether they exist. */
		res.step[PROBE_USERNS] = NS_UNSHARE;
		report_mount_api(mnt, &res);
		return;
	}
	snprintf(maps.uid, sizeof(maps.uid), "%u %u 1\n", (unsigned)geteuid(),
		 (unsigned)geteuid());
	snprintf(maps.gid, sizeof(maps.gid), "%u %u 1\n", (unsigned)getegid(),
		 (unsigned)getegid());
	if (probe_run(ns_probe_child, &maps, &res, &err) < 0) {
		probe_errstr(err, buf, sizeof(buf));
		check_set(userns, PREREQ_FAIL, PROBE_LOST_FIX,
			  "user namespace probe did not answer: %s", buf);
		check_set(mnt, PREREQ_FAIL, PROBE_LOST_FIX,
			  "mount API probe did not answer: %s", buf);
		return;
	}
	report_userns(userns, &res);
	report_mount_api(mnt, &res);
}

/* ---- Landlock --------------------------------------------------------- */

static void check_landlock(struct prereq_check *c, int *abi_out)
{
	int err;
	int abi = confine_landlock_abi_query(&err);

	*abi_out = abi;
	if (abi == 0 && err == EOPNOTSUPP) {
		check_set(c, PREREQ_FAIL,
			  "boot with lsm=landlock,... (keep the current list, "
			  "see /sys/kernel/security/lsm) or CONFIG_LSM with landlock",
			  "Landlock is built in but not enabled");
		return;
	}
	if (abi == 0) {
		check_set(c, PREREQ_FAIL,
			  "use a kernel built with CONFIG_SECURITY_LANDLOCK=y and "
			  "boot with lsm=landlock,...",
			  "Landlock is not enabled: %s", strerror(err));
		return;
	}
	if (abi < LANDLOCK_ABI_FLOOR) {
		check_set(c, PREREQ_FAIL, "upgrade the kernel",
			  "Landlock ABI %d is below %d", abi, LANDLOCK_ABI_FLOOR);
		return;
	}
	if (abi < LANDLOCK_ABI_SCOPE) {
		/* The mount, network and seccomp layers still confine abstract
		 * sockets and signals, so this is not a refusal. */
		check_set(c, PREREQ_WARN, "Linux 6.12 or later has Landlock ABI 6",
			  "Landlock ABI %d: abstract unix sockets and signals are "
			  "not scoped by Landlock (cordon's other layers still hold them)",
			  abi);
		return;
	}
	check_set(c, PREREQ_PASS, "", "Landlock ABI %d", abi);
}

/* ---- seccomp ---------------------------------------------------------- */

enum seccomp_step { SC_OK, SC_NO_NEW_PRIVS, SC_FILTER };

/* Load the smallest filter there is (allow everything): proves the
 * kernel takes filters from this process, whatever it runs under. */
static void seccomp_probe_child(int fd, const void *arg)
{
	struct sock_filter insn[] = {
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = {
		.len = (unsigned short)(sizeof(insn) / sizeof(insn[0])),
		.filter = insn,
	};
	struct probe_result res = { { 0, 0 }, { 0, 0 } };

	(void)arg;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		res.step[0] = SC_NO_NEW_PRIVS;
		res.err[0] = errno;
	} else if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		res.step[0] = SC_FILTER;
		res.err[0] = errno;
	}
	probe_reply(fd, &res);
}

static void check_seccomp(struct prereq_check *c)
{
	static const char fix[] = "use a kernel built with CONFIG_SECCOMP_FILTER=y";
	struct probe_result res;
	int err = 0;
	char buf[64];

	if (prctl(PR_GET_SECCOMP, 0, 0, 0, 0) < 0 && errno == EINVAL) {
		check_set(c, PREREQ_FAIL, fix, "the kernel has no seccomp "
			  "(PR_GET_SECCOMP: EINVAL)");
		return;
	}
	if (probe_run(seccomp_probe_child, NULL, &res, &err) < 0) {
		check_set(c, PREREQ_FAIL, PROBE_LOST_FIX, "seccomp probe did not answer: %s",
			  probe_errstr(err, buf, sizeof(buf)));
		return;
	}
	if (res.step[0] != SC_OK) {
		check_set(c, PREREQ_FAIL, fix, "%s failed: %s",
			  res.step[0] == SC_NO_NEW_PRIVS ? "prctl(PR_SET_NO_NEW_PRIVS)"
							 : "prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER)",
			  probe_errstr(res.err[0], buf, sizeof(buf)));
		return;
	}
	check_set(c, PREREQ_PASS, "", "seccomp filters load");
}

/* ---- the report ------------------------------------------------------- */

enum { C_KERNEL, C_USERNS, C_LANDLOCK, C_SECCOMP, C_MOUNT_API, C_PIDS, C_CGROUP, C_COUNT };

_Static_assert(C_COUNT <= PREREQ_MAX, "prereq_report holds every check");

void prereq_run(struct prereq_report *r)
{
	static const char *const ids[C_COUNT] = {
		[C_KERNEL] = "kernel",	   [C_USERNS] = "userns",
		[C_LANDLOCK] = "landlock", [C_SECCOMP] = "seccomp",
		[C_MOUNT_API] = "mount_api", [C_PIDS] = "pids",
		[C_CGROUP] = "cgroup",
	};

	memset(r, 0, sizeof(*r));
	r->n = C_COUNT;
	for (int i = 0; i < C_COUNT; i++)
		r->checks[i].id = ids[i];
	check_kernel(&r->checks[C_KERNEL]);
	check_userns_and_mount_api(&r->checks[C_USERNS], &r->checks[C_MOUNT_API]);
	check_landlock(&r->checks[C_LANDLOCK], &r->landlock_abi);
	check_seccomp(&r->checks[C_SECCOMP]);
	/* how the grant's limits are enforced here (warnings, never failures:
	 * what cannot be enforced is refused at launch) */
	limits_doctor(NULL, &r->checks[C_PIDS], &r->checks[C_CGROUP]);
}

int prereq_require(const struct prereq_report *r, struct err **e)
{
	/* Fail closed: a report that checked nothing proves nothing. */
	if (r->n <= 0 || r->n > PREREQ_MAX)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "prerequisites: no checks were run");
	for (int i = 0; i < r->n; i++) {
		const struct prereq_check *c = &r->checks[i];

		if (c->status != PREREQ_FAIL)
			continue;
		if (c->fix[0] == '\0')
			return err_set(e, ERR_UNAVAILABLE, 0, "%s: %s",
				       c->id ? c->id : "?", c->detail);
		return err_set(e, ERR_UNAVAILABLE, 0, "%s: %s; %s",
			       c->id ? c->id : "?", c->detail, c->fix);
	}
	return 0;
}
