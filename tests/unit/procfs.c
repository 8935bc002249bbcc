/* procfs.c (test): the mountinfo parser on fixtures and on the live
 * table, start times of processes with hostile names, namespace ids. */
#include "lib/cleanup.h"
#include "lib/procfs.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define GOOD                                                                   \
	"22 27 0:21 / /proc rw,relatime - proc proc rw\n"                      \
	"27 1 254:0 / / rw,relatime shared:1 - ext4 /dev/vda rw,discard\n"    \
	"40 27 8:3 /srv/my\\040data /mnt/with\\040space\\011tab rw "          \
	"master:2 propagate_from:1 - ext4 /dev/sd\\134b rw\n"                 \
	"41 27 0:50 / /empty\\040src rw shared:3 master:4 - tmpfs  rw\n"      \
	"42 27 0:4 net:[4026531840] /run/netns/x rw - nsfs nsfs rw\n"

static void skip(const char *why)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, why);
}

static bool has(const struct err *e, const char *needle)
{
	return e && e->msg && strstr(e->msg, needle);
}

static void test_fixture(void)
{
	struct mountinfo_table t;
	_cleanup_err_ struct err *e = NULL;

	is_int(procfs_mountinfo_parse(GOOD, strlen(GOOD), &t, &e), 0,
	       "a good fixture parses");
	is_int(t.n, 5, "five mounts");
	if (t.n != 5) {
		procfs_mountinfo_free(&t);
		return;
	}
	is_int(t.v[0].id, 22, "mount id");
	is_int(t.v[0].parent, 27, "parent id");
	is_int(t.v[1].major, 254, "major");
	is_int(t.v[1].minor, 0, "minor");
	is_str(t.v[1].mountpoint, "/", "root mount point");
	is_str(t.v[1].fstype, "ext4", "fstype after one optional field");
	is_str(t.v[1].options, "rw,relatime", "per-mount options");
	is_str(t.v[2].root, "/srv/my data", "\\040 decoded in root");
	is_str(t.v[2].mountpoint, "/mnt/with space\ttab",
	       "\\040 and \\011 decoded in the mount point");
	is_str(t.v[2].source, "/dev/sd\\b", "\\134 decoded in the source");
	is_str(t.v[2].fstype, "ext4", "fstype after three optional fields");
	is_str(t.v[3].source, "", "an empty source stays a field");
	is_str(t.v[3].mountpoint, "/empty src", "mount point with a space");
	is_str(t.v[4].root, "net:[4026531840]", "a non-path root is kept");
	is_str(t.v[4].fstype, "nsfs", "line without optional fields");
	procfs_mountinfo_free(&t);
	is_int(t.n, 0, "free empties the table");

	const char *last = "1 0 8:1 / / rw - ext4 /dev/sda1 rw";
	is_int(procfs_mountinfo_parse(last, strlen(last), &t, &e), 0,
	       "a last line without a newline parses");
	ok(t.n == 1 && strcmp(t.v[0].source, "/dev/sda1") == 0,
	   "and its fields are read");
	procfs_mountinfo_free(&t);
}

static void test_malformed(void)
{
	static const char *bad[] = {
		"43 27 8:1 / /x rw ext4 /dev/sda1 rw",
		"43 27 8:1 / /x rw - ext4 /dev/sda1",
		"43 27 8:1 / /x rw - ext4 /dev/sda1 rw extra",
		"43 27 8-1 / /x rw - ext4 /dev/sda1 rw",
		"43 27 8: / /x rw - ext4 /dev/sda1 rw",
		"4x 27 8:1 / /x rw - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x\\04 rw - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x\\000 rw - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x\\9ab rw - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x rw - ext4 /dev/sd\\a1 rw",
		"43 27 8:1 / x rw - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x - ext4 /dev/sda1 rw",
		"43 27 8:1 / /x rw - ext4 /dev/sda1 rw ",
		"43 27 8:1 / /x rw -  /dev/sda1 rw",
		"",
	};
	const char *good = "43 27 8:1 / /x rw - ext4 /dev/sda1 rw";
	char buf[1024];
	struct mountinfo_table t;

	snprintf(buf, sizeof(buf), "%s%s\n", GOOD, good);
	{
		_cleanup_err_ struct err *e = NULL;
		is_int(procfs_mountinfo_parse(buf, strlen(buf), &t, &e), 0,
		       "control: the fixture plus a good sixth line parses");
		is_int(t.n, 6, "control: six mounts");
		procfs_mountinfo_free(&t);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		_cleanup_err_ struct err *e = NULL;

		snprintf(buf, sizeof(buf), "%s%s\n%s\n", GOOD, bad[i], good);
		is_int(procfs_mountinfo_parse(buf, strlen(buf), &t, &e), -1,
		       "malformed line refused: '%s'", bad[i]);
		ok(e && e->reason == ERR_UNAVAILABLE && has(e, "line 6"),
		   "as sandbox_unavailable naming line 6 (%s)",
		   e ? e->msg : "no error");
		ok(t.n == 0 && t.v == NULL, "and leaves no table behind");
	}

	/* A NUL inside a line is not text the kernel wrote. */
	size_t n = (size_t)snprintf(buf, sizeof(buf), "%s%s\n", GOOD, good);
	buf[n - 5] = '\0';
	_cleanup_err_ struct err *e = NULL;
	is_int(procfs_mountinfo_parse(buf, n, &t, &e), -1,
	       "a NUL byte in a line is refused");
	ok(has(e, "line 6"), "naming its line");
}

