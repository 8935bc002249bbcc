/* settings.c: the merged grant as srt's settings (settings.h says how
 * each list is made and what is refused). */
#include "sandbox/srt/settings.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

#define MASK_DENY GRANT_MASK(GRANT_DENY)
#define MASK_WRITE GRANT_MASK(GRANT_WRITE)

/* Is b strictly beneath a? */
static bool strictly_within(const char *b, const char *a)
{
	return strcmp(a, b) != 0 && fs_path_within(b, a);
}

/* A rule of a kind in mask strictly above path, or NULL. */
static const struct grant_rule *above(const struct grant *g, const char *path,
				      unsigned int mask)
{
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		if ((mask & GRANT_MASK(r->kind)) && strictly_within(path, r->path))
			return r;
	}
	return NULL;
}

/* A readable rule beneath a deny: srt hides it unless allowRead names it. */
static bool is_exception(const struct grant *g, const struct grant_rule *r)
{
	return r->kind != GRANT_DENY && above(g, r->path, MASK_DENY) != NULL;
}

/* A rule srt must keep unwritable although a write grant holds it. */
static bool needs_deny_write(const struct grant *g, const struct grant_rule *r)
{
	switch (r->kind) {
	case GRANT_READ_ONLY:
		return true;
	case GRANT_DENY:
	case GRANT_READ:
		return grant_holder(g, r->path, MASK_WRITE) != NULL;
	case GRANT_WRITE:
		break;
	}
	return false;
}

int srt_settings_check(const struct grant *g, struct err **e)
{
	struct stat st;

	if (strv_len(g->sockets) > 0 && !g->unix_sockets_all)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "sockets: `%s`: on Linux a unix socket cannot be allowed by path; "
			       "set \"unix_sockets\": \"all\" to reach the sockets left visible",
			       g->sockets[0]);
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];

		for (size_t j = 0; j < g->n_rules; j++) {
			const struct grant_rule *x = &g->rules[j];

			if (!strictly_within(x->path, r->path))
				continue;
			/* srt restores an exception whole, over any deny inside it. */
			if (x->kind == GRANT_DENY && is_exception(g, r))
				return err_set(e, ERR_CONFIG, 0,
					       "srt: read exception `%s` holds denied `%s`; "
					       "srt cannot keep a deny beneath an exception",
					       r->path, x->path);
			if (x->kind == GRANT_WRITE && r->kind == GRANT_READ_ONLY)
				return err_set(e, ERR_CONFIG, 0,
					       "srt: read-only `%s` holds write grant `%s`",
					       r->path, x->path);
			/* srt binds an exception after, and over, the write
			 * grants beneath it. */
			if (x->kind == GRANT_WRITE && r->kind == GRANT_READ && is_exception(g, r))
				return err_set(e, ERR_CONFIG, 0,
					       "srt: write grant `%s` lies beneath read exception `%s`, "
					       "which is not writable; srt would bind the exception over it",
					       x->path, r->path);
		}
		/* srt ignores a write grant on a missing path. */
		if (r->kind == GRANT_WRITE && lstat(r->path, &st) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno,
				       "srt: write grant `%s` must exist (srt ignores a grant on a "
				       "missing path)", r->path);
	}
	/* srt's deny of a directory is an empty tmpfs, writable; inside a
	 * write grant neither denyWrite nor cordon's Landlock (which grants
	 * the whole grant) takes that back. */
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i], *w;

		if (r->kind == GRANT_DENY && (w = grant_holder(g, r->path, MASK_WRITE)) &&
		    stat(r->path, &st) == 0 && S_ISDIR(st.st_mode))
			return err_set(e, ERR_CONFIG, 0,
				       "srt: denied directory `%s` lies inside write grant `%s`; "
				       "srt would mount a writable tmpfs there", r->path, w->path);
	}
	return 0;
}

/* {"path": p, "literal": true}: srt never reads it as a pattern. */
static int push_literal(json_t *arr, const char *path, struct err **e)
{
	json_t *s = json_string(path);

	if (!s)
		return err_set(e, ERR_CONFIG, 0,
			       "srt: a path is not valid UTF-8; srt's settings are JSON");
	if (json_array_append_new(arr, json_pack("{s:o, s:b}", "path", s, "literal", 1)) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	return 0;
}

bool srt_settings_tmp_private(const struct grant *g)
{
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		if ((r->kind == GRANT_WRITE && fs_path_within("/tmp", r->path)) ||
		    (r->kind == GRANT_DENY && strcmp(r->path, "/tmp") == 0))
			return false;
	}
	return true;
}

