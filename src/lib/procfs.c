/* procfs.c: readers for /proc (see procfs.h): the mountinfo parser, a
 * process's start time from its stat line, and namespace ids. Knows
 * nothing of cordon. */
#include "procfs.h"
#include "cleanup.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Field 22 of /proc/<pid>/stat is the 20th after the comm field. */
#define STAT_STARTTIME_AFTER_COMM 20
#define NS_PER_SEC 1000000000LL

static int proc_path(char *buf, size_t size, pid_t pid, const char *what,
		     struct err **e)
{
	int n;

	if (pid < 0)
		return err_set(e, ERR_INTERNAL, EINVAL, "process id %d",
			       (int)pid);
	if (pid == 0)
		n = snprintf(buf, size, "/proc/self/%s", what);
	else
		n = snprintf(buf, size, "/proc/%d/%s", (int)pid, what);
	if (n < 0 || (size_t)n >= size)
		return err_set(e, ERR_INTERNAL, ENAMETOOLONG,
			       "/proc path for `%s`", what);
	return 0;
}

/* Read a whole file into a NUL-terminated buffer. Files in /proc report
 * size 0, so grow as we go rather than trusting fstat. */
/* /proc files report size 0, so read until EOF (bounded). */
#define PROC_READ_MAX ((size_t)64 << 20)

static int read_all(const char *path, char **out, size_t *len,
		    enum err_reason reason, struct err **e)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);

	if (fd < 0)
		return err_set(e, reason, errno, "open `%s`", path);
	if (fs_read_fd(fd, path, PROC_READ_MAX, out, len, e) < 0)
		return err_reclass(e, reason);
	return 0;
}

/* --- mountinfo ----------------------------------------------------------- */

/* The kernel writes space, tab, newline and backslash as \ooo. Anything
 * else after a backslash means the line is not what we think it is.
 * Returns NULL on success, else why not. */
static const char *unescape(const char *s, size_t len, char **out)
{
	_cleanup_free_ char *buf = malloc(len + 1);
	char *w = buf;

	if (!buf)
		return "out of memory";
	for (size_t i = 0; i < len; i++) {
		if (s[i] != '\\') {
			*w++ = s[i];
			continue;
		}
		if (len - i < 4)
			return "bad octal escape";
		unsigned int v = 0;
		for (size_t k = 1; k <= 3; k++) {
			if (s[i + k] < '0' || s[i + k] > '7')
				return "bad octal escape";
			v = v * 8 + (unsigned int)(s[i + k] - '0');
		}
		if (v == 0 || v > 0377)
			return "bad octal escape";
		*w++ = (char)v;
		i += 3;
	}
	*w = '\0';
	*out = steal_pointer(&buf);
	return NULL;
}

