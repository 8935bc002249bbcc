/* tests/unit/envfilter.c: which variables of the caller's environment
 * reach the command (policy/envfilter.h). Every rule beside a name or
 * value it must leave alone; the environment built from a caller's, a
 * pass list and the plan's own; the note (names, never values); the
 * scrub. */
#include "lib/strv.h"
#include "policy/envfilter.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void cred(const char *entry, bool want, const char *why)
{
	ok(envfilter_is_credential(entry) == want, "%s %s (%s)", entry,
	   want ? "is credential-like" : "is left alone", why);
}

static void test_names(void)
{
	/* the three, and a suffix each */
	cred("GITHUB_TOKEN=x", true, "_TOKEN");
	cred("AWS_SECRET_ACCESS_KEY=x", true, "_ACCESS_KEY");
	cred("ANTHROPIC_API_KEY=x", true, "_API_KEY");
	cred("AZURE_CLIENT_SECRET=x", true, "_SECRET");
	cred("DJANGO_SECRET_KEY=x", true, "_SECRET_KEY");
	cred("TWINE_PASSWORD=x", true, "_PASSWORD");
	cred("GOOGLE_APPLICATION_CREDENTIALS=/k.json", true, "_CREDENTIALS");
	cred("AWS_SESSION_TOKEN=x", true, "_TOKEN");
	cred("CLAUDE_CODE_OAUTH_TOKEN=x", true, "_TOKEN");
	cred("SSH_PRIVATE_KEY=x", true, "_PRIVATE_KEY");
	cred("GPG_PASSPHRASE=x", true, "_PASSPHRASE");
	cred("DB_PASS=x", true, "_PASS");
	cred("SLACK_WEBHOOK_URL=https://hooks.example/T/B/x", true, "_WEBHOOK_URL");
	cred("AZURE_STORAGE_CONNECTION_STRING=x", true, "_CONNECTION_STRING");
	cred("npm_config_//registry.npmjs.org/:_authToken=x", true, "_AUTHTOKEN, any case");
	/* the suffix as the whole name */
	cred("TOKEN=x", true, "a suffix without its _");
	cred("PASSWORD=x", true, "a suffix without its _");
	cred("API_KEY=x", true, "a suffix without its _");
	/* case */
	cred("github_token=x", true, "case is ignored");
	cred("Github_Token=x", true, "case is ignored");
	/* well-known names and prefixes */
	cred("PGPASSWORD=x", true, "well-known");
	cred("MYSQL_PWD=x", true, "well-known");
	cred("pgpassword=x", true, "well-known, any case");
	cred("AWS_ACCESS_KEY_ID=x", true, "well-known");
	cred("TF_TOKEN_app_terraform_io=x", true, "prefix TF_TOKEN_");
	cred("OP_SESSION_my=x", true, "prefix OP_SESSION_");
	/* and what they must leave alone */
	cred("TOKENIZERS_PARALLELISM=false", false, "TOKEN not as a suffix");
	cred("GITHUB_TOKENS=x", false, "_TOKENS is not _TOKEN");
	cred("MYTOKEN=x", false, "no _ before TOKEN");
	cred("PGPASSWORDX=x", false, "not the well-known name");
	cred("PGUSER=app", false, "the user is no secret");
	cred("TF_TOKEN_=x", false, "a prefix alone names nothing");
	cred("TF_VAR_region=x", false, "another prefix");
	cred("SSH_AUTH_SOCK=/run/x", false, "a socket path");
	cred("GIT_ASKPASS=/usr/bin/x", false, "ASKPASS is not _PASS");
	cred("OLDPWD=/x", false, "a directory");
	cred("PATH=/usr/bin", false, "plain");
	cred("LANG=C.UTF-8", false, "plain");
	cred("HOME=/home/x", false, "plain");
	cred("GITHUB_TOKEN", true, "no '=': judged by its name");
}

static void test_values(void)
{
	cred("DATABASE_URL=postgres://app:pw@db/app", true, "a URL with a password");
	cred("CACHE=redis://:pw@cache:6379", true, "an empty user, a password");
	cred("HTTPS_PROXY=http://user:pw@proxy:3128", true, "a proxy with a password");
	cred("REPO=https://ghp_abc@github.com/o/r.git", true, "a user in an https URL");
	cred("MIRRORS=ftp://a.example,http://tok@b.example/", true, "the second URL of a list");
	cred("X=see HTTP://u:p@h", true, "scheme case is ignored");
	cred("DATABASE_URL=postgres://app@db/app", false, "a user, no password");
	cred("DATABASE_URL=postgres://app:@db/app", false, "an empty password");
	cred("GIT_REMOTE=ssh://git@github.com/o/r.git", false, "ssh with a user only");
	cred("HTTPS_PROXY=http://proxy:3128", false, "no user part");
	cred("URL=https://example.com/a@b", false, "an @ in the path");
	cred("URL=https://example.com?q=u:p@x", false, "an @ in the query");
	cred("REMOTE=git@github.com:o/r.git", false, "scp-like, not a URL");
	cred("MAIL=mailto:u:p@example.com", false, "no //");
	cred("X=://u:p@h", false, "no scheme");
	cred("X=1ftp://u:p@h", true, "the scheme starts at its first letter");
}

