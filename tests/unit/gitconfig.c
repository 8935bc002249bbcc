/* gitconfig.c: the git config reader reads what git reads (each form
 * checked against what git itself makes of it, noted beside the case),
 * and the keys that run something are told from those that do not. */
#include "lib/gitconfig.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct out {
	char buf[4096];
	size_t n;
};

/* Each variable as "key=value" (or "key" for a bare key), '|' between. */
static int collect(const char *key, const char *value, void *ctx)
{
	struct out *o = ctx;
	int w = snprintf(o->buf + o->n, sizeof(o->buf) - o->n, "%s%s%s%s", o->n ? "|" : "",
			 key, value ? "=" : "", value ? value : "");
	if (w > 0 && (size_t)w < sizeof(o->buf) - o->n)
		o->n += (size_t)w;
	return 0;
}

static const char *parse_n(const char *text, size_t len, int *rc, size_t *line)
{
	static struct out o;

	memset(&o, 0, sizeof(o));
	*line = 0;
	*rc = gitconfig_parse(text, len, collect, &o, line);
	return o.buf;
}

/* What git itself reads from text (git config --list -z, with no
 * include followed and no other file read), in collect's form; NULL when
 * git refuses the file or cannot be run. */
static const char *git_reads(const char *text, size_t len)
{
	static char out[4096];
	char path[] = "/tmp/cordon-gitconfig.XXXXXX", cmd[256], raw[4096];
	size_t n = 0, o = 0;
	FILE *f;
	int fd = mkstemp(path), st;

	if (fd < 0 || write(fd, text, len) != (ssize_t)len) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	close(fd);
	snprintf(cmd, sizeof(cmd),
		 "cd / && env -i GIT_CONFIG_NOSYSTEM=1 HOME=/nonexistent PATH=/usr/bin:/bin "
		 "git config --no-includes --file '%s' --list -z 2>/dev/null", path);
	f = popen(cmd, "r");
	if (f) {
		n = fread(raw, 1, sizeof(raw) - 1, f);
		st = pclose(f);
	}
	unlink(path);
	if (!f || st != 0)
		return NULL;
	/* Each entry: key, then '\n' and the value unless the key is bare,
	 * then NUL. */
	out[0] = '\0';
	for (size_t i = 0; i < n && o + 2 < sizeof(out);) {
		size_t l = strnlen(raw + i, n - i);
		char *nl = memchr(raw + i, '\n', l);
		int w = snprintf(out + o, sizeof(out) - o, "%s%.*s%s%.*s", o ? "|" : "",
				 (int)(nl ? (size_t)(nl - raw - i) : l), raw + i, nl ? "=" : "",
				 nl ? (int)(l - (size_t)(nl - raw - i) - 1) : 0, nl ? nl + 1 : "");
		if (w < 0 || (size_t)w >= sizeof(out) - o)
			break;
		o += (size_t)w;
		i += l + 1;
	}
	return out;
}

static bool have_git;

static void reads_n(const char *text, size_t len, const char *want, const char *what)
{
	size_t line;
	int rc;
	const char *got = parse_n(text, len, &rc, &line);

	if (!is_str(got, want, "%s", what) || rc != 0)
		diag("rc %d, line %zu", rc, line);
	if (have_git) {
		const char *g = git_reads(text, len);
		is_str(g ? g : "(git refused it)", want, "  and git reads the same");
	}
}

static void reads(const char *text, const char *want, const char *what)
{
	reads_n(text, strlen(text), want, what);
}

static void refuses(const char *text, size_t want_line, const char *what)
{
	size_t line;
	int rc;

	parse_n(text, strlen(text), &rc, &line);
	ok(rc == -1 && line == want_line, "refused: %s (rc %d, line %zu)", what, rc, line);
	if (have_git)
		ok(git_reads(text, strlen(text)) == NULL, "  and git refuses it too");
}

/* Does the first variable of text run something? */
static bool runs(const char *text)
{
	size_t line;
	int rc;
	const char *got = parse_n(text, strlen(text), &rc, &line);
	char key[512];
	const char *eq = strchr(got, '='), *bar = strchr(got, '|');
	size_t kl = eq && (!bar || eq < bar) ? (size_t)(eq - got) : strlen(got);
	char *value = NULL;
	bool r;

	if (rc != 0 || kl == 0 || kl >= sizeof(key))
		return false;
	memcpy(key, got, kl);
	key[kl] = '\0';
	if (eq && (!bar || eq < bar))
		value = strndup(eq + 1, bar ? (size_t)(bar - eq - 1) : strlen(eq + 1));
	r = gitconfig_key_runs(key, value);
	free(value);
	return r;
}

