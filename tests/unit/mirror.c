/* mirror.c (test): the SSH provider's copy to the remote and back
 * (src/container/mirror.c, mirror_apply.c) on real trees in a temporary
 * directory, with hostile tar streams made in memory with libarchive.
 * The pack: what it copies, skips (a skip path, a fifo) and does not
 * follow (a link out), GNU tar reading it, and a round trip. The apply:
 * each refusal (a link on the way, outside the grant, "..", an absolute
 * name, a kept path and beneath one, a fifo, a device, a hard link, a
 * grant's root, beneath a file), the set-ID bits stripped, .git replaced
 * by a link or a file, removals (kept, pinned, changed on the host,
 * unchanged, a whole directory), a link replaced by the remote's
 * directory, the bounds and corrupt streams; each beside its control,
 * the same stream or setup without the attack, which does what the
 * attack would. Then the listing helpers. */
#include "container/ssh/mirror.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "tap.h"

#include <archive.h>
#include <archive_entry.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#define MTIME 1600000000

static char base[256];
static char cur[512]; /* this case's directory */

/* --- the trees --------------------------------------------------------- */

static void fresh(const char *name)
{
	snprintf(cur, sizeof(cur), "%s/%s", base, name);
	if (mkdir(cur, 0755) < 0)
		diag("setup: mkdir %s: %s", cur, strerror(errno));
}

/* cur/rel, absolute */
static const char *P(const char *rel)
{
	static char buf[16][1024];
	static int k;

	k = (k + 1) % 16;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", cur, rel);
	return buf[k];
}

/* the tar's name for cur/rel: relative to "/" */
static const char *N(const char *rel)
{
	return P(rel) + 1;
}

static void must(int rc, const char *what)
{
	if (rc < 0)
		diag("setup: %s: %s", what, strerror(errno));
}

static void mkd(const char *rel)
{
	must(mkdir(P(rel), 0755), rel);
}

static void mkf(const char *rel, const char *data, mode_t mode)
{
	int fd = open(P(rel), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, data, strlen(data)) != (ssize_t)strlen(data))
		diag("setup: %s: %s", rel, strerror(errno));
	if (fd >= 0) {
		must(fchmod(fd, mode), rel);
		close(fd);
	}
}

static void mkl(const char *rel, const char *target)
{
	must(symlink(target, P(rel)), rel);
}

/* The file's content ("(missing)" when it cannot be read). */
static const char *content(const char *rel)
{
	static char buf[4][4096];
	static int k;
	int fd = open(P(rel), O_RDONLY | O_CLOEXEC);
	ssize_t n;

	k = (k + 1) % 4;
	if (fd < 0)
		return "(missing)";
	n = read(fd, buf[k], sizeof(buf[k]) - 1);
	close(fd);
	buf[k][n < 0 ? 0 : n] = '\0';
	return buf[k];
}

static bool exists(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) == 0;
}

/* 'd', 'f', 'l', 'p', ... or 0 when missing */
static char type_of(const char *rel)
{
	struct stat st;

	if (lstat(P(rel), &st) < 0)
		return 0;
	switch (st.st_mode & S_IFMT) {
	case S_IFDIR:
		return 'd';
	case S_IFREG:
		return 'f';
	case S_IFLNK:
		return 'l';
	case S_IFIFO:
		return 'p';
	default:
		return '?';
	}
}

static unsigned int mode_of(const char *rel)
{
	struct stat st;

	return lstat(P(rel), &st) < 0 ? 0xffffffffU : (unsigned int)(st.st_mode & 07777);
}

/* --- hostile tars, made in memory -------------------------------------- */

struct tb {
	struct archive *a;
	int fd;
};

static void tb_open(struct tb *t)
{
	t->fd = memfd_create("tar", MFD_CLOEXEC);
	t->a = archive_write_new();
	if (t->fd < 0 || !t->a || archive_write_set_format_pax_restricted(t->a) != ARCHIVE_OK ||
	    archive_write_open_fd(t->a, t->fd) != ARCHIVE_OK)
		diag("setup: tar: %s", strerror(errno));
}

/* One entry: type AE_IF*; data for a file; link the target of a symbolic
 * link, or of a hard link when hard. */
static void tb_add(struct tb *t, const char *name, unsigned int type, unsigned int mode,
		   const char *data, const char *link, bool hard)
{
	struct archive_entry *en = archive_entry_new();
	size_t n = data ? strlen(data) : 0;

	archive_entry_set_pathname(en, name);
	archive_entry_set_filetype(en, type);
	archive_entry_set_perm(en, mode);
	archive_entry_set_mtime(en, MTIME, 0);
	archive_entry_set_size(en, (la_int64_t)n);
	if (type == AE_IFCHR)
		archive_entry_set_rdev(en, makedev(1, 3));
	if (link && hard)
		archive_entry_set_hardlink(en, link);
	else if (link)
		archive_entry_set_symlink(en, link);
	if (archive_write_header(t->a, en) < ARCHIVE_WARN ||
	    (n && archive_write_data(t->a, data, n) != (la_ssize_t)n))
		diag("setup: tar entry %s: %s", name, archive_error_string(t->a));
	archive_entry_free(en);
}

static void tb_file(struct tb *t, const char *name, const char *data, unsigned int mode)
{
	tb_add(t, name, AE_IFREG, mode, data, NULL, false);
}

static void tb_dir(struct tb *t, const char *name)
{
	tb_add(t, name, AE_IFDIR, 0755, NULL, NULL, false);
}

static void tb_link(struct tb *t, const char *name, const char *target)
{
	tb_add(t, name, AE_IFLNK, 0777, NULL, target, false);
}

/* The finished stream, read from its start; the caller closes it. */
static int tb_done(struct tb *t)
{
	archive_write_close(t->a);
	archive_write_free(t->a);
	lseek(t->fd, 0, SEEK_SET);
	return t->fd;
}

/* --- running an apply --------------------------------------------------- */

static json_t *empty_manifest(void)
{
	return json_pack("{s:i, s:[], s:{}}", "version", 1, "roots", "paths");
}

/* The manifest's paths: a listing that says the remote removed nothing. */
static char **all_paths(const json_t *manifest)
{
	char **v = calloc(1, sizeof(*v));
	const char *k;
	json_t *x;

	json_object_foreach(json_object_get(manifest, "paths"), k, x) {
		strv_push(&v, k);
	}
	return v;
}