/* "NAME=value" entries as a vector. */
static char **vec(const char *const *v)
{
	char **out = calloc(1, sizeof(*out));

	for (size_t i = 0; v[i]; i++)
		strv_push(&out, v[i]);
	return out;
}

static char *joined(char *const *v)
{
	char *s = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&s, &len);

	for (size_t i = 0; f && v && v[i]; i++)
		fprintf(f, "%s%s", i ? " " : "", v[i]);
	if (f)
		fclose(f);
	return s;
}

static void test_build(void)
{
	static const char *const caller[] = {
		"PATH=/usr/bin", "GITHUB_TOKEN=ghp_1", "LANG=C", "AWS_SECRET_ACCESS_KEY=k",
		"github_token=ghp_2", "BROKEN", "HTTP_PROXY=http://u:p@old", "GITHUB_TOKEN=ghp_3",
		"NPM_TOKEN=n", NULL,
	};
	static const char *const pass[] = { "NPM_TOKEN", "aws_secret_access_key", NULL };
	static const char *const set[] = { "HTTP_PROXY=http://127.0.0.1:3128", NULL };
	char **env = vec(caller), **p = vec(pass), **s = vec(set), **out = NULL;
	struct envfilter_removed r = { 0 };
	char *got;

	ok(envfilter_build(env, p, s, &out, &r) == 0, "build");
	got = joined(out);
	is_str(got, "PATH=/usr/bin LANG=C NPM_TOKEN=n HTTP_PROXY=http://127.0.0.1:3128",
	       "kept: the plain ones, the one passed by exact name, then the plan's own, "
	       "which replaces the caller's of the same name");
	free(got);
	got = joined(r.names);
	is_str(got, "AWS_SECRET_ACCESS_KEY GITHUB_TOKEN github_token",
	       "left out: sorted, each once (a pass of another case lets nothing through)");
	free(got);
	is_int(r.malformed, 1, "the entry without '=' is dropped and counted");
	for (size_t i = 0; out && out[i]; i++)
		ok(out[i] != env[i], "the result holds copies (entry %zu)", i);
	strv_free(out);
	envfilter_removed_clear(&r);

	/* nothing to pass, nothing set, no report asked */
	out = NULL;
	ok(envfilter_build(env, NULL, NULL, &out, NULL) == 0, "build without pass, set or report");
	got = joined(out);
	is_str(got, "PATH=/usr/bin LANG=C", "... only the plain ones are kept");
	free(got);
	strv_free(out);

	/* an empty environment */
	out = NULL;
	ok(envfilter_build(NULL, NULL, s, &out, &r) == 0 && strv_len(out) == 1 && !r.names,
	   "an empty environment gets the plan's own only");
	strv_free(out);
	envfilter_removed_clear(&r);
	strv_free(env);
	strv_free(p);
	strv_free(s);
}

static char *note_of(const struct envfilter_removed *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	envfilter_note(f, r);
	fclose(f);
	return buf;
}

static void test_note(void)
{
	static const char *const caller[] = { "GITHUB_TOKEN=ghp_value", "X\x1b[2J_TOKEN=v2",
					      "PLAIN=1", "ODD", NULL };
	char **env = vec(caller), **out = NULL, *text;
	struct envfilter_removed r = { 0 };

	envfilter_build(env, NULL, NULL, &out, &r);
	text = note_of(&r);
	is_str(text,
	       "cordon: env: left out (credential-like; pass one with --pass-env NAME or "
	       "env.pass): GITHUB_TOKEN X?[2J_TOKEN; and 1 entry without '='\n",
	       "the note names what was left out, as plain text, and counts the rest");
	ok(!strstr(text, "ghp_value") && !strstr(text, "v2") && !strstr(text, "ODD"),
	   "... and holds no value, nor the entry without '='");
	free(text);
	envfilter_removed_clear(&r);
	text = note_of(&r);
	is_str(text, "", "nothing left out: no note");
	free(text);
	strv_free(out);
	strv_free(env);
}

static void test_scrub(void)
{
	char a[] = "GITHUB_TOKEN=ghp_x", b[] = "PATH=/bin";
	char *v[] = { a, b, NULL };
	bool zero = true;

	envfilter_scrub(v);
	for (size_t i = 0; i < sizeof(a); i++)
		zero &= a[i] == '\0';
	for (size_t i = 0; i < sizeof(b); i++)
		zero &= b[i] == '\0';
	ok(zero, "scrub leaves every byte of every entry zero");
}

int main(void)
{
	test_names();
	test_values();
	test_build();
	test_note();
	test_scrub();
	return done_testing();
}
