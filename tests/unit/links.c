/* links.c (test): the hard-link walk on real trees in a temporary
 * directory, mount aliases on mountinfo fixtures, and (as root) both
 * against real bind mounts in a private mount namespace. */
#include "guard/links.h"
#include "lib/cleanup.h"
#include "lib/strv.h"
#include "tap.h"

#include <errno.h>
#include <seccomp.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define DEEP 1000

static void skip(const char *why)
{
	tap_count++;
	printf("ok %d # skip %s\n", tap_count, why);
}

/* The tests run inside the temporary directory and name files relative
 * to it; what cordon is given, and names back, is absolute. */
static const char *abs_in(char *buf, const char *base, const char *rel)
{
	int n = snprintf(buf, PATH_MAX, "%s/%s", base, rel);

	if (n < 0 || n >= PATH_MAX)
		diag("setup: path too long: %s/%s", base, rel);
	return buf;
}

static void mkfile(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

	if (fd < 0 || write(fd, "x", 1) != 1)
		diag("cannot create %s: %s", path, strerror(errno));
	if (fd >= 0)
		close(fd);
}

static void must(int rc, const char *what)
{
	if (rc < 0)
		diag("setup: %s: %s", what, strerror(errno));
}

/* Run the hard-link check; 0 on pass, else the reason, with the message
 * copied to msg. */
static int check_denied(const char *ws, char *const *denied, size_t max, char *msg,
			size_t size)
{
	_cleanup_err_ struct err *e = NULL;

	msg[0] = '\0';
	if (guard_check_hardlinks(ws, denied, max, &e) == 0)
		return 0;
	snprintf(msg, size, "%s", e ? e->msg : "(no error)");
	return e ? 100 + (int)e->reason : 99;
}

static int check(const char *ws, size_t max, char *msg, size_t size)
{
	return check_denied(ws, NULL, max, msg, size);
}

#define DENIED (100 + ERR_DENIED)

#define WANT_LINK "`%s` is a hard link to a file outside the workspace or beneath one of its denies"

/* Every name inside the workspace, one of them beneath a denied path:
 * the other name would show the denied file. */
static void test_link_under_deny(const char *base)
{
	char ws[PATH_MAX], sec[PATH_MAX], x[PATH_MAX], msg[PATH_MAX * 2], want[PATH_MAX * 2];
	char *denied[] = { sec, NULL }, *other[] = { x, NULL };

	abs_in(ws, base, "wsd");
	abs_in(sec, base, "wsd/secrets");
	abs_in(x, base, "wsd/elsewhere");
	must(mkdir("wsd", 0755), "mkdir");
	must(mkdir("wsd/secrets", 0755), "mkdir");
	mkfile("wsd/secrets/key");
	must(link("wsd/secrets/key", "wsd/notes.txt"), "link");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "control: without a deny, two names inside the workspace pass");
	is_int(check_denied(ws, other, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "control: a deny elsewhere in the workspace changes nothing");
	is_int(check_denied(ws, denied, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "a name beneath the denied secrets/ and one beside it: refused");
	snprintf(want, sizeof(want), WANT_LINK, abs_in(x, base, "wsd/notes.txt"));
	is_str(msg, want, "naming the name outside the deny");
	abs_in(sec, base, "wsd/secrets/key");
	is_int(check_denied(ws, denied, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "the same when the deny names the file itself");
}

static void test_internal_links(const char *base)
{
	char ws[PATH_MAX], msg[PATH_MAX * 2];

	must(mkdir("ws1", 0755), "mkdir");
	must(mkdir("ws1/sub", 0755), "mkdir");
	mkfile("ws1/a");
	must(link("ws1/a", "ws1/sub/b"), "link");
	must(link("ws1/a", "ws1/c"), "link");
	is_int(check(abs_in(ws, base, "ws1"), GUARD_WALK_MAX, msg, sizeof(msg)),
	       0, "hard links with every name inside pass (%s)", msg);
}

static void test_outside_link(const char *base)
{
	char ws[PATH_MAX], x[PATH_MAX], msg[PATH_MAX * 2], want[PATH_MAX * 2];

	abs_in(ws, base, "ws2");
	must(mkdir("out", 0755), "mkdir");
	mkfile("out/secret");
	must(mkdir("ws2", 0755), "mkdir");
	must(mkdir("ws2/d", 0755), "mkdir");
	mkfile("ws2/d/plain");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "control: the workspace without the link passes");

	must(link("out/secret", "ws2/d/x"), "link");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "a hard link to a file outside is refused as denied");
	snprintf(want, sizeof(want), WANT_LINK, abs_in(x, base, "ws2/d/x"));
	is_str(msg, want, "naming the path inside the workspace");

	must(unlink("ws2/d/x"), "unlink");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "control: passes again once the link is gone");
}