static json_t *filesystem(const struct grant *g, const struct srt_helpers *h, struct err **e)
{
	_cleanup_json_ json_t *fs = NULL;
	json_t *deny_read = json_array(), *allow_read = json_array();
	json_t *allow_write = json_array(), *deny_write = json_array();

	fs = json_pack("{s:o*, s:o*, s:o*, s:o*}", "denyRead", deny_read, "allowRead",
		       allow_read, "allowWrite", allow_write, "denyWrite", deny_write);
	if (!fs || !deny_read || !allow_read || !allow_write || !deny_write) {
		err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		return NULL;
	}
	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];

		if ((r->kind == GRANT_DENY && push_literal(deny_read, r->path, e) < 0) ||
		    (is_exception(g, r) && push_literal(allow_read, r->path, e) < 0) ||
		    (r->kind == GRANT_WRITE && push_literal(allow_write, r->path, e) < 0) ||
		    (needs_deny_write(g, r) && push_literal(deny_write, r->path, e) < 0))
			return NULL;
	}
	/* The host's /tmp is not the sandbox's: srt's empty tmpfs there,
	 * which confine lets the command write (write grants beneath /tmp
	 * are bound back over it by srt). */
	if (srt_settings_tmp_private(g) && push_literal(deny_read, "/tmp", e) < 0)
		return NULL;
	/* ... but cordon's own binary, when it lives there (a build tree
	 * under /tmp), is bound back, read-only: srt runs it inside. */
	if (srt_settings_tmp_private(g) && h && h->self && fs_path_within(h->self, "/tmp") &&
	    push_literal(allow_read, h->self, e) < 0)
		return NULL;
	return steal_pointer(&fs);
}

/* Every connection leaves through cordon's gateway, srt's external proxy
 * on both protocols; srt's own allowlist is left empty and strict, so
 * nothing would pass should srt ever start its own proxy. */
static json_t *network(const struct grant *g, const struct srt_ports *ports)
{
	json_t *n = json_pack("{s:[], s:[], s:b, s:b}", "allowedDomains", "deniedDomains",
			      "strictAllowlist", 1, "allowLocalBinding", 0);

	if (n && g->unix_sockets_all &&
	    json_object_set_new(n, "allowAllUnixSockets", json_true()) < 0)
		goto fail;
	if (n && ports && ports->http > 0 &&
	    (json_object_set_new(n, "httpProxyPort", json_integer(ports->http)) < 0 ||
	     json_object_set_new(n, "socksProxyPort", json_integer(ports->socks)) < 0))
		goto fail;
	return n;
fail:
	json_decref(n);
	return NULL;
}

int srt_settings_build(const struct grant *g, const struct srt_helpers *h,
		       const struct srt_ports *ports, json_t **out, struct err **e)
{
	_cleanup_json_ json_t *s = NULL;
	json_t *fs, *net;

	if (srt_settings_check(g, e) < 0)
		return -1;
	fs = filesystem(g, h, e);
	if (!fs)
		return -1;
	net = network(g, ports);
	s = json_pack("{s:o*, s:o}", "network", net, "filesystem", fs);
	if (!s || !net)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	/* The helpers cordon checked are the ones srt runs. */
	if (h && (json_object_set_new(s, "bwrapPath", json_string(h->bwrap)) < 0 ||
		  json_object_set_new(s, "socatPath", json_string(h->socat)) < 0 ||
		  json_object_set_new(s, "ripgrep", json_pack("{s:s}", "command", h->rg)) < 0))
		return err_set(e, ERR_CONFIG, 0, "srt: a helper's path is not valid UTF-8");
	*out = steal_pointer(&s);
	return 0;
}

char *srt_settings_text(const json_t *s)
{
	return json_dumps(s, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII);
}

int srt_settings_write(const char *record_dir, const json_t *s, bool durable,
		       struct err **e)
{
	_cleanup_free_ char *text = srt_settings_text(s);
	_cleanup_close_ int fd = -1;
	size_t len;

	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
	len = strlen(text);
	fd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", record_dir);
	return fs_write_atomic(fd, SRT_SETTINGS_FILE, text, len, 0444, durable, e);
}
