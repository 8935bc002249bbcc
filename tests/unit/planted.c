/* planted.c: the workspace's git metadata held read-only, and after a
 * run the moves, the walk and the report, each against a workspace laid
 * out on disk (no git needed) and each finding beside its control: the
 * same layout made before the launch, or harmless, is named nothing. */
#include "guard/planted.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static char lab[256], ws[300], rec[300];

static void at(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", lab, rel);
}

/* mkdir -p of a path beneath the lab. */
static void mk(const char *rel)
{
	char p[1024];
	at(p, sizeof(p), rel);
	for (char *c = p + strlen(lab) + 1; *c; c++) {
		if (*c != '/')
			continue;
		*c = '\0';
		mkdir(p, 0755);
		*c = '/';
	}
	if (mkdir(p, 0755) < 0 && errno != EEXIST)
		diag("mkdir %s: %s", p, strerror(errno));
}

static void put(const char *rel, const char *text, mode_t mode)
{
	char p[1024], d[1024];
	char *slash;
	FILE *f;

	snprintf(d, sizeof(d), "%s", rel);
	slash = strrchr(d, '/');
	if (slash) {
		*slash = '\0';
		mk(d);
	}
	at(p, sizeof(p), rel);
	unlink(p);
	f = fopen(p, "w");
	if (!f) {
		diag("write %s: %s", p, strerror(errno));
		return;
	}
	fputs(text, f);
	fclose(f);
	chmod(p, mode);
}

static void sym(const char *target, const char *rel)
{
	char p[1024];
	at(p, sizeof(p), rel);
	unlink(p);
	if (symlink(target, p) < 0)
		diag("symlink %s: %s", p, strerror(errno));
}

static void move(const char *from, const char *to)
{
	char a[1024], b[1024];
	at(a, sizeof(a), from);
	at(b, sizeof(b), to);
	if (rename(a, b) < 0)
		diag("rename %s: %s", a, strerror(errno));
}

static bool exists(const char *rel)
{
	char p[1024];
	struct stat st;
	at(p, sizeof(p), rel);
	return lstat(p, &st) == 0;
}

/* A repository's git dir as git needs it to be one. */
static void gitdir(const char *rel, const char *config)
{
	char p[1024];
	snprintf(p, sizeof(p), "%s/HEAD", rel);
	put(p, "ref: refs/heads/main\n", 0644);
	snprintf(p, sizeof(p), "%s/objects", rel);
	mk(p);
	snprintf(p, sizeof(p), "%s/refs", rel);
	mk(p);
	snprintf(p, sizeof(p), "%s/config", rel);
	put(p, config, 0644);
}

/* What was made so far is older than anything made next, as the
 * workspace's filesystem stamps change times: wait for its clock to
 * move past the last change (a premise, not a timing). */