/* Apply fd (closed here) with grant cur/w and the kept paths (relative
 * to cur, NULL-terminated); the report in *rep (the caller's). */
static int apply_w(const char *const *kept_rel, const json_t *manifest, char **remote, int fd,
		   json_t **rep)
{
	_cleanup_strv_ char **grants = NULL, **kept = calloc(1, sizeof(char *));
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *own = manifest ? NULL : empty_manifest();
	struct mirror_rules r = { 0 };
	int rc;

	strv_push(&grants, P("w"));
	for (size_t i = 0; kept_rel && kept_rel[i]; i++)
		strv_push(&kept, P(kept_rel[i]));
	r.grants = grants;
	r.kept = kept;
	rc = mirror_apply(&r, manifest ? manifest : own, remote, fd, rep, &e);
	if (rc < 0)
		diag("apply: %s", e ? e->msg : "(no error)");
	close(fd);
	return rc;
}

/* Is path (absolute) in the report's list, its why holding what? */
static bool listed(const json_t *rep, const char *list, const char *path, const char *what)
{
	size_t i;
	json_t *item;

	json_array_foreach(json_object_get(rep, list), i, item) {
		const char *p = json_string_value(json_object_get(item, "path"));
		const char *why = json_string_value(json_object_get(item, "why"));

		if (p && why && strcmp(p, path) == 0 && (!what || strstr(why, what)))
			return true;
	}
	return false;
}

static long long count(const json_t *rep, const char *key)
{
	return json_integer_value(json_object_get(rep, key));
}

static const char *const git_kept[] = { "w/.git/config", "w/.git/hooks", "w/.git/info", NULL };

/* --- the pack ----------------------------------------------------------- */

static int pack_to_fd(char *const *roots, char *const *skip, json_t **manifest)
{
	_cleanup_err_ struct err *e = NULL;
	int fd = memfd_create("pack", MFD_CLOEXEC);

	if (mirror_pack(roots, skip, fd, manifest, &e) < 0) {
		diag("pack: %s", e ? e->msg : "(no error)");
		close(fd);
		return -1;
	}
	lseek(fd, 0, SEEK_SET);
	return fd;
}

/* What a packed stream holds: "name type mode uid target" lines. */
static char *tar_listing(int fd)
{
	struct archive *a = archive_read_new();
	struct archive_entry *en;
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);

	archive_read_support_format_tar(a);
	if (archive_read_open_fd(a, fd, 10240) == ARCHIVE_OK) {
		for (int h; (h = archive_read_next_header(a, &en)) == ARCHIVE_OK || h == ARCHIVE_WARN;) {
			const char *name = archive_entry_pathname(en);
			const char *uname = archive_entry_uname(en);
			unsigned int t = archive_entry_filetype(en);
			size_t n = strlen(name);

			/* a directory's name ends in "/" */
			if (n > 1 && name[n - 1] == '/')
				n--;
			fprintf(f, "%.*s %c %o %lld %s %s\n", (int)n, name,
				t == AE_IFDIR ? 'd' : t == AE_IFLNK ? 'l' : t == AE_IFREG ? 'f' : '?',
				(unsigned int)archive_entry_perm(en),
				(long long)archive_entry_uid(en) + archive_entry_gid(en),
				uname && *uname ? uname : "-",
				archive_entry_symlink(en) ? archive_entry_symlink(en) : "-");
		}
	}
	archive_read_free(a);
	fclose(f);
	return out;
}

static bool has_line(const char *listing, const char *rel, const char *rest)
{
	char line[PATH_MAX + 64];

	snprintf(line, sizeof(line), "%s %s", N(rel), rest);
	for (const char *p = listing; p && *p;) {
		const char *nl = strchrnul(p, '\n');

		if ((size_t)(nl - p) >= strlen(line) && strncmp(p, line, strlen(line)) == 0 &&
		    (p[strlen(line)] == ' ' || p[strlen(line)] == '\n'))
			return true;
		p = *nl ? nl + 1 : nl;
	}
	return false;
}

/* Any member named rel or beneath it? */
static bool has_under(const char *listing, const char *rel)
{
	const char *n = N(rel);
	size_t len = strlen(n);

	for (const char *p = listing; p && *p;) {
		const char *nl = strchrnul(p, '\n');

		if (strncmp(p, n, len) == 0 && (p[len] == ' ' || p[len] == '/'))
			return true;
		p = *nl ? nl + 1 : nl;
	}
	return false;
}

static void make_pack_tree(void)
{
	mkd("w");
	mkf("w/a.txt", "alpha", 0644);
	mkd("w/sub");
	mkf("w/sub/b", "beta", 0600);
	mkf("w/suid", "#!/bin/sh\n", 04755);
	mkd("w/secret");
	mkf("w/secret/key", "do not copy", 0600);
	mkd("w/empty");
	must(mkfifo(P("w/fifo"), 0644), "mkfifo");
	mkd("out");
	mkf("out/file", "outside", 0644);
	mkl("w/link", P("out"));
}