static void grammar(void)
{
	reads("[core]\n\tfsmonitor = x\n", "core.fsmonitor=x", "a section and a key");
	reads("[CoRe]\n\tFsMonitor = X\n", "core.fsmonitor=X",
	      "section and key names are lower-cased, the value is not");
	reads("[diff \"Foo.Bar\"]\n\ttextconv = t\n", "diff.Foo.Bar.textconv=t",
	      "a quoted subsection keeps its case and its dots");
	reads("[Diff.Foo]\n\ttextconv = t\n", "diff.foo.textconv=t",
	      "the old dotted subsection is lower-cased whole");
	reads("[x \"a\\\"b\\\\c\\d\"]\nk = v\n", "x.a\"b\\cd.k=v",
	      "a subsection's backslash takes the next character as it is");
	reads("[core]\n\tfsmonitor\n", "core.fsmonitor", "a bare key has no value");
	reads("[core]\n\tfsmonitor", "core.fsmonitor", "a bare key at the end of the file");
	reads("[core] editor = vi\n", "core.editor=vi", "a key on the section's line");
	reads("[core]\r\n\teditor = vi\r\n", "core.editor=vi", "CRLF line ends");
	reads("\xef\xbb\xbf[core]\neditor = vi\n", "core.editor=vi", "a byte-order mark is skipped");
	reads("[a]\nk = \"x;y#z\" ; c\n", "a.k=x;y#z", "comment characters inside quotes are text");
	reads("[a]\nk = x # c\n", "a.k=x", "a # comment after a value");
	reads("[a]\nk = x; c\n", "a.k=x", "a ; comment after a value");
	reads("# c\n; c\n\n[a] ; c\nk=v\n", "a.k=v", "comment and empty lines");
	reads("[a]\nk = \"vim -c \\\"x\\\"\"\n", "a.k=vim -c \"x\"", "escaped quotes inside quotes");
	reads("[a]\nk = a\\tb\\nc\\bd\\\\e\n", "a.k=a\tb\nc\bd\\e", "the escapes git knows");
	reads("[a]\nk = vi\\\n  m\n", "a.k=vi  m", "a continuation line");
	reads("[a]\nk = \"v\\\ni\"\n", "a.k=vi", "a continuation inside quotes");
	reads("[a]\nk = v\\", "a.k=v", "a backslash at the very end joins nothing");
	reads("[a]\nk =   b  c  \n", "a.k=b  c", "outer whitespace dropped, inner kept");
	reads("[a]\nk = \" b \"\n", "a.k= b ", "whitespace in quotes kept");
	reads("[a]\nk =\n", "a.k=", "an empty value is not a bare key");
	reads("[a]\nk = 1\n[b]\nk = 2\nk = 3\n", "a.k=1|b.k=2|b.k=3", "sections and repeats in order");
	reads("k = 1\n", "k=1", "a key before any section has no section");
	reads("[a]\nk-2 = 1\n", "a.k-2=1", "digits and '-' in a key name");
	reads("", "", "an empty file");

	refuses("[core\n", 1, "a section without ']'");
	refuses("[]\n", 1, "an empty section name");
	refuses("[co re]\n", 1, "a space in a section name not followed by a quote");
	refuses("[a \"b\"x]\n", 1, "text between a subsection and ']'");
	refuses("[a \"b\n\"]\n", 1, "a newline in a subsection");
	refuses("[a]\n1k = v\n", 2, "a key starting with a digit");
	refuses("[a]\nk # c\n", 2, "a comment after a bare key");
	refuses("[a]\nk_x = v\n", 2, "'_' in a key name");
	refuses("[a]\nk = \"x\n", 2, "an unterminated quote");
	refuses("[a]\n\nk = \\q\n", 3, "an escape git does not know");
	refuses("\xef\xbb[a]\n", 1, "part of a byte-order mark");
	refuses("[a]\nk = v\n\x01\n", 3, "a control character where a key must start");

	/* A NUL ends the key as git's C string does: "diff.x" is no
	 * textconv, to git or to this reader. */
	static const char nul_sub[] = "[diff \"x\0y\"]\ntextconv = t\n";
	static const char nul_val[] = "[a]\nk = x\0y\n";

	reads_n(nul_sub, sizeof(nul_sub) - 1, "diff.x=t",
		"a NUL in a subsection ends the key there");
	reads_n(nul_val, sizeof(nul_val) - 1, "a.k=x", "a NUL in a value ends the value");
}

/* The case on one line, for its TAP description. */
static const char *one_line(const char *text)
{
	static char buf[256];
	size_t i;

	for (i = 0; text[i] && i + 1 < sizeof(buf); i++)
		buf[i] = text[i] == '\n' ? ' ' : text[i];
	buf[i] = '\0';
	return buf;
}

