/* tests/unit/cgroup.c: the sandbox's limits (src/sandbox/limits.c)
 * against fake cgroupfs trees in a temp dir: which cgroup is chosen for
 * cgroup v1 and v2 (the nearest writable one, the "no internal processes"
 * rule, a controller bound to v1 on a hybrid host), which files are
 * written with what, joining and removal; the refusals (memory, cpus, an
 * explicit pids limit) beside their controls; RLIMIT_NPROC for an
 * operator other than root; the note for root; the sizes of /tmp. */
#include "sandbox/limits.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char root[64];

/* Make root/path (and its parents), with text when it is a file. */
static void mk(const char *path, const char *text)
{
	char p[512], cmd[600];
	FILE *f;

	snprintf(p, sizeof(p), "%s%s", root, path);
	if (!text) {
		snprintf(cmd, sizeof(cmd), "mkdir -p '%s'", p);
		if (system(cmd) != 0)
			abort();
		return;
	}
	snprintf(cmd, sizeof(cmd), "mkdir -p \"$(dirname '%s')\"", p);
	if (system(cmd) != 0 || !(f = fopen(p, "w")))
		abort();
	fputs(text, f);
	fclose(f);
}

static char *slurp(const char *path)
{
	static char buf[256];
	char p[512];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s%s", root, path);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	buf[n > 0 ? n : 0] = '\0';
	return buf;
}

static bool exists(const char *path)
{
	char p[512];

	snprintf(p, sizeof(p), "%s%s", root, path);
	return access(p, F_OK) == 0;
}

static void fresh(void)
{
	char cmd[128];

	if (root[0]) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			abort();
	}
	snprintf(root, sizeof(root), "/tmp/cordon-cgroup-t.XXXXXX");
	if (!mkdtemp(root))
		abort();
}

static struct grant grant_of(unsigned long pids, bool dflt, unsigned long long mem, unsigned cpu)
{
	struct grant g = { 0 };

	g.limits = (struct policy_limits){ .pids = pids, .memory = mem, .cpu_millis = cpu };
	g.pids_default = dflt;
	return g;
}

/* ---- cgroup v1 (this project's hybrid host) ---------------------------- */

static const char v1_mountinfo[] =
	"30 22 0:27 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
	"31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
	"32 30 0:29 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
	"33 30 0:30 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset\n"
	"34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory\n"
	"38 30 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
	"40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n";
static const char v1_cgroup[] = "8:pids:/\n4:memory:/process_api/f13e\n3:cpuset:/\n"
				"2:cpuacct:/\n1:cpu:/\n0::/\n";

static void v1_tree(void)
{
	fresh();
	mk("/sys/fs/cgroup/pids/cgroup.procs", "1\n");
	mk("/sys/fs/cgroup/memory/process_api/f13e/cgroup.procs", "7\n");
	mk("/sys/fs/cgroup/cpu/cgroup.procs", "1\n");
	mk("/sys/fs/cgroup/cpuacct/cgroup.procs", "1\n");
	mk("/sys/fs/cgroup/unified/cgroup.controllers", "hugetlb\n");
}