static void test_pack(void)
{
	_cleanup_strv_ char **roots = NULL, **skip = NULL;
	_cleanup_json_ json_t *m = NULL, *m2 = NULL;
	_cleanup_free_ char *l = NULL, *l2 = NULL;
	const json_t *rec, *sk;
	struct stat st;
	int fd;

	fresh("pack");
	make_pack_tree();
	strv_push(&roots, P("w"));
	strv_push(&skip, P("w/secret"));
	fd = pack_to_fd(roots, skip, &m);
	ok(fd >= 0, "pack: a tree packs");
	l = fd >= 0 ? tar_listing(fd) : NULL;
	if (fd >= 0)
		close(fd);
	ok(l && has_line(l, "w", "d 755 0 -"), "pack: the root, named relative to /, uid/gid 0, no names");
	ok(l && strncmp(l, N("w "), strlen(N("w "))) == 0 && !strstr(l, "\n/"),
	   "pack: the root first (its parents not packed), no member with a leading slash");
	ok(l && has_line(l, "w/a.txt", "f 644 0 -") && has_line(l, "w/sub/b", "f 600 0 -"),
	   "pack: files with their modes");
	ok(l && has_line(l, "w/suid", "f 755"), "pack: a set-ID bit is not packed (0755, not 04755)");
	ok(l && has_line(l, "w/empty", "d 755"), "pack: an empty directory");
	ok(l && strstr(l, N("w/sub ")) && strstr(l, N("w/sub ")) < strstr(l, N("w/sub/b")),
	   "pack: a directory before what it holds");
	{
		char want[PATH_MAX + 16];

		snprintf(want, sizeof(want), "l 777 0 - %s", P("out"));
		ok(l && has_line(l, "w/link", want), "pack: a link packed as a link, its target as is");
	}
	ok(l && !has_under(l, "w/link/file") && !has_under(l, "out"),
	   "pack: nothing through the link to outside");
	is_str(content("w/link/file"), "outside", "... control: the link does lead to a file");
	ok(l && !has_under(l, "w/secret"), "pack: nothing at or beneath the skip path");
	ok(l && !has_under(l, "w/fifo"), "pack: the fifo is not packed");
	sk = json_object_get(m, "skipped");
	ok(json_array_size(sk) == 1 &&
	   strcmp(json_string_value(json_object_get(json_array_get(sk, 0), "path")), P("w/fifo")) == 0 &&
	   strcmp(json_string_value(json_object_get(json_array_get(sk, 0), "why")), "a fifo") == 0,
	   "pack: the manifest says the fifo was skipped");
	rec = json_object_get(json_object_get(m, "paths"), P("w/a.txt"));
	must(lstat(P("w/a.txt"), &st), "lstat");
	ok(rec && strcmp(json_string_value(json_array_get(rec, 0)), "f") == 0 &&
	   json_integer_value(json_array_get(rec, 1)) == 0644 &&
	   json_integer_value(json_array_get(rec, 2)) == 5 &&
	   json_integer_value(json_array_get(rec, 3)) ==
		   (long long)st.st_mtim.tv_sec * 1000000000LL + st.st_mtim.tv_nsec &&
	   json_integer_value(json_array_get(rec, 6)) == (long long)st.st_ino,
	   "pack: the manifest records a file's type, mode, size, mtime and inode");
	ok(json_object_get(json_object_get(m, "paths"), P("w/link")) &&
	   !json_object_get(json_object_get(m, "paths"), P("w/secret")) &&
	   !json_object_get(json_object_get(m, "paths"), P("w/fifo")),
	   "pack: the manifest holds the link, not the skipped paths");

	/* control: the same pack without the skip path copies it */
	fd = pack_to_fd(roots, NULL, &m2);
	l2 = fd >= 0 ? tar_listing(fd) : NULL;
	if (fd >= 0)
		close(fd);
	ok(l2 && has_line(l2, "w/secret/key", "f 600"), "... control: without the skip path it is packed");
}

static void test_pack_roots(void)
{
	_cleanup_strv_ char **roots = NULL, **bad = NULL, **rel = NULL, **skip = NULL;
	_cleanup_json_ json_t *m = NULL, *m2 = NULL;
	_cleanup_err_ struct err *e = NULL, *e2 = NULL;
	_cleanup_free_ char *l = NULL;
	json_t *none = NULL;
	int fd;

	fresh("roots");
	mkd("w");
	mkd("w/sub");
	mkf("w/sub/f", "x", 0644);
	mkf("w/caf\xc3\xa9", "utf-8", 0644);
	mkf("w/bad\xff", "not utf-8", 0644);
	strv_push(&roots, P("w/sub"));
	strv_push(&roots, P("w"));
	strv_push(&roots, P("missing"));
	fd = pack_to_fd(roots, NULL, &m);
	l = fd >= 0 ? tar_listing(fd) : NULL;
	if (fd >= 0)
		close(fd);
	ok(l && strstr(l, N("w/sub/f")) && !strstr(strstr(l, N("w/sub/f")) + 1, N("w/sub/f")),
	   "pack: a root beneath another is packed once");
	ok(listed(m, "skipped", P("missing"), "missing"), "pack: a missing root is listed as skipped");
	ok(json_array_size(json_object_get(m, "roots")) == 1,
	   "pack: the manifest's roots: the one packed");
	ok(l && has_line(l, "w/caf\xc3\xa9", "f 644"), "pack: a UTF-8 name is packed");
	ok(l && !has_under(l, "w/bad\xff"), "pack: a name that is not UTF-8 is not packed");
	{
		char shown[PATH_MAX + 8];

		snprintf(shown, sizeof(shown), "%s\\xff", P("w/bad"));
		ok(listed(m, "skipped", shown, "UTF-8"), "... and listed as skipped, shown escaped");
	}
	strv_push(&bad, "/");
	ok(mirror_pack(bad, NULL, 1, &none, &e) < 0 && e && e->reason == ERR_CONFIG && !none,
	   "pack: the root \"/\" is refused");
	strv_push(&rel, "w/../x");
	ok(mirror_pack(rel, NULL, 1, &none, &e2) < 0 && !none, "pack: a relative root is refused");
	strv_push(&skip, P("w"));
	fd = pack_to_fd(roots, skip, &m2);
	ok(fd >= 0 && json_object_size(json_object_get(m2, "paths")) == 0,
	   "pack: a root at or beneath a skip path packs nothing");
	if (fd >= 0)
		close(fd);
}

