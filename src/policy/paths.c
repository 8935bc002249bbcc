/* paths.c: the policy's path templates: strict checking, lexical
 * normalisation, and expansion for one launch. */
#include "policy/policy.h"
#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const placeholders[] = { "{workspace}", "{run}", "{toolbelt}" };

/* Length of the leading placeholder or "~" of in, 0 for an absolute path,
 * -1 when the start is none of these. */
static int template_prefix(const char *in, const char **why)
{
	if (in[0] == '/')
		return 0;
	if (in[0] == '~') {
		if (in[1] == '\0' || in[1] == '/')
			return 1;
		*why = "`~user` is not supported; use an absolute path";
		return -1;
	}
	for (size_t i = 0; i < sizeof(placeholders) / sizeof(*placeholders); i++) {
		size_t n = strlen(placeholders[i]);
		if (strncmp(in, placeholders[i], n) == 0 &&
		    (in[n] == '\0' || in[n] == '/'))
			return (int)n;
	}
	*why = in[0] == '{' ? "unknown placeholder (known: {workspace}, {run}, {toolbelt})"
			    : "path must be absolute, start with ~/ or a placeholder";
	return -1;
}

static int normalise(const char *in, size_t len, char **out, const char **why);

int policy_path_normalise(const char *in, size_t len, char **out,
			  const char **why)
{
	char *copy;
	int r;

	if (len == 0)
		return *why = "empty path", -1;
	if (memchr(in, '\0', len))
		return *why = "path holds a NUL character", -1;
	if (len >= PATH_MAX)
		return *why = "path longer than PATH_MAX", -1;
	/* everything below reads a string of exactly len bytes */
	copy = strndup(in, len);
	if (!copy)
		return *why = "out of memory", -1;
	r = normalise(copy, len, out, why);
	free(copy);
	return r;
}

/* in: exactly len bytes, no NUL, shorter than PATH_MAX (checked above) */
static int normalise(const char *in, size_t len, char **out, const char **why)
{
	char buf[PATH_MAX];
	size_t w;
	int pre;

	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)in[i];
		if (c == '*' || c == '?' || c == '[')
			return *why = "patterns are not supported: name a path", -1;
		if (c < 0x20 || c == 0x7f)
			return *why = "path holds a control character", -1;
	}
	pre = template_prefix(in, why);
	if (pre < 0)
		return -1;
	if (strchr(in + pre, '{') || strchr(in + pre, '}'))
		return *why = "braces are reserved for a leading placeholder", -1;
	memcpy(buf, in, (size_t)pre);
	w = (size_t)pre;
	/* Components: "." dropped, ".." refused, repeated slashes folded. */
	for (const char *p = in + pre; *p;) {
		const char *end;
		size_t n;

		while (*p == '/')
			p++;
		if (!*p)
			break;
		end = strchrnul(p, '/');
		n = (size_t)(end - p);
		if (n == 2 && p[0] == '.' && p[1] == '.')
			return *why = "`..` components are not allowed", -1;
		if (!(n == 1 && p[0] == '.')) {
			buf[w++] = '/';
			memcpy(buf + w, p, n);
			w += n;
		}
		p = end;
	}
	if (w == 0)
		buf[w++] = '/';
	buf[w] = '\0';
	*out = strdup(buf);
	if (!*out)
		return *why = "out of memory", -1;
	return 0;
}

int policy_path_resolve(const char *tmpl, const struct path_ctx *ctx,
			char **out, struct err **e)
{
	return policy_path_resolve_links(tmpl, ctx, out, NULL, e);
}

int policy_path_resolve_links(const char *tmpl, const struct path_ctx *ctx, char **out,
			      char ***links, struct err **e)
{
	_cleanup_free_ char *abs = NULL;
	const char *base = NULL, *rest = tmpl;

	if (tmpl[0] == '~') {
		base = ctx->home;
		rest = tmpl + 1;
		if (!base || base[0] != '/')
			return err_set(e, ERR_CONFIG, 0,
				       "`%s`: HOME is not an absolute path", tmpl);
	} else if (tmpl[0] == '{') {
		const char *vals[] = { ctx->workspace, ctx->run, ctx->toolbelt };
		for (size_t i = 0; i < sizeof(placeholders) / sizeof(*placeholders); i++) {
			size_t n = strlen(placeholders[i]);
			if (strncmp(tmpl, placeholders[i], n) == 0) {
				base = vals[i];
				rest = tmpl + n;
				if (!base)
					return err_set(e, ERR_CONFIG, 0,
						       "`%s`: this launch has no %s",
						       tmpl, placeholders[i]);
			}
		}
		if (!base)
			return err_set(e, ERR_CONFIG, 0, "`%s`: unknown placeholder", tmpl);
	}
	abs = base ? fs_path_join(base, rest) : strdup(tmpl);
	if (!abs)
		return err_set(e, ERR_INTERNAL, ENOMEM, "resolve `%s`", tmpl);
	if (strlen(abs) >= PATH_MAX)
		return err_set(e, ERR_CONFIG, ENAMETOOLONG, "`%s`", tmpl);
	return fs_canonical_links(abs, out, links, e);
}