static void test_v1(void)
{
	struct limits_host h = { .mountinfo = v1_mountinfo, .cgroup = v1_cgroup, .uid = 0,
				 .fake = true };
	struct grant g = grant_of(50, false, 64ULL << 20, 1500);
	struct limits_plan lp;
	struct err *e = NULL;

	v1_tree();
	h.prefix = root;
	ok(limits_decide(&h, &g, "E1", &lp, &e) == 0, "v1: pids, memory and cpus are decided");
	is_int(lp.n, 3, "v1: one cgroup in each of three hierarchies");
	is_str(lp.dirs[0].dir, "/sys/fs/cgroup/pids/cordon-E1", "v1: pids: a child of its own");
	is_str(lp.dirs[1].dir, "/sys/fs/cgroup/memory/process_api/f13e/cordon-E1",
	       "v1: memory: a child of cordon's own memory cgroup (not the root)");
	is_str(lp.dirs[2].dir, "/sys/fs/cgroup/cpu/cordon-E1", "v1: cpu: a child of its own");
	ok(!lp.dirs[0].v2 && lp.nproc == 0 && !lp.pids_unenforced,
	   "v1: no RLIMIT_NPROC and no note when the pids cgroup is had");
	ok(limits_create(&lp, &e) == 0, "v1: the cgroups are made");
	is_str(slurp("/sys/fs/cgroup/pids/cordon-E1/pids.max"), "50", "v1: pids.max");
	is_str(slurp("/sys/fs/cgroup/memory/process_api/f13e/cordon-E1/memory.limit_in_bytes"),
	       "67108864", "v1: memory.limit_in_bytes");
	is_str(slurp("/sys/fs/cgroup/cpu/cordon-E1/cpu.cfs_period_us"), "100000",
	       "v1: cpu.cfs_period_us");
	is_str(slurp("/sys/fs/cgroup/cpu/cordon-E1/cpu.cfs_quota_us"), "150000",
	       "v1: cpu.cfs_quota_us for 1.5 CPUs");
	ok(!exists("/sys/fs/cgroup/memory/process_api/f13e/cordon-E1/memory.memsw.limit_in_bytes"),
	   "v1: the optional memsw file is left alone where the kernel has none");
	ok(!exists("/sys/fs/cgroup/cpuacct/cordon-E1"), "v1: nothing made in a hierarchy not needed");
	ok(limits_join(&lp, 4321, true, &e) == 0 &&
		   !exists("/sys/fs/cgroup/pids/cordon-E1/cgroup.procs"),
	   "v1: the root moves nothing into a v1 hierarchy when pid 1 joins those itself");
	ok(limits_join(&lp, 4321, false, &e) == 0, "v1: the sandbox is moved in");
	is_str(slurp("/sys/fs/cgroup/pids/cordon-E1/cgroup.procs"), "4321", "v1: its pid in pids");
	is_str(slurp("/sys/fs/cgroup/cpu/cordon-E1/cgroup.procs"), "4321", "v1: and in cpu");
	{
		int fds[LIMITS_NCTRL];
		int n = limits_leave_files(&lp, fds, LIMITS_NCTRL, &e);

		ok(n < 0 && e && strstr(e->msg, "/tasks"),
		   "v1: cordon's own tasks files that are not there: refused, naming the file");
		err_free(e);
		e = NULL;
		mk("/sys/fs/cgroup/pids/tasks", "");
		mk("/sys/fs/cgroup/memory/process_api/f13e/tasks", "");
		mk("/sys/fs/cgroup/cpu/tasks", "");
		n = limits_leave_files(&lp, fds, LIMITS_NCTRL, &e);
		is_int(n, 3, "v1: pid 1's way back out: the tasks file of cordon's own cgroup in each");
		for (int i = 0; i < n; i++)
			close(fds[i]);
	}
	ok(limits_leave(&lp, 4321, false, &e) == 0, "v1: and moved back out");
	is_str(slurp("/sys/fs/cgroup/memory/process_api/f13e/cgroup.procs"), "4321",
	       "v1: back in cordon's own memory cgroup");
	is_str(slurp("/sys/fs/cgroup/pids/cgroup.procs"), "4321", "v1: and its own pids cgroup");
	limits_remove(&lp);
	ok(!exists("/sys/fs/cgroup/pids/cordon-E1") && !exists("/sys/fs/cgroup/cpu/cordon-E1") &&
		   !exists("/sys/fs/cgroup/memory/process_api/f13e/cordon-E1"),
	   "v1: every cgroup is removed after the run");
	limits_clear(&lp);

	/* The default: pids only, no memory or cpu hierarchy touched. */
	g = grant_of(4096, true, 0, 0);
	ok(limits_decide(&h, &g, "E2", &lp, &e) == 0 && lp.n == 1 &&
		   strcmp(lp.dirs[0].dir, "/sys/fs/cgroup/pids/cordon-E2") == 0,
	   "v1: the default policy gets a pids cgroup and nothing else");
	ok(limits_create(&lp, &e) == 0, "v1: made");
	is_str(slurp("/sys/fs/cgroup/pids/cordon-E2/pids.max"), "4096", "v1: the default pids.max");
	limits_remove(&lp);
	limits_clear(&lp);

	/* A name already there is not reused. */
	mk("/sys/fs/cgroup/pids/cordon-E3", NULL);
	g = grant_of(50, false, 0, 0);
	ok(limits_decide(&h, &g, "E3", &lp, &e) == 0, "v1: decided");
	ok(limits_create(&lp, &e) < 0 && e && e->reason == ERR_UNAVAILABLE &&
		   strstr(e->msg, "cordon-E3") && e->errnum == EEXIST,
	   "v1: a cgroup of the execution's name already there refuses the launch");
	err_free(e);
	e = NULL;
	ok(exists("/sys/fs/cgroup/pids/cordon-E3"), "v1: and the one there is left alone");
	limits_clear(&lp);
}

