/* stub.c: what starts a run on a remote: its entry stub (a POSIX sh
 * script in the run's records, started by the start call in a session of
 * its own) and the run's environment, which goes on the start
 * connection's stdin ahead of the command's input (never a file on the
 * remote, where anything else the account runs could read it). */
#include "container/ssh/internal.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "policy/envfilter.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

extern char **environ;

/* A word for the stub (single quotes). */
static int put_word(FILE *f, const char *s)
{
	fputc('\'', f);
	for (; *s; s++)
		if (*s == '\'')
			fputs("'\\''", f);
		else
			fputc(*s, f);
	return fputc('\'', f) == EOF ? -1 : 0;
}

/* The entry stub: reads the run's environment from the connection's
 * stdin (ssh_env_block: never a file on the remote), goes to the
 * workspace, runs the command with the rest of that stdin (a native run:
 * cordon's sandbox there, on the plan of digest), passes TERM (marked
 * first), INT and HUP on, records the status, and then kills its whole
 * process group (what the command left behind in it ends with the run:
 * a stop's TERM reaches the command only). */
char *ssh_make_stub(const char *rec, const char *cwd, char *const *argv, const char *digest,
		       size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	fputs("# cordon's entry stub of one run on this machine (its nonce is $1)\nrec=", f);
	put_word(f, rec);
	fputs("\nwhile IFS= read -r l && [ \"$l\" != . ]; do\n"
	      "  n=${l%% *}; v=$(printf '%bx' \"${l#* }\"); export \"$n=${v%x}\"\n"
	      "done\n"
	      "l=; n=; v=\n"
	      "done_with() { printf '%s\\n' \"$1\" > \"$rec/status.new\" &&"
	      " mv -f \"$rec/status.new\" \"$rec/status\"; trap '' TERM INT HUP;"
	      " kill -s KILL 0; exit \"$1\"; }\n",
	      f);
	/* the command's umask is the launch's (the call's is owner-only) */
	mode_t um = umask(077);
	umask(um);
	fprintf(f, "umask %04o\ncd ", (unsigned)um);
	put_word(f, cwd);
	fputs(" || { echo 'cordon: the run'\\''s directory is not on the remote' >&2;"
	      " done_with 125; }\n"
	      "child=\n"
	      "fwd() { [ -z \"$child\" ] || kill -s \"$1\" \"$child\" 2>/dev/null; }\n"
	      "trap ': > \"$rec/term\"; fwd TERM' TERM\n"
	      "trap 'fwd INT' INT\ntrap 'fwd HUP' HUP\n"
	      "exec 3<&0\n",
	      f);
	if (digest) {
		/* (the digest is hex: a plain word) */
		fprintf(f, "\"$rec/cordon\" remote-run --record \"$rec\" --digest %s --channel "
			   "\"$rec/" SSH_CHANNEL "\" ",
			digest);
	} else {
		for (size_t i = 0; argv[i]; i++) {
			put_word(f, argv[i]);
			fputc(' ', f);
		}
	}
	fputs("<&3 3<&- &\nchild=$!\nexec 3<&-\n"
	      "while :; do\n"
	      "  wait \"$child\"; st=$?\n"
	      "  if [ \"$st\" -gt 128 ] && kill -0 \"$child\" 2>/dev/null; then continue; fi\n"
	      "  break\ndone\n"
	      "done_with \"$st\"\n",
	      f);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

/* One value as a word for printf's %b: a byte other than a letter,
 * digit or one of "_./:,+@=-" as \0ooo. */
static void put_escaped(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
		    strchr("_./:,+@=-", ch))
			fputc(ch, f);
		else
			fprintf(f, "\\0%03o", ch);
	}
}

static bool env_name(const char *s, size_t n)
{
	return n > 0 && !(s[0] >= '0' && s[0] <= '9') &&
	       strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_") == n;
}

char *ssh_env_block(const struct plan *p, const char *home, size_t *len)
{
	_cleanup_strv_ char **pass = NULL, **env = NULL;
	char *buf = NULL;
	FILE *f;

	if (json_to_strv(json_object_get(p->data, "env_pass"), &pass) < 0 ||
	    envfilter_for_command(environ, pass, p->env, NULL, &env) < 0)
		return NULL;
	if (!(f = open_memstream(&buf, len))) {
		envfilter_scrub(env);
		return NULL;
	}
	for (size_t i = 0; env[i]; i++) {
		size_t n = strcspn(env[i], "=");

		if (!env[i][n] || !env_name(env[i], n))
			continue;
		/* the job's home is the run's HOME (and claude's config) */
		if (home && ((n == 4 && strncmp(env[i], "HOME", 4) == 0) ||
			     (n == 17 && strncmp(env[i], "CLAUDE_CONFIG_DIR", 17) == 0)))
			continue;
		fprintf(f, "%.*s ", (int)n, env[i]);
		put_escaped(f, env[i] + n + 1);
		fputc('\n', f);
	}
	if (home) {
		fputs("HOME ", f);
		put_escaped(f, home);
		fputs("\nCLAUDE_CONFIG_DIR ", f);
		put_escaped(f, home);
		fputc('\n', f);
	}
	fputs(".\n", f);
	envfilter_scrub(env);
	if (fclose(f) != 0) {
		if (buf)
			explicit_bzero(buf, *len);
		free(buf);
		return NULL;
	}
	return buf;
}