/* GNU tar reads the stream as the remote will. */
static void test_pack_gnu_tar(void)
{
	_cleanup_strv_ char **roots = NULL, **skip = NULL;
	_cleanup_json_ json_t *m = NULL;
	_cleanup_err_ struct err *e = NULL;
	char dest[PATH_MAX], at[PATH_MAX + 64], target[PATH_MAX];
	int p[2], status = -1;
	pid_t pid;
	ssize_t n;
	struct stat st;

	if (access("/bin/tar", X_OK) < 0 && access("/usr/bin/tar", X_OK) < 0) {
		tap_count++;
		printf("ok %d # skip no GNU tar\n", tap_count);
		return;
	}
	fresh("gnutar");
	make_pack_tree();
	snprintf(dest, sizeof(dest), "%s/dest", cur);
	must(mkdir(dest, 0755), "dest");
	strv_push(&roots, P("w"));
	strv_push(&skip, P("w/secret"));
	if (pipe2(p, O_CLOEXEC) < 0)
		return;
	pid = fork();
	if (pid == 0) {
		dup2(p[0], 0);
		execlp("tar", "tar", "-xpf", "-", "-C", dest, "--warning=no-unknown-keyword",
		       (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	ok(mirror_pack(roots, skip, p[1], &m, &e) == 0, "gnu tar: the pack streams to a pipe");
	close(p[1]);
	waitpid(pid, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0, "gnu tar: tar -xpf - extracts it");
	snprintf(at, sizeof(at), "%s%s", dest, P("w/a.txt"));
	{
		int fd = open(at, O_RDONLY | O_CLOEXEC);
		char buf[16] = "";

		n = fd >= 0 ? read(fd, buf, sizeof(buf) - 1) : -1;
		if (fd >= 0)
			close(fd);
		ok(n == 5 && memcmp(buf, "alpha", 5) == 0, "gnu tar: a file at its mirrored path");
	}
	snprintf(at, sizeof(at), "%s%s", dest, P("w/suid"));
	ok(stat(at, &st) == 0 && (st.st_mode & 07777) == 0755, "gnu tar: the set-ID file is 0755");
	snprintf(at, sizeof(at), "%s%s", dest, P("w/link"));
	n = readlink(at, target, sizeof(target) - 1);
	ok(n > 0 && (size_t)n == strlen(P("out")) && memcmp(target, P("out"), (size_t)n) == 0,
	   "gnu tar: the link, its target as it was");
	snprintf(at, sizeof(at), "%s%s", dest, P("w/secret"));
	ok(lstat(at, &st) < 0, "gnu tar: the skip path is not there");
}

/* Pack, change the host, apply the pack back: what it held is back. */
static void test_round_trip(void)
{
	_cleanup_strv_ char **roots = NULL, **remote = NULL;
	_cleanup_json_ json_t *m = NULL, *rep = NULL;
	struct stat before, after;
	int fd;

	fresh("trip");
	mkd("w");
	mkf("w/a.txt", "alpha", 0640);
	mkd("w/sub");
	mkf("w/sub/b", "beta", 0600);
	mkl("w/link", "sub/b");
	must(chmod(P("w/sub"), 0750), "chmod");
	must(lstat(P("w/a.txt"), &before), "lstat");
	strv_push(&roots, P("w"));
	fd = pack_to_fd(roots, NULL, &m);
	remote = all_paths(m);
	must(chmod(P("w/sub"), 0700), "chmod");
	mkf("w/a.txt", "changed on the host", 0644);
	must(unlink(P("w/sub/b")), "unlink");
	must(unlink(P("w/link")), "unlink");
	mkl("w/link", "elsewhere");
	mkf("w/extra", "new on the host", 0644);
	ok(fd >= 0 && apply_w(NULL, m, remote, fd, &rep) == 0, "round trip: the pack applies back");
	is_str(content("w/a.txt"), "alpha", "round trip: a changed file is as packed");
	ok(lstat(P("w/a.txt"), &after) == 0 && after.st_mtim.tv_sec == before.st_mtim.tv_sec &&
	   (after.st_mode & 07777) == 0640, "round trip: its mtime (to the second) and mode too");
	is_str(content("w/sub/b"), "beta", "round trip: a removed file is back");
	{
		char t[64] = "";

		ok(readlink(P("w/link"), t, sizeof(t) - 1) > 0 && strcmp(t, "sub/b") == 0,
		   "round trip: the link's target is back");
	}
	is_int(mode_of("w/sub"), 0750, "round trip: a directory's mode");
	is_str(content("w/extra"), "new on the host", "round trip: a path the pack never saw stays");
	ok(json_array_size(json_object_get(rep, "refused")) == 0 && count(rep, "removed") == 0,
	   "round trip: nothing refused, nothing removed");
}

/* --- the apply's refusals ----------------------------------------------- */

static void test_link_on_the_way(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct tb t;

	fresh("onlink");
	mkd("w");
	mkd("w/real");
	mkd("out");
	mkl("w/lnk", P("out"));
	tb_open(&t);
	tb_file(&t, N("w/lnk/x"), "through the link", 0644);
	tb_file(&t, N("w/real/x"), "control", 0644);
	tb_link(&t, N("w/l2"), P("out"));
	tb_file(&t, N("w/l2/y"), "through a link of its own", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "link: the stream applies");
	ok(!exists("out/x") && listed(rep, "refused", P("w/lnk/x"), "symbolic link"),
	   "link: a write through a host link is refused, its target untouched");
	is_str(content("w/real/x"), "control", "... control: the same write to a directory lands");
	ok(type_of("w/l2") == 'l', "link: a link the stream makes is written (as a link)");
	ok(!exists("out/y") && listed(rep, "refused", P("w/l2/y"), "symbolic link"),
	   "link: a write through the stream's own link is refused");
}

static void test_outside(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct tb t;

	fresh("outside");
	mkd("w");
	mkd("w2");
	mkd("out");
	tb_open(&t);
	tb_file(&t, N("out/x"), "outside", 0644);
	tb_file(&t, N("w2/x"), "a sibling sharing the prefix", 0644);
	tb_file(&t, N("w/x"), "inside", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "outside: the stream applies");
	ok(!exists("out/x") && listed(rep, "refused", P("out/x"), "outside"),
	   "outside: an entry outside the grant is refused");
	ok(!exists("w2/x") && listed(rep, "refused", P("w2/x"), "outside"),
	   "outside: a sibling sharing the grant's prefix is outside");
	is_str(content("w/x"), "inside", "... control: the entry inside lands");
}

static void test_names(void)
{
	_cleanup_json_ json_t *rep = NULL;
	char dotdot[PATH_MAX], abs1[PATH_MAX], abs2[PATH_MAX], abs3[PATH_MAX], dot[PATH_MAX];
	struct tb t;

	fresh("names");
	mkd("w");
	mkd("out");
	snprintf(dotdot, sizeof(dotdot), "%s/../out/x", N("w"));
	snprintf(abs1, sizeof(abs1), "%s", P("out/y"));	  /* one leading "/" */
	snprintf(abs2, sizeof(abs2), "/%s", P("w/z"));	  /* two */
	snprintf(abs3, sizeof(abs3), "%s", P("w/abs"));	  /* one, inside */
	snprintf(dot, sizeof(dot), "./%s/./d", N("w"));
	tb_open(&t);
	tb_file(&t, dotdot, "escape", 0644);
	tb_file(&t, abs1, "absolute escape", 0644);
	tb_file(&t, abs2, "double slash", 0644);
	tb_file(&t, abs3, "absolute inside", 0644);
	tb_file(&t, dot, "dots", 0644);
	tb_file(&t, "\x1b[31mred", "a name with an escape", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "names: the stream applies");
	ok(!exists("out/x") && listed(rep, "refused", dotdot, "\"..\""),
	   "names: a \"..\" element is refused");
	ok(!exists("out/y") && listed(rep, "refused", P("out/y"), "outside"),
	   "names: an absolute name outside the grant is refused");
	ok(!exists("w/z") && listed(rep, "refused", abs2, "empty element"),
	   "names: a name with an empty element (two leading slashes) is refused");
	is_str(content("w/abs"), "absolute inside", "... control: an absolute name inside lands");
	is_str(content("w/d"), "dots", "... control: \".\" elements are dropped");
	ok(listed(rep, "refused", "/\\x1b[31mred", NULL),
	   "names: a refused name is shown with its control bytes escaped");
}

static void test_kept(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct tb t;

	fresh("kept");
	mkd("w");
	mkd("w/.git");
	mkf("w/.git/config", "host config", 0644);
	mkd("w/.git/hooks");
	tb_open(&t);
	tb_file(&t, N("w/.git/config"), "[core]\n\tfsmonitor = evil\n", 0644);
	tb_file(&t, N("w/.git/hooks/pre-commit"), "#!/bin/sh\nevil\n", 0755);
	tb_file(&t, N("w/.git/hooks"), "a file where the hooks were", 0644);
	tb_file(&t, N("w/.git/description"), "control", 0644);
	ok(apply_w(git_kept, NULL, NULL, tb_done(&t), &rep) == 0, "kept: the stream applies");
	ok(listed(rep, "refused", P("w/.git/config"), "kept"), "kept: .git/config is refused");
	is_str(content("w/.git/config"), "host config", "kept: ... and stays as it was");
	ok(!exists("w/.git/hooks/pre-commit") &&
	   listed(rep, "refused", P("w/.git/hooks/pre-commit"), "kept"),
	   "kept: a file beneath .git/hooks is refused");
	ok(type_of("w/.git/hooks") == 'd', "kept: the kept directory is not replaced by a file");
	is_str(content("w/.git/description"), "control", "... control: beside them a file lands");
}

static void test_types(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct stat st;
	struct tb t;

	fresh("types");
	mkd("w");
	mkd("out");
	mkf("out/secret", "secret", 0600);
	tb_open(&t);
	tb_add(&t, N("w/fifo"), AE_IFIFO, 0644, NULL, NULL, false);
	tb_add(&t, N("w/null"), AE_IFCHR, 0666, NULL, NULL, false);
	tb_add(&t, N("w/hard"), AE_IFREG, 0644, NULL, N("out/secret"), true);
	tb_file(&t, N("w/plain"), "control", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "types: the stream applies");
	ok(!exists("w/fifo") && listed(rep, "refused", P("w/fifo"), "fifo"),
	   "types: a FIFO entry is refused");
	ok(!exists("w/null") && listed(rep, "refused", P("w/null"), "character device"),
	   "types: a character device entry is refused");
	ok(!exists("w/hard") && listed(rep, "refused", P("w/hard"), "hard link") &&
	   stat(P("out/secret"), &st) == 0 && st.st_nlink == 1,
	   "types: a hard link entry is refused, its target not linked");
	is_str(content("w/plain"), "control", "... control: a regular file entry lands");
}

/* A fifo on the host (which the pack skips) is never replaced by what
 * the run put at its path, file or directory. */
static void test_host_special(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct tb t;

	fresh("hostspecial");
	mkd("w");
	must(mkfifo(P("w/pipe"), 0600), "mkfifo");
	must(mkfifo(P("w/pipe2"), 0600), "mkfifo");
	mkf("w/was", "host", 0644);
	tb_open(&t);
	tb_file(&t, N("w/pipe"), "from the run", 0644);
	tb_add(&t, N("w/pipe2"), AE_IFDIR, 0755, NULL, NULL, false);
	tb_file(&t, N("w/was"), "from the run", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "host fifo: the stream applies");
	ok(type_of("w/pipe") == 'p' && listed(rep, "refused", P("w/pipe"), "fifo, socket or device"),
	   "host fifo: a file at its path is refused, the fifo stays");
	ok(type_of("w/pipe2") == 'p' && listed(rep, "refused", P("w/pipe2"), "fifo, socket or device"),
	   "host fifo: a directory at its path is refused, the fifo stays");
	is_str(content("w/was"), "from the run", "... control: a host file at its path is replaced");
}

static void test_setid(void)
{
	_cleanup_json_ json_t *rep = NULL;
	struct tb t;

	fresh("setid");
	mkd("w");
	tb_open(&t);
	tb_file(&t, N("w/suid"), "#!/bin/sh\n", 04755);
	tb_file(&t, N("w/sgid"), "#!/bin/sh\n", 02755);
	tb_add(&t, N("w/sticky"), AE_IFDIR, 01777, NULL, NULL, false);
	tb_file(&t, N("w/plain"), "control", 0640);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "set-ID: the stream applies");
	is_int(mode_of("w/suid"), 0755, "set-ID: a 04755 file arrives 0755");
	is_int(mode_of("w/sgid"), 0755, "set-ID: a 02755 file arrives 0755");
	is_int(mode_of("w/sticky"), 0777, "set-ID: a 01777 directory arrives 0777");
	is_int(mode_of("w/plain"), 0640, "... control: a file's permission bits arrive as sent");
}

/* The host's repository, and what a run that replaced .git sends. */
static void make_git(void)
{
	mkd("w");
	mkf("w/file", "work", 0644);
	mkd("w/.git");
	mkf("w/.git/config", "host config", 0644);
	mkf("w/.git/HEAD", "ref: refs/heads/main\n", 0644);
	mkd("w/.git/hooks");
	mkd("w/.git/objects");
	mkf("w/.git/objects/o1", "object", 0444);
}

static int git_link_stream(void)
{
	struct tb t;

	tb_open(&t);
	tb_dir(&t, N("w"));
	tb_dir(&t, N("w/evil"));
	tb_file(&t, N("w/evil/config"), "[core]\n\thooksPath = /tmp/evil\n", 0644);
	tb_link(&t, N("w/.git"), "evil");
	return tb_done(&t);
}

/* the remote's honest listing: find does not go through .git, a link */
static char **git_link_listing(void)
{
	char **v = NULL;

	strv_push(&v, P("w"));
	strv_push(&v, P("w/file"));
	strv_push(&v, P("w/evil"));
	strv_push(&v, P("w/evil/config"));
	strv_push(&v, P("w/.git"));
	return v;
}

static void test_git_replaced(void)
{
	_cleanup_strv_ char **roots = NULL, **remote = NULL, **roots2 = NULL, **remote2 = NULL;
	_cleanup_json_ json_t *m = NULL, *rep = NULL, *m2 = NULL, *rep2 = NULL, *rep3 = NULL,
			      *rep4 = NULL;
	struct tb t;

	fresh("gitlink");
	make_git();
	strv_push(&roots, P("w"));
	close(pack_to_fd(roots, NULL, &m));
	remote = git_link_listing();
	ok(apply_w(git_kept, m, remote, git_link_stream(), &rep) == 0, "git: the stream applies");
	ok(type_of("w/.git") == 'd' && listed(rep, "refused", P("w/.git"), "pinned"),
	   "git: .git replaced by a link to the run's own directory is refused");
	is_str(content("w/.git/config"), "host config", "git: the host's .git/config is as it was");
	is_str(content("w/.git/HEAD"), "ref: refs/heads/main\n", "git: the host's HEAD is as it was");
	ok(exists("w/.git/objects/o1") && listed(rep, "left", P("w/.git/HEAD"), "did not come back"),
	   "git: nothing beneath .git goes because the link's listing lacks it");

	/* control: the same stream with nothing kept replaces .git */
	fresh("gitlink-control");
	make_git();
	strv_push(&roots2, P("w"));
	close(pack_to_fd(roots2, NULL, &m2));
	remote2 = git_link_listing();
	ok(apply_w(NULL, m2, remote2, git_link_stream(), &rep2) == 0 && type_of("w/.git") == 'l' &&
	   strstr(content("w/.git/config"), "hooksPath"),
	   "... control: without kept paths the stream makes .git the run's link");

	/* .git replaced by a file */
	fresh("gitfile");
	make_git();
	mkd("w/sub");
	mkd("w/sub/.git");
	mkf("w/sub/.git/config", "nested config", 0644);
	{
		static const char *const kept2[] = { "w/.git/config", "w/sub/.git/config", NULL };

		tb_open(&t);
		tb_file(&t, N("w/.git"), "gitdir: /tmp/evil\n", 0644);
		tb_file(&t, N("w/sub/.git"), "gitdir: /tmp/evil\n", 0644);
		ok(apply_w(kept2, NULL, NULL, tb_done(&t), &rep3) == 0, "git: a file stream applies");
	}
	ok(type_of("w/.git") == 'd' && listed(rep3, "refused", P("w/.git"), "pinned") &&
	   !strcmp(content("w/.git/config"), "host config"),
	   "git: .git replaced by a file is refused");
	ok(type_of("w/sub/.git") == 'd' && listed(rep3, "refused", P("w/sub/.git"), "pinned"),
	   "git: a nested .git replaced by a file is refused");
	tb_open(&t);
	tb_file(&t, N("w/.git"), "gitdir: /tmp/evil\n", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep4) == 0 && type_of("w/.git") == 'f',
	   "... control: without kept paths the file replaces .git");
}

static void test_removals(void)
{
	_cleanup_strv_ char **roots = NULL, **remote = NULL, **roots2 = NULL, **remote2 = NULL;
	_cleanup_json_ json_t *m = NULL, *rep = NULL, *m2 = NULL, *rep2 = NULL;
	static const char *const keep_only[] = { "w", "w/keep.txt", "w/.git", "w/.git/HEAD",
						 "w/.git/hooks", "w/link", NULL };
	struct tb t;

	fresh("removals");
	make_git();
	mkf("w/keep.txt", "stays", 0644);
	mkf("w/gone.txt", "the run removed it", 0644);
	mkf("w/changed.txt", "the host changed it", 0644);
	mkd("w/d");
	mkd("w/d/e");
	mkf("w/d/e/x", "a whole tree the run removed", 0644);
	mkl("w/link", "file");
	strv_push(&roots, P("w"));
	close(pack_to_fd(roots, NULL, &m));
	mkf("w/changed.txt", "the host changed it, again", 0644);
	/* the remote lists what it has; the tar brings its directories */
	for (size_t i = 0; keep_only[i]; i++)
		strv_push(&remote, P(keep_only[i]));
	tb_open(&t);
	tb_dir(&t, N("w"));
	tb_dir(&t, N("w/.git"));
	tb_dir(&t, N("w/.git/hooks"));
	ok(apply_w(git_kept, m, remote, tb_done(&t), &rep) == 0, "removals: the copy back applies");
	ok(!exists("w/gone.txt"), "removals: an unchanged file the remote removed is removed");
	ok(!exists("w/d"), "removals: a whole tree the remote removed is removed, deepest first");
	ok(!exists("w/file") && !exists("w/.git/objects/o1"),
	   "removals: ... beneath a pinned directory that came back too");
	ok(exists("w/changed.txt") && listed(rep, "left", P("w/changed.txt"), "changed on the host"),
	   "removals: a file changed on the host since the copy stays");
	ok(exists("w/.git/config") && listed(rep, "refused", P("w/.git/config"), "kept"),
	   "removals: the remote's removal of a kept path is refused");
	is_str(content("w/keep.txt"), "stays", "removals: a path the remote still has stays");
	ok(type_of("w/link") == 'l', "removals: so does a link it still has");

	/* rm -rf .git on the remote: .git pinned, its content stays */
	fresh("removals-pinned");
	make_git();
	strv_push(&roots2, P("w"));
	close(pack_to_fd(roots2, NULL, &m2));
	strv_push(&remote2, P("w"));
	strv_push(&remote2, P("w/file"));
	tb_open(&t);
	tb_dir(&t, N("w"));
	ok(apply_w(git_kept, m2, remote2, tb_done(&t), &rep2) == 0 && type_of("w/.git") == 'd' &&
	   listed(rep2, "refused", P("w/.git"), "pinned") &&
	   !strcmp(content("w/.git/HEAD"), "ref: refs/heads/main\n") && exists("w/.git/objects/o1"),
	   "removals: the remote's removal of .git is refused, and what it holds stays");
	is_str(content("w/file"), "work", "... control: beside it, the listed file stays as it was");
}

/* A directory the host made anew since the copy is not the one the
 * remote removed; the one the host left alone is. */
static void test_removal_of_remade_dir(void)
{
	_cleanup_strv_ char **roots = NULL, **remote = NULL;
	_cleanup_json_ json_t *m = NULL, *rep = NULL;
	struct tb t;

	fresh("remade");
	mkd("w");
	mkd("w/remade");
	mkd("w/same");
	strv_push(&roots, P("w"));
	close(pack_to_fd(roots, NULL, &m));
	must(rmdir(P("w/remade")), "rmdir");
	mkd("w/remade");
	strv_push(&remote, P("w"));
	tb_open(&t);
	tb_dir(&t, N("w"));
	ok(apply_w(NULL, m, remote, tb_done(&t), &rep) == 0, "remade: the copy back applies");
	ok(type_of("w/remade") == 'd' && listed(rep, "left", P("w/remade"), "changed on the host"),
	   "remade: a directory made anew on the host since the copy stays");
	ok(!exists("w/same"), "... control: the unchanged one the remote removed is removed");
}

/* A worktree's .git is a file: pinned, it stays what it is. */
static void test_pinned_file(void)
{
	_cleanup_json_ json_t *rep = NULL, *rep2 = NULL;
	static const char *const kept[] = { "w/.git/config", NULL };
	struct tb t;

	fresh("worktree");
	mkd("w");
	mkf("w/.git", "gitdir: /elsewhere/.git/worktrees/w\n", 0644);
	tb_open(&t);
	tb_dir(&t, N("w/.git"));
	tb_file(&t, N("w/.git/HEAD"), "ref: refs/heads/evil\n", 0644);
	ok(apply_w(kept, NULL, NULL, tb_done(&t), &rep) == 0, "worktree: the stream applies");
	ok(type_of("w/.git") == 'f' && listed(rep, "refused", P("w/.git"), "pinned") &&
	   !strcmp(content("w/.git"), "gitdir: /elsewhere/.git/worktrees/w\n"),
	   "worktree: a pinned .git file is not replaced by the remote's directory");
	ok(listed(rep, "refused", P("w/.git/HEAD"), "non-directory"),
	   "worktree: nothing is written beneath it");
	tb_open(&t);
	tb_dir(&t, N("w/.git"));
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep2) == 0 && type_of("w/.git") == 'd',
	   "... control: without kept paths the directory replaces the file");
}

