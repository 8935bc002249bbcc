/* mounts_apply.c: the child's half of the filesystem, in its own user and
 * mount namespace. Every source is opened by fd before anything is
 * mounted, every target is reached beneath the new root without following
 * a symbolic link, and the result is pivoted into with the old root
 * detached. Errors return -1 with errno and the failing step named. */
#include "sandbox/native/mounts.h"
#include "lib/fs.h"
#include "sandbox/limits.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STAGE "/tmp"
#define STAGE_ROOT "/tmp/root"
#define STAGE_EMPTY "/tmp/empty"
#define STAGE_EMPTY_DIR "/tmp/empty-dir"
#define FAIL(s) do { *step = (s); return -1; } while (0)

static int beneath(int root, const char *abs, int flags)
{
	struct open_how how = {
		.flags = (unsigned long long)(flags | O_CLOEXEC | O_NOFOLLOW),
		.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS,
	};
	const char *rel = abs[1] ? abs + 1 : ".";

	return (int)syscall(SYS_openat2, root, rel, &how, sizeof(how));
}

/* Make a missing mount point (and its missing parents) beneath root. */
static int make_target(int root, const char *abs, bool dir)
{
	char buf[4096];
	size_t n = strlen(abs);

	if (n >= sizeof(buf))
		return errno = ENAMETOOLONG, -1;
	memcpy(buf, abs, n + 1);
	for (char *c = buf + 1;; c++) {
		bool last = *c == '\0';
		if (*c != '/' && !last)
			continue;
		*c = '\0';
		int fd = beneath(root, buf, O_PATH);
		if (fd >= 0) {
			close(fd);
		} else if (errno == ENOENT) {
			char *slash = strrchr(buf, '/');
			*slash = '\0';
			int pfd = beneath(root, slash == buf ? "/" : buf, O_PATH | O_DIRECTORY);
			*slash = '/';
			if (pfd < 0)
				return -1;
			int r = (!last || dir) ? mkdirat(pfd, slash + 1, 0755)
					       : mknodat(pfd, slash + 1, S_IFREG | 0000, 0);
			close(pfd);
			if (r < 0 && errno != EEXIST)
				return -1;
		} else {
			return -1;
		}
		if (last)
			return 0;
		*c = '/';
	}
}

static int attach(int src, int root, const char *abs, bool create, bool dir)
{
	int t = beneath(root, abs, O_PATH);
	int r;

	if (t < 0 && errno == ENOENT && create) {
		if (make_target(root, abs, dir) < 0)
			return -1;
		t = beneath(root, abs, O_PATH);
	}
	if (t < 0)
		return -1;
	r = move_mount(src, "", t, "", MOVE_MOUNT_F_EMPTY_PATH | MOVE_MOUNT_T_EMPTY_PATH);
	close(t);
	return r;
}

static int setattr(int fd, unsigned int flags, unsigned long long set,
		   unsigned long long clr)
{
	struct mount_attr a = { .attr_set = set, .attr_clr = clr };

	return mount_setattr(fd, "", AT_EMPTY_PATH | flags, &a, sizeof(a));
}