static void test_live_mountinfo(void)
{
	struct mountinfo_table t, u;
	_cleanup_err_ struct err *e = NULL;
	bool root = false;

	int rc = procfs_mountinfo_read(0, &t, &e);
	is_int(rc, 0, "the live mount table parses (%s)", e ? e->msg : "ok");
	for (size_t i = 0; i < t.n; i++)
		root = root || strcmp(t.v[i].mountpoint, "/") == 0;
	ok(root, "and holds the root mount");
	is_int(procfs_mountinfo_read(getpid(), &u, &e), 0,
	       "read by pid too");
	is_int(u.n, t.n, "the same table by pid as by self");
	procfs_mountinfo_free(&t);
	procfs_mountinfo_free(&u);
}

/* A child that runs fn, reports one value over a pipe and waits until
 * the parent closes its end, so the parent can look at it alive. */
struct child {
	pid_t pid;
	int rfd;	/* the child's report */
	int hold;	/* close to let the child exit */
};

typedef long long (*child_fn)(const void *arg);

static int child_start(struct child *c, child_fn fn, const void *arg)
{
	int rep[2], hold[2];

	if (pipe2(rep, O_CLOEXEC) < 0 || pipe2(hold, O_CLOEXEC) < 0)
		return -1;
	c->pid = fork();
	if (c->pid < 0)
		return -1;
	if (c->pid == 0) {
		long long v = fn(arg);
		char ch;

		close(rep[0]);
		close(hold[1]);
		if (write(rep[1], &v, sizeof(v)) != sizeof(v))
			_exit(2);
		close(rep[1]);
		while (read(hold[0], &ch, 1) > 0)
			;
		_exit(0);
	}
	close(rep[1]);
	close(hold[0]);
	c->rfd = rep[0];
	c->hold = hold[1];
	return 0;
}

static int child_report(struct child *c, long long *v)
{
	return read(c->rfd, v, sizeof(*v)) == sizeof(*v) ? 0 : -1;
}

static int child_finish(struct child *c)
{
	int status;

	close(c->hold);
	close(c->rfd);
	if (waitpid(c->pid, &status, 0) < 0)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128;
}

/* Rename ourselves after reading our start time while the name is still
 * plain: the parent must then read the same value through the hostile
 * name. */
static long long child_rename(const void *arg)
{
	unsigned long long ticks;
	struct err *e = NULL;

	if (procfs_start_ticks(0, &ticks, &e) < 0) {
		err_free(e);
		return -1;
	}
	if (prctl(PR_SET_NAME, (const char *)arg) < 0)
		return -1;
	return (long long)ticks;
}

static void test_start_ticks_named(const char *name, unsigned long long self)
{
	struct child c;
	long long want = -1;
	unsigned long long got = 0;
	_cleanup_err_ struct err *e = NULL;
	char path[64], comm[64] = "";

	if (child_start(&c, child_rename, name) < 0 ||
	    child_report(&c, &want) < 0 || want < 0) {
		ok(0, "child named '%s' started", name);
		return;
	}
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)c.pid);
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, comm, sizeof(comm) - 1) : -1;
	if (n > 0)
		comm[n - 1] = '\0';
	is_str(comm, name, "the child is called '%s'", name);
	is_int(procfs_start_ticks(c.pid, &got, &e), 0, "its start ticks read");
	is_int((long long)got, want,
	       "the same value as before it was renamed");
	ok(got >= self, "and not before ours");
	is_int(child_finish(&c), 0, "the child exits cleanly");
}