static void test_link_becomes_dir(void)
{
	_cleanup_json_ json_t *rep = NULL, *rep2 = NULL;
	struct tb t;

	fresh("linkdir");
	mkd("w");
	mkd("out");
	mkf("out/f", "outside", 0644);
	mkl("w/d", P("out"));
	is_str(content("w/d/f"), "outside", "link to dir: control: the host's link leads outside");
	tb_open(&t);
	tb_dir(&t, N("w/d"));
	tb_file(&t, N("w/d/f"), "the run's", 0644);
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep) == 0, "link to dir: the stream applies");
	ok(type_of("w/d") == 'd', "link to dir: the link is replaced by the remote's directory");
	is_str(content("w/d/f"), "the run's", "link to dir: the file lands in it");
	is_str(content("out/f"), "outside", "link to dir: the link's old target is untouched");

	/* beneath a file, and a grant's root */
	mkf("w/file", "a file", 0644);
	tb_open(&t);
	tb_file(&t, N("w/file/x"), "beneath a file", 0644);
	tb_link(&t, N("w"), P("out"));
	tb_dir(&t, N("w"));
	ok(apply_w(NULL, NULL, NULL, tb_done(&t), &rep2) == 0 &&
	   listed(rep2, "refused", P("w/file/x"), "non-directory") && type_of("w/file") == 'f',
	   "beneath a file: refused, the file stays");
	ok(type_of("w") == 'd' && listed(rep2, "refused", P("w"), "grant's root") &&
	   !listed(rep2, "refused", P("w"), "outside") &&
	   json_array_size(json_object_get(rep2, "refused")) == 2,
	   "the grant's root: a link refused, a directory entry taken");
}