/* The same host seen by a user who may write none of it. */
static void test_v1_unwritable(void)
{
	struct limits_host h = { .mountinfo = v1_mountinfo, .cgroup = v1_cgroup, .uid = 65534,
				 .fake = true };
	int status = -1;
	pid_t pid;

	v1_tree();
	h.prefix = root;
	pid = fork();
	if (pid == 0) {
		struct grant g = grant_of(4096, true, 0, 0);
		struct limits_plan lp;
		struct err *e = NULL;
		int bad = 0;

		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 ||
				       setresuid(65534, 65534, 65534) < 0))
			_exit(99);
		if (geteuid() != 0)
			chmod(root, 0555);
		bad |= limits_decide(&h, &g, "E4", &lp, &e) != 0 || lp.n != 0 || lp.nproc != 4096;
		bad |= (!strstr(lp.why[LIMITS_PIDS], "may not be written")) << 1;
		limits_clear(&lp);
		g = grant_of(4096, true, 64ULL << 20, 0);
		bad |= (limits_decide(&h, &g, "E4", &lp, &e) == 0 || !e ||
			e->reason != ERR_UNAVAILABLE ||
			!strstr(e->msg, "limits.memory: needs a cgroup with the memory controller") ||
			!strstr(e->msg, "may not be written")) << 2;
		limits_clear(&lp);
		err_free(e);
		_exit(bad);
	}
	waitpid(pid, &status, 0);
	chmod(root, 0700);
	if (!ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		"v1, not writable: pids by RLIMIT_NPROC, a memory limit refused naming why"))
		diag("child status %d", status);
}

/* ---- cgroup v2 ---------------------------------------------------------- */

static const char v2_mountinfo[] =
	"30 22 0:27 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - cgroup2 cgroup2 rw\n";
#define U "/sys/fs/cgroup/user.slice/user-1000.slice/user@1000.service"
static const char v2_cgroup[] =
	"0::/user.slice/user-1000.slice/user@1000.service/app.slice/run.scope\n";

static void v2_tree(const char *app_sub, const char *app_procs)
{
	fresh();
	mk("/sys/fs/cgroup/cgroup.controllers", "cpuset cpu io memory hugetlb pids\n");
	mk("/sys/fs/cgroup/cgroup.subtree_control", "cpu memory pids\n");
	mk("/sys/fs/cgroup/cgroup.procs", "1\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.type", "domain\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.controllers", "cpu memory pids\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.subtree_control", "cpu memory pids\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.procs", "");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.type", "domain\n");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.controllers", "cpu memory pids\n");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.subtree_control", "cpu memory pids\n");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.procs", "");
	mk(U "/cgroup.type", "domain\n");
	mk(U "/cgroup.controllers", "cpu memory pids\n");
	mk(U "/cgroup.subtree_control", "cpu memory pids\n");
	mk(U "/cgroup.procs", "");
	mk(U "/app.slice/cgroup.type", "domain\n");
	mk(U "/app.slice/cgroup.controllers", "cpu memory pids\n");
	mk(U "/app.slice/cgroup.subtree_control", app_sub);
	mk(U "/app.slice/cgroup.procs", app_procs);
	mk(U "/app.slice/run.scope/cgroup.type", "domain\n");
	mk(U "/app.slice/run.scope/cgroup.controllers", "memory pids\n");
	mk(U "/app.slice/run.scope/cgroup.subtree_control", "");
	mk(U "/app.slice/run.scope/cgroup.procs", "4242\n");
}

