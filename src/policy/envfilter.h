/* envfilter.h: which variables of the caller's environment reach the
 * command. Credential-like ones (docs/policy.md, "The environment") are
 * left out unless the policy passes them by exact name (env.pass,
 * --pass-env). Pure functions: the providers call them where they build
 * the command's environment, and nothing here prints or keeps a value. */
#ifndef CORDON_POLICY_ENVFILTER_H
#define CORDON_POLICY_ENVFILTER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* Is this entry ("NAME=value") credential-like: by its name (a
 * well-known one, a credential suffix or prefix, compared ignoring ASCII
 * case) or by its value (a URL that carries a password, or any user
 * name in an http(s) URL)? An entry without '=' is judged by its name. */
bool envfilter_is_credential(const char *entry);

/* The lists, NULL-terminated, for the documentation's test: names, name
 * prefixes and name suffixes (all upper case). */
extern const char *const envfilter_names[];
extern const char *const envfilter_prefixes[];
extern const char *const envfilter_suffixes[];

/* What envfilter_build left out. */
struct envfilter_removed {
	char **names;		/* credential-like names, sorted, each once */
	size_t malformed;	/* entries without '=': dropped, never named */
};

/* The command's environment: each entry of env kept unless it is
 * credential-like and its name is not in pass (exact, case-sensitive),
 * or it has no '=', or set has the same name; then set's entries
 * ("KEY=value", the plan's own) appended. *out is a new vector of
 * copies. removed (may be NULL) gets the names left out. -1 (errno
 * ENOMEM) on failure, with nothing allocated. */
int envfilter_build(char *const *env, char *const *pass, char *const *set, char ***out,
		    struct envfilter_removed *removed);
void envfilter_removed_clear(struct envfilter_removed *r);

/* One line on f naming what was left out (names only, as printable
 * ASCII), and how to pass one; nothing when nothing was. */
void envfilter_note(FILE *f, const struct envfilter_removed *r);

/* envfilter_build, then envfilter_note on note unless it is NULL (cordon
 * run -q): what a provider calls where it builds the command's
 * environment. */
int envfilter_for_command(char *const *env, char *const *pass, char *const *set, FILE *note,
			  char ***out);

/* Overwrite every string of env with zeros, in place: a process that
 * hands a filtered environment on scrubs its own copy, which a process
 * of the same user could read through /proc/<pid>/environ or mem. */
void envfilter_scrub(char *const *env);

#endif
