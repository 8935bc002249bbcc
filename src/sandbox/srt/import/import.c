/* import.c: srt's settings read as a cordon policy (import.h says how;
 * `cordon policy import-srt FILE` is cli/policy.c's). This file owns the
 * paths (filesystem and credentials) and the notes on the keys cordon has
 * no equivalent of; net.c owns the network.
 *
 * Paths: an absolute path and `~/...` stay as they are; a relative one is
 * taken from {workspace} (srt takes it from the directory it runs in). A
 * pattern cordon cannot hold is dropped from an allow list and, in a deny
 * list, denies the whole directory it starts from. srt's denyWrite has no
 * equivalent (cordon's denies are read denies): it becomes a read deny,
 * and a write grant it holds is dropped, since srt lets the deny win;
 * srt's mandatory write denies become read denies in each write grant the
 * same way. A withheld variable cordon would pass refuses the settings. */
#include "sandbox/srt/import/import.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "policy/defaults.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <string.h>

void srt_note(struct srt_import *im, const char *where, const char *fmt, ...)
{
	va_list ap;

	fprintf(im->notes, "cordon: import-srt: %s: ", json_path_show(where));
	va_start(ap, fmt);
	/* clang-tidy 14's analyzer does not see va_start above */
	vfprintf(im->notes, fmt, ap); // NOLINT(clang-analyzer-valist.Uninitialized)
	va_end(ap);
	fputc('\n', im->notes);
}

char *srt_quote(const char *s)
{
	char *out = malloc(strlen(s) * 4 + 3), *o = out;

	if (!out)
		return NULL;
	*o++ = '`';
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\') {
			*o++ = '\\';
			*o++ = '\\';
		} else if (*c >= 0x20 && *c < 0x7f) {
			*o++ = (char)*c;
		} else {
			o += sprintf(o, "\\x%02x", *c);
		}
	}
	*o++ = '`';
	*o = '\0';
	return out;
}

/* What srt reads as a pattern; a lone ']' is itself in srt and cordon. */
static bool has_pattern(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] == '*' || s[i] == '?' || s[i] == '[')
			return true;
	return false;
}

/* A name cordon's paths cannot hold: a pattern's characters, braces
 * (reserved for placeholders), control characters. */
static bool unnameable(const char *c, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char b = (unsigned char)c[i];

		if (b < 0x20 || b == 0x7f || strchr("*?[{}", b))
			return true;
	}
	return false;
}

/* Cut a deny pattern to the directory it starts from: the text before the
 * last slash ahead of its first pattern character ("" for none: the
 * working directory; "/" when that slash is the first). */
static void cut_to_directory(char *s)
{
	size_t first = 0, slash = 0;
	bool seen = false;

	while (!strchr("*?[", s[first]))
		first++;
	for (size_t i = 0; i < first; i++)
		if (s[i] == '/') {
			slash = i;
			seen = true;
		}
	s[!seen ? 0 : slash == 0 ? 1 : slash] = '\0';
}

enum {
	HOW_RELATIVE = 1,	/* taken from {workspace} */
	HOW_STARS = 2,		/* a trailing slash-star-star read as the directory */
	HOW_CUT = 4,		/* a deny cordon cannot name: its directory instead */
};

/* The template for the literal path s (no pattern left in it unless it
 * is marked literal), or *dropped set. -1 for a deny that climbs out of
 * where cordon can name it with "..". */