static void test_first_in_walk_order(const char *base)
{
	char ws[PATH_MAX], x[PATH_MAX], msg[PATH_MAX * 2], want[PATH_MAX * 2];

	abs_in(ws, base, "ws3");
	must(mkdir("ws3", 0755), "mkdir");
	must(mkdir("ws3/b", 0755), "mkdir");
	must(mkdir("ws3/a", 0755), "mkdir");
	mkfile("out/s3");
	must(link("out/s3", "ws3/b/y"), "link");
	mkfile("out/s4");
	must(link("out/s4", "ws3/a/z"), "link");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "two outside links refused");
	snprintf(want, sizeof(want), WANT_LINK, abs_in(x, base, "ws3/a/z"));
	is_str(msg, want, "the first in name order is named, not the first "
			  "made");

	mkfile("out/s5");
	must(link("out/s5", "ws3/c"), "link");
	check(ws, GUARD_WALK_MAX, msg, sizeof(msg));
	snprintf(want, sizeof(want), WANT_LINK, abs_in(x, base, "ws3/c"));
	is_str(msg, want, "a directory's files come before its subdirectories");
}

static void test_symlinks(const char *base)
{
	char ws[PATH_MAX], p[PATH_MAX], msg[PATH_MAX * 2];

	abs_in(ws, base, "ws4");
	mkfile("out/f2");
	must(link("out/f2", "out/f2-other"), "link");
	must(mkdir("ws4", 0755), "mkdir");
	must(symlink(abs_in(p, base, "out/f2"), "ws4/s"), "symlink");
	must(symlink(abs_in(p, base, "out"), "ws4/sd"), "symlink");
	must(symlink("../out/f2", "ws4/rel"), "symlink");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "symlinks to an outside file and directory pass (%s)", msg);

	must(link("out/f2", "ws4/h"), "link");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "control: a hard link to the same file is refused");
	must(unlink("ws4/h"), "unlink");

	/* A symlinked workspace would have the walk start somewhere else. */
	must(symlink(ws, "ws4-link"), "symlink");
	is_int(check(abs_in(p, base, "ws4-link"), GUARD_WALK_MAX, msg,
		     sizeof(msg)),
	       DENIED, "a workspace that is itself a symlink is refused");
	is_int(check(abs_in(p, base, "nosuch"), GUARD_WALK_MAX, msg,
		     sizeof(msg)),
	       DENIED, "a missing workspace is refused (%s)", msg);
}

static void test_entry_limit(const char *base)
{
	char ws[PATH_MAX], msg[PATH_MAX * 2], want[PATH_MAX * 2];

	abs_in(ws, base, "ws5");
	must(mkdir("ws5", 0755), "mkdir");
	must(mkdir("ws5/d", 0755), "mkdir");
	mkfile("ws5/a");
	mkfile("ws5/b");
	mkfile("ws5/d/c");
	mkfile("ws5/d/e");
	is_int(check(ws, 5, msg, sizeof(msg)), 0,
	       "exactly max entries (files and directories) pass");
	is_int(check(ws, 4, msg, sizeof(msg)), DENIED,
	       "max + 1 entries refused");
	snprintf(want, sizeof(want),
		 "workspace `%s` holds more than 4 entries, the most the "
		 "hard-link check walks: raise \"limits\": "
		 "{\"workspace_entries\": N} in the policy (or --limit "
		 "workspace_entries=N), or run in a smaller workspace",
		 ws);
	is_str(msg, want, "naming the workspace, the limit and what to do");
}