static void test_bounds(void)
{
	_cleanup_strv_ char **grants = NULL;
	_cleanup_json_ json_t *m = empty_manifest();
	struct mirror_rules r = { 0 };
	char big[101]; /* 100 bytes */
	struct {
		const char *name;
		const char *data;
		unsigned long long max_bytes;
		size_t max_entries;
		int entries;
		int want;
		bool cut, garbage;
	} cases[] = {
		{ "more bytes than allowed: fails", big, 99, 0, 1, -1, false, false },
		{ "... control: as many as allowed", big, 100, 0, 1, 0, false, false },
		{ "more entries than allowed: fails", "x", 0, 2, 3, -1, false, false },
		{ "... control: as many as allowed", "x", 0, 3, 3, 0, false, false },
		{ "a stream cut in a file's data: fails", big, 0, 0, 1, -1, true, false },
		{ "garbage: fails", NULL, 0, 0, 0, -1, false, true },
		{ "an empty stream: nothing to do", NULL, 0, 0, 0, 0, false, false },
	};

	fresh("bounds");
	mkd("w");
	memset(big, 'b', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	strv_push(&grants, P("w"));
	r.grants = grants;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		_cleanup_err_ struct err *e = NULL;
		_cleanup_json_ json_t *rep = NULL;
		int fd;

		if (cases[i].garbage) {
			fd = memfd_create("garbage", MFD_CLOEXEC);
			must(write(fd, "this is not a tar stream at all", 31), "write");
			for (int k = 0; k < 40; k++)
				must(write(fd, "..........................", 26), "write");
			lseek(fd, 0, SEEK_SET);
		} else if (cases[i].entries == 0) {
			fd = memfd_create("empty", MFD_CLOEXEC);
		} else {
			struct tb t;

			tb_open(&t);
			for (int k = 0; k < cases[i].entries; k++) {
				char name[PATH_MAX];

				snprintf(name, sizeof(name), "%s/f%zu-%d", N("w"), i, k);
				tb_file(&t, name, cases[i].data, 0644);
			}
			fd = tb_done(&t);
			if (cases[i].cut)
				must(ftruncate(fd, 512 + 50), "truncate");
		}
		r.max_bytes = cases[i].max_bytes;
		r.max_entries = cases[i].max_entries;
		is_int(mirror_apply(&r, m, NULL, fd, &rep, &e), cases[i].want, "bounds: %s",
		       cases[i].name);
		if (cases[i].want < 0)
			ok(e && !rep, "bounds: ... with an error and no report");
		close(fd);
	}
}

