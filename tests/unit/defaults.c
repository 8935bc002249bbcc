/* tests/unit/defaults.c: the lists docs/policy.md shows are the code's.
 * Section 6's credential tables name the default credentials of
 * src/policy/defaults.c, and "The environment" names the suffixes,
 * prefixes and names of src/policy/envfilter.c: each entry of one is in
 * the other, each once. The default credentials also resolve where they
 * should. Reads $CORDON_SRC/docs/policy.md (the source tree; `.` when
 * unset). */
#include "lib/err.h"
#include "lib/strv.h"
#include "policy/defaults.h"
#include "policy/envfilter.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ELLIPSIS "\xe2\x80\xa6" /* U+2026, as the doc writes a suffix or prefix */

static char *read_doc(void)
{
	const char *src = getenv("CORDON_SRC");
	char path[4096], *buf = NULL;
	size_t cap = 0, n = 0, r;
	FILE *f;

	snprintf(path, sizeof(path), "%s/docs/policy.md", src && *src ? src : ".");
	f = fopen(path, "re");
	if (!f)
		return NULL;
	do {
		if (n + 4096 + 1 > cap) {
			char *nb = realloc(buf, cap = cap ? cap * 2 : 65536);
			if (!nb) {
				free(buf);
				fclose(f);
				return NULL;
			}
			buf = nb;
		}
		r = fread(buf + n, 1, 4096, f);
		n += r;
	} while (r > 0);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/* The first cells (between the first two backticks) of the table rows
 * ("| `...` |") from the line starting with from up to the first line
 * starting with to. */
static char **first_cells(const char *doc, const char *from, const char *to)
{
	const char *p = strstr(doc, from), *end;
	char **out = calloc(1, sizeof(*out));

	if (!p || !out)
		return out;
	end = strstr(p + strlen(from), to);
	if (!end)
		end = p + strlen(p);
	for (; p && p < end; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
		const char *a, *b;

		if (strncmp(p, "| `", 3) != 0)
			continue;
		a = p + 3;
		b = strchr(a, '`');
		if (b && b < end) {
			char *cell = strndup(a, (size_t)(b - a));
			if (!cell || strv_push_take(&out, cell) < 0)
				break;
		}
	}
	return out;
}

/* got and want hold the same strings, and got each once. */
static void same_set(char **got, const char *const *want, const char *what)
{
	size_t nwant = 0;

	for (; want[nwant]; nwant++)
		if (!ok(strv_contains(got, want[nwant]), "%s: the doc lists `%s`", what,
			want[nwant]))
			diag("add a row for it");
	for (size_t i = 0; got && got[i]; i++) {
		bool in = false;
		size_t times = 0;

		for (size_t k = 0; want[k]; k++)
			in |= strcmp(want[k], got[i]) == 0;
		for (size_t k = 0; got[k]; k++)
			times += strcmp(got[k], got[i]) == 0;
		if (!in || times != 1)
			ok(false, "%s: the doc's `%s` is %s", what, got[i],
			   in ? "listed twice" : "not in the code's list");
	}
	is_int(strv_len(got), nwant, "%s: as many entries in the doc as in the code", what);
}

/* Split the doc's cells into home entries ("~/x", kept as "x") and host
 * ones ("/x"). */
static void split_paths(char **cells, char ***home, char ***host)
{
	for (size_t i = 0; cells && cells[i]; i++) {
		if (strncmp(cells[i], "~/", 2) == 0)
			strv_push(home, cells[i] + 2);
		else
			strv_push(host, cells[i]);
	}
}

static void test_paths(const char *doc)
{
	char **cells = first_cells(doc, "**Credentials**", "**Escape sockets**");
	char **home = calloc(1, sizeof(*home)), **host = calloc(1, sizeof(*host));

	ok(strv_len(cells) > 100, "section 6 has its credential tables (%zu rows)",
	   strv_len(cells));
	split_paths(cells, &home, &host);
	same_set(home, policy_home_credentials, "home credentials");
	same_set(host, policy_host_credentials, "host credentials");
	strv_free(cells);
	strv_free(home);
	strv_free(host);
}

/* Each home entry is a plain relative path and each host one absolute:
 * nothing a join with HOME could turn into another place. */
static void test_path_forms(void)
{
	bool good = true;

	for (size_t i = 0; policy_home_credentials[i]; i++) {
		const char *p = policy_home_credentials[i];
		size_t n = strlen(p);
		if (n == 0 || p[0] == '/' || p[n - 1] == '/' || strstr(p, "//") ||
		    strstr(p, "/../") || strncmp(p, "../", 3) == 0 || strstr(p, "/./")) {
			ok(false, "home credential `%s` is a plain relative path", p);
			good = false;
		}
	}
	for (size_t i = 0; policy_host_credentials[i]; i++)
		if (policy_host_credentials[i][0] != '/') {
			ok(false, "host credential `%s` is absolute", policy_host_credentials[i]);
			good = false;
		}
	ok(good, "every home credential is relative, every host one absolute");
}

/* The resolved list: beneath HOME, with the host's own, each once. */
static void test_resolved(void)
{
	struct default_env env = { .home = "/nonexistent-cordon-home", .uid = 4242 };
	struct default_deny *d = NULL;
	struct err *e = NULL;
	size_t n = 0;
	bool snap = false, hist = false, shadow = false;

	if (!ok(policy_default_denies(&env, &d, &n, &e) == 0, "the default denies resolve")) {
		diag("%s", e ? e->msg : "?");
		err_free(e);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		snap |= strcmp(d[i].path, "/nonexistent-cordon-home/snap/firefox") == 0 &&
			d[i].kind == DEFAULT_CREDENTIAL;
		hist |= strcmp(d[i].path, "/nonexistent-cordon-home/.bash_history") == 0;
		shadow |= strcmp(d[i].path, "/etc/shadow") == 0;
	}
	ok(snap && hist && shadow, "~/snap/firefox, ~/.bash_history and /etc/shadow are denied");
	ok(n > strv_len((char *const *)policy_home_credentials),
	   "home, host and socket denies together (%zu)", n);
	policy_default_denies_free(d, n);
}

static void test_env_lists(const char *doc)
{
	char **cells = first_cells(doc, "### The environment", "\n## ");
	char **names = calloc(1, sizeof(*names)), **pre = calloc(1, sizeof(*pre));
	char **suf = calloc(1, sizeof(*suf));
	size_t el = strlen(ELLIPSIS);

	for (size_t i = 0; cells && cells[i]; i++) {
		char *c = cells[i];
		size_t n = strlen(c);

		if (strncmp(c, ELLIPSIS, el) == 0)
			strv_push(&suf, c + el);
		else if (n > el && strcmp(c + n - el, ELLIPSIS) == 0)
			(c[n - el] = '\0', strv_push(&pre, c));
		else
			strv_push(&names, c);
	}
	same_set(suf, envfilter_suffixes, "env suffixes");
	same_set(pre, envfilter_prefixes, "env prefixes");
	same_set(names, envfilter_names, "env names");
	strv_free(cells);
	strv_free(names);
	strv_free(pre);
	strv_free(suf);
}

int main(void)
{
	char *doc = read_doc();

	ok(doc != NULL, "docs/policy.md is readable (CORDON_SRC names the source tree)");
	if (!doc)
		return done_testing();
	test_paths(doc);
	test_path_forms();
	test_resolved();
	test_env_lists(doc);
	free(doc);
	return done_testing();
}
