/* gitconfig.h: a reader of git's config file format that runs nothing
 * and follows nothing (no include is read, no path is opened), and the
 * list of the keys through which a config makes git run a program.
 *
 * The grammar is git's own (config.c: sections, `[section "sub"]` and the
 * old `[section.sub]`, quoting, the escapes \\ \" \n \t \b, continuation
 * lines, `#` and `;` comments, a bare key meaning true, CRLF, a leading
 * UTF-8 byte-order mark), read byte for byte as git reads it, so that a
 * file cannot say one thing to git and another to this reader. */
#ifndef CORDON_LIB_GITCONFIG_H
#define CORDON_LIB_GITCONFIG_H

#include <stdbool.h>
#include <stddef.h>

/* Called for each variable in file order. key is git's full name:
 * "section.name" or "section.subsection.name", the section and the name
 * lower-cased, a quoted subsection as written (the old dotted form is
 * lower-cased whole, as git does); value is NULL for a bare key. Return
 * non-zero to stop the parse (gitconfig_parse then returns that value). */
typedef int (*gitconfig_fn)(const char *key, const char *value, void *ctx);

/* Parse len bytes of a config file. 0 when the whole file is valid; -1
 * when git would refuse it (git then dies before it uses anything of
 * it), with *err_line the line of the fault (1-based; may be NULL). The
 * variables before the fault have been passed to fn. */
int gitconfig_parse(const char *buf, size_t len, gitconfig_fn fn, void *ctx,
		    size_t *err_line);

/* Does this variable make git (or a tool git documents, such as
 * git-lfs) run a program, or read another file for more settings? key
 * as gitconfig_fn gets it; value NULL for a bare key. */
bool gitconfig_key_runs(const char *key, const char *value);

/* git's boolean text (true/yes/on/1..., false/no/off/0/empty, case
 * insensitive, integers with a k/m/g suffix): 1, 0, or -1 when the text
 * is not a boolean. NULL (a bare key) is true. */
int gitconfig_bool(const char *value);

#endif