static void keys(void)
{
	static const char *const yes[] = {
		"[core]\nfsmonitor = /x", "[core]\nfsmonitor", "[core]\nfsmonitor = true",
		"[core]\nhooksPath = h", "[core]\nsshCommand = s", "[core]\neditor = e",
		"[core]\npager = p", "[core]\naskPass = a", "[core]\ngitProxy = g",
		"[core]\nalternateRefsCommand = c",
		"[include]\npath = other", "[includeIf \"gitdir:/x/\"]\npath = y",
		"[includeIf \"hasconfig:remote.*.url:x\"]\npath = y",
		"[alias]\nst = !sh -c x", "[alias \"a\"]\nb = !x",
		"[credential]\nhelper = h", "[credential \"https://x\"]\nhelper = h",
		"[diff]\nexternal = e", "[diff \"foo\"]\ntextconv = t", "[diff \"foo\"]\ncommand = c",
		"[difftool \"t\"]\ncmd = c", "[difftool \"t\"]\npath = p",
		"[mergetool \"t\"]\ncmd = c", "[mergetool \"t\"]\npath = p",
		"[merge \"d\"]\ndriver = d", "[filter \"lfs\"]\nclean = c", "[filter \"x\"]\nsmudge = s",
		"[filter \"x\"]\nprocess = p", "[sequence]\neditor = e", "[gpg]\nprogram = g",
		"[gpg \"x509\"]\nprogram = g", "[gpg \"ssh\"]\ndefaultKeyCommand = c",
		"[uploadpack]\npackObjectsHook = h", "[pager]\nlog = less -R",
		"[interactive]\ndiffFilter = f", "[imap]\ntunnel = t",
		"[sendemail]\nsmtpServer = /usr/sbin/sendmail", "[sendemail]\ntoCmd = t",
		"[sendemail \"id\"]\nccCmd = c", "[sendemail]\nsendmailCmd = s",
		"[trailer \"t\"]\ncommand = c", "[trailer \"t\"]\ncmd = c", "[tar \"tgz\"]\ncommand = c",
		"[remote \"o\"]\nuploadpack = u", "[remote \"o\"]\nreceivepack = r",
		"[remote \"o\"]\nvcs = v", "[remote \"o\"]\nurl = ext::sh -c x",
		"[remote \"o\"]\npushurl = x::y", "[protocol]\nallow = always",
		"[protocol \"ext\"]\nallow = user", "[submodule \"s\"]\nupdate = !x",
		"[url \"ext::sh -c x\"]\ninsteadOf = https://", "[browser \"b\"]\ncmd = c",
		"[man \"m\"]\npath = p", "[guitool \"g\"]\ncmd = c", "[instaweb]\nhttpd = h",
		"[svn]\nauthorsProg = a", "[hook \"h\"]\ncommand = c",
		"[lfs \"customtransfer.x\"]\npath = p", "[lfs.extension.x]\nclean = c",
		"[CORE]\nFSMONITOR = x",
	};
	static const char *const no[] = {
		"[core]\nfsmonitor = false", "[core]\nfsmonitor = 0", "[core]\nbare = false",
		"[core]\nrepositoryformatversion = 0", "[core]\nworktree = ../x",
		"[user]\nemail = e", "[alias]\nst = status", "[alias]\nst = \" !x\"",
		"[diff]\ntextconv = t", "[diff \"x\"]\nbinary = true", "[merge]\ntool = t",
		"[merge \"d\"]\nname = n", "[pager]\nlog = false", "[pager]\nlog",
		"[pager]\nlog = 1k", "[remote \"o\"]\nurl = https://example.com/x.git",
		"[remote \"o\"]\nfetch = +refs/heads/*:refs/remotes/o/*",
		"[protocol \"ext\"]\nallow = never", "[protocol \"ext\"]\nallow = NEVER",
		"[submodule \"s\"]\nupdate = checkout", "[url \"https://mirror/\"]\ninsteadOf = https://x/",
		"[sendemail]\nsmtpServer = smtp.example.com", "[branch \"main\"]\nremote = origin",
		"[credential]\nusername = u", "[core]\nfsmonitorhookversion = 2", "[gpg]\nformat = ssh",
		"[includeIf \"gitdir:x\"]\nother = y", "[include]\nx = y", "[filter]\nclean = c",
	};

	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		ok(runs(yes[i]), "runs: %s", one_line(yes[i]));
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		ok(!runs(no[i]), "runs nothing: %s", one_line(no[i]));
	ok(!gitconfig_key_runs("core", "x"), "a name without a dot is no key");
}

static void booleans(void)
{
	static const char *const t[] = { "true", "YES", "On", "1", "-3", "2k" };
	static const char *const f[] = { "false", "No", "OFF", "", "0", "0m" };
	static const char *const neither[] = { "tru", "1x", "k", "--1", " true" };

	ok(gitconfig_bool(NULL) == 1, "a bare key is true");
	for (size_t i = 0; i < sizeof(t) / sizeof(*t); i++)
		ok(gitconfig_bool(t[i]) == 1, "true: '%s'", t[i]);
	for (size_t i = 0; i < sizeof(f) / sizeof(*f); i++)
		ok(gitconfig_bool(f[i]) == 0, "false: '%s'", f[i]);
	for (size_t i = 0; i < sizeof(neither) / sizeof(*neither); i++)
		ok(gitconfig_bool(neither[i]) == -1, "not a boolean: '%s'", neither[i]);
}

int main(void)
{
	/* Where git is installed, every case is checked against it too. */
	have_git = access("/usr/bin/git", X_OK) == 0;
	if (!have_git)
		diag("no /usr/bin/git: the cases are not compared with git's own reading");
	grammar();
	keys();
	booleans();
	return done_testing();
}