/* --- the listing helpers ------------------------------------------------ */

static void test_helpers(void)
{
	_cleanup_strv_ char **v = NULL, **v2 = NULL, **none = NULL, **unknown = NULL,
			     **fetch = NULL, **roots = NULL, **grants = NULL, **kept = NULL,
			     **remote = NULL;
	_cleanup_err_ struct err *e1 = NULL, *e2 = NULL, *e3 = NULL, *e4 = NULL, *e5 = NULL;
	_cleanup_json_ json_t *m = NULL;
	struct mirror_rules r = { 0 };
	long long stamp = 2000000000LL * 1000000000LL;

	ok(mirror_paths_split("/a\0/b c\0", 8, &v, &e1) == 0 && strv_len(v) == 2 &&
	   strcmp(v[1], "/b c") == 0, "split: NUL-separated paths, a trailing NUL");
	ok(mirror_paths_split("/a\0/b", 5, &v2, &e1) == 0 && strv_len(v2) == 2,
	   "split: ... without the trailing NUL");
	ok(mirror_paths_split("", 0, &none, &e1) == 0 && none && !none[0], "split: nothing");
	ok(mirror_paths_split("/a\0b\0", 5, &unknown, &e2) < 0 && e2->reason == ERR_DENIED &&
	   !unknown, "split: a relative path refuses the listing");
	ok(mirror_paths_split("/a/../b", 7, &unknown, &e3) < 0 && !unknown,
	   "split: a \"..\" refuses the listing");
	ok(mirror_paths_split("/a\0\0/b", 6, &unknown, &e4) < 0 && !unknown,
	   "split: an empty path refuses the listing");

	fresh("helpers");
	mkd("w");
	mkf("w/old", "old", 0644);
	mkf("w/kept", "kept", 0644);
	mkd("w/d");
	strv_push(&roots, P("w"));
	close(pack_to_fd(roots, NULL, &m));
	strv_push(&remote, P("w/old"));
	strv_push(&remote, P("w/new"));
	strv_push(&remote, P("w/d"));
	ok(mirror_unknown_paths(m, remote, &unknown, &e5) == 0 && strv_len(unknown) == 1 &&
	   strcmp(unknown[0], P("w/new")) == 0, "unknown paths: those the manifest does not hold");
	strv_push(&grants, P("w"));
	strv_push(&kept, P("w/kept"));
	r.grants = grants;
	r.kept = kept;
	{
		struct mirror_remote_entry ent[] = {
			{ P("w"), 'd', 0, 0 },			/* the grant's root: never */
			{ P("w/old"), 'f', 0, 0 },		/* unchanged */
			{ P("w/d"), 'd', 0, 0 },		/* a directory: always */
			{ P("w/new"), 'f', 0, 0 },		/* not in the manifest */
			{ P("w/kept"), 'f', stamp + 1, stamp + 1 }, /* kept: never */
			{ P("w2/x"), 'f', stamp + 1, stamp + 1 },	/* outside */
		};
		struct mirror_remote_entry ent2[] = {
			{ P("w/old"), 'f', stamp + 1, 0 }, /* mtime later */
		};
		struct mirror_remote_entry ent3[] = {
			{ P("w/old"), 'f', 0, stamp + 1 }, /* ctime later (a rename, cp -p) */
		};
		struct mirror_remote_entry ent4[] = {
			{ P("w/old"), 'l', 0, 0 }, /* now a link */
		};
		struct mirror_remote_entry ent5[] = {
			{ P("w/kept"), 'f', 0, 0 }, /* kept, unchanged */
		};
		_cleanup_strv_ char **f2 = NULL, **f3 = NULL, **f4 = NULL, **f5 = NULL,
				    **dropped = NULL, **d5 = NULL;
		_cleanup_err_ struct err *e6 = NULL;

		ok(mirror_fetch_choice(&r, m, ent, 6, stamp, &fetch, &dropped, &e6) == 0 &&
		   strv_len(fetch) == 2 && strcmp(fetch[0], P("w/d")) == 0 &&
		   strcmp(fetch[1], P("w/new")) == 0,
		   "fetch: directories and new paths; not unchanged, kept or outside ones");
		ok(strv_len(dropped) == 1 && strcmp(dropped[0], P("w/kept")) == 0,
		   "... the kept path the run changed: dropped, to be said");
		ok(mirror_fetch_choice(&r, m, ent5, 1, stamp, &f5, &d5, &e6) == 0 && strv_len(f5) == 0 &&
		   strv_len(d5) == 0,
		   "control: a kept path unchanged is neither fetched nor dropped");
		ok(mirror_fetch_choice(&r, m, ent2, 1, stamp, &f2, NULL, &e6) == 0 && strv_len(f2) == 1,
		   "fetch: a later mtime");
		ok(mirror_fetch_choice(&r, m, ent3, 1, stamp, &f3, NULL, &e6) == 0 && strv_len(f3) == 1,
		   "fetch: a later ctime");
		ok(mirror_fetch_choice(&r, m, ent4, 1, stamp, &f4, NULL, &e6) == 0 && strv_len(f4) == 1,
		   "fetch: another type");
	}
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	if (flag == FTW_DP)
		chmod(path, 0700);
	remove(path);
	return 0;
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-mirror-XXXXXX", real[PATH_MAX];

	if (!mkdtemp(tmpl) || !realpath(tmpl, real) || strlen(real) >= sizeof(base))
		tap_skip_all("no temporary directory");
	memcpy(base, real, strlen(real) + 1);
	umask(022);
	test_pack();
	test_pack_roots();
	test_pack_gnu_tar();
	test_round_trip();
	test_link_on_the_way();
	test_outside();
	test_names();
	test_kept();
	test_types();
	test_host_special();
	test_setid();
	test_git_replaced();
	test_removals();
	test_removal_of_remade_dir();
	test_pinned_file();
	test_link_becomes_dir();
	test_bounds();
	test_helpers();
	if (nftw(base, rm_one, 16, FTW_DEPTH | FTW_PHYS) < 0)
		diag("could not remove %s", base);
	return done_testing();
}
