/* limits.c: the sandbox's resource limits (see limits.h): where its
 * cgroups go, making them, moving the sandbox in, removing them after,
 * and the pids limit as RLIMIT_NPROC where no cgroup can be had. */
#include "sandbox/limits.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/procfs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <linux/magic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

static const char *const ctrl_name[LIMITS_NCTRL] = { "pids", "memory", "cpu" };

#define PATH_BUF 4096
#define SMALL_FILE 4096

/* prefix + dir [+ "/" + name] into buf (PATH_BUF bytes). */
static int host_path(char *buf, const char *prefix, const char *dir, const char *name)
{
	size_t dl = strlen(dir);
	int n;

	/* the hierarchy's root may be "/sys/fs/cgroup/" or "/" */
	while (dl > 1 && dir[dl - 1] == '/')
		dl--;
	n = snprintf(buf, PATH_BUF, "%s%.*s%s%s", prefix ? prefix : "", (int)dl, dir,
		     name ? "/" : "", name ? name : "");
	if (n < 0 || n >= PATH_BUF)
		return errno = ENAMETOOLONG, -1;
	return 0;
}

static bool can(const char *prefix, const char *dir, const char *name, int mode)
{
	char p[PATH_BUF];

	return host_path(p, prefix, dir, name) == 0 && access(p, mode) == 0;
}