static void test_deep(const char *base)
{
	char ws[PATH_MAX], rel[PATH_MAX] = "ws6", p[PATH_MAX];
	char msg[PATH_MAX * 2], want[PATH_MAX * 2];
	size_t n = strlen(rel);

	abs_in(ws, base, "ws6");
	must(mkdir("ws6", 0755), "mkdir");
	for (int i = 0; i < DEEP; i++) {
		memcpy(rel + n, "/d", 3);
		n += 2;
		must(mkdir(rel, 0755), "mkdir deep");
	}
	memcpy(rel + n, "/f", 3);
	mkfile(rel);
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), 0,
	       "a tree %d directories deep passes (%s)", DEEP, msg);
	mkfile("out/deep");
	memcpy(rel + n, "/x", 3);
	must(link("out/deep", rel), "link");
	is_int(check(ws, GUARD_WALK_MAX, msg, sizeof(msg)), DENIED,
	       "and an outside link at its bottom is refused");
	snprintf(want, sizeof(want), WANT_LINK, abs_in(p, base, rel));
	is_str(msg, want, "naming the deep path");
}

/* --- mount aliases on fixtures ------------------------------------------ */

#define ROOT "1 0 8:1 / / rw - ext4 /dev/sda1 rw\n"
/* One mount line; ids do not matter to the alias check. */
#define MNT(dev, root, mp) "9 1 " dev " " root " " mp " rw - ext4 /dev/x rw\n"
#define ALIAS_OUT 4096

/* The aliases found for protected in the table text, joined by ",";
 * "!reason" when the check fails. */
static const char *aliases_for(char *out, const char *text,
			       char *const *protected)
{
	struct mountinfo_table t;
	_cleanup_err_ struct err *e = NULL;
	_cleanup_strv_ char **al = NULL;

	if (procfs_mountinfo_parse(text, strlen(text), &t, &e) < 0) {
		snprintf(out, ALIAS_OUT, "!parse: %s", e->msg);
		return out;
	}
	int rc = guard_mount_aliases(&t, protected, &al, &e);
	procfs_mountinfo_free(&t);
	if (rc < 0) {
		snprintf(out, ALIAS_OUT, "!%s", err_reason_name(e->reason));
		return out;
	}
	out[0] = '\0';
	for (size_t i = 0, n = 0; al && al[i] && n < ALIAS_OUT; i++)
		n += (size_t)snprintf(out + n, ALIAS_OUT - n, "%s%s",
				      i ? "," : "", al[i]);
	return out;
}

static void is_aliases(const char *text, const char *p, const char *want,
		       const char *desc)
{
	char out[ALIAS_OUT], *prot[] = { (char *)p, NULL };

	is_str(aliases_for(out, text, prot), want, "%s", desc);
}

#define ST "/var/lib/cordon"