static void test_v2(void)
{
	struct limits_host h = { .mountinfo = v2_mountinfo, .cgroup = v2_cgroup, .uid = 0,
				 .fake = true };
	struct grant g = grant_of(50, false, 64ULL << 20, 1500);
	struct limits_plan lp;
	struct err *e = NULL;

	/* cordon's own cgroup holds a process (cordon): no controller can be
	 * enabled for children there; its parent holds none, and cpu is
	 * enabled there for the sandbox's. */
	v2_tree("memory pids\n", "");
	h.prefix = root;
	ok(limits_decide(&h, &g, "F1", &lp, &e) == 0 && lp.n == 1 && lp.dirs[0].v2,
	   "v2: one cgroup for every controller");
	is_str(lp.dirs[0].dir, U "/app.slice/cordon-F1",
	       "v2: beneath the nearest ancestor that may have children with the controllers");
	is_int(lp.dirs[0].enable, LIMITS_BIT(LIMITS_CPU), "v2: cpu to enable there");
	ok(limits_create(&lp, &e) == 0, "v2: made");
	is_str(slurp(U "/app.slice/cgroup.subtree_control"), "+cpu",
	       "v2: cgroup.subtree_control gets +cpu");
	is_str(slurp(U "/app.slice/cordon-F1/pids.max"), "50", "v2: pids.max");
	is_str(slurp(U "/app.slice/cordon-F1/memory.max"), "67108864", "v2: memory.max");
	is_str(slurp(U "/app.slice/cordon-F1/cpu.max"), "150000 100000", "v2: cpu.max");
	ok(limits_join(&lp, 77, false, &e) == 0, "v2: joined");
	is_str(slurp(U "/app.slice/cordon-F1/cgroup.procs"), "77", "v2: its pid in cgroup.procs");
	{
		int fds[LIMITS_NCTRL];

		is_int(limits_leave_files(&lp, fds, LIMITS_NCTRL, &e), 0,
		       "v2: no tasks file for pid 1 (the root moves it out of a v2 cgroup)");
	}
	ok(limits_leave(&lp, 77, false, &e) == 0 &&
		   strcmp(slurp(U "/app.slice/run.scope/cgroup.procs"), "77") == 0,
	   "v2: moved back out, into cordon's own cgroup (not the parent the sandbox's went beneath)");
	limits_remove(&lp);
	ok(!exists(U "/app.slice/cordon-F1"), "v2: removed");
	limits_clear(&lp);

	/* Only pids: the parent already has it for its children. */
	v2_tree("memory pids\n", "");
	h.prefix = root;
	g = grant_of(4096, true, 0, 0);
	ok(limits_decide(&h, &g, "F2", &lp, &e) == 0 && lp.n == 1 && lp.dirs[0].enable == 0 &&
		   strcmp(lp.dirs[0].dir, U "/app.slice/cordon-F2") == 0,
	   "v2: the default needs pids only, already enabled in the parent");
	limits_clear(&lp);

	/* The parent holds a process: no controller may be enabled there,
	 * so the sandbox's goes beneath the next one up that has them all. */
	v2_tree("memory pids\n", "99\n");
	h.prefix = root;
	g = grant_of(50, false, 64ULL << 20, 1500);
	ok(limits_decide(&h, &g, "F3", &lp, &e) == 0 && lp.n == 1 &&
		   strcmp(lp.dirs[0].dir, U "/cordon-F3") == 0 && lp.dirs[0].enable == 0,
	   "v2: a parent with processes is passed over (no internal processes)");
	limits_clear(&lp);

	/* Nothing has cpu for its children anywhere but the root, which may
	 * enable it though it holds processes. */
	v2_tree("memory pids\n", "99\n");
	h.prefix = root;
	mk(U "/cgroup.subtree_control", "memory pids\n");
	mk(U "/cgroup.procs", "5\n");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.subtree_control", "memory pids\n");
	mk("/sys/fs/cgroup/user.slice/user-1000.slice/cgroup.procs", "6\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.subtree_control", "memory pids\n");
	mk("/sys/fs/cgroup/user.slice/cgroup.procs", "7\n");
	mk("/sys/fs/cgroup/cgroup.subtree_control", "memory pids\n");
	ok(limits_decide(&h, &g, "F4", &lp, &e) == 0 && lp.n == 1 &&
		   strcmp(lp.dirs[0].dir, "/sys/fs/cgroup/cordon-F4") == 0 &&
		   lp.dirs[0].enable == LIMITS_BIT(LIMITS_CPU),
	   "v2: the root cgroup (no cgroup.type) may enable a controller despite its processes");
	limits_clear(&lp);

	/* A controller the v2 root does not have at all. */
	v2_tree("memory pids\n", "");
	h.prefix = root;
	mk("/sys/fs/cgroup/cgroup.controllers", "memory pids\n");
	ok(limits_decide(&h, &g, "F5", &lp, &e) < 0 && e && e->reason == ERR_UNAVAILABLE &&
		   strstr(e->msg, "limits.cpus: needs a cgroup with the cpu controller") &&
		   strstr(e->msg, "no cgroup hierarchy here has the cpu controller"),
	   "v2: a cpus limit without the cpu controller anywhere is refused, naming why");
	err_free(e);
	e = NULL;
	limits_clear(&lp);
	g = grant_of(50, false, 64ULL << 20, 0);
	ok(limits_decide(&h, &g, "F5", &lp, &e) == 0 && lp.n == 1,
	   "v2: control: the same host without the cpus limit");
	limits_clear(&lp);

	/* cordon's own cgroup outside what the mount shows */
	h.cgroup = "0::/../other\n";
	g = grant_of(4096, true, 0, 0);
	ok(limits_decide(&h, &g, "F6", &lp, &e) == 0 && lp.n == 0 && lp.pids_unenforced &&
		   strstr(lp.why[LIMITS_PIDS], "is not beneath"),
	   "v2: a cgroup outside the mount's view: none had, the default noted");
	limits_clear(&lp);
}

