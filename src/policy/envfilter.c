/* envfilter.c: the credential-like variables of a caller's environment
 * (envfilter.h). The lists below are the ones docs/policy.md shows, and
 * tests/unit/defaults.c checks that the two agree.
 *
 * Names are compared ignoring ASCII case: variable names are
 * case-sensitive, but the same secret turns up as GITHUB_TOKEN,
 * github_token or Github_Token in people's shells, and npm reads
 * npm_config_//host/:_authToken. A name wrongly taken for a credential
 * costs a line on stderr and a --pass-env; a missed one costs the secret. */
#include "policy/envfilter.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A name that ends with one of these, or is one without its leading '_'
 * (TOKEN, API_KEY, PASSWORD), is a credential. */
const char *const envfilter_suffixes[] = {
	"_TOKEN", "_API_KEY", "_APIKEY", "_SECRET", "_SECRET_KEY", "_PASSWORD",
	"_PASSWD", "_PASS", "_PASSPHRASE", "_ACCESS_KEY", "_PRIVATE_KEY", "_CREDENTIALS",
	"_AUTHTOKEN", "_CONNECTION_STRING", "_WEBHOOK_URL", NULL,
};

/* A name that starts with one of these is a credential. */
const char *const envfilter_prefixes[] = {
	"TF_TOKEN_",	/* Terraform: TF_TOKEN_<host>, an API token per host */
	"OP_SESSION_",	/* 1Password CLI: OP_SESSION_<account>, a session token */
	NULL,
};

/* Well-known credentials that no suffix catches, each as the tool that
 * reads it documents it. */
const char *const envfilter_names[] = {
	"PGPASSWORD",		/* PostgreSQL libpq: the password */
	"MYSQL_PWD",		/* MySQL clients: the password */
	"SNOWSQL_PWD",		/* SnowSQL: the password */
	"REDISCLI_AUTH",	/* redis-cli: the password */
	"SSHPASS",		/* sshpass -e: the ssh password */
	"CONSUL_HTTP_AUTH",	/* Consul: user:password for its API */
	"AWS_ACCESS_KEY_ID",	/* AWS CLI and SDKs: half of a key pair */
	"AZURE_STORAGE_KEY",	/* Azure CLI: a storage account key */
	"AZURE_DEVOPS_EXT_PAT",	/* Azure DevOps CLI: a personal access token */
	"SYSTEM_ACCESSTOKEN",	/* Azure Pipelines: the job's token */
	"GITHUB_PAT",		/* R (remotes, usethis): a GitHub token */
	"BW_SESSION",		/* Bitwarden CLI: the unlocked vault's key */
	"DOCKER_AUTH_CONFIG",	/* GitLab Runner: registry logins as JSON */
	"NPM_CONFIG__AUTH",	/* npm: _auth, base64 user:password */
	"KAGGLE_KEY",		/* Kaggle API: the key */
	"RAILS_MASTER_KEY",	/* Rails: decrypts credentials.yml.enc */
	"SECRET_KEY_BASE",	/* Rails: signs sessions */
	"SENTRY_DSN",		/* Sentry: a URL holding the project key */
	"CI_JOB_JWT",		/* GitLab CI: the job's identity token */
	"CI_JOB_JWT_V2",
	NULL,
};

static char upper(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* a[0..n) equals the NUL-terminated b, ignoring ASCII case. */
static bool same_ci(const char *a, size_t n, const char *b)
{
	size_t i = 0;

	for (; i < n && b[i]; i++)
		if (upper(a[i]) != upper(b[i]))
			return false;
	return i == n && b[i] == '\0';
}

static bool name_is_credential(const char *name, size_t n)
{
	for (size_t i = 0; envfilter_names[i]; i++)
		if (same_ci(name, n, envfilter_names[i]))
			return true;
	for (size_t i = 0; envfilter_prefixes[i]; i++) {
		size_t k = strlen(envfilter_prefixes[i]);
		if (n > k && same_ci(name, k, envfilter_prefixes[i]))
			return true;
	}
	for (size_t i = 0; envfilter_suffixes[i]; i++) {
		const char *s = envfilter_suffixes[i];
		size_t k = strlen(s);
		if ((n >= k && same_ci(name + n - k, k, s)) || same_ci(name, n, s + 1))
			return true;
	}
	return false;
}

static bool scheme_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (!first && ((c >= '0' && c <= '9') || c == '+' || c == '-' || c == '.'));
}

/* Does the URL whose "://" is at sep (scheme before it, from start)
 * carry a credential: a password in its user info, or, for http(s), any
 * user info at all (a token is often sent as the user name)? */