/* A small file's text into buf (NUL-terminated); "" when unreadable. */
static void read_small(const char *prefix, const char *dir, const char *name, char *buf,
		       size_t n)
{
	char p[PATH_BUF];
	ssize_t got = -1;
	int fd;

	buf[0] = '\0';
	if (host_path(p, prefix, dir, name) < 0)
		return;
	fd = open(p, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return;
	got = read(fd, buf, n - 1);
	close(fd);
	buf[got > 0 ? got : 0] = '\0';
}

/* Is w one of the words of list, split on any of seps? */
static bool has_word(const char *list, const char *w, const char *seps)
{
	size_t wl = strlen(w);

	for (const char *p = list; *p;) {
		size_t n = strcspn(p, seps);
		if (n == wl && strncmp(p, w, wl) == 0)
			return true;
		p += n;
		p += strspn(p, seps);
	}
	return false;
}

/* The path of the caller's cgroup in ctrl's v1 hierarchy, or (ctrl NULL)
 * in the v2 one, from /proc/self/cgroup's text; NULL when none. */
static char *cgroup_path(const char *text, const char *ctrl)
{
	for (const char *line = text; line && *line;) {
		const char *nl = strchr(line, '\n'), *end = nl ? nl : line + strlen(line);
		const char *c1 = memchr(line, ':', (size_t)(end - line));
		const char *c2 = c1 ? memchr(c1 + 1, ':', (size_t)(end - c1 - 1)) : NULL;

		if (c2) {
			_cleanup_free_ char *ctrls = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
			bool match = ctrls && (ctrl ? has_word(ctrls, ctrl, ",")
						    : (ctrls[0] == '\0' && strncmp(line, "0:", 2) == 0));
			if (match && c2[1] == '/')
				return strndup(c2 + 1, (size_t)(end - c2 - 1));
		}
		line = nl ? nl + 1 : NULL;
	}
	return NULL;
}

/* path relative to the mount's root ("/" when it is the root); NULL when
 * the cgroup lies outside what the mount shows ("/.." from a namespace). */
static const char *beneath_root(const char *path, const char *root)
{
	size_t rl = strlen(root);

	if (strstr(path, "/..") || !fs_path_within(path, root))
		return NULL;
	if (strcmp(root, "/") == 0)
		return path;
	return path[rl] ? path + rl : "/";
}

static char *join(const char *mount, const char *rel)
{
	return strcmp(rel, "/") == 0 ? strdup(mount) : fs_path_join(mount, rel);
}

static void set_why(struct limits_plan *lp, unsigned int ctrls, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static void set_why(struct limits_plan *lp, unsigned int ctrls, const char *fmt, ...)
{
	char buf[sizeof(lp->why[0])];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	for (int c = 0; c < LIMITS_NCTRL; c++)
		if ((ctrls & LIMITS_BIT(c)) && !lp->why[c][0])
			memcpy(lp->why[c], buf, sizeof(buf));
}

static void controllers_text(unsigned int ctrls, const char *pre, char *buf, size_t n)
{
	size_t off = 0;

	buf[0] = '\0';
	for (int c = 0; c < LIMITS_NCTRL && off < n; c++)
		if (ctrls & LIMITS_BIT(c)) {
			int w = snprintf(buf + off, n - off, "%s%s%s", off ? " " : "", pre, ctrl_name[c]);
			off += w > 0 ? (size_t)w : 0;
		}
}

static int add_dir(struct limits_plan *lp, const char *mount, const char *parent,
		   const char *self, unsigned int ctrls, unsigned int enable, bool v2)
{
	for (size_t i = 0; i < lp->n; i++)
		if (strcmp(lp->dirs[i].mount, mount) == 0) {
			lp->dirs[i].ctrls |= ctrls;
			lp->have |= ctrls;
			return 0;
		}
	if (lp->n >= LIMITS_NCTRL)
		return -1;
	struct limits_dir *d = &lp->dirs[lp->n];
	*d = (struct limits_dir){ .mount = strdup(mount), .parent = strdup(parent),
				  .self = strdup(self), .ctrls = ctrls, .enable = enable, .v2 = v2 };
	if (!d->mount || !d->parent || !d->self) {
		free(d->mount);
		free(d->parent);
		free(d->self);
		return -1;
	}
	lp->n++;
	lp->have |= ctrls;
	return 0;
}

/* May the sandbox's cgroup go beneath cand with every controller of want?
 * *enable: those to enable in cand's subtree_control first. */
static bool v2_usable(const struct limits_host *h, const char *cand, unsigned int want,
		      unsigned int *enable)
{
	char sub[SMALL_FILE], ctl[SMALL_FILE], procs[16];
	bool can_enable;

	*enable = 0;
	if (!can(h->prefix, cand, NULL, W_OK))
		return false;
	/* Moving a process needs the common ancestor's cgroup.procs. */
	if (h->uid != 0 && !can(h->prefix, cand, "cgroup.procs", W_OK))
		return false;
	read_small(h->prefix, cand, "cgroup.subtree_control", sub, sizeof(sub));
	read_small(h->prefix, cand, "cgroup.controllers", ctl, sizeof(ctl));
	read_small(h->prefix, cand, "cgroup.procs", procs, sizeof(procs));
	/* No internal processes: a controller can be enabled for the
	 * children of a cgroup holding none, or of the root (which has no
	 * cgroup.type). */
	can_enable = (procs[0] == '\0' || !can(h->prefix, cand, "cgroup.type", F_OK)) &&
		     can(h->prefix, cand, "cgroup.subtree_control", W_OK);
	for (int c = 0; c < LIMITS_NCTRL; c++) {
		if (!(want & LIMITS_BIT(c)) || has_word(sub, ctrl_name[c], " \n"))
			continue;
		if (!can_enable || !has_word(ctl, ctrl_name[c], " \n"))
			return false;
		*enable |= LIMITS_BIT(c);
	}
	return true;
}

/* The nearest cgroup, from the caller's own up to the mount's root, that
 * may hold the sandbox's with every controller of want. */
static void find_v2(const struct limits_host *h, const struct mountinfo *m, const char *cgtext,
		    unsigned int want, struct limits_plan *lp)
{
	_cleanup_free_ char *self = cgroup_path(cgtext, NULL), *rel = NULL;
	char names[64];
	const char *r;

	controllers_text(want, "", names, sizeof(names));
	r = self ? beneath_root(self, m->root) : NULL;
	if (!r || !(rel = strdup(r))) {
		set_why(lp, want, "cordon's own cgroup v2 is not beneath `%s`", m->mountpoint);
		return;
	}
	_cleanup_free_ char *own = join(m->mountpoint, rel);
	for (;;) {
		_cleanup_free_ char *cand = join(m->mountpoint, rel);
		unsigned int enable = 0;
		char *slash;

		if (cand && own && v2_usable(h, cand, want, &enable)) {
			if (add_dir(lp, m->mountpoint, cand, own, want, enable, true) < 0)
				set_why(lp, want, "out of memory");
			return;
		}
		if (strcmp(rel, "/") == 0)
			break;
		slash = strrchr(rel, '/');
		if (slash == rel)
			slash[1] = '\0';
		else
			*slash = '\0';
	}
	set_why(lp, want, "no cgroup v2 from cordon's own (`%s`) up may be written with %s for its "
		"children (an operator other than root needs a delegated subtree)", self, names);
}

/* ctrl's v1 hierarchy: a child of the caller's own cgroup there. */
static void find_v1(const struct limits_host *h, const struct mountinfo_table *t,
		    const char *cgtext, int c, struct limits_plan *lp)
{
	const struct mountinfo *m = NULL;
	_cleanup_free_ char *self = NULL, *cand = NULL;
	const char *r;

	for (size_t i = 0; i < t->n && !m; i++)
		if (strcmp(t->v[i].fstype, "cgroup") == 0 &&
		    has_word(t->v[i].superopts, ctrl_name[c], ","))
			m = &t->v[i];
	if (!m) {
		set_why(lp, LIMITS_BIT(c), "no cgroup hierarchy here has the %s controller",
			ctrl_name[c]);
		return;
	}
	self = cgroup_path(cgtext, ctrl_name[c]);
	r = self ? beneath_root(self, m->root) : NULL;
	cand = r ? join(m->mountpoint, r) : NULL;
	if (!cand) {
		set_why(lp, LIMITS_BIT(c), "cordon's own %s cgroup is not beneath `%s`", ctrl_name[c],
			m->mountpoint);
		return;
	}
	if (!can(h->prefix, cand, NULL, W_OK) || !can(h->prefix, cand, "cgroup.procs", W_OK)) {
		set_why(lp, LIMITS_BIT(c), "cordon's own cgroup `%s` may not be written (%s)", cand,
			strerror(errno));
		return;
	}
	if (add_dir(lp, m->mountpoint, cand, cand, LIMITS_BIT(c), 0, false) < 0)
		set_why(lp, LIMITS_BIT(c), "out of memory");
}

static char *read_text(const char *given, const char *live)
{
	char *text = NULL;
	size_t len = 0;
	_cleanup_close_ int fd = -1;

	if (given)
		return strdup(given);
	fd = open(live, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fs_read_fd(fd, live, 1 << 20, &text, &len, NULL) < 0)
		return NULL;
	return text;
}

void limits_find(const struct limits_host *h, unsigned int want, struct limits_plan *lp)
{
	_cleanup_free_ char *mi = read_text(h->mountinfo, "/proc/self/mountinfo");
	_cleanup_free_ char *cg = read_text(h->cgroup, "/proc/self/cgroup");
	struct mountinfo_table t = { 0 };
	const struct mountinfo *v2 = NULL;
	unsigned int v2want = 0;
	char ctl[SMALL_FILE] = "";

	free(lp->prefix);
	lp->prefix = strdup(h->prefix ? h->prefix : "");
	lp->fake = h->fake;
	if (!lp->prefix || !mi || !cg || procfs_mountinfo_parse(mi, strlen(mi), &t, NULL) < 0) {
		set_why(lp, want, "cannot read this process's mounts and cgroups");
		return;
	}
	for (size_t i = 0; i < t.n && !v2; i++)
		if (strcmp(t.v[i].fstype, "cgroup2") == 0)
			v2 = &t.v[i];
	if (v2)
		read_small(h->prefix, v2->mountpoint, "cgroup.controllers", ctl, sizeof(ctl));
	for (int c = 0; c < LIMITS_NCTRL; c++)
		if ((want & LIMITS_BIT(c)) && has_word(ctl, ctrl_name[c], " \n"))
			v2want |= LIMITS_BIT(c);
	if (v2 && v2want)
		find_v2(h, v2, cg, v2want, lp);
	for (int c = 0; c < LIMITS_NCTRL; c++)
		if ((want & ~v2want) & LIMITS_BIT(c))
			find_v1(h, &t, cg, c, lp);
	procfs_mountinfo_free(&t);
}

int limits_decide(const struct limits_host *h, const struct grant *g, const char *execution,
		  struct limits_plan *lp, struct err **e)
{
	struct limits_host live = { .uid = geteuid() };
	const struct policy_limits *l = &g->limits;
	unsigned int want = LIMITS_BIT(LIMITS_PIDS);

	if (!h)
		h = &live;
	memset(lp, 0, sizeof(*lp));
	lp->limits = *l;
	if (l->memory)
		want |= LIMITS_BIT(LIMITS_MEMORY);
	if (l->cpu_millis)
		want |= LIMITS_BIT(LIMITS_CPU);
	limits_find(h, want, lp);
	if (l->memory && !(lp->have & LIMITS_BIT(LIMITS_MEMORY)))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "limits.memory: needs a cgroup with the memory controller, and none "
			       "can be had here: %s", lp->why[LIMITS_MEMORY]);
	if (l->cpu_millis && !(lp->have & LIMITS_BIT(LIMITS_CPU)))
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "limits.cpus: needs a cgroup with the cpu controller, and none can "
			       "be had here: %s", lp->why[LIMITS_CPU]);
	if (!(lp->have & LIMITS_BIT(LIMITS_PIDS))) {
		if (h->uid != 0)
			lp->nproc = l->pids;
		else if (!g->pids_default)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "limits.pids: needs a cgroup with the pids controller (for "
				       "root, RLIMIT_NPROC does not apply), and none can be had here: %s",
				       lp->why[LIMITS_PIDS]);
		else
			lp->pids_unenforced = true;
	}
	for (size_t i = 0; i < lp->n; i++) {
		char name[160];

		snprintf(name, sizeof(name), "cordon-%s", execution);
		lp->dirs[i].dir = fs_path_join(lp->dirs[i].parent, name);
		if (!lp->dirs[i].dir)
			return err_set(e, ERR_INTERNAL, ENOMEM, "limits");
	}
	return 0;
}