static void test_alias_fixtures(void)
{
	is_aliases(ROOT, ST, "", "control: the root mount alone: none");
	is_aliases(ROOT MNT("8:1", ST, "/srv/state"), ST, "/srv/state",
		   "a bind of the state dir elsewhere");
	is_aliases(ROOT MNT("8:1", "/var/lib", "/mnt/lib"), ST,
		   "/mnt/lib/cordon", "a bind of its parent elsewhere");
	is_aliases(ROOT MNT("8:1", ST "/runs", "/opt/runs"), ST, "/opt/runs",
		   "a bind of a subdirectory of it elsewhere");
	is_aliases(ROOT MNT("8:2", ST, "/other"), ST, "",
		   "the same root on another device is no alias");
	is_aliases(ROOT MNT("8:1", ST, "/other"), ST, "/other",
		   "control: the same root on the same device is one");
	is_aliases(ROOT MNT("8:1", ST "x", "/pfx"), ST, "",
		   "a sibling sharing a name prefix is no alias");
	is_aliases(ROOT MNT("8:1", "/a/bc", "/x"), "/a/b", "",
		   "/a/bc is not beneath /a/b");
	is_aliases(ROOT MNT("8:1", "/a/b/c", "/y") MNT("8:1", "/a", "/z"),
		   "/a/b", "/y,/z/b", "control: /a/b/c and /a are");
	is_aliases(ROOT MNT("8:1", "/", "/mnt/disk"), ST,
		   "/mnt/disk/var/lib/cordon",
		   "a second mount of the whole disk, joined with one slash");
	is_aliases(ROOT MNT("8:1", ST, "/srv/state\\040copy"), ST,
		   "/srv/state copy", "an escaped mount point is decoded");
	is_aliases(ROOT MNT("8:1", ST, "/srv/s") MNT("8:1", ST, "/srv/s"), ST,
		   "/srv/s", "an alias is listed once");
	is_aliases(ROOT MNT("8:1", ST, ST), ST, "",
		   "the protected path itself is not an alias");

	/* On a mount of its own, the protected path's path within that
	 * filesystem is what other mounts are compared with. */
	is_aliases(ROOT MNT("8:3", "/", "/var/lib") MNT("8:3", "/", "/backup")
		   MNT("8:1", ST, "/hidden"),
		   ST, "/backup/cordon",
		   "on a submount: its device and root decide");
	is_aliases(ROOT MNT("8:3", "/", "/var/lib/cordonx")
		   MNT("8:3", "/", "/b3"),
		   ST, "",
		   "a mount at a sibling sharing a prefix holds nothing");
	is_aliases(ROOT MNT("8:3", "/", "/var/lib") MNT("8:4", "/", "/var/lib")
		   MNT("8:3", "/", "/b3") MNT("8:4", "/", "/b4"),
		   ST, "/b4/cordon",
		   "of two mounts at one point the last is the visible one");
	is_aliases(ROOT MNT("8:1", "/", "/mnt/root")
		   MNT("8:1", "/var", "/mnt/var"),
		   "/", "/mnt/root,/mnt/var",
		   "protecting / finds every mount of its disk");

	char out[ALIAS_OUT];
	char *two[] = { ST, ST "/runs", NULL };
	is_str(aliases_for(out, ROOT MNT("8:1", ST, "/srv/state"), two),
	       "/srv/state,/srv/state/runs", "several protected paths");
	is_aliases(ROOT, "var/lib", "!error",
		   "a relative protected path is refused");
	is_aliases(MNT("8:1", "/", "/srv"), ST, "!sandbox_unavailable",
		   "a path no mount holds fails closed");

	/* Aliases already in the list are not added twice. */
	struct mountinfo_table t;
	_cleanup_err_ struct err *e = NULL;
	_cleanup_strv_ char **al = NULL;
	const char *txt = ROOT MNT("8:1", ST, "/srv/state");
	char *one[] = { ST, NULL };

	strv_push(&al, "/srv/state");
	procfs_mountinfo_parse(txt, strlen(txt), &t, &e);
	ok(guard_mount_aliases(&t, one, &al, &e) == 0 && strv_len(al) == 1,
	   "an alias already listed is not appended again");
	procfs_mountinfo_free(&t);
}

/* --- real mounts, as root ----------------------------------------------- */

/* The child reports each result as a line "<0|1> <description>". */
static void report(int fd, bool pass, const char *desc)
{
	dprintf(fd, "%d %s\n", pass ? 1 : 0, desc);
}