static void settle(void)
{
	struct timespec first = { 0 };

	for (int i = 0; i < 2000; i++) {
		int fd = open(ws, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0) {
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
		if (i == 0)
			first = st.st_ctim;
		else if (st.st_ctim.tv_sec != first.tv_sec || st.st_ctim.tv_nsec != first.tv_nsec)
			return;
		usleep(1000);
	}
	usleep(20000);
}

static void reset_lab(void)
{
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s/ws' '%s/rec' '%s/out'", lab, lab, lab);
	if (system(cmd) != 0)
		diag("rm failed");
	mk("ws");
	mk("rec");
	mk("out");
	put("rec/plan.json", "{}", 0444);
}

/* The lines cordon prints after a run (one string), and the count. */
static char report[16384];
static int findings;

static struct planted_state *before(void)
{
	struct planted_state *st = NULL;
	struct err *e = NULL;

	if (planted_before(ws, &st, &e) < 0) {
		diag("planted_before: %s", e ? e->msg : "?");
		err_free(e);
	}
	return st;
}

static void after(struct planted_state *st, const char *record)
{
	struct err *e = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	findings = st ? planted_after(st, record, f, &e) : -1;
	fclose(f);
	snprintf(report, sizeof(report), "%s", buf ? buf : "");
	free(buf);
	if (e) {
		diag("planted_after: %s", e->msg);
		err_free(e);
	}
	planted_state_free(st);
}

/* On a failed check, what was said. */
#define okr(cond, ...)                                                         \
	do {                                                                   \
		if (!ok(cond, __VA_ARGS__))                                    \
			diag("said: %s", report);                              \
	} while (0)

static bool said(const char *line)
{
	char want[1024];
	snprintf(want, sizeof(want), "cordon: planted: %s\n", line);
	return strstr(report, want) != NULL;
}

/* planted_git_readonly refuses (sandbox_denied) with a message holding
 * want. */
static bool ro_refused(const char *want)
{
	char **ro = NULL;
	struct err *e = NULL;
	bool r = planted_git_readonly(ws, &ro, &e) < 0 && e && e->reason == ERR_DENIED &&
		 strstr(e->msg, want);

	if (!r)
		diag("%s", e ? e->msg : "not refused");
	strv_free(ro);
	err_free(e);
	return r;
}

static void readonly(void)
{
	_cleanup_strv_ char **ro = NULL;
	struct err *e = NULL;
	char p[1024];
	int r;

	reset_lab();
	ok(planted_git_readonly(ws, &ro, &e) == 0 && !ro, "no .git: nothing to hold");
	put("ws/.git", "gitdir: elsewhere\n", 0644);
	r = planted_git_readonly(ws, &ro, &e);
	snprintf(p, sizeof(p), "%s/.git", ws);
	ok(r == 0 && strv_len(ro) == 1 && strcmp(ro[0], p) == 0, "a .git file is held whole");
	strv_free(ro);
	ro = NULL;

	reset_lab();
	gitdir("ws/.git", "");
	mk("ws/.git/hooks");
	mk("ws/.git/info");
	put("ws/.git/config.worktree", "", 0644);
	mk("ws/.git/worktrees/w");
	gitdir("ws/.git/modules/a/b", "");
	mk("ws/.git/modules/a/b/hooks");
	gitdir("ws/.git/modules/c", "");
	gitdir("ws/.git/modules/c/modules/d", "");
	r = planted_git_readonly(ws, &ro, &e);
	static const char *const want[] = {
		".git/config", ".git/hooks", ".git/info", ".git/config.worktree", ".git/worktrees",
		".git/modules/a/b/config", ".git/modules/a/b/hooks", ".git/modules/c/config",
		".git/modules/c/modules/d/config",
	};
	bool all = r == 0;
	for (size_t i = 0; i < sizeof(want) / sizeof(*want); i++) {
		snprintf(p, sizeof(p), "%s/%s", ws, want[i]);
		if (!strv_contains(ro, p)) {
			diag("missing %s", want[i]);
			all = false;
		}
	}
	ok(all, "config, hooks, info, config.worktree, worktrees, and each submodule's, nested ones too");
	snprintf(p, sizeof(p), "%s/.git/modules/a", ws);
	ok(!strv_contains(ro, p), "a directory on the way to a submodule's repository is not held");
	snprintf(p, sizeof(p), "%s/.git/commondir", ws);
	ok(!strv_contains(ro, p), "what does not exist is not held (it is watched instead)");
	strv_free(ro);
	ro = NULL;

	sym("../../elsewhere", "ws/.git/modules/e");
	r = planted_git_readonly(ws, &ro, &e);
	ok(r < 0 && e && strstr(e->msg, "modules/e` is a symbolic link"), "a link in .git/modules is refused");
	err_free(e);
	e = NULL;
	at(p, sizeof(p), "ws/.git/modules/e");
	unlink(p);
	sym("/etc/passwd", "ws/.git/config.worktree");
	r = planted_git_readonly(ws, &ro, &e);
	ok(r < 0 && e && strstr(e->msg, "config.worktree` is a symbolic link"),
	   "a link at a held name is refused");
	err_free(e);
	e = NULL;
	put("ws/.git/config.worktree", "", 0644);
	ok(planted_git_readonly(ws, &ro, &e) == 0, "control: the file again is held");
	strv_free(ro);
	ro = NULL;

	for (int i = 0; i <= PLANTED_MODULES_MAX; i++) {
		snprintf(p, sizeof(p), "ws/.git/modules/m%d", i);
		gitdir(p, "");
	}
	r = planted_git_readonly(ws, &ro, &e);
	snprintf(p, sizeof(p), "%s/.git/modules", ws);
	ok(r == 0 && strv_contains(ro, p), "more submodules than %d: .git/modules whole", PLANTED_MODULES_MAX);
	strv_free(ro);
	ro = NULL;

	/* The files a config includes in the workspace, which git reads as
	 * part of it (a work tree's shared .gitconfig): held with it, their
	 * own includes too; the home's and other places' left to the policy. */
	reset_lab();
	gitdir("ws/.git", "[include]\n\tpath = ../.gitconfig\n"
			  "[includeIf \"gitdir:~/w/\"]\n\tpath = ../conf/b.inc\n"
			  "[include]\n\tpath = ~/.gitconfig.local\n\tpath = /etc/gitconfig.d/x\n");
	put("ws/.gitconfig", "[alias]\n\tst = status\n", 0644);
	put("ws/conf/b.inc", "[include]\n\tpath = c.inc\n", 0644);
	put("ws/conf/c.inc", "", 0644);
	r = planted_git_readonly(ws, &ro, &e);
	{
		char a[1024], b[1024], c[1024];

		snprintf(a, sizeof(a), "%s/.gitconfig", ws);
		snprintf(b, sizeof(b), "%s/conf/b.inc", ws);
		snprintf(c, sizeof(c), "%s/conf/c.inc", ws);
		ok(r == 0 && strv_contains(ro, a) && strv_contains(ro, b) && strv_contains(ro, c),
		   "a config's includes in the workspace (include, includeIf, nested) are held");
		ok(r == 0 && strv_len(ro) == 4,
		   "and nothing outside the workspace (the home's, /etc's): %zu held", strv_len(ro));
	}
	strv_free(ro);
	ro = NULL;
	{
		char cfg[1100], a[1024];

		snprintf(cfg, sizeof(cfg), "[include]\n\tpath = %s/abs.inc\n", ws);
		put("ws/.git/config.worktree", cfg, 0644);
		put("ws/abs.inc", "", 0644);
		snprintf(a, sizeof(a), "%s/abs.inc", ws);
		r = planted_git_readonly(ws, &ro, &e);
		ok(r == 0 && strv_contains(ro, a), "an absolute include in the workspace is held");
		strv_free(ro);
		ro = NULL;
	}
	at(p, sizeof(p), "ws/conf/c.inc");
	unlink(p);
	ok(ro_refused("includes `c.inc`, which is not there"),
	   "an include in the workspace that is missing is refused (the command could make it)");
	sym("../.gitconfig", "ws/conf/c.inc");
	ok(ro_refused("reached through a symbolic link"), "an include that is a link is refused");

	reset_lab();
	sym("/tmp", "ws/.git");
	ok(planted_git_readonly(ws, &ro, &e) < 0 && e && strstr(e->msg, "must be its own"),
	   ".git as a link is refused");
	err_free(e);
}

static void moves(void)
{
	struct planted_state *st;
	char p[1024];

	reset_lab();
	gitdir("ws/.git", "[core]\n\tbare = false\n");
	mk("ws/.git/hooks");
	gitdir("ws/.git/modules/x", "");
	put("ws/.git/config.worktree", "[core]\n\tbare = false\n", 0644);
	settle();
	st = before();
	after(st, rec);
	okr(findings == 0 && report[0] == '\0', "nothing changed: nothing said");
	ok(exists("rec/planted.json"), "the record is written all the same");

	st = before();
	put("ws/.git/commondir", "../.cache/c\n", 0644);
	put("ws/.git/config.worktree", "[core]\n\tfsmonitor = x\n", 0644);
	mk("ws/.git/worktrees/w");
	gitdir("ws/.git/modules/y", "");
	put("ws/.git/modules/x/commondir", "../../../.cache/c\n", 0644);
	mk("ws/.git/rebase-merge");
	gitdir("ws/.git/.git", "");
	put("ws/.git/objects/info/alternates", "/srv/other.git/objects\n", 0644);
	after(st, rec);
	snprintf(p, sizeof(p), ".git/commondir: commondir (moved to %s/planted/.git/commondir)", rec);
	okr(said(p) && !exists("ws/.git/commondir") && exists("rec/planted/.git/commondir"),
	   "a new commondir is moved into the record");
	ok(!exists("ws/.git/config.worktree") && exists("rec/planted/.git/config.worktree"),
	   "a changed config.worktree is moved");
	ok(!exists("ws/.git/worktrees") && !exists("ws/.git/modules/y") &&
	   !exists("ws/.git/rebase-merge") && !exists("ws/.git/modules/x/commondir"),
	   "new worktrees, a new submodule repository, a rebase, a commondir in a submodule's: moved");
	ok(!exists("ws/.git/.git") && exists("rec/planted/.git/.git/HEAD") &&
	   !exists("ws/.git/objects/info/alternates") &&
	   exists("rec/planted/.git/objects/info/alternates"),
	   "a repository inside .git (git tries <path>/.git first) and alternates: moved");
	ok(exists("ws/.git/modules/x/HEAD") && exists("ws/.git/hooks") && exists("ws/.git/config") &&
	   exists("ws/.git/objects"), "control: what was there at launch stays");
	okr(findings == 8, "eight findings (%d)", findings);

	/* No record (or one on another filesystem): a directory of .git's own. */
	st = before();
	put("ws/.git/commondir", "x\n", 0644);
	after(st, NULL);
	ok(!exists("ws/.git/commondir") && strstr(report, "/.git/cordon-planted."),
	   "without a record it goes to .git/cordon-planted.*");

	/* A new .git/modules, and a hooks directory made where there was
	 * none. */
	reset_lab();
	gitdir("ws/.git", "");
	st = before();
	gitdir("ws/.git/modules/z", "");
	put("ws/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
	after(st, rec);
	ok(!exists("ws/.git/modules") && !exists("ws/.git/hooks") &&
	   exists("rec/planted/.git/modules/z/HEAD") && exists("rec/planted/.git/hooks/pre-commit"),
	   "a new .git/modules and a new .git/hooks are moved");

	/* A link where git reads and writes on every command: objects put
	 * through it would land in another repository, as the operator. */
	reset_lab();
	gitdir("ws/.git", "");
	put("ws/.git/packed-refs", "", 0644);
	settle();
	st = before();
	move("ws/.git/objects", "ws/.git/objects.real");
	sym("/srv/other.git/objects", "ws/.git/objects");
	sym("/srv/other.git/packed-refs", "ws/.git/packed-refs");
	after(st, rec);
	snprintf(p, sizeof(p), ".git/objects: symbolic link (moved to %s/planted/.git/objects)", rec);
	okr(said(p) && !exists("ws/.git/objects") && !exists("ws/.git/packed-refs") &&
	   exists("rec/planted/.git/packed-refs"),
	   "links made at .git/objects and .git/packed-refs are moved");
	ok(exists("ws/.git/objects.real") && exists("ws/.git/refs") && exists("ws/.git/HEAD"),
	   "control: the rest, and the directory renamed aside, stay");

	/* Links anywhere in .git, at names git writes through (a reflog
	 * line carries a branch name the run chose) and at the loose
	 * objects' fan-out directories, a submodule's too. */
	reset_lab();
	gitdir("ws/.git", "");
	gitdir("ws/.git/modules/sub", "");
	mk("ws/.git/logs/refs/heads");
	mk("ws/.git/objects/ab");
	put("ws/.git/logs/HEAD", "", 0644);
	sym("refs/heads/main", "ws/.git/HEAD"); /* an old-style HEAD, the operator's */
	settle();
	st = before();
	sym("/home/op/.bashrc", "ws/.git/logs/HEAD");
	sym("/home/op/.profile", "ws/.git/logs/refs/heads/main");
	sym("/home/op/notes", "ws/.git/FETCH_HEAD");
	sym("/home/op/notes", "ws/.git/COMMIT_EDITMSG");
	sym("/srv/other.git/objects/cd", "ws/.git/objects/cd");
	sym("/srv/other.git/objects/ab", "ws/.git/modules/sub/objects/ab");
	mk("ws/.git/rr-cache");
	put("ws/.git/objects/ab/0123", "blob", 0444);
	after(st, rec);
	snprintf(p, sizeof(p), ".git/logs/HEAD: symbolic link (moved to %s/planted/.git/logs/HEAD)",
		 rec);
	okr(said(p) && !exists("ws/.git/logs/HEAD") && !exists("ws/.git/logs/refs/heads/main") &&
	    !exists("ws/.git/FETCH_HEAD") && !exists("ws/.git/COMMIT_EDITMSG") &&
	    !exists("ws/.git/objects/cd") && !exists("ws/.git/modules/sub/objects/ab") &&
	    exists("rec/planted/.git/logs/refs/heads/main") &&
	    exists("rec/planted/.git/modules/sub/objects/ab"),
	    "links made anywhere in .git (reflogs, FETCH_HEAD, fan-out dirs, a submodule's) "
	    "are moved");
	snprintf(p, sizeof(p), ".git/rr-cache: rr-cache (moved to %s/planted/.git/rr-cache)", rec);
	okr(said(p) && !exists("ws/.git/rr-cache"),
	    "an rr-cache the run made (rerere on) is moved");
	ok(exists("ws/.git/HEAD") && exists("ws/.git/objects/ab/0123") &&
	   exists("ws/.git/logs/refs/heads") && exists("ws/.git/modules/sub/HEAD"),
	   "control: a link there at launch (HEAD), files and directories stay");
}

static void walk(void)
{
	struct planted_state *st;

	reset_lab();
	gitdir("ws/.git", "");
	/* There before the launch, and left alone. */
	gitdir("ws/old/.git", "[core]\n\tfsmonitor = old\n");
	gitdir("ws/keep/.git", "[core]\n\teditor = vi\n");
	put("ws/.mcp.json", "{}", 0644);
	mk("ws/deep/a/b");
	/* a repository there before, with a link of the operator's in it */
	gitdir("ws/lk/.git", "");
	mk("ws/lk/.git/logs");
	sym("/tmp", "ws/lk/.git/logs/refs");
	settle();
	st = before();
	sym("/tmp/rc", "ws/lk/.git/logs/HEAD");
	gitdir("ws/sub/.git", "[core]\n\tfsmonitor = \"touch x\"\n[user]\n\tname = n\n");
	gitdir("ws/clone/.git", "[core]\n\tbare = false\n[remote \"origin\"]\n\turl = https://x/y\n");
	gitdir("ws/deep/a/b/c/.git", "[Alias]\n\tSt = !sh\n[include]\n\tpath = ../x\n");
	gitdir("ws/docs", "[diff \"d\"]\n\ttextconv = t\n");
	gitdir("ws/store/s.git", "[credential]\n\thelper = h\n");
	put("ws/s/.git", "gitdir: ../store/s.git\n", 0644);
	put("ws/out/.git", "gitdir: /etc\n", 0644);
	mk("ws/l");
	sym("/tmp", "ws/l/.git");
	gitdir("ws/cl/.git", "");
	sym("/etc/gitconfig", "ws/cl/.git/config");
	gitdir("ws/h/.git", "");
	put("ws/h/.git/hooks/pre-commit", "#!/bin/sh\n", 0755);
	put("ws/h/.git/hooks/post-checkout", "#!/bin/sh\n", 0644);
	put("ws/h/.git/hooks/pre-push.sample", "#!/bin/sh\n", 0755);
	gitdir("ws/cd/.git", "");
	gitdir("ws/.cache/c", "[core]\n\tpager = less\n");
	put("ws/cd/.git/commondir", "../../.cache/c\n", 0644);
	gitdir("ws/gg/.git", "");
	gitdir("ws/gg/.git/.git", "");
	put("ws/gg/.git/objects/info/alternates", "/srv/o\n", 0644);
	move("ws/keep", "ws/kept");
	put("ws/.envrc", "x", 0644);
	put("ws/.mcp.json", "{\"mcpServers\":{}}", 0644);
	put("ws/.claude/settings.json", "{}", 0644);
	after(st, rec);
	okr(said("sub/.git/config: core.fsmonitor"), "a new nested repository's core.fsmonitor");
	okr(!strstr(report, "user.name") && !strstr(report, "clone/"),
	   "control: keys that run nothing, and a plain clone's config, are not named");
	okr(said("deep/a/b/c/.git/config: alias.st") && said("deep/a/b/c/.git/config: include.path"),
	   "deep down: a '!' alias (names lower-cased) and an include");
	okr(said("docs/config: diff.d.textconv"), "a bare repository in the workspace");
	okr(said("store/s.git/config: credential.helper"), "a gitfile followed inside the workspace");
	okr(said("out/.git: gitdir outside the workspace"), "a gitfile leading out is named, not followed");
	okr(said("l/.git: symbolic link") && said("cl/.git/config: symbolic link"),
	   "a .git or a config that is a link is named, not followed");
	okr(said("h/.git/hooks/pre-commit: hook") && !strstr(report, "post-checkout") &&
	   !strstr(report, "sample"), "an executable hook (not a sample, not one git would skip)");
	okr(said(".cache/c/config: core.pager"), "a commondir followed to its config");
	okr(said("gg/.git/.git: a repository git takes first when given this git directory's path") &&
	   said("gg/.git/objects/info/alternates: objects taken from elsewhere"),
	   "a repository inside a nested .git, and its alternates, are named");
	okr(said("lk/.git/logs/HEAD: symbolic link (the operator's git would write through it)") &&
	   !strstr(report, "lk/.git/logs/refs"),
	   "a link made in a nested repository's .git is named (the control: one there before is not)");
	okr(said("kept/.git/config: core.editor"), "a repository renamed during the run (its config old)");
	okr(!strstr(report, "old/.git"), "control: a repository there before and left alone is not named");
	okr(said(".envrc: direnv") && said(".mcp.json: MCP servers") &&
	   said(".claude/settings.json: Claude Code settings (hooks, helpers)"),
	   "agent files made or changed are named");
	okr(findings > 0 && strstr(report, "deep") != NULL, "findings counted (%d)", findings);
}

static void edges(void)
{
	struct planted_state *st;
	char rel[2048] = "ws";

	/* Agents' files: one there before and left alone is not named; a
	 * directory on the way replaced by a link is. */
	reset_lab();
	put("ws/.vscode/tasks.json", "{}", 0644);
	put("ws/.claude/settings.local.json", "{}", 0644);
	settle();
	st = before();
	mk("ws/real");
	put("ws/real/settings.local.json", "{}", 0644);
	move("ws/.claude", "ws/moved");
	sym("real", "ws/.claude");
	after(st, rec);
	okr(!strstr(report, "tasks.json"), "control: .vscode/tasks.json there before, untouched");
	okr(said(".claude/settings.local.json: a symbolic link on the way"),
	   "a link on the way to an agent file is named");

	/* Printable: a name of the command's choosing prints as itself. */
	reset_lab();
	st = before();
	gitdir("ws/a\nb\033[2J/.git", "[core]\n\teditor = e\n");
	after(st, rec);
	okr(said("a\\x0ab\\x1b[2J/.git/config: core.editor"), "control characters are escaped");

	/* Deeper than the walk goes: said, and the record says so. */
	reset_lab();
	for (int i = 0; i < PLANTED_DEPTH_MAX + 2; i++)
		snprintf(rel + strlen(rel), sizeof(rel) - strlen(rel), "/d");
	mk(rel);
	st = before();
	after(st, rec);
	okr(strstr(report, "not looked at beyond here") != NULL, "a walk cut short says where");
	{
		char p[1024], *text = NULL;
		struct err *e = NULL;
		at(p, sizeof(p), "rec/planted.json");
		if (fs_read_file(AT_FDCWD, p, 65536, &text, NULL, &e) == 0)
			ok(strstr(text, "\"complete\": false") != NULL, "and planted.json says so");
		else
			ok(0, "planted.json: %s", e->msg);
		free(text);
		err_free(e);
	}

	/* A record dir without a recorded plan (a refused launch) gets no
	 * planted.json. */
	reset_lab();
	{
		char p[1024];
		at(p, sizeof(p), "rec/plan.json");
		unlink(p);
	}
	st = before();
	after(st, rec);
	ok(!exists("rec/planted.json"), "no plan recorded: no planted.json");
}

int main(void)
{
	char tmpl[] = "/tmp/cordon-planted-XXXXXX";
	char *d = mkdtemp(tmpl), *canon = NULL, cmd[400];
	struct err *e = NULL;

	if (!d || fs_canonical(d, &canon, &e) < 0)
		tap_skip_all("cannot make a lab directory");
	snprintf(lab, sizeof(lab), "%s", canon);
	free(canon);
	snprintf(ws, sizeof(ws), "%s/ws", lab);
	snprintf(rec, sizeof(rec), "%s/rec", lab);
	readonly();
	moves();
	walk();
	edges();
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", lab);
	if (system(cmd) != 0)
		diag("cleanup failed");
	return done_testing();
}