/* ---- making, joining, removing ----------------------------------------- */

static int write_file(const struct limits_plan *lp, const char *dir, const char *name,
		      const char *text)
{
	char p[PATH_BUF];
	int fd, r;

	if (host_path(p, lp->prefix, dir, name) < 0)
		return -1;
	fd = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW | (lp->fake ? O_CREAT | O_TRUNC : 0),
		  0644);
	if (fd < 0)
		return -1;
	r = fs_write_exact(fd, text, strlen(text));
	if (close(fd) < 0 && r == 0)
		r = -1;
	return r;
}

/* Write name when the kernel has it (optional files: swap accounting may
 * be off, memory.oom.group is newer). */
static int write_optional(const struct limits_plan *lp, const char *dir, const char *name,
			  const char *text)
{
	if (!can(lp->prefix, dir, name, F_OK))
		return 0;
	return write_file(lp, dir, name, text);
}

static int write_limits(const struct limits_plan *lp, const struct limits_dir *d,
			const char **what)
{
	const struct policy_limits *l = &lp->limits;
	char v[64];

	if (d->ctrls & LIMITS_BIT(LIMITS_PIDS)) {
		*what = "pids.max";
		snprintf(v, sizeof(v), "%lu", l->pids);
		if (write_file(lp, d->dir, "pids.max", v) < 0)
			return -1;
	}
	if (d->ctrls & LIMITS_BIT(LIMITS_MEMORY)) {
		snprintf(v, sizeof(v), "%llu", l->memory);
		*what = d->v2 ? "memory.max" : "memory.limit_in_bytes";
		if (write_file(lp, d->dir, *what, v) < 0)
			return -1;
		/* no swap: the limit is the sandbox's memory, not its RAM */
		*what = d->v2 ? "memory.swap.max" : "memory.memsw.limit_in_bytes";
		if (write_optional(lp, d->dir, *what, d->v2 ? "0" : v) < 0)
			return -1;
		/* an out-of-memory kill takes the whole sandbox */
		*what = "memory.oom.group";
		if (d->v2 && write_optional(lp, d->dir, *what, "1") < 0)
			return -1;
	}
	if (d->ctrls & LIMITS_BIT(LIMITS_CPU)) {
		unsigned long quota = (unsigned long)l->cpu_millis * (LIMITS_CPU_PERIOD_US / 1000);

		if (d->v2) {
			*what = "cpu.max";
			snprintf(v, sizeof(v), "%lu %u", quota, LIMITS_CPU_PERIOD_US);
			return write_file(lp, d->dir, *what, v);
		}
		*what = "cpu.cfs_period_us";
		snprintf(v, sizeof(v), "%u", LIMITS_CPU_PERIOD_US);
		if (write_file(lp, d->dir, *what, v) < 0)
			return -1;
		*what = "cpu.cfs_quota_us";
		snprintf(v, sizeof(v), "%lu", quota);
		if (write_file(lp, d->dir, *what, v) < 0)
			return -1;
	}
	return 0;
}