/* ---- no cgroup at all ----------------------------------------------------- */

static void test_none(void)
{
	struct limits_host h = { .mountinfo = "22 1 0:21 / /sys rw - sysfs sysfs rw\n",
				 .cgroup = "0::/\n", .uid = 0, .fake = true };
	struct grant g = grant_of(4096, true, 0, 0);
	struct limits_plan lp;
	struct err *e = NULL;

	fresh();
	h.prefix = root;
	ok(limits_decide(&h, &g, "G1", &lp, &e) == 0 && lp.pids_unenforced && lp.nproc == 0,
	   "none, root: the default pids limit runs, unenforced");
	{
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);

		limits_note(&lp, f);
		fclose(f);
		static const char want[] = "cordon: note: the default pids limit (4096) is not "
					   "enforced: no cgroup hierarchy here has the pids controller";

		ok(text && strncmp(text, want, strlen(want)) == 0,
		   "none, root: one note line says so and why");
		free(text);
	}
	limits_clear(&lp);
	g = grant_of(50, false, 0, 0);
	ok(limits_decide(&h, &g, "G2", &lp, &e) < 0 && e && e->reason == ERR_UNAVAILABLE &&
		   strstr(e->msg, "limits.pids: needs a cgroup with the pids controller"),
	   "none, root: an explicit pids limit is refused");
	err_free(e);
	e = NULL;
	limits_clear(&lp);
	h.uid = 1000;
	ok(limits_decide(&h, &g, "G3", &lp, &e) == 0 && lp.nproc == 50 && !lp.pids_unenforced,
	   "none, not root: the same pids limit as RLIMIT_NPROC");
	limits_clear(&lp);
	g = grant_of(50, false, 0, 200);
	ok(limits_decide(&h, &g, "G4", &lp, &e) < 0 && e && strstr(e->msg, "limits.cpus"),
	   "none, not root: a cpus limit is refused");
	err_free(e);
	limits_clear(&lp);
}

/* ---- RLIMIT_NPROC's premise, and what it is joined by ------------------ */

static void test_nproc(void)
{
	const char *why = NULL;
	int status = -1;
	pid_t pid;

	ok(!limits_nproc_usable(&why) && why && strstr(why, "not in a user namespace"),
	   "in the initial user namespace RLIMIT_NPROC is not relied on");
	pid = fork();
	if (pid == 0) {
		const char *w = NULL;
		char map[64];
		int fd;

		if (geteuid() == 0 && (setresgid(65534, 65534, 65534) < 0 ||
				       setresuid(65534, 65534, 65534) < 0))
			_exit(99);
		/* a changed uid leaves /proc/self to root until this */
		prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
		snprintf(map, sizeof(map), "%u %u 1\n", getuid(), getuid());
		if (unshare(CLONE_NEWUSER) < 0)
			_exit(98);
		fd = open("/proc/self/uid_map", O_WRONLY | O_CLOEXEC);
		if (fd < 0 || write(fd, map, strlen(map)) < 0)
			_exit(97);
		close(fd);
		_exit(limits_nproc_usable(&w) ? 0 : 1);
	}
	waitpid(pid, &status, 0);
	if (WIFEXITED(status) && WEXITSTATUS(status) >= 97)
		ok(1, "# skip no unprivileged user namespace here (%d)", WEXITSTATUS(status));
	else
		ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
		   "control: in a user namespace of its own, as an ordinary user, it is");
	ok(limits_join_dir("/tmp") < 0 && errno == ENOTDIR,
	   "a directory that is not on a cgroup filesystem is never joined");
}

static void test_sizes(void)
{
	struct policy_limits none = { .pids = 4096 }, mem = { .pids = 4096, .memory = 16ULL << 20 };
	unsigned long long t = limits_tmp_bytes(&none);

	ok(t > 0 && t <= LIMITS_TMP_DEFAULT, "/tmp without a memory limit: at most 2 GiB (%llu)", t);
	is_int(limits_shm_bytes(&none), LIMITS_SHM_DEFAULT, "/dev/shm: 64 MiB");
	is_int(limits_tmp_bytes(&mem), 16ULL << 20, "/tmp with a memory limit: the limit");
	is_int(limits_shm_bytes(&mem), 16ULL << 20, "/dev/shm never above the memory limit");
}

int main(void)
{
	char cmd[128];

	test_v1();
	test_v1_unwritable();
	test_v2();
	test_none();
	test_nproc();
	test_sizes();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	if (system(cmd) != 0)
		diag("could not remove %s", root);
	return done_testing();
}