static bool url_has_credential(const char *start, const char *sep)
{
	const char *s = sep, *a = sep + 3, *at = NULL, *colon = NULL;
	bool http;

	while (s > start && scheme_char(s[-1], false))
		s--;
	while (s < sep && !scheme_char(*s, true))
		s++;
	if (s == sep)
		return false;
	/* the authority ends at a path, query or fragment, or where a list
	 * of URLs goes on to the next one */
	for (const char *p = a; *p && !strchr("/?#,; \t\n", *p); p++)
		if (*p == '@')
			at = p;
	if (!at)
		return false;
	for (const char *p = a; p < at; p++)
		if (*p == ':' && !colon)
			colon = p;
	http = (sep - s == 4 && same_ci(s, 4, "http")) || (sep - s == 5 && same_ci(s, 5, "https"));
	return (colon && colon + 1 < at) || (http && at > a);
}

static bool value_is_credential(const char *v)
{
	for (const char *p = strstr(v, "://"); p; p = strstr(p + 3, "://"))
		if (url_has_credential(v, p))
			return true;
	return false;
}

bool envfilter_is_credential(const char *entry)
{
	const char *eq = strchr(entry, '=');
	size_t n = eq ? (size_t)(eq - entry) : strlen(entry);

	return name_is_credential(entry, n) || (eq && value_is_credential(eq + 1));
}

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');
	return eq ? (size_t)(eq - entry) : strlen(entry);
}

/* Is there an entry in v named name[0..n) (exactly; entries "NAME=..." or
 * bare names, as pass holds)? */
static bool named_in(char *const *v, const char *name, size_t n)
{
	for (size_t i = 0; v && v[i]; i++)
		if (name_len(v[i]) == n && strncmp(v[i], name, n) == 0)
			return true;
	return false;
}

int envfilter_build(char *const *env, char *const *pass, char *const *set, char ***out,
		    struct envfilter_removed *removed)
{
	char **kept = calloc(1, sizeof(*kept)), **names = NULL;
	size_t malformed = 0;

	if (!kept)
		goto fail;
	for (size_t i = 0; env && env[i]; i++) {
		const char *entry = env[i];
		size_t n = name_len(entry);
		char *name;

		if (!strchr(entry, '=')) {
			malformed++;
			continue;
		}
		if (named_in(set, entry, n))
			continue;
		if (!envfilter_is_credential(entry) || named_in(pass, entry, n)) {
			if (strv_push(&kept, entry) < 0)
				goto fail;
			continue;
		}
		if (!removed)
			continue;
		name = strndup(entry, n);
		if (!name || strv_push_take(&names, name) < 0)
			goto fail;
	}
	for (size_t i = 0; set && set[i]; i++)
		if (strv_push(&kept, set[i]) < 0)
			goto fail;
	if (removed) {
		if (names)
			strv_sort_unique(names);
		removed->names = names;
		removed->malformed = malformed;
	}
	*out = kept;
	return 0;
fail:
	strv_free(kept);
	strv_free(names);
	errno = ENOMEM;
	return -1;
}

void envfilter_removed_clear(struct envfilter_removed *r)
{
	strv_free(r->names);
	r->names = NULL;
	r->malformed = 0;
}

void envfilter_note(FILE *f, const struct envfilter_removed *r)
{
	size_t n = strv_len(r->names);

	if (n == 0 && r->malformed == 0)
		return;
	fputs("cordon: env: left out", f);
	if (n > 0)
		fputs(" (credential-like; pass one with --pass-env NAME or env.pass):", f);
	for (char *const *name = r->names; name && *name; name++) {
		fputc(' ', f);
		/* a name is the caller's own, but printed as plain text all
		 * the same: a terminal shows it, never runs it */
		for (const char *c = *name; *c; c++)
			fputc(*c >= 0x20 && *c < 0x7f ? *c : '?', f);
	}
	if (r->malformed > 0)
		fprintf(f, "%s%zu %s without '='", n > 0 ? "; and " : " ", r->malformed,
			r->malformed == 1 ? "entry" : "entries");
	fputc('\n', f);
}

int envfilter_for_command(char *const *env, char *const *pass, char *const *set, FILE *note,
			  char ***out)
{
	struct envfilter_removed r = { 0 };

	if (envfilter_build(env, pass, set, out, note ? &r : NULL) < 0)
		return -1;
	if (note)
		envfilter_note(note, &r);
	envfilter_removed_clear(&r);
	return 0;
}

void envfilter_scrub(char *const *env)
{
	for (size_t i = 0; env && env[i]; i++)
		explicit_bzero(env[i], strlen(env[i]));
}