static void test_start_ticks(void)
{
	unsigned long long self = 0, gone = 0;
	long long ns = 0;
	_cleanup_err_ struct err *e = NULL;
	struct timespec now;

	is_int(procfs_start_ticks(0, &self, &e), 0, "our start ticks read");
	test_start_ticks_named("a) b c", self);
	test_start_ticks_named(") ) 1 2 3 4 5 6", self);

	pid_t pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	int rc = procfs_start_ticks(pid, &gone, &e);
	ok(rc < 0 && e, "a reaped process has no start time (%s)",
	   e ? e->msg : "");

	err_free(e);
	e = NULL;
	clock_gettime(CLOCK_REALTIME, &now);
	long long now_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
	is_int(procfs_start_epoch_ns(0, &ns, &e), 0, "our start time as epoch");
	ok(ns <= now_ns + 2000000000LL && ns >= now_ns - 3600000000000LL,
	   "falls in the last hour (%lld s ago)",
	   (now_ns - ns) / 1000000000LL);
	is_int(procfs_start_epoch_ns(-1, &ns, &e), -1,
	       "a negative pid refused");
}

static long long child_unshare(const void *arg)
{
	int flags = *(const int *)arg;

	return flags && unshare(flags) < 0 ? errno : 0;
}

static void test_ns_child(unsigned long long self_mnt,
			  unsigned long long self_user)
{
	static const int none = 0, fresh = CLONE_NEWUSER | CLONE_NEWNS;
	unsigned long long mnt = 0, user = 0;
	long long err = -1;
	struct child c;
	_cleanup_err_ struct err *e = NULL;

	ok(child_start(&c, child_unshare, &none) == 0 &&
	   child_report(&c, &err) == 0 &&
	   procfs_ns_id(c.pid, "mnt", &mnt, &e) == 0 && mnt == self_mnt,
	   "control: a plain child shares our mount namespace");
	child_finish(&c);

	if (child_start(&c, child_unshare, &fresh) < 0 ||
	    child_report(&c, &err) < 0) {
		ok(0, "child for new namespaces started");
		return;
	}
	if (err == EPERM && geteuid() != 0) {
		skip("unshare(CLONE_NEWUSER) not permitted for this user");
		skip("unshare(CLONE_NEWUSER) not permitted for this user");
	} else {
		is_int(err, 0, "the child made a user and mount namespace");
		ok(procfs_ns_id(c.pid, "mnt", &mnt, &e) == 0 &&
		   procfs_ns_id(c.pid, "user", &user, &e) == 0 &&
		   mnt != self_mnt && user != self_user,
		   "its mount and user namespace ids differ from ours");
	}
	is_int(child_finish(&c), 0, "the child exits cleanly");
}

static void test_ns(void)
{
	static const char *names[] = { "mnt", "user", "net", "pid" };
	unsigned long long id = 0, mnt = 0, user = 0;
	_cleanup_err_ struct err *e = NULL;
	char path[64];
	struct stat st;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "/proc/self/ns/%s", names[i]);
		ok(stat(path, &st) == 0 &&
		   procfs_ns_id(0, names[i], &id, &e) == 0 && id == st.st_ino,
		   "%s namespace id of self is the inode of %s", names[i],
		   path);
	}
	ok(procfs_ns_id(getpid(), "mnt", &id, &e) == 0 &&
	   procfs_ns_id(0, "mnt", &mnt, &e) == 0 && id == mnt,
	   "by pid as by self");
	procfs_ns_id(0, "user", &user, &e);
	is_int(procfs_ns_id(0, "../stat", &id, &e), -1,
	       "a name with a slash refused");
	err_free(e);
	e = NULL;
	is_int(procfs_ns_id(0, "", &id, &e), -1, "an empty name refused");
	err_free(e);
	e = NULL;
	is_int(procfs_ns_id(0, "nosuch", &id, &e), -1, "an unknown name fails");
	test_ns_child(mnt, user);
}

int main(void)
{
	test_fixture();
	test_malformed();
	test_live_mountinfo();
	test_start_ticks();
	test_ns();
	return done_testing();
}