static bool parse_int(const char *s, size_t len, int *out)
{
	long v = 0;

	if (len == 0 || len > 10)
		return false;
	for (size_t i = 0; i < len; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (s[i] - '0');
	}
	if (v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

static bool parse_devno(const char *s, size_t len, unsigned int *major,
			unsigned int *minor)
{
	const char *colon = memchr(s, ':', len);
	int a, b;

	if (!colon || !parse_int(s, (size_t)(colon - s), &a) ||
	    !parse_int(colon + 1, len - (size_t)(colon - s) - 1, &b))
		return false;
	*major = (unsigned int)a;
	*minor = (unsigned int)b;
	return true;
}

struct field {
	const char *s;
	size_t len;
};

/* Split on single spaces: the kernel never writes two in a row except
 * around an empty source, which must stay a field of its own. */
static size_t split_fields(const char *line, size_t len, struct field *f,
			   size_t max)
{
	size_t n = 0, start = 0;

	for (size_t i = 0; i <= len; i++) {
		if (i < len && line[i] != ' ')
			continue;
		if (n == max)
			return max + 1;
		f[n].s = line + start;
		f[n].len = i - start;
		n++;
		start = i + 1;
	}
	return n;
}

static void mountinfo_clear(struct mountinfo *m)
{
	free(m->root);
	free(m->mountpoint);
	free(m->options);
	free(m->fstype);
	free(m->source);
	free(m->superopts);
	memset(m, 0, sizeof(*m));
}

/* Optional fields are open-ended (shared:N, master:N, ...); only the
 * " - " separator tells where they stop. */
#define MAX_FIELDS 64

static const char *parse_line(const char *line, size_t len,
			      struct mountinfo *m)
{
	struct field f[MAX_FIELDS];
	size_t n = split_fields(line, len, f, MAX_FIELDS), sep = 0;
	const char *why;

	if (n > MAX_FIELDS)
		return "too many fields";
	for (size_t i = 6; i < n && !sep; i++)
		if (f[i].len == 1 && f[i].s[0] == '-')
			sep = i;
	if (n < 10 || !sep)
		return "missing fields or the ` - ` separator";
	if (n - sep != 4)
		return "expected fstype, source and super options after ` - `";
	if (!parse_int(f[0].s, f[0].len, &m->id) ||
	    !parse_int(f[1].s, f[1].len, &m->parent))
		return "bad mount id";
	if (!parse_devno(f[2].s, f[2].len, &m->major, &m->minor))
		return "bad major:minor";
	if (f[3].len == 0 || f[4].len == 0 || f[4].s[0] != '/' ||
	    f[5].len == 0 || f[sep + 1].len == 0)
		return "empty root, mount point, options or fstype";
	if ((why = unescape(f[3].s, f[3].len, &m->root)) ||
	    (why = unescape(f[4].s, f[4].len, &m->mountpoint)) ||
	    (why = unescape(f[sep + 1].s, f[sep + 1].len, &m->fstype)) ||
	    (why = unescape(f[sep + 2].s, f[sep + 2].len, &m->source)))
		return why;
	/* Options are the kernel's own words and never escaped. */
	m->options = strndup(f[5].s, f[5].len);
	m->superopts = strndup(f[sep + 3].s, f[sep + 3].len);
	if (!m->options || !m->superopts)
		return "out of memory";
	return NULL;
}

static int table_push(struct mountinfo_table *t, size_t *cap,
		      struct mountinfo *m)
{
	if (t->n == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct mountinfo *nv = reallocarray(t->v, ncap, sizeof(*nv));

		if (!nv)
			return -1;
		t->v = nv;
		*cap = ncap;
	}
	t->v[t->n++] = *m;
	memset(m, 0, sizeof(*m));
	return 0;
}

int procfs_mountinfo_parse(const char *text, size_t len,
			   struct mountinfo_table *out, struct err **e)
{
	struct mountinfo_table t = { 0 };
	size_t cap = 0, lineno = 0, pos = 0;

	*out = t;
	while (pos < len) {
		const char *nl = memchr(text + pos, '\n', len - pos);
		size_t ll = nl ? (size_t)(nl - (text + pos)) : len - pos;
		struct mountinfo m = { 0 };
		const char *why;

		lineno++;
		if (memchr(text + pos, '\0', ll))
			why = "NUL byte";
		else
			why = parse_line(text + pos, ll, &m);
		if (!why && table_push(&t, &cap, &m) < 0)
			why = "out of memory";
		if (why) {
			mountinfo_clear(&m);
			procfs_mountinfo_free(&t);
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "cannot read the mount table: "
				       "line %zu: %s",
				       lineno, why);
		}
		pos += ll + 1;
	}
	*out = t;
	return 0;
}

int procfs_mountinfo_read(pid_t pid, struct mountinfo_table *out,
			  struct err **e)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	size_t len = 0;

	out->v = NULL;
	out->n = 0;
	if (proc_path(path, sizeof(path), pid, "mountinfo", e) < 0 ||
	    read_all(path, &text, &len, ERR_UNAVAILABLE, e) < 0)
		return err_wrap(e, "cannot read the mount table");
	if (procfs_mountinfo_parse(text, len, out, e) < 0)
		return err_wrap(e, "`%s`", path);
	/* Every process sees at least its root: an empty table would make
	 * an alias check pass vacuously. */
	if (out->n == 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "cannot read the mount table: `%s` is empty",
			       path);
	return 0;
}

void procfs_mountinfo_free(struct mountinfo_table *t)
{
	if (!t)
		return;
	for (size_t i = 0; i < t->n; i++)
		mountinfo_clear(&t->v[i]);
	free(t->v);
	t->v = NULL;
	t->n = 0;
}

/* --- start time ---------------------------------------------------------- */

/* The comm field is "(name)" where name may hold spaces and ')': only
 * the last ')' in the line ends it. */