static void ns_aliases(int fd, const char *base)
{
	struct mountinfo_table t;
	_cleanup_err_ struct err *e = NULL;
	_cleanup_strv_ char **al = NULL;
	char state[PATH_MAX], p[PATH_MAX], *prot[] = { state, NULL };

	abs_in(state, base, "state");
	must(mkdir("state", 0755), "mkdir");
	must(mkdir("state/sub", 0755), "mkdir");
	must(mkdir("alias", 0755), "mkdir");
	must(mkdir("alias-sub", 0755), "mkdir");
	must(mkdir("alias-parent", 0755), "mkdir");

	bool ok1 = procfs_mountinfo_read(0, &t, &e) == 0 &&
		   guard_mount_aliases(&t, prot, &al, &e) == 0;
	report(fd, ok1 && strv_len(al) == 0,
	       "control: before the binds the state dir has no alias");
	procfs_mountinfo_free(&t);
	strv_free(steal_pointer(&al));

	must(mount("state", "alias", NULL, MS_BIND, NULL), "bind");
	must(mount("state/sub", "alias-sub", NULL, MS_BIND, NULL), "bind");
	must(mount(base, "alias-parent", NULL, MS_BIND, NULL), "bind");
	bool ok2 = procfs_mountinfo_read(0, &t, &e) == 0 &&
		   guard_mount_aliases(&t, prot, &al, &e) == 0;
	report(fd, ok2 && strv_contains(al, abs_in(p, base, "alias")),
	       "a real bind of the state dir is found");
	report(fd, ok2 && strv_contains(al, abs_in(p, base, "alias-sub")),
	       "a real bind of a subdirectory of it is found");
	report(fd,
	       ok2 && strv_contains(al, abs_in(p, base, "alias-parent/state")),
	       "a real bind of its parent is found");
	report(fd, ok2 && strv_len(al) == 3 && !strv_contains(al, state),
	       "nothing else is, the state dir itself included");
	procfs_mountinfo_free(&t);
}

static void ns_bound_links(int fd, const char *base)
{
	char ws[PATH_MAX], p[PATH_MAX], msg[PATH_MAX * 2], want[PATH_MAX * 2];

	/* A directory bound a second time inside the workspace shows each
	 * name twice; counting both would make up for a name outside. */
	abs_in(ws, base, "ws7");
	must(mkdir("ws7", 0755), "mkdir");
	must(mkdir("ws7/a", 0755), "mkdir");
	must(mkdir("ws7/b", 0755), "mkdir");
	mkfile("ws7/a/f");
	must(link("ws7/a/f", "ws7/a/g"), "link");
	must(mount("ws7/a", "ws7/b", NULL, MS_BIND, NULL), "bind");
	report(fd, check(ws, GUARD_WALK_MAX, msg, sizeof(msg)) == 0,
	       "control: internal links under a directory bound twice pass");
	must(unlink("ws7/a/g"), "unlink");
	mkfile("out/ws7");
	must(link("out/ws7", "ws7/a/g"), "link");
	report(fd, check(ws, GUARD_WALK_MAX, msg, sizeof(msg)) == DENIED,
	       "an outside link seen twice through a bind is still refused");

	/* A file bound onto a second name is not a second link. */
	abs_in(ws, base, "ws8");
	must(mkdir("ws8", 0755), "mkdir");
	mkfile("ws8/g");
	mkfile("out/ws8");
	must(link("out/ws8", "out/ws8-other"), "link");
	must(mount("out/ws8", "ws8/g", NULL, MS_BIND, NULL), "bind");
	report(fd, check(ws, GUARD_WALK_MAX, msg, sizeof(msg)) == 0,
	       "control: a bind of a linked outside file is not a link");
	abs_in(ws, base, "ws9");
	must(mkdir("ws9", 0755), "mkdir");
	mkfile("ws9/h");
	mkfile("out/ws9");
	must(link("out/ws9", "ws9/f"), "link");
	must(mount("ws9/f", "ws9/h", NULL, MS_BIND, NULL), "bind");
	snprintf(want, sizeof(want), WANT_LINK, abs_in(p, base, "ws9/f"));
	report(fd,
	       check(ws, GUARD_WALK_MAX, msg, sizeof(msg)) == DENIED &&
		       strcmp(msg, want) == 0,
	       "an outside link also bound onto a second name is refused");
}

static int ns_child(int fd, const char *base)
{
	if (unshare(CLONE_NEWNS) < 0 ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		report(fd, false, "private mount namespace");
		return 1;
	}
	ns_aliases(fd, base);
	ns_bound_links(fd, base);
	return 0;
}

