/* adopt.c: after a restart, prove that a running process is the sandbox
 * cordon launched for a plan before taking it over. Matching a digest is
 * not enough: the process tree itself must show it. The root's pid and
 * start time were pinned with the plan's digest before it launched. The
 * part every provider shares is here; each provider adds what its own
 * sandbox looks like beneath the root. */
#include "sandbox/adopt.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/num.h"
#include "lib/procfs.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static bool alive(pid_t pid)
{
	char p[32];

	snprintf(p, sizeof(p), "/proc/%d", (int)pid);
	return access(p, F_OK) == 0;
}

/* The children of pid, from every thread's children file. */
int adopt_children(pid_t pid, pid_t *out, int max)
{
	char dir[64];
	DIR *d;
	struct dirent *de;
	int n = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	d = opendir(dir);
	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char p[sizeof(dir) + 256 + 16], *text = NULL, *save = NULL;
		_cleanup_close_ int fd = -1;

		if (de->d_name[0] == '.')
			continue;
		snprintf(p, sizeof(p), "%s/%s/children", dir, de->d_name);
		fd = open(p, O_RDONLY | O_CLOEXEC);
		if (fd < 0 || fs_read_fd(fd, p, 1 << 16, &text, NULL, NULL) < 0)
			continue;
		for (char *t = strtok_r(text, " \n", &save); t && n < max;
		     t = strtok_r(NULL, " \n", &save)) {
			unsigned long v;
			if (num_parse_ulong(t, INT_MAX, &v) == 0)
				out[n++] = (pid_t)v;
		}
		free(text);
	}
	closedir(d);
	return n;
}

static int parent_of(pid_t pid, pid_t *ppid)
{
	char p[64], *text = NULL, *rp;
	_cleanup_close_ int fd = -1;
	int r = -1;

	snprintf(p, sizeof(p), "/proc/%d/stat", (int)pid);
	fd = open(p, O_RDONLY | O_CLOEXEC);
	/* after the last ')': " <state> <ppid> ..." */
	if (fd >= 0 && fs_read_fd(fd, p, 1 << 16, &text, NULL, NULL) == 0 &&
	    (rp = strrchr(text, ')')) && rp[1] == ' ' && rp[2] && rp[3] == ' ') {
		char *end = strchr(rp + 4, ' ');
		unsigned long v;
		if (end) {
			*end = '\0';
			if (num_parse_ulong(rp + 4, INT_MAX, &v) == 0) {
				*ppid = (pid_t)v;
				r = 0;
			}
		}
	}
	free(text);
	return r;
}

bool adopt_namespaces_differ(pid_t pid)
{
	static const char *const ns[] = { "mnt", "net", "pid", "user" };

	for (size_t i = 0; i < sizeof(ns) / sizeof(*ns); i++) {
		unsigned long long a = 0, b = 0;
		if (procfs_ns_id(pid, ns[i], &a, NULL) < 0 || procfs_ns_id(0, ns[i], &b, NULL) < 0 ||
		    a == b)
			return false;
	}
	return true;
}

#define SANDBOX_NS_FILE "sandbox-ns"

int sandbox_ns_id(pid_t pid, unsigned long long *id, struct err **e)
{
	if (procfs_ns_id(pid, "pid", id, e) < 0)
		return err_wrap(e, "note the sandbox's pid namespace");
	return 0;
}

int sandbox_ns_record(const char *record_dir, unsigned long long id, struct err **e)
{
	char text[32];
	_cleanup_close_ int dfd = -1;

	snprintf(text, sizeof(text), "%llu\n", id);
	dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "record `%s`", record_dir);
	return fs_write_atomic(dfd, SANDBOX_NS_FILE, text, strlen(text), 0444, false, e);
}

#define SANDBOX_ROOT_FILE "sandbox-root"

int sandbox_root_record(const char *record_dir, pid_t pid, struct err **e)
{
	_cleanup_close_ int dfd = -1;
	unsigned long long ticks = 0;
	char text[64];

	if (procfs_start_ticks(pid, &ticks, e) < 0)
		return err_wrap(e, "note the sandbox's first process");
	snprintf(text, sizeof(text), "%d %llu\n", (int)pid, ticks);
	dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "record `%s`", record_dir);
	return fs_write_atomic(dfd, SANDBOX_ROOT_FILE, text, strlen(text), 0444, false, e);
}

int sandbox_root_open(const char *record_dir, int *pidfd, struct err **e)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_free_ char *text = NULL;
	unsigned long pid = 0;
	unsigned long long ticks = 0;
	char *sp, *end = NULL;

	*pidfd = -1;
	if (dfd < 0 || fs_read_file(dfd, SANDBOX_ROOT_FILE, 64, &text, NULL, NULL) < 0)
		return err_set(e, ERR_DENIED, 0, "the record does not name the sandbox's first process");
	text[strcspn(text, "\n")] = '\0';
	sp = strchr(text, ' ');
	if (!sp)
		return err_set(e, ERR_DENIED, 0, "the record's sandbox-root is malformed");
	*sp = '\0';
	errno = 0;
	ticks = strtoull(sp + 1, &end, 10);
	if (num_parse_ulong(text, INT_MAX, &pid) < 0 || pid < 2 || errno || !end || *end ||
	    end == sp + 1)
		return err_set(e, ERR_DENIED, 0, "the record's sandbox-root is malformed");
	return procfs_pidfd_proven((pid_t)pid, ticks, pidfd, e);
}

/* Is any process left in the pid namespace the record names? An exited
 * root proves nothing while the sandbox's own processes run on. */
