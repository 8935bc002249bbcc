/* gitconfig.c: see gitconfig.h. The parser follows the steps git's own
 * reader takes (one character at a time, the same character classes,
 * the same errors); the table of keys that run something is drawn from
 * git's documentation, cited beside each entry. */
#include "lib/gitconfig.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define END (-1)

/* git's own character classes (ctype.c), which are ASCII whatever the
 * locale: space is only \t \n \r and ' ' (not \v or \f). */
static bool is_space(int c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

static bool is_alpha(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_keychar(int c)
{
	return is_alpha(c) || (c >= '0' && c <= '9') || c == '-';
}

static int lower(int c)
{
	return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c;
}

struct src {
	const unsigned char *buf;
	size_t len, pos, line;
	bool eof;
};

/* A growing buffer; on allocation failure it is marked and the parse
 * fails (fail closed: the caller treats the file as unreadable). */
struct sb {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct sb *b, int c)
{
	if (b->oom)
		return;
	if (b->len + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *n = realloc(b->s, cap);
		if (!n) {
			b->oom = true;
			return;
		}
		b->s = n;
		b->cap = cap;
	}
	b->s[b->len++] = (char)c;
	b->s[b->len] = '\0';
}

static const char *sb_str(const struct sb *b)
{
	return b->s ? b->s : "";
}

/* git's get_next_char: CRLF is one newline, a lone CR stays; the end of
 * the file reads as a newline and sets eof. */
static int next(struct src *s)
{
	int c = s->pos < s->len ? s->buf[s->pos++] : END;

	if (c == '\r' && s->pos < s->len && s->buf[s->pos] == '\n') {
		s->pos++;
		c = '\n';
	}
	if (c == '\n')
		s->line++;
	if (c == END) {
		s->eof = true;
		s->line++;
		c = '\n';
	}
	return c;
}

/* `[section "sub"]`: the part after the space. */
static int ext_base_var(struct src *s, struct sb *name, int c)
{
	do {
		if (c == '\n')
			return -1;
		c = next(s);
	} while (is_space(c));
	if (c != '"')
		return -1;
	sb_add(name, '.');
	for (;;) {
		c = next(s);
		if (c == '\n')
			return -1;
		if (c == '"')
			break;
		if (c == '\\') {
			c = next(s);
			if (c == '\n')
				return -1;
		}
		sb_add(name, c);
	}
	return next(s) == ']' ? 0 : -1;
}

static int base_var(struct src *s, struct sb *name)
{
	for (;;) {
		int c = next(s);

		if (s->eof)
			return -1;
		if (c == ']')
			return 0;
		if (is_space(c))
			return ext_base_var(s, name, c);
		if (!is_keychar(c) && c != '.')
			return -1;
		sb_add(name, lower(c));
	}
}

/* A value: quotes toggle, escapes, `#`/`;` comments outside quotes,
 * backslash-newline joins lines, whitespace inside kept and at the end
 * (outside quotes) dropped. */
static int parse_value(struct src *s, struct sb *v)
{
	bool quote = false, comment = false;
	size_t trim = 0;

	v->len = 0;
	if (v->s)
		v->s[0] = '\0';
	for (;;) {
		int c = next(s);

		if (c == '\n') {
			if (quote)
				return -1;
			if (trim && v->s) {
				v->len = trim;
				v->s[trim] = '\0';
			}
			return 0;
		}
		if (comment)
			continue;
		if (is_space(c) && !quote) {
			if (!trim)
				trim = v->len;
			if (v->len)
				sb_add(v, c);
			continue;
		}
		if (!quote && (c == ';' || c == '#')) {
			comment = true;
			continue;
		}
		trim = 0;
		if (c == '\\') {
			c = next(s);
			switch (c) {
			case '\n':
				continue;
			case 't':
				c = '\t';
				break;
			case 'b':
				c = '\b';
				break;
			case 'n':
				c = '\n';
				break;
			case '\\':
			case '"':
				break;
			default:
				return -1;
			}
			sb_add(v, c);
			continue;
		}
		if (c == '"') {
			quote = !quote;
			continue;
		}
		sb_add(v, c);
	}
}

static int get_value(struct src *s, struct sb *name, struct sb *v,
		     gitconfig_fn fn, void *ctx, int *stop)
{
	const char *value = NULL;
	int c;

	for (;;) {
		c = next(s);
		if (s->eof || !is_keychar(c))
			break;
		sb_add(name, lower(c));
	}
	while (c == ' ' || c == '\t')
		c = next(s);
	if (c != '\n') {
		if (c != '=' || parse_value(s, v) < 0)
			return -1;
		value = sb_str(v);
	}
	if (name->oom || v->oom)
		return -1;
	*stop = fn(sb_str(name), value, ctx);
	return 0;
}

int gitconfig_parse(const char *buf, size_t len, gitconfig_fn fn, void *ctx,
		    size_t *err_line)
{
	static const unsigned char bom[] = { 0xef, 0xbb, 0xbf };
	struct src s = { (const unsigned char *)buf, len, 0, 1, false };
	struct sb var = { 0 }, val = { 0 };
	size_t baselen = 0, b = 0, stmt = 1;
	bool comment = false, bom_done = false;
	int rc = -1, stop = 0;

	for (;;) {
		int c = next(&s);

		/* A UTF-8 byte-order mark at the start is skipped; part of
		 * one is an error. */
		if (!bom_done) {
			if (c == bom[b]) {
				if (++b == sizeof(bom))
					bom_done = true;
				continue;
			}
			if (b != 0)
				break;
			bom_done = true;
		}
		if (c == '\n') {
			if (s.eof) {
				rc = 0;
				break;
			}
			comment = false;
			continue;
		}
		if (comment || is_space(c))
			continue;
		if (c == '#' || c == ';') {
			comment = true;
			continue;
		}
		stmt = s.line;
		if (c == '[') {
			var.len = 0;
			if (base_var(&s, &var) < 0 || var.len < 1 || var.oom)
				break;
			sb_add(&var, '.');
			baselen = var.len;
			continue;
		}
		if (!is_alpha(c))
			break;
		var.len = baselen;
		sb_add(&var, lower(c));
		if (get_value(&s, &var, &val, fn, ctx, &stop) < 0)
			break;
		if (stop) {
			rc = stop;
			break;
		}
	}
	if (rc == -1 && err_line)
		*err_line = stmt;
	free(var.s);
	free(val.s);
	return rc;
}

/* git_parse_maybe_bool: the words, else an integer (non-zero is true),
 * with git's unit suffixes. */
int gitconfig_bool(const char *v)
{
	static const char *const yes[] = { "true", "yes", "on" };
	static const char *const no[] = { "false", "no", "off", "" };
	const char *p;
	bool digits = false, nonzero = false;

	if (!v)
		return 1;
	for (size_t i = 0; i < sizeof(yes) / sizeof(*yes); i++)
		if (strcasecmp(v, yes[i]) == 0)
			return 1;
	for (size_t i = 0; i < sizeof(no) / sizeof(*no); i++)
		if (strcasecmp(v, no[i]) == 0)
			return 0;
	p = v + (*v == '-' || *v == '+');
	for (; *p >= '0' && *p <= '9'; p++) {
		digits = true;
		nonzero |= *p != '0';
	}
	if (*p && strchr("kKmMgG", *p))
		p++;
	if (!digits || *p)
		return -1;
	return nonzero;
}

/* What a value must look like for the key to run something. */
enum when {
	ALWAYS,		/* any value, a bare key included */
	BANG,		/* the value starts with '!' (a shell command) */
	NOT_BOOL,	/* a value that is not a boolean is a command */
	NOT_FALSE,	/* anything but a boolean false */
	NOT_NEVER,	/* a protocol policy other than "never" */
	HELPER,		/* a URL "<helper>::<address>", run by git-remote-<helper> */
	ABS_PATH,	/* a value starting with '/' is a program */
};

/* Whether the key has a subsection (the middle of a.b.c). */
enum sub { SUB_NONE, SUB_ANY, SUB_EITHER };

struct exec_key {
	const char *section;
	const char *name;	/* NULL: every name in the section */
	enum sub sub;
	enum when when;
};

/* The keys, from git-config(1) (git 2.39 to 2.47, Documentation/config/) unless
 * noted: each names a program, a shell command, a directory of programs,
 * or another file of settings that could name one. */
static const struct exec_key exec_keys[] = {
	/* core.txt */
	{ "core", "fsmonitor", SUB_NONE, NOT_FALSE },	/* a hook program, or the daemon */
	{ "core", "hookspath", SUB_NONE, ALWAYS },	/* githooks(5) from elsewhere */
	{ "core", "sshcommand", SUB_NONE, ALWAYS },
	{ "core", "editor", SUB_NONE, ALWAYS },
	{ "core", "pager", SUB_NONE, ALWAYS },
	{ "core", "askpass", SUB_NONE, ALWAYS },
	{ "core", "gitproxy", SUB_NONE, ALWAYS },
	{ "core", "alternaterefscommand", SUB_NONE, ALWAYS },
	/* include.txt ("Includes" in git-config(1)): more settings */
	{ "include", "path", SUB_NONE, ALWAYS },
	{ "includeif", "path", SUB_ANY, ALWAYS },
	/* alias.txt: "If the alias expansion is prefixed with an exclamation
	 * point, it will be treated as a shell command." */
	{ "alias", NULL, SUB_EITHER, BANG },
	/* credential.txt, gitcredentials(7) */
	{ "credential", "helper", SUB_EITHER, ALWAYS },
	/* diff.txt, gitattributes(5) "Defining an external diff driver",
	 * "Performing text diffs of binary files" */
	{ "diff", "external", SUB_NONE, ALWAYS },
	{ "diff", "command", SUB_ANY, ALWAYS },
	{ "diff", "textconv", SUB_ANY, ALWAYS },
	/* difftool.txt, mergetool.txt */
	{ "difftool", "cmd", SUB_ANY, ALWAYS },
	{ "difftool", "path", SUB_ANY, ALWAYS },
	{ "mergetool", "cmd", SUB_ANY, ALWAYS },
	{ "mergetool", "path", SUB_ANY, ALWAYS },
	/* merge.txt, gitattributes(5) "Defining a custom merge driver" */
	{ "merge", "driver", SUB_ANY, ALWAYS },
	/* filter.txt, gitattributes(5) "filter" */
	{ "filter", "clean", SUB_ANY, ALWAYS },
	{ "filter", "smudge", SUB_ANY, ALWAYS },
	{ "filter", "process", SUB_ANY, ALWAYS },
	/* sequencer.txt (sequence.editor) */
	{ "sequence", "editor", SUB_NONE, ALWAYS },
	/* gpg.txt: gpg.program, gpg.<format>.program,
	 * gpg.ssh.defaultKeyCommand */
	{ "gpg", "program", SUB_EITHER, ALWAYS },
	{ "gpg", "defaultkeycommand", SUB_ANY, ALWAYS },
	/* uploadpack.txt */
	{ "uploadpack", "packobjectshook", SUB_NONE, ALWAYS },
	/* pager.txt: "If the value is not a boolean, it is the pager" */
	{ "pager", NULL, SUB_NONE, NOT_BOOL },
	/* interactive.txt */
	{ "interactive", "difffilter", SUB_NONE, ALWAYS },
	/* imap.txt */
	{ "imap", "tunnel", SUB_NONE, ALWAYS },
	/* sendemail.txt, git-send-email(1): a server that starts with '/'
	 * is a sendmail-like program */
	{ "sendemail", "smtpserver", SUB_EITHER, ABS_PATH },
	{ "sendemail", "sendmailcmd", SUB_EITHER, ALWAYS },
	{ "sendemail", "tocmd", SUB_EITHER, ALWAYS },
	{ "sendemail", "cccmd", SUB_EITHER, ALWAYS },
	{ "sendemail", "headercmd", SUB_EITHER, ALWAYS },
	/* trailer.txt, git-interpret-trailers(1) */
	{ "trailer", "command", SUB_ANY, ALWAYS },
	{ "trailer", "cmd", SUB_ANY, ALWAYS },
	/* tar.txt, git-archive(1): tar.<format>.command */
	{ "tar", "command", SUB_ANY, ALWAYS },
	/* remote.txt: the program run at the other end (here, for a local
	 * URL), and the helper of a foreign VCS (git-remote-<vcs>) */
	{ "remote", "uploadpack", SUB_ANY, ALWAYS },
	{ "remote", "receivepack", SUB_ANY, ALWAYS },
	{ "remote", "vcs", SUB_ANY, ALWAYS },
	{ "remote", "url", SUB_ANY, HELPER },
	{ "remote", "pushurl", SUB_ANY, HELPER },
	/* protocol.txt: allowing ext:: lets a URL be a shell command */
	{ "protocol", "allow", SUB_EITHER, NOT_NEVER },
	/* submodule.txt: "!command" as an update mode (read from config
	 * only, never from .gitmodules) */
	{ "submodule", "update", SUB_ANY, BANG },
	/* browser.txt, man.txt, guitool.txt, instaweb.txt */
	{ "browser", "cmd", SUB_ANY, ALWAYS },
	{ "browser", "path", SUB_ANY, ALWAYS },
	{ "man", "cmd", SUB_ANY, ALWAYS },
	{ "man", "path", SUB_ANY, ALWAYS },
	{ "guitool", "cmd", SUB_ANY, ALWAYS },
	{ "instaweb", "httpd", SUB_NONE, ALWAYS },
	/* git-svn(1): svn.authorsProg */
	{ "svn", "authorsprog", SUB_NONE, ALWAYS },
	/* config-based hooks of newer git (hook.<name>.command) */
	{ "hook", "command", SUB_ANY, ALWAYS },
	/* git-lfs-config(5): lfs.customtransfer.<name>.path,
	 * lfs.extension.<name>.clean / smudge */
	{ "lfs", "path", SUB_ANY, ALWAYS },
	{ "lfs", "clean", SUB_ANY, ALWAYS },
	{ "lfs", "smudge", SUB_ANY, ALWAYS },
};

static bool value_matches(enum when w, const char *v)
{
	switch (w) {
	case ALWAYS:
		return true;
	case BANG:
		return v && v[0] == '!';
	case NOT_BOOL:
		return gitconfig_bool(v) < 0;
	case NOT_FALSE:
		return gitconfig_bool(v) != 0;
	case NOT_NEVER:
		return !v || strcasecmp(v, "never") != 0;
	case HELPER:
		return v && strstr(v, "::") != NULL;
	case ABS_PATH:
		return v && v[0] == '/';
	}
	return true;
}

bool gitconfig_key_runs(const char *key, const char *value)
{
	const char *first = strchr(key, '.'), *last = strrchr(key, '.');
	size_t slen;
	bool has_sub;

	if (!first)
		return false;
	slen = (size_t)(first - key);
	has_sub = last != first;
	/* url.<base>.insteadOf: the base replaces the URL written; a base
	 * naming a helper makes every matching URL run it. */
	if (slen == 3 && strncasecmp(key, "url", 3) == 0 && has_sub &&
	    (strcasecmp(last + 1, "insteadof") == 0 ||
	     strcasecmp(last + 1, "pushinsteadof") == 0)) {
		const char *sep = strstr(first + 1, "::");
		return sep && sep < last;
	}
	for (size_t i = 0; i < sizeof(exec_keys) / sizeof(*exec_keys); i++) {
		const struct exec_key *k = &exec_keys[i];

		if (strlen(k->section) != slen || strncasecmp(key, k->section, slen) != 0)
			continue;
		if ((k->sub == SUB_NONE && has_sub) || (k->sub == SUB_ANY && !has_sub))
			continue;
		if (k->name && strcasecmp(last + 1, k->name) != 0)
			continue;
		if (value_matches(k->when, value))
			return true;
	}
	return false;
}