/* Run fn(fd, base) in a forked child, collecting what it writes to fd
 * into buf; its exit status in *status. -1 when the child could not run. */
static int in_child(int (*fn)(int fd, const char *base), const char *base, char *buf,
		    size_t size, int *status)
{
	int p[2];
	size_t n = 0;
	ssize_t r;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -1;
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		_exit(fn(p[1], base));
	}
	close(p[1]);
	while (n < size - 1 && (r = read(p[0], buf + n, size - 1 - n)) > 0)
		n += (size_t)r;
	buf[n] = '\0';
	close(p[0]);
	waitpid(pid, status, 0);
	return pid < 0 ? -1 : 0;
}

#define REAL_TESTS 10

static void test_real_mounts(const char *base)
{
	int status = 0;
	char buf[8192];

	if (geteuid() != 0) {
		for (int i = 0; i < REAL_TESTS; i++)
			skip("real bind mounts need root");
		return;
	}
	if (in_child(ns_child, base, buf, sizeof(buf), &status) < 0) {
		ok(0, "fork");
		return;
	}
	for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n"))
		ok(line[0] == '1', "%s", line + 2);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "the namespace child exits cleanly");
}

/* The checks of test_without_io_uring, in its child: "a b c msg". */
static int no_uring_child(int fd, const char *base)
{
	char ws[PATH_MAX], msg[PATH_MAX * 2], bmsg[PATH_MAX * 2];
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	int a, b, c;

	abs_in(ws, base, "wsu");
	if (!ctx || seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), SCMP_SYS(io_uring_setup), 0) < 0 ||
	    seccomp_load(ctx) < 0)
		return 3;
	a = check(ws, GUARD_WALK_MAX, msg, sizeof(msg));
	if (link("out/su", "wsu/d/x") < 0)
		return 4;
	b = check(ws, GUARD_WALK_MAX, bmsg, sizeof(bmsg));
	unlink("wsu/d/x");
	c = check(ws, GUARD_WALK_MAX, msg, sizeof(msg));
	dprintf(fd, "%d %d %d %s", a, b, c, bmsg);
	return 0;
}

/* Where io_uring is refused (a container's seccomp profile does), the walk
 * stats one entry at a time and finds the same: run the outside-link
 * checks again in a child whose filter refuses io_uring_setup. */
static void test_without_io_uring(const char *base)
{
	char want[PATH_MAX * 2], x[PATH_MAX], got[PATH_MAX * 3];
	int status = 0;

	must(mkdir("wsu", 0755), "mkdir");
	must(mkdir("wsu/d", 0755), "mkdir");
	mkfile("wsu/d/plain");
	mkfile("out/su");
	if (in_child(no_uring_child, base, got, sizeof(got), &status) < 0) {
		ok(0, "fork");
		return;
	}
	snprintf(want, sizeof(want), "0 %d 0 " WANT_LINK, DENIED, abs_in(x, base, "wsu/d/x"));
	is_str(got, want, "without io_uring: the plain workspace passes, the outside link is "
			  "refused and named, and passes once it is gone");
	is_int(WIFEXITED(status) ? WEXITSTATUS(status) : -1, 0, "  the child exits cleanly");
}

static int rm_one(const char *path, const struct stat *st, int flag,
		  struct FTW *ftw)
{
	return remove(path) < 0 ? -1 : 0;
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-links-XXXXXX", base[PATH_MAX];

	if (!mkdtemp(tmpl) || !realpath(tmpl, base) || chdir(base) < 0)
		tap_skip_all("no temporary directory");
	test_internal_links(base);
	test_link_under_deny(base);
	test_outside_link(base);
	test_first_in_walk_order(base);
	test_symlinks(base);
	test_entry_limit(base);
	test_deep(base);
	test_without_io_uring(base);
	test_alias_fixtures();
	test_real_mounts(base);
	if (chdir("/") < 0 ||
	    nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		diag("could not remove %s", base);
	return done_testing();
}