static int to_template(const char *where, const char *s, bool deny, char **out,
		       unsigned int *how, const char **dropped, struct err **e)
{
	_cleanup_strv_ char **comps = calloc(1, sizeof(char *));
	_cleanup_free_ char *t = NULL;
	const char *root = "{workspace}", *rest = s, *c = s;
	size_t len = 0;

	if (!comps)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	if (s[0] == '/') {
		root = "";
		rest = s + 1;
	} else if (strcmp(s, "~") == 0 || strncmp(s, "~/", 2) == 0) {
		root = "~";
		rest = s + 1;
	} else {
		*how |= HOW_RELATIVE;
	}
	for (c = rest; *c; c += len + (c[len] == '/')) {
		len = strcspn(c, "/");
		if (len == 0 || (len == 1 && c[0] == '.'))
			continue;
		if (len == 2 && c[0] == '.' && c[1] == '.') {
			size_t n = strv_len(comps);

			/* srt folds ".." in a relative path as text, and in
			 * any other only through the file system. */
			if (*root == '{' && n > 0) {
				free(comps[n - 1]);
				comps[n - 1] = NULL;
				continue;
			}
			if (deny)
				return err_set(e, ERR_CONFIG, 0, "%s: a deny whose `..` leads out of "
					       "where a cordon path can name it; write the path "
					       "without `..`", where);
			*dropped = "its `..` leads out of where a cordon path can name it "
				   "(grants less)";
			return 0;
		}
		if (unnameable(c, len)) {
			if (!deny) {
				*dropped = "a pattern, or a name with braces or control characters, "
					   "which cordon's paths cannot hold (grants less)";
				return 0;
			}
			*how |= HOW_CUT;
			break;
		}
		if (strv_push_take(&comps, strndup(c, len)) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	}
	if (!(t = strdup(root)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	for (size_t i = 0; comps[i]; i++) {
		char *n = NULL;

		if (asprintf(&n, "%s/%s", t, comps[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		free(t);
		t = n;
	}
	if (!*t) {
		free(t);
		if (!(t = strdup("/")))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	}
	*out = steal_pointer(&t);
	return 0;
}

int srt_import_path(struct srt_import *im, const char *where, const json_t *v,
		    enum srt_path_use use, const char *extra, char **out, struct err **e)
{
	bool literal = json_is_object(v), deny = use == SRT_PATH_DENY;
	const char *s = json_string_value(literal ? json_object_get(v, "path") : v);
	const char *dropped = NULL, *why = NULL;
	_cleanup_free_ char *work = NULL, *tmpl = NULL, *norm = NULL, *q = NULL, *qt = NULL;
	unsigned int how = 0;
	size_t n;

	*out = NULL;
	if (!s || !*s)
		return err_set(e, ERR_CONFIG, 0, "%s: empty path (srt refuses it)", where);
	work = strdup(s);
	q = srt_quote(s);
	if (!work || !q)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	n = strlen(work);
	if (!literal && has_pattern(work, n)) {
		if (n >= 3 && strcmp(work + n - 3, "/**") == 0 && !has_pattern(work, n - 3) &&
		    use != SRT_PATH_ALLOW) {
			work[n > 3 ? n - 3 : 1] = '\0';
			how |= HOW_STARS;
		} else if (!deny) {
			dropped = "a pattern, and cordon names paths only (grants less)";
		} else {
			cut_to_directory(work);
			how |= HOW_CUT;
		}
	}
	n = strlen(work);
	while (n > 1 && work[n - 1] == '/')
		work[--n] = '\0';
	if (!dropped && to_template(where, work, deny, &tmpl, &how, &dropped, e) < 0)
		return -1;
	if (tmpl && policy_path_normalise(tmpl, strlen(tmpl), &norm, &why) < 0) {
		if (deny)
			return err_set(e, ERR_CONFIG, 0, "%s: cordon cannot name this deny: %s", where,
				       why);
		dropped = why;
	}
	if (dropped) {
		srt_note(im, where, "%s dropped: %s", q, dropped);
		return 0;
	}
	if (how || extra) {
		const char *said[4];
		char text[1024] = "";
		size_t k = 0, len = 0;

		if (how & HOW_RELATIVE)
			said[k++] = "a relative path is taken from the workspace (srt takes it "
				    "from the directory it runs in)";
		if (how & HOW_STARS)
			said[k++] = deny ? "a trailing /** is read as the directory itself, "
					   "which is denied too (stricter)"
					 : "a trailing /** names the directory, as srt on Linux "
					   "reads it";
		if (how & HOW_CUT)
			said[k++] = "cordon takes no patterns (nor *, ?, [, braces or control "
				    "characters in a name): the whole directory they start from "
				    "is denied instead (stricter)";
		if (extra)
			said[k++] = extra;
		if (!(qt = srt_quote(norm)))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		for (size_t i = 0; i < k && len < sizeof(text); i++)
			len += (size_t)snprintf(text + len, sizeof(text) - len, "%s%s",
						i ? "; " : "", said[i]);
		if (how)
			srt_note(im, where, "%s read as %s; %s", q, qt, text);
		else
			srt_note(im, where, "%s: %s", qt, text);
	}
	*out = steal_pointer(&norm);
	return 0;
}

/* Is template a the template b or beneath it (as text: one spelling)? */
static bool tmpl_within(const char *a, const char *b)
{
	size_t n = strlen(b);

	if (strcmp(b, "/") == 0)
		return a[0] == '/';
	return strncmp(a, b, n) == 0 && (a[n] == '\0' || a[n] == '/');
}

/* Where template t leads on this host: `~` as $HOME, then every link of
 * the part that exists followed. NULL for a template of the workspace
 * (not known here) or one that cannot be followed. */
static char *canonical(const char *t)
{
	_cleanup_free_ char *full = NULL;
	const char *home = getenv("HOME");
	size_t n;

	if (t[0] == '~' && home && home[0] == '/') {
		if (asprintf(&full, "%s%s", home, t + 1) < 0)
			full = NULL;
	} else if (t[0] == '/') {
		full = strdup(t);
	}
	if (!full)
		return NULL;
	n = strlen(full);
	/* The longest prefix that exists, resolved, and the rest as written. */
	for (size_t cut = n; cut > 0;) {
		char *r, *out = NULL;
		char save = full[cut];

		full[cut] = '\0';
		r = realpath(full, NULL);
		full[cut] = save;
		if (r) {
			if (asprintf(&out, "%s%s", strcmp(r, "/") == 0 && full[cut] ? "" : r,
				     full + cut) < 0)
				out = NULL;
			free(r);
			return out;
		}
		if (errno != ENOENT && errno != ENOTDIR)
			return NULL;
		while (cut > 0 && full[--cut] != '/')
			;
		if (cut == 0)
			return strdup(full);
	}
	return NULL;
}

/* Is template a the template b or beneath it, spelled so or where both
 * lead on this host? */
static bool held_by(const char *a, const char *b)
{
	_cleanup_free_ char *ca = NULL, *cb = NULL;

	if (tmpl_within(a, b))
		return true;
	ca = canonical(a);
	cb = canonical(b);
	return ca && cb && tmpl_within(ca, cb);
}

const char *srt_denied_at(const struct srt_import *im, const char *t)
{
	char *const *deny = im->p->read_deny, *const *allow = im->p->read_allow;

	for (size_t i = 0; deny[i]; i++) {
		bool lifted = false;

		if (!held_by(t, deny[i]))
			continue;
		for (size_t k = 0; allow[k] && !lifted; k++)
			lifted = held_by(t, allow[k]) && held_by(allow[k], deny[i]) &&
				 !held_by(deny[i], allow[k]);
		if (!lifted)
			return deny[i];
	}
	return NULL;
}

/* The longest entry of list that holds t (strictly: other than t), or
 * NULL: the rule nearest above t. */
static const char *nearest(char *const *list, const char *t, bool strictly)
{
	const char *best = NULL;

	for (size_t i = 0; list[i]; i++)
		if (tmpl_within(t, list[i]) && (!strictly || strcmp(t, list[i]) != 0) &&
		    (!best || strlen(list[i]) > strlen(best)))
			best = list[i];
	return best;
}

/* A deny strictly beneath t, the policy's or one of cordon's default
 * credentials, as a template in buf; NULL when there is none. */
static const char *deeper_deny(char *const *denies, const char *t, char *buf, size_t size)
{
	for (size_t i = 0; denies[i]; i++)
		if (tmpl_within(denies[i], t) && strcmp(denies[i], t) != 0)
			return denies[i];
	for (size_t i = 0; policy_home_credentials[i]; i++) {
		snprintf(buf, size, "~/%s", policy_home_credentials[i]);
		if (tmpl_within(buf, t) && strcmp(buf, t) != 0)
			return buf;
	}
	for (size_t i = 0; policy_host_credentials[i]; i++)
		if (tmpl_within(policy_host_credentials[i], t) &&
		    strcmp(policy_host_credentials[i], t) != 0)
			return policy_host_credentials[i];
	return NULL;
}

/* Does t name one of cordon's default credentials exactly? */
static bool names_default_credential(const char *t)
{
	const char *const *list = policy_host_credentials;

	if (strncmp(t, "~/", 2) == 0) {
		list = policy_home_credentials;
		t += 2;
	}
	for (size_t i = 0; list[i]; i++)
		if (strcmp(list[i], t) == 0)
			return true;
	return false;
}

/* Each entry of the path list obj[key] at path, into dst (and also, when
 * not NULL). */
static int import_list(struct srt_import *im, json_t *obj, const char *path, const char *key,
		       enum srt_path_use use, const char *extra, char ***dst, char ***also,
		       struct err **e)
{
	_cleanup_free_ char *kp = json_path_key(path, key);
	json_t *arr = json_object_get(obj, key), *v;
	size_t i;

	if (!kp)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index(kp, i), *t = NULL;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (srt_import_path(im, ip, v, use, extra, &t, e) < 0)
			return -1;
		if (t && policy_add_path(dst, t, ip, e) < 0)
			return -1;
		if (t && also && strv_push(also, t) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	}
	return 0;
}

/* allowRead: read exceptions, and what cordon makes of them otherwise. */
static int import_allow_read(struct srt_import *im, json_t *fs, struct err **e)
{
	json_t *arr = json_object_get(fs, "allowRead"), *v;
	char **deny = im->p->read_deny;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("filesystem.allowRead", i), *t = NULL;
		_cleanup_free_ char *qt = NULL, *qd = NULL;
		char buf[PATH_MAX];
		const char *d;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (srt_import_path(im, ip, v, SRT_PATH_ALLOW, NULL, &t, e) < 0)
			return -1;
		if (!t)
			continue;
		if (!(qt = srt_quote(t)))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		/* srt binds back no allowRead beneath a credential file's deny;
		 * cordon's guard would make it a read exception there. */
		for (size_t k = 0; im->cred[k] && !qd; k++)
			if (held_by(t, im->cred[k]) && !(qd = srt_quote(im->cred[k])))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (qd) {
			srt_note(im, ip, "%s dropped: it lies in %s, a credential file srt denies "
				 "with nothing read back beneath it (grants less)", qt, qd);
			continue;
		}
		if (policy_add_path(&im->p->read_allow, t, ip, e) < 0)
			return -1;
		if (names_default_credential(t))
			srt_note(im, ip, "%s names one of cordon's default credential denies exactly, "
				 "which lifts it (srt denies no credential unless told)", qt);
		if (strv_contains(deny, t))
			srt_note(im, ip, "%s is denied as well: in cordon the deny wins (in srt the "
				 "allow does; stricter)", qt);
		/* An exception (beneath a deny) holding a deeper deny. */
		if (nearest(deny, t, true) && (d = deeper_deny(deny, t, buf, sizeof(buf)))) {
			if (!(qd = srt_quote(d)))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			srt_note(im, ip, "read exception %s holds denied %s: cordon refuses an "
				 "exception holding a deeper deny at launch (stricter)", qt, qd);
		}
	}
	return 0;
}

/* allowWrite: write grants, but those a denyWrite holds, which srt lets
 * the deny win over. */
static int import_allow_write(struct srt_import *im, json_t *fs, char *const *deny_write,
			      struct err **e)
{
	json_t *arr = json_object_get(fs, "allowWrite"), *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("filesystem.allowWrite", i), *t = NULL;
		_cleanup_free_ char *qt = NULL, *qd = NULL;
		const char *d, *a;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (srt_import_path(im, ip, v, SRT_PATH_WRITE, NULL, &t, e) < 0)
			return -1;
		if (!t)
			continue;
		if (!(qt = srt_quote(t)))
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if ((d = nearest(deny_write, t, false))) {
			if (!(qd = srt_quote(d)))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			srt_note(im, ip, "write grant %s dropped: srt's denyWrite, read as %s, holds it and "
				 "wins over allowWrite", qt, qd);
			continue;
		}
		if (policy_add_path(&im->p->write, t, ip, e) < 0)
			return -1;
		/* cordon judges a write grant by the rule nearest above it, a read
		 * exception at the same path not counting (the grant replaces it). */
		d = nearest(im->p->read_deny, t, false);
		a = nearest(im->p->read_allow, t, true);
		if (d && (!a || strlen(d) >= strlen(a))) {
			if (!(qd = srt_quote(d)))
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			srt_note(im, ip, "write grant %s lies in denied %s: cordon refuses a write "
				 "grant beneath a deny at launch (srt binds it back, readable and "
				 "writable); stricter", qt, qd);
		}
	}
	return 0;
}

/* credentials.files: each is denied whole (srt's mask has no equivalent). */
static int import_credential_files(struct srt_import *im, json_t *creds, struct err **e)
{
	json_t *arr = json_object_get(creds, "files"), *f;
	size_t i;

	json_array_foreach(arr, i, f) {
		_cleanup_free_ char *ip = json_path_index("credentials.files", i), *t = NULL;
		bool mask = strcmp(json_string_value(json_object_get(f, "mode")), "mask") == 0;

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (srt_import_path(im, ip, json_object_get(f, "path"), SRT_PATH_DENY,
				    mask ? "masking has no equivalent in cordon: the file is "
					   "denied whole (stricter)" : NULL, &t, e) < 0)
			return -1;
		if (t && policy_add_path(&im->p->read_deny, t, ip, e) < 0)
			return -1;
		if (t && strv_push(&im->cred, t) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	}
	return 0;
}

/* credentials.envVars: cordon's own filter withholds a credential-like
 * name; no policy key withholds another, and passing it would be wider
 * than srt: the settings are refused, naming the entry. */
static int import_credential_env(struct srt_import *im, json_t *creds, struct err **e)
{
	json_t *arr = json_object_get(creds, "envVars"), *v;
	size_t i;

	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index("credentials.envVars", i);
		const char *name = json_string_value(json_object_get(v, "name"));
		_cleanup_free_ char *qn = srt_quote(name);
		bool mask = strcmp(json_string_value(json_object_get(v, "mode")), "mask") == 0;

		if (!ip || !qn)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (!envfilter_is_credential(name))
			return err_set(e, ERR_CONFIG, 0, "%s: cordon cannot withhold %s: its name is "
				       "not credential-like, and no policy key withholds a variable by "
				       "name (unset it before running cordon, and drop the entry)",
				       json_path_show(ip), qn);
		srt_note(im, ip, "cordon withholds %s already: its name is credential-like "
			 "(unless env.pass names it)%s", qn,
			 mask ? "; withheld whole, not masked (stricter)" : "");
	}
	return 0;
}

#define HELPER "dropped: srt's own helper; cordon's srt provider pins and checks its helpers " \
	       "(cordon doctor --provider srt) and the native sandbox needs none"
#define MACOS "macOS only: no effect here"
#define MASKING "dropped: it serves masking, which cordon does not do"

static const struct srt_drop root_drops[] = {
	{ "ignoreViolations", SRT_WHEN_NONEMPTY, "dropped: it silences srt's reports only" },
	{ "enableWeakerNestedSandbox", SRT_WHEN_TRUE, "cordon has no weaker mode: a sandbox it "
	  "cannot build whole is refused (stricter)" },
	{ "allowNestedUserNamespaces", SRT_WHEN_TRUE, "cordon's seccomp filter refuses new user "
	  "namespaces whatever the policy (stricter)" },
	{ "enableWeakerNetworkIsolation", SRT_WHEN_TRUE, MACOS },
	{ "allowAppleEvents", SRT_WHEN_TRUE, MACOS },
	{ "allowPty", SRT_WHEN_TRUE, MACOS },
	{ "ripgrep", SRT_WHEN_ANY, HELPER },
	{ "seccomp", SRT_WHEN_ANY, HELPER },
	{ "bwrapPath", SRT_WHEN_ANY, HELPER },
	{ "socatPath", SRT_WHEN_ANY, HELPER },
	{ "javaAgentJarPath", SRT_WHEN_ANY, "dropped: cordon points a command at its gateway "
	  "with the proxy environment variables only" },
	{ "mandatoryDenySearchDepth", SRT_WHEN_ANY, "dropped: cordon looks for such files after "
	  "a run, through the whole workspace (docs/workspace.md)" },
	{ "windows", SRT_WHEN_ANY, "Windows only: dropped" },
	{ "git", SRT_WHEN_ANY, "dropped: cordon sets no git safe.directory" },
	{ NULL, SRT_WHEN_ANY, NULL },
};

static const struct srt_drop filesystem_drops[] = {
	{ "disabled", SRT_WHEN_TRUE, "srt would enforce no filesystem rule; cordon always does, "
	  "and the lists were converted as written (stricter)" },
	{ "allowGitConfig", SRT_WHEN_TRUE, "cordon keeps the workspace's .git/config read-only "
	  "all the same (stricter)" },
	{ NULL, SRT_WHEN_ANY, NULL },
};

static const struct srt_drop credentials_drops[] = {
	{ "allowPlaintextInject", SRT_WHEN_ANY, MASKING },
	{ "awsPairs", SRT_WHEN_ANY, MASKING },
	{ "sigv4", SRT_WHEN_ANY, MASKING },
	{ NULL, SRT_WHEN_ANY, NULL },
};

void srt_drop_notes(struct srt_import *im, const json_t *obj, const char *path,
		    const struct srt_drop *drops)
{
	for (const struct srt_drop *d = drops; d->key; d++) {
		const json_t *v = json_object_get(obj, d->key);
		_cleanup_free_ char *kp = NULL;

		if (!v || (d->when == SRT_WHEN_TRUE && !json_is_true(v)) ||
		    (d->when == SRT_WHEN_FALSE && !json_is_false(v)) ||
		    (d->when == SRT_WHEN_NONEMPTY && json_array_size(v) == 0 && json_object_size(v) == 0))
			continue;
		kp = json_path_key(path, d->key);
		srt_note(im, kp ? kp : path, "%s", d->what);
	}
}

/* srt's mandatory write denies (its DANGEROUS_FILES and _DIRECTORIES):
 * names that would run a program as whoever next opens a shell, an editor
 * or an agent there. .git/hooks and .git/config come last: cordon keeps
 * the workspace's read-only itself (docs/workspace.md). */
static const char *const mandatory_denies[] = {
	".gitconfig", ".gitmodules", ".bashrc", ".bash_profile", ".zshrc", ".zprofile",
	".profile", ".ripgreprc", ".mcp.json", ".vscode", ".idea", ".claude/commands",
	".claude/agents", ".git/hooks", ".git/config", NULL,
};
#define MANDATORY_GIT 13	/* the index of .git/hooks */

/* cordon has no write-only deny, so each mandatory deny in each write
 * grant becomes a read deny (stricter: unreadable too), as denyWrite
 * does. A missing one holds as any denied path inside a write grant does:
 * the name cannot be created (docs/native.md, docs/srt.md). */
static int import_mandatory_denies(struct srt_import *im, struct err **e)
{
	_cleanup_strv_ char **grants = strv_dup(im->p->write);

	if (!grants)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	for (size_t g = 0; grants[g]; g++) {
		_cleanup_free_ char *qt = srt_quote(grants[g]);

		if (!qt)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		for (size_t i = 0; mandatory_denies[i]; i++) {
			_cleanup_free_ char *t = NULL;

			if (i >= MANDATORY_GIT && strcmp(grants[g], "{workspace}") == 0)
				continue;
			if (asprintf(&t, "%s/%s", strcmp(grants[g], "/") == 0 ? "" : grants[g],
				     mandatory_denies[i]) < 0)
				return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
			if (policy_add_path(&im->p->read_deny, t, "filesystem.allowWrite", e) < 0)
				return -1;
		}
		srt_note(im, "filesystem.allowWrite", "srt's mandatory write denies in write grant "
			 "%s (.bashrc, .bash_profile, .zshrc, .zprofile, .profile, .gitconfig, "
			 ".gitmodules, .ripgreprc, .mcp.json, .vscode, .idea, .claude/commands, "
			 ".claude/agents%s): cordon has no write-only deny: each is in read.deny, "
			 "denied for reading too (stricter)", qt,
			 strcmp(grants[g], "{workspace}") == 0 ? "; .git/hooks and .git/config "
			 "cordon keeps read-only in the workspace, and moves out what a run plants "
			 "in .git (docs/workspace.md)" : ", .git/hooks, .git/config");
	}
	if (grants[0])
		srt_note(im, "filesystem.allowWrite", "srt also denies these names deeper in a "
			 "write grant where they exist at launch (mandatoryDenySearchDepth levels "
			 "down); cordon denies them at the top of each grant, and names the agents' "
			 "and editors' files a run leaves anywhere in the workspace, after it "
			 "(wider below the top)");
	return 0;
}

/* The filesystem, and the credential files (read denies, which allowRead
 * and allowWrite are judged against). */
static int import_filesystem(struct srt_import *im, json_t *root, struct err **e)
{
	json_t *fs = json_object_get(root, "filesystem"), *creds = json_object_get(root, "credentials");
	_cleanup_strv_ char **deny_write = calloc(1, sizeof(char *));

	if (!deny_write)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	srt_drop_notes(im, fs, "filesystem", filesystem_drops);
	if (import_list(im, fs, "filesystem", "denyRead", SRT_PATH_DENY, NULL,
			&im->p->read_deny, NULL, e) < 0 ||
	    import_list(im, fs, "filesystem", "denyWrite", SRT_PATH_DENY,
			"cordon has no write-only deny: it is denied for reading too (stricter)",
			&im->p->read_deny, &deny_write, e) < 0 ||
	    (creds && import_credential_files(im, creds, e) < 0) ||
	    import_allow_read(im, fs, e) < 0 || import_allow_write(im, fs, deny_write, e) < 0)
		return -1;
	srt_note(im, "filesystem.denyRead", "srt reads every path denyRead does not name; cordon "
		 "also denies its default credentials (~/.ssh, ~/.aws, ...), escape sockets and "
		 "its own state (docs/policy.md, sections 6 and 7) unless read.allow or sockets "
		 "name them (stricter)");
	srt_note(im, "filesystem.allowWrite", "srt lets a command write /tmp/claude, ~/.npm/_logs "
		 "and ~/.claude/debug unlisted; cordon only what write names and the run's own "
		 "directory (stricter)");
	return import_mandatory_denies(im, e);
}

static int import_all(struct srt_import *im, json_t *root, struct err **e)
{
	json_t *creds = json_object_get(root, "credentials");

	if (import_filesystem(im, root, e) < 0 ||
	    srt_import_network(im, json_object_get(root, "network"), e) < 0)
		return -1;
	if (creds && import_credential_env(im, creds, e) < 0)
		return -1;
	if (creds)
		srt_drop_notes(im, creds, "credentials", credentials_drops);
	srt_drop_notes(im, root, "", root_drops);
	return 0;
}

int srt_import(const char *buf, size_t len, FILE *notes, struct policy **out,
	       struct err **e)
{
	_cleanup_json_ json_t *root = NULL;
	_cleanup_policy_ struct policy *p = NULL;
	struct srt_import im = { .notes = notes };
	int r;

	root = json_parse_strict(buf, len, e);
	if (!root || srt_schema_check(root, e) < 0 || policy_parse("{}", 2, &p, e) < 0)
		return -1;
	im.p = p;
	if (!(im.cred = calloc(1, sizeof(char *))))
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	r = import_all(&im, root, e);
	strv_free(im.cred);
	if (r < 0)
		return -1;
	*out = steal_pointer(&p);
	return 0;
}