/* A sandbox whose root was killed (SIGKILL: nothing of it ran on) left
 * its cgroup behind, empty. Those made long enough ago that no launch
 * can still be starting in them go now; a populated one is busy and
 * stays (rmdir is the kernel's own check). */
static void sweep(const struct limits_plan *lp, const char *parent)
{
	char p[PATH_BUF];
	DIR *d;
	struct dirent *de;
	time_t now = time(NULL);

	if (host_path(p, lp->prefix, parent, NULL) < 0 || !(d = opendir(p)))
		return;
	while ((de = readdir(d))) {
		struct stat st;

		if (de->d_type != DT_DIR || strncmp(de->d_name, "cordon-", 7) != 0 ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0 ||
		    st.st_mtime > now - LIMITS_STALE_SECS)
			continue;
		if (lp->fake)
			continue; /* a test's tree keeps what it made */
		(void)unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

int limits_create(struct limits_plan *lp, struct err **e)
{
	for (size_t i = 0; i < lp->n; i++)
		sweep(lp, lp->dirs[i].parent);
	for (size_t i = 0; i < lp->n; i++) {
		struct limits_dir *d = &lp->dirs[i];
		const char *what = "cgroup.subtree_control";
		char p[PATH_BUF], en[64];

		controllers_text(d->enable, "+", en, sizeof(en));
		if (d->enable && write_file(lp, d->parent, what, en) < 0)
			goto fail;
		what = "mkdir";
		/* the execution's own name: one already there is not ours */
		if (host_path(p, lp->prefix, d->dir, NULL) < 0 || mkdir(p, 0755) < 0)
			goto fail;
		d->made = true;
		if (write_limits(lp, d, &what) < 0)
			goto fail;
		continue;
fail:;
		int saved = errno;
		limits_remove(lp);
		return err_set(e, ERR_UNAVAILABLE, saved, "limits: cgroup `%s`: %s", d->dir, what);
	}
	return 0;
}

/* Write pid into cgroup.procs of each made cgroup (back: of the cgroup
 * cordon came from). */
static int move_pid(const struct limits_plan *lp, pid_t pid, bool v2_only, bool back,
		    struct err **e)
{
	char v[32];

	snprintf(v, sizeof(v), "%d", (int)pid);
	for (size_t i = 0; i < lp->n; i++) {
		const struct limits_dir *d = &lp->dirs[i];

		if (d->made && (d->v2 || !v2_only) &&
		    write_file(lp, back ? d->self : d->dir, "cgroup.procs", v) < 0)
			return back ? err_set(e, ERR_UNAVAILABLE, errno,
					      "limits: move pid 1 back to `%s`", d->self)
				    : err_set(e, ERR_UNAVAILABLE, errno,
					      "limits: move the sandbox into cgroup `%s`", d->dir);
	}
	return 0;
}

int limits_join(const struct limits_plan *lp, pid_t pid, bool v2_only, struct err **e)
{
	return move_pid(lp, pid, v2_only, false, e);
}

int limits_leave(const struct limits_plan *lp, pid_t pid, bool v2_only, struct err **e)
{
	return move_pid(lp, pid, v2_only, true, e);
}

int limits_leave_files(const struct limits_plan *lp, int *fds, size_t max, struct err **e)
{
	size_t n = 0;

	for (size_t i = 0; i < lp->n; i++) {
		char p[PATH_BUF];

		if (!lp->dirs[i].made || lp->dirs[i].v2)
			continue;
		if (n == max || host_path(p, lp->prefix, lp->dirs[i].self, "tasks") < 0 ||
		    (fds[n] = open(p, O_WRONLY | O_CLOEXEC | O_NOFOLLOW)) < 0) {
			int saved = errno;
			while (n > 0)
				close(fds[--n]);
			return err_set(e, ERR_UNAVAILABLE, saved, "limits: open `%s/tasks`",
				       lp->dirs[i].self);
		}
		n++;
	}
	return (int)n;
}

int limits_join_dir(const char *dir)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_close_ int fd = -1;
	struct statfs sf;

	if (dfd < 0 || fstatfs(dfd, &sf) < 0)
		return -1;
	if (sf.f_type != CGROUP_SUPER_MAGIC && sf.f_type != CGROUP2_SUPER_MAGIC)
		return errno = ENOTDIR, -1;
	/* "0" in v1's tasks moves the calling thread alone, which the kernel
	 * does without the lock whose grace period a process move waits for;
	 * the caller has no other thread */
	fd = openat(dfd, sf.f_type == CGROUP_SUPER_MAGIC ? "tasks" : "cgroup.procs",
		    O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
	return fd < 0 ? -1 : fs_write_exact(fd, "0", 1);
}

/* A test's tree holds plain files, which rmdir would not take. */
static void empty_fake(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *de;

	while (d && (de = readdir(d)))
		if (de->d_type == DT_REG)
			unlinkat(dirfd(d), de->d_name, 0);
	if (d)
		closedir(d);
}

/* rmdir path, waiting up to max_ns while the cgroup is still busy (its
 * last process on its way out); true when it is gone. kill: first ask
 * the kernel to kill what is left (v2's cgroup.kill, beside path). */
static bool remove_waiting(const char *path, long max_ns, const char *kill)
{
	struct timespec nap = { 0, 50000 };
	long waited = 0;

	for (;;) {
		if (rmdir(path) == 0 || errno == ENOENT)
			return true;
		if (errno != EBUSY || waited >= max_ns)
			return false;
		if (kill) {
			_cleanup_close_ int fd = open(kill, O_WRONLY | O_CLOEXEC | O_NOFOLLOW);
			if (fd >= 0)
				(void)fs_write_exact(fd, "1", 1);
			kill = NULL;
		}
		nanosleep(&nap, NULL);
		waited += nap.tv_nsec;
		if (nap.tv_nsec < 2000000L)
			nap.tv_nsec *= 2;
	}
}

void limits_remove(struct limits_plan *lp)
{
	for (size_t i = lp->n; i > 0; i--) {
		struct limits_dir *d = &lp->dirs[i - 1];
		char p[PATH_BUF], k[PATH_BUF];

		if (!d->made || host_path(p, lp->prefix, d->dir, NULL) < 0 ||
		    host_path(k, lp->prefix, d->dir, "cgroup.kill") < 0)
			continue;
		if (lp->fake)
			empty_fake(p);
		d->left = !remove_waiting(p, 1000000000L, d->v2 ? k : NULL);
		d->made = false;
	}
}

void limits_clear(struct limits_plan *lp)
{
	for (size_t i = 0; i < lp->n; i++) {
		free(lp->dirs[i].mount);
		free(lp->dirs[i].parent);
		free(lp->dirs[i].self);
		free(lp->dirs[i].dir);
	}
	free(lp->prefix);
	memset(lp, 0, sizeof(*lp));
}

void limits_note(const struct limits_plan *lp, FILE *f)
{
	for (size_t i = 0; i < lp->n; i++)
		if (lp->dirs[i].left)
			fprintf(f, "cordon: note: the sandbox's cgroup `%s` was still busy and is left "
				   "behind\n", lp->dirs[i].dir);
	if (lp->pids_unenforced)
		fprintf(f, "cordon: note: the default pids limit (%lu) is not enforced: %s; for root "
			   "RLIMIT_NPROC does not apply\n", lp->limits.pids, lp->why[LIMITS_PIDS]);
}

unsigned long long limits_tmp_bytes(const struct policy_limits *l)
{
	struct sysinfo si;
	unsigned long long quarter;

	if (l->memory)
		return l->memory;
	if (sysinfo(&si) < 0)
		return LIMITS_TMP_DEFAULT;
	quarter = (unsigned long long)si.totalram * si.mem_unit / 4;
	return quarter < LIMITS_TMP_DEFAULT ? quarter : LIMITS_TMP_DEFAULT;
}

unsigned long long limits_shm_bytes(const struct policy_limits *l)
{
	unsigned long long tmp = limits_tmp_bytes(l);

	return tmp < LIMITS_SHM_DEFAULT ? tmp : LIMITS_SHM_DEFAULT;
}

bool limits_nproc_usable(const char **why)
{
	char map[SMALL_FILE];
	unsigned long uid = (unsigned long)getuid();

	read_small(NULL, "/proc/self/uid_map", NULL, map, sizeof(map));
	*why = "not in a user namespace of the sandbox's own";
	/* each line: the first id inside, the first outside, how many */
	for (char *p = map, *end; *p;) {
		unsigned long v[3];

		for (int k = 0; k < 3; k++, p = end) {
			errno = 0;
			v[k] = strtoul(p, &end, 10);
			if (end == p || errno)
				return false;
		}
		p += strspn(p, " \n");
		if (v[0] == 0 && v[1] == 0 && v[2] == 4294967295UL)
			return false; /* the initial namespace */
		if (uid >= v[0] && uid - v[0] < v[2]) {
			if (v[1] + (uid - v[0]) == 0) {
				*why = "the user is root outside the sandbox's user namespace";
				return false;
			}
			*why = NULL;
			return true;
		}
	}
	return false;
}

/* ---- doctor ------------------------------------------------------------ */

static void check(struct prereq_check *c, enum prereq_status st, const char *detail,
		  const char *fix)
{
	c->status = st;
	snprintf(c->detail, sizeof(c->detail), "%s", detail);
	snprintf(c->fix, sizeof(c->fix), "%s", st == PREREQ_PASS ? "" : fix);
}

static const struct limits_dir *dir_of(const struct limits_plan *lp, int c)
{
	for (size_t i = 0; i < lp->n; i++)
		if (lp->dirs[i].ctrls & LIMITS_BIT(c))
			return &lp->dirs[i];
	return NULL;
}

void limits_doctor(const struct limits_host *h, struct prereq_check *pids,
		   struct prereq_check *cgroup)
{
	static const char fix[] =
		"give cordon a cgroup it may write: as root, a writable cgroup v2 or v1 hierarchy "
		"with the pids, memory and cpu controllers; otherwise a delegated cgroup v2 subtree";
	struct limits_host live = { .uid = geteuid() };
	struct limits_plan lp = { 0 };
	const struct limits_dir *d;
	char text[512];

	if (!h)
		h = &live;
	limits_find(h, LIMITS_BIT(LIMITS_PIDS) | LIMITS_BIT(LIMITS_MEMORY) | LIMITS_BIT(LIMITS_CPU),
		    &lp);
	if ((d = dir_of(&lp, LIMITS_PIDS))) {
		snprintf(text, sizeof(text), "pids by cgroup %s, beneath `%s`", d->v2 ? "v2" : "v1",
			 d->parent);
		check(pids, PREREQ_PASS, text, "");
	} else if (h->uid != 0) {
		snprintf(text, sizeof(text), "pids by RLIMIT_NPROC in the sandbox's user namespace "
			 "(no cgroup: %s)", lp.why[LIMITS_PIDS]);
		check(pids, PREREQ_PASS, text, "");
	} else {
		snprintf(text, sizeof(text), "the default pids limit is not enforced and a pids limit "
			 "is refused: %s", lp.why[LIMITS_PIDS]);
		check(pids, PREREQ_WARN, text, fix);
	}
	text[0] = '\0';
	for (int c = LIMITS_MEMORY; c <= LIMITS_CPU; c++) {
		size_t off = strlen(text);

		d = dir_of(&lp, c);
		if (d)
			snprintf(text + off, sizeof(text) - off, "%s%s by cgroup %s, beneath `%s`",
				 off ? "; " : "", c == LIMITS_CPU ? "cpus" : "memory",
				 d->v2 ? "v2" : "v1", d->parent);
		else
			snprintf(text + off, sizeof(text) - off, "%sa %s limit is refused: %s",
				 off ? "; " : "", c == LIMITS_CPU ? "cpus" : "memory", lp.why[c]);
	}
	check(cgroup, dir_of(&lp, LIMITS_MEMORY) && dir_of(&lp, LIMITS_CPU) ? PREREQ_PASS
									   : PREREQ_WARN, text, fix);
	limits_clear(&lp);
}