static int parse_start_ticks(const char *text, unsigned long long *ticks)
{
	const char *p = strrchr(text, ')');

	if (!p)
		return -1;
	p++;
	for (int field = 0; field < STAT_STARTTIME_AFTER_COMM; field++) {
		if (*p != ' ')
			return -1;
		p++;
		if (*p == ' ' || *p == '\0')
			return -1;
		if (field == STAT_STARTTIME_AFTER_COMM - 1)
			break;
		p += strcspn(p, " ");
	}
	if (*p < '0' || *p > '9')
		return -1;
	char *end;
	errno = 0;
	*ticks = strtoull(p, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -1;
	return 0;
}

int procfs_start_ticks(pid_t pid, unsigned long long *ticks, struct err **e)
{
	_cleanup_free_ char *text = NULL;
	char path[64];
	size_t len = 0;

	if (proc_path(path, sizeof(path), pid, "stat", e) < 0 ||
	    read_all(path, &text, &len, ERR_INTERNAL, e) < 0)
		return -1;
	if (!text || strlen(text) != len || parse_start_ticks(text, ticks) < 0)
		return err_set(e, ERR_INTERNAL, 0,
			       "read `%s`: no start time in it", path);
	/* A zombie has ended: it only waits for a parent to reap it (an
	 * orphan waits for pid 1, which need not reap at once). Nothing is
	 * proven of it, and it runs nothing. */
	const char *st = strrchr(text, ')');
	if (st && st[1] == ' ' && (st[2] == 'Z' || st[2] == 'X'))
		return err_set(e, ERR_INTERNAL, ESRCH, "pid %d has ended", (int)pid);
	return 0;
}

int procfs_pidfd_proven(pid_t pid, unsigned long long ticks, int *pidfd, struct err **e)
{
	unsigned long long now = 0;
	struct err *ie = NULL;
	int fd;

	*pidfd = -1;
	if (pid <= 0)
		return 0;
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	if (fd < 0)
		return errno == ESRCH ? 0 : err_set(e, ERR_UNAVAILABLE, errno, "pidfd of pid %d", (int)pid);
	/* (a zombie has ended: it is not proven, and runs nothing) */
	if (procfs_start_ticks(pid, &now, &ie) < 0 || now != ticks) {
		err_free(ie);
		close(fd);
		return 0;
	}
	*pidfd = fd;
	return 1;
}

bool procfs_pidfd_wait(int pidfd, int ms)
{
	struct pollfd p = { .fd = pidfd, .events = POLLIN };
	int r;

	do
		r = poll(&p, 1, ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

static int boot_time(long long *btime, struct err **e)
{
	_cleanup_free_ char *text = NULL;
	size_t len;

	if (read_all("/proc/stat", &text, &len, ERR_INTERNAL, e) < 0)
		return -1;
	for (char *line = text; line && *line;) {
		char *next = strchr(line, '\n');

		if (next)
			*next++ = '\0';
		if (strncmp(line, "btime ", 6) == 0) {
			char *end;

			errno = 0;
			*btime = strtoll(line + 6, &end, 10);
			if (!errno && end != line + 6 && *end == '\0' &&
			    *btime > 0)
				return 0;
			break;
		}
		line = next;
	}
	return err_set(e, ERR_INTERNAL, 0,
		       "read `/proc/stat`: no boot time in it");
}

int procfs_start_epoch_ns(pid_t pid, long long *ns, struct err **e)
{
	unsigned long long ticks = 0;
	long long btime = 0, secs, frac, r;
	long hz = sysconf(_SC_CLK_TCK);

	if (hz <= 0)
		return err_set(e, ERR_INTERNAL, errno,
			       "clock ticks per second");
	if (procfs_start_ticks(pid, &ticks, e) < 0 || boot_time(&btime, e) < 0)
		return -1;
	if (ticks / (unsigned long long)hz > (unsigned long long)LLONG_MAX)
		return err_set(e, ERR_INTERNAL, ERANGE, "process start time");
	secs = (long long)(ticks / (unsigned long long)hz);
	frac = (long long)(ticks % (unsigned long long)hz) * (NS_PER_SEC / hz);
	if (__builtin_add_overflow(btime, secs, &r) ||
	    __builtin_mul_overflow(r, NS_PER_SEC, &r) ||
	    __builtin_add_overflow(r, frac, &r))
		return err_set(e, ERR_INTERNAL, ERANGE, "process start time");
	*ns = r;
	return 0;
}

/* --- namespaces ---------------------------------------------------------- */

int procfs_ns_id(pid_t pid, const char *ns, unsigned long long *id,
		 struct err **e)
{
	char what[64], path[96];
	struct stat st;

	/* A name with a slash or a dot-name would reach outside ns/. */
	if (!ns || !*ns || strchr(ns, '/') || ns[0] == '.' ||
	    strlen(ns) > 32)
		return err_set(e, ERR_INTERNAL, EINVAL, "namespace name `%s`",
			       ns ? ns : "");
	snprintf(what, sizeof(what), "ns/%s", ns);
	if (proc_path(path, sizeof(path), pid, what, e) < 0)
		return -1;
	if (stat(path, &st) < 0)
		return err_set(e, ERR_INTERNAL, errno, "stat `%s`", path);
	*id = (unsigned long long)st.st_ino;
	return 0;
}