/* A detached tmpfs with the given options. */
static int tmpfs(const char *mode, const char *size, unsigned int attrs)
{
	int fs = fsopen("tmpfs", FSOPEN_CLOEXEC), m;

	if (fs < 0)
		return -1;
	if (fsconfig(fs, FSCONFIG_SET_STRING, "mode", mode, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "size", size, 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0) {
		close(fs);
		return -1;
	}
	m = fsmount(fs, FSMOUNT_CLOEXEC, attrs);
	close(fs);
	return m;
}

/* Clone a host path by fd, reached without symbolic links. */
static int clone_path(const char *abs, bool recursive)
{
	int p = fs_open_nofollow(AT_FDCWD, abs, O_PATH, 0), t;

	if (p < 0)
		return -1;
	t = open_tree(p, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH |
			     (recursive ? AT_RECURSIVE : 0));
	close(p);
	return t;
}

static int open_sources(const struct mount_plan *mp, int *src, const char **step)
{
	for (size_t i = 0; i < mp->n; i++) {
		const struct mop *m = &mp->ops[i];
		src[i] = -1;
		if (m->kind == MOP_MASK_DIR || m->kind == MOP_MASK_FILE)
			continue;
		src[i] = clone_path(m->path, true);
		if (src[i] < 0)
			FAIL("open a mount source");
		if (m->kind == MOP_READ) {
			if (setattr(src[i], AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
							      MOUNT_ATTR_NODEV, 0) < 0)
				FAIL("make a read-only bind");
		} else {
			if (setattr(src[i], AT_RECURSIVE, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0)
				FAIL("make a writable bind nosuid");
			/* a host mount that is read-only stays so: ignore EPERM */
			if (setattr(src[i], 0, 0, MOUNT_ATTR_RDONLY) < 0 && errno != EPERM)
				FAIL("make a writable bind");
		}
	}
	return 0;
}

static int apply_ops(const struct mount_plan *mp, int root, int *src, int *masks,
		     const char **step)
{
	for (size_t i = 0; i < mp->n; i++) {
		const struct mop *m = &mp->ops[i];
		int fd = src[i];

		if (m->kind == MOP_MASK_DIR && m->holds_exceptions) {
			/* its own tmpfs: the exceptions' mount points are made in it */
			fd = tmpfs("0111", "16k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
			if (fd < 0)
				FAIL("make a masking tmpfs");
			masks[i] = fd;
		} else if (m->kind == MOP_MASK_DIR || m->kind == MOP_MASK_FILE) {
			/* a read-only bind of the stage's empty directory or file:
			 * a clone costs a third of a tmpfs of its own, and every
			 * existing default credential is one */
			fd = open_tree(AT_FDCWD, m->kind == MOP_MASK_DIR ? STAGE_EMPTY_DIR : STAGE_EMPTY,
				       OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
			if (fd < 0 || setattr(fd, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
						      MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC, 0) < 0)
				FAIL(m->kind == MOP_MASK_DIR ? "make a masking directory"
							     : "make a masking file");
			src[i] = fd;
		}
		if (attach(fd, root, m->path, m->create, m->source_dir) < 0)
			FAIL(m->kind == MOP_MASK_DIR || m->kind == MOP_MASK_FILE
				     ? "mask a denied path" : "bind a granted path");
	}
	/* Masks were writable only to take the exceptions' mount points. */
	for (size_t i = 0; i < mp->n; i++)
		if (masks[i] >= 0 && setattr(masks[i], 0, MOUNT_ATTR_RDONLY, 0) < 0)
			FAIL("make a mask read-only");
	return 0;
}

static const char *const proc_ro[] = { "/proc/sys", "/proc/sysrq-trigger", "/proc/irq",
				       "/proc/bus", "/proc/fs" };
static const char *const proc_hide[] = { "/proc/kcore", "/proc/keys", "/proc/timer_list",
					 "/proc/sched_debug", "/proc/acpi", "/proc/scsi",
					 "/proc/latency_stats" };

/* A fresh /proc for the new pid namespace; the parts that write kernel
 * state are read-only, the parts that leak it hidden. */
static int setup_proc(int root, const char **step)
{
	int fs = fsopen("proc", FSOPEN_CLOEXEC), m;
	struct stat st;

	if (fs < 0 || fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		FAIL("create /proc");
	m = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	close(fs);
	if (m < 0 || attach(m, root, "/proc", false, true) < 0)
		FAIL("mount /proc");
	close(m);
	for (size_t i = 0; i < sizeof(proc_ro) / sizeof(*proc_ro); i++) {
		int p = beneath(root, proc_ro[i], O_PATH), t;
		if (p < 0 && errno == ENOENT)
			continue;
		t = p < 0 ? -1 : open_tree(p, "", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_EMPTY_PATH);
		if (p >= 0)
			close(p);
		if (t < 0 || setattr(t, AT_RECURSIVE, MOUNT_ATTR_RDONLY, 0) < 0 ||
		    attach(t, root, proc_ro[i], false, false) < 0)
			FAIL("make /proc/sys read-only");
		close(t);
	}
	for (size_t i = 0; i < sizeof(proc_hide) / sizeof(*proc_hide); i++) {
		int p = beneath(root, proc_hide[i], O_PATH), t;
		if (p < 0)
			continue;
		bool dir = fstat(p, &st) == 0 && S_ISDIR(st.st_mode);
		close(p);
		t = dir ? tmpfs("0000", "4k", MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID |
						     MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC)
			: open_tree(AT_FDCWD, STAGE_EMPTY, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (t < 0 || (!dir && setattr(t, 0, MOUNT_ATTR_RDONLY, 0) < 0) ||
		    attach(t, root, proc_hide[i], false, dir) < 0)
			FAIL("hide a kernel file in /proc");
		close(t);
	}
	return 0;
}

static const char *const devices[] = { "null", "zero", "full", "random", "urandom", "tty" };

/* A minimal /dev: the harmless devices bound from the host, a private
 * devpts and shm; the tmpfs itself read-only afterwards. */
static int setup_dev(int root, const int *devsrc, const char *shm_size, const char **step)
{
	int dev = tmpfs("0755", "64k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC), d, pts, fs;

	if (dev < 0 || attach(dev, root, "/dev", false, true) < 0)
		FAIL("mount /dev");
	d = beneath(root, "/dev", O_PATH | O_DIRECTORY);
	if (d < 0)
		FAIL("open /dev");
	for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++) {
		char p[32];
		snprintf(p, sizeof(p), "/dev/%s", devices[i]);
		if (devsrc[i] >= 0 && attach(devsrc[i], root, p, true, false) < 0)
			FAIL("bind a device");
	}
	fs = fsopen("devpts", FSOPEN_CLOEXEC);
	if (fs < 0 || fsconfig(fs, FSCONFIG_SET_STRING, "ptmxmode", "0666", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_SET_STRING, "mode", "0620", 0) < 0 ||
	    fsconfig(fs, FSCONFIG_CMD_CREATE, NULL, NULL, 0) < 0)
		FAIL("create /dev/pts");
	pts = fsmount(fs, FSMOUNT_CLOEXEC, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC);
	close(fs);
	if (pts < 0 || attach(pts, root, "/dev/pts", true, true) < 0)
		FAIL("mount /dev/pts");
	int shm = tmpfs("1777", shm_size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
	if (shm < 0 || attach(shm, root, "/dev/shm", true, true) < 0)
		FAIL("mount /dev/shm");
	if (symlinkat("pts/ptmx", d, "ptmx") < 0 || symlinkat("/proc/self/fd", d, "fd") < 0 ||
	    symlinkat("/proc/self/fd/0", d, "stdin") < 0 ||
	    symlinkat("/proc/self/fd/1", d, "stdout") < 0 ||
	    symlinkat("/proc/self/fd/2", d, "stderr") < 0)
		FAIL("link /dev entries");
	close(d);
	if (setattr(dev, 0, MOUNT_ATTR_RDONLY, 0) < 0)
		FAIL("make /dev read-only");
	return 0;
}

/* A read-only bind of a host path, or -1 (errno ENOENT: not on this host). */
static int bind_ro(const char *abs)
{
	int t = clone_path(abs, false);

	if (t >= 0 && setattr(t, 0, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV |
					   MOUNT_ATTR_NOEXEC, 0) < 0) {
		close(t);
		return -1;
	}
	return t;
}

/* Mount src at rel (relative to /sys) in the sandbox's /sys tmpfs, sys,
 * making the directories on the way: a tmpfs this process has just made
 * and nobody else reaches, so plain mkdirat and move_mount serve, with
 * no link to fear (cheaper than attach's walk beneath the root). */
static int sys_bind(int sys, int src, const char *rel)
{
	char buf[256];
	size_t n = strlen(rel);

	if (n >= sizeof(buf))
		return errno = ENAMETOOLONG, -1;
	memcpy(buf, rel, n + 1);
	for (char *c = buf;; c++) {
		if (*c != '/' && *c != '\0')
			continue;
		char end = *c;
		*c = '\0';
		if (mkdirat(sys, buf, 0755) < 0 && errno != EEXIST)
			return -1;
		if (end == '\0')
			break;
		*c = end;
	}
	return src < 0 ? 0
		       : move_mount(src, "", sys, rel, MOVE_MOUNT_F_EMPTY_PATH);
}

/* /sys: an empty tmpfs with what it keeps of the host's bound in; the
 * sandbox's cgroups are shown beneath fs/cgroup later (setup_cgroups),
 * which makes it read-only. *sys: the tmpfs. */
static int setup_sys(int root, const struct mount_plan *mp, int *sys, const char **step)
{
	*sys = tmpfs("0755", "64k", MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOEXEC);
	if (*sys < 0 || attach(*sys, root, "/sys", false, true) < 0)
		FAIL("mount /sys");
	for (size_t i = 0; mounts_sys_kept[i]; i++) {
		int t;

		if (!(mp->sys_keep & (1u << i)))
			continue;
		t = bind_ro(mounts_sys_kept[i]);
		if (t < 0 && errno == ENOENT)
			continue;
		if (t < 0 || sys_bind(*sys, t, mounts_sys_kept[i] + strlen("/sys/")) < 0)
			FAIL("bind a part of /sys");
		close(t);
	}
	if (sys_bind(*sys, -1, "fs/cgroup") < 0)
		FAIL("make /sys/fs/cgroup");
	return 0;
}

/* The launcher's word (struct mounts_cgroups) into *w, *buf and *paths
 * (pointers into *buf, checked), both the caller's to free. */
static int read_cgroups(int sync_fd, struct mounts_cgroups *w, char **buf, char ***paths)
{
	size_t n, off = 0;

	if (fs_read_exact(sync_fd, w, sizeof(*w)) < 0 || w->len > MOUNTS_CGROUPS_MAX ||
	    w->n_enter > 64 || w->n_view > 64)
		return errno = errno ? errno : EPROTO, -1;
	n = (size_t)w->n_enter + 2 * (size_t)w->n_view;
	*buf = malloc((size_t)w->len + 1);
	*paths = calloc(n + 1, sizeof(char *));
	if (!*buf || !*paths || fs_read_exact(sync_fd, *buf, w->len) < 0)
		return errno = errno ? errno : ENOMEM, -1;
	(*buf)[w->len] = '\0';
	for (size_t i = 0; i < n; i++) {
		size_t l = off < w->len ? strlen(*buf + off) : 0;

		if (l == 0 || (*buf)[off] != '/')
			return errno = EPROTO, -1;
		(*paths)[i] = *buf + off;
		off += l + 1;
	}
	return off == w->len ? 0 : (errno = EPROTO, -1);
}

/* The sandbox's own cgroups, once the launcher has made them: this
 * process joins the v1 ones itself (cheaper than being moved; it is in a
 * v2 one already), then enters a cgroup namespace rooted there, so that
 * inside /proc/self/cgroup says "/" and /sys/fs/cgroup shows the
 * sandbox's own limits (cpu.max, memory.max, pids.max), read-only. */
static int setup_cgroups(int sync_fd, int sys, unsigned long *nproc, const char **step)
{
	struct mounts_cgroups w = { 0 };
	char **paths = NULL, *buf = NULL;

	errno = 0;
	if (read_cgroups(sync_fd, &w, &buf, &paths) < 0)
		FAIL("wait for the sandbox's cgroups");
	*nproc = (unsigned long)w.nproc;
	for (size_t i = 0; paths && i < w.n_enter; i++)
		if (limits_join_dir(paths[i]) < 0)
			FAIL("join the sandbox's cgroup");
	if (unshare(CLONE_NEWCGROUP) < 0)
		FAIL("enter a cgroup namespace");
	for (size_t i = w.n_enter; paths && i < w.n_enter + 2 * (size_t)w.n_view; i += 2) {
		const char *dir = paths[i], *view = paths[i + 1];
		int t = dir && view && strncmp(view, "/sys/fs/cgroup", 14) == 0 ? bind_ro(dir) : -1;

		if (t < 0 || !view || sys_bind(sys, t, view + strlen("/sys/")) < 0)
			FAIL("show the sandbox's cgroup");
		close(t);
	}
	if (setattr(sys, 0, MOUNT_ATTR_RDONLY, 0) < 0)
		FAIL("make /sys read-only");
	close(sys);
	free(paths);
	free(buf);
	return 0;
}

static int stage(int *rootsrc, int *devsrc, const char **step)
{
	int fd;

	/* Nothing done here may reach the host's mount table. */
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0)
		FAIL("make mounts private");
	*rootsrc = open_tree(AT_FDCWD, "/", OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC | AT_RECURSIVE);
	if (*rootsrc < 0)
		FAIL("clone the host's root");
	if (setattr(*rootsrc, AT_RECURSIVE, MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV, 0) < 0)
		FAIL("make the root read-only");
	for (size_t i = 0; i < sizeof(devices) / sizeof(*devices); i++) {
		char p[32];
		snprintf(p, sizeof(p), "/dev/%s", devices[i]);
		devsrc[i] = open_tree(AT_FDCWD, p, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
		if (devsrc[i] >= 0)
			setattr(devsrc[i], 0, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NOEXEC, 0);
	}
	if (mount("cordon-stage", STAGE, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=64k") < 0)
		FAIL("mount the staging tmpfs");
	if (mkdir(STAGE_ROOT, 0755) < 0)
		FAIL("make the staging root");
	fd = open(STAGE_EMPTY, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0000);
	if (fd < 0)
		FAIL("make the masking file");
	close(fd);
	if (mkdir(STAGE_EMPTY_DIR, 0000) < 0)
		FAIL("make the masking directory");
	if (move_mount(*rootsrc, "", AT_FDCWD, STAGE_ROOT, MOVE_MOUNT_F_EMPTY_PATH) < 0)
		FAIL("attach the new root");
	return 0;
}

int mounts_apply(const struct mount_plan *mp, int sync_fd, unsigned long *nproc,
		 const char **step)
{
	int devsrc[sizeof(devices) / sizeof(*devices)];
	int *src = calloc(mp->n + 1, sizeof(int)), *masks = calloc(mp->n + 1, sizeof(int));
	int rootsrc = -1, root, sys = -1;
	char tmp_size[32], shm_size[32];

	if (!src || !masks)
		FAIL("allocate");
	for (size_t i = 0; i < mp->n; i++)
		masks[i] = -1;
	/* Sources first: the staging tmpfs below covers the host's /tmp. */
	if (open_sources(mp, src, step) < 0 || stage(&rootsrc, devsrc, step) < 0)
		return -1;
	root = open(STAGE_ROOT, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (root < 0)
		FAIL("open the new root");
	snprintf(tmp_size, sizeof(tmp_size), "%llu", mp->tmp_size);
	snprintf(shm_size, sizeof(shm_size), "%llu", mp->shm_size);
	if (mp->tmp_private) {
		int t = tmpfs("1777", tmp_size, MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV);
		if (t < 0 || attach(t, root, "/tmp", false, true) < 0)
			FAIL("mount a private /tmp");
		close(t);
	}
	/* /sys before the operations: a deny beneath what it keeps lands on
	 * what it keeps. */
	if (setup_sys(root, mp, &sys, step) < 0 || apply_ops(mp, root, src, masks, step) < 0 ||
	    setup_proc(root, step) < 0 || setup_dev(root, devsrc, shm_size, step) < 0 ||
	    setup_cgroups(sync_fd, sys, nproc, step) < 0)
		return -1;
	if (fchdir(root) < 0 || syscall(SYS_pivot_root, ".", ".") < 0)
		FAIL("pivot_root");
	if (umount2(".", MNT_DETACH) < 0 || chdir("/") < 0)
		FAIL("detach the old root");
	if (chdir(mp->workspace) < 0)
		FAIL("enter the workspace");
	return 0;
}