int sandbox_ns_left(const char *record_dir, pid_t *left, struct err **e)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_free_ char *text = NULL;
	unsigned long want = 0;
	struct dirent *de;
	DIR *d;

	*left = 0;
	if (dfd < 0 || fs_read_file(dfd, SANDBOX_NS_FILE, 64, &text, NULL, NULL) < 0)
		return err_set(e, ERR_DENIED, 0, "the record does not name the sandbox's pid namespace");
	text[strcspn(text, "\n")] = '\0';
	if (num_parse_ulong(text, ~0UL, &want) < 0)
		return err_set(e, ERR_DENIED, 0, "the record's sandbox-ns is malformed");
	d = opendir("/proc");
	if (!d)
		return err_set(e, ERR_DENIED, errno, "cannot list /proc");
	while ((de = readdir(d))) {
		unsigned long pid;
		unsigned long long id = 0;

		if (num_parse_ulong(de->d_name, INT_MAX, &pid) < 0)
			continue;
		if (procfs_ns_id((pid_t)pid, "pid", &id, NULL) == 0 && id == (unsigned long long)want) {
			*left = (pid_t)pid;
			break;
		}
	}
	closedir(d);
	return 0;
}

int adopt_check_root(const struct plan *p, const char *record_dir, pid_t parent,
		     pid_t root, struct err **e)
{
	_cleanup_free_ char *plan_path = NULL, *exec_dir = NULL, *digest = NULL;
	struct plan_root rec = { 0 };
	unsigned long long ticks = 0;
	char *slash;
	pid_t kids[16], ppid = 0;
	long long started = 0;
	struct stat st;
	int n;

	/* <exec>/sandbox/<segment>: the pin, with the root, is in <exec> */
	exec_dir = strdup(record_dir);
	for (int i = 0; exec_dir && i < 2 && (slash = strrchr(exec_dir, '/')); i++)
		*slash = '\0';
	unsigned long segment = 0;
	if (!exec_dir || !strrchr(record_dir, '/') ||
	    num_parse_ulong(strrchr(record_dir, '/') + 1, 1000000, &segment) < 0)
		return err_set(e, ERR_DENIED, 0, "`%s` is not a segment's record", record_dir);
	if (plan_read_pin_root(exec_dir, (unsigned int)segment, &digest, &rec, e) < 0)
		return err_wrap(e, "adopt");
	if (strcmp(digest, p->digest) != 0)
		return err_set(e, ERR_DENIED, 0, "the plan is not the pinned one");
	if (rec.pid != (int)root)
		return err_set(e, ERR_DENIED, 0, "pid %d is not the recorded root", (int)root);
	n = parent > 0 && alive(parent) ? adopt_children(parent, kids, 16) : 0;
	if (!alive(root)) {
		pid_t left = 0;
		int rfd = -1, rr;

		if (n > 0)
			return err_set(e, ERR_DENIED, 0,
				       "the root has exited but its parent runs something else");
		/* Nothing of the sandbox may outlive it. Its first process
		 * dies with the root and takes the namespace with it, which
		 * can take the kernel a moment: a while is given. That process
		 * is the record's (pid and start time, through a pidfd); a
		 * record older than sandbox-root is asked by the namespace's
		 * number, which a later sandbox may hold (refused then: fail
		 * closed). */
		rr = sandbox_root_open(record_dir, &rfd, NULL);
		if (rr > 0) {
			bool gone = procfs_pidfd_wait(rfd, 2000);

			close(rfd);
			if (!gone)
				return err_set(e, ERR_DENIED, 0,
					       "the root has exited but the first process of its sandbox "
					       "still runs");
			return 1;
		}
		if (rr == 0)
			return 1;
		for (int i = 0; i < 40; i++) {
			if (sandbox_ns_left(record_dir, &left, e) < 0)
				return -1;
			if (!left)
				break;
			usleep(50000);
		}
		if (left)
			return err_set(e, ERR_DENIED, 0,
				       "the root has exited but pid %d of its sandbox still runs",
				       (int)left);
		return 1;
	}
	if (parent > 0 && (n != 1 || kids[0] != root))
		return err_set(e, ERR_DENIED, 0, "parent %d runs something besides the root",
			       (int)parent);
	if (parent > 0 && (parent_of(root, &ppid) < 0 || ppid != parent))
		return err_set(e, ERR_DENIED, 0, "pid %d is not the parent's child", (int)root);
	/* pid and start time name one process for the life of the boot: a
	 * pid reused since is another process */
	if (procfs_start_ticks(root, &ticks, NULL) < 0 || ticks != rec.start_ticks)
		return err_set(e, ERR_DENIED, 0, "pid %d is not the process that ran this plan",
			       (int)root);
	/* The root pinned itself with the plan: it was running when the
	 * record was written, however long the guard took before (a large
	 * workspace's walk takes seconds). pid and start time are what name
	 * it; this only refuses a pin that could not have been its own. */
	plan_path = fs_path_join(record_dir, "plan.json");
	if (!plan_path || stat(plan_path, &st) < 0 ||
	    procfs_start_epoch_ns(root, &started, e) < 0)
		return err_set(e, ERR_DENIED, errno, "cannot date pid %d", (int)root);
	/* btime has whole seconds: one second of slack, never more */
	if (started / 1000000000LL > (long long)st.st_mtim.tv_sec + 1)
		return err_set(e, ERR_DENIED, 0, "pid %d started after its plan was recorded",
			       (int)root);
	return 0;
}
