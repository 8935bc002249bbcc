/* rules.c: the guard's merge of policy, default denies, protected set and
 * needs into one set of path rules, the checks that refuse what no
 * provider could hold, and the check of each need against the grant. */
#include "guard/internal.h"
#include "guard/planted.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MASK_DENY GRANT_MASK(GRANT_DENY)
#define MASK_ALL (~0u)

bool guard_in_exception(const struct guard_state *s, const char *path)
{
	for (size_t i = 0; s->exceptions && s->exceptions[i]; i++)
		if (fs_path_within(path, s->exceptions[i]))
			return true;
	return false;
}

const char *guard_protected_holder(const struct guard_state *s, const char *path)
{
	if (guard_in_exception(s, path))
		return NULL;
	for (size_t i = 0; s->protected && s->protected[i]; i++)
		if (fs_path_within(path, s->protected[i]))
			return s->protected[i];
	return NULL;
}

/* The most specific rule strictly above path, of a kind in mask. */
static const struct grant_rule *holder_above(const struct grant *g,
					     const char *path, unsigned int mask)
{
	const struct grant_rule *best = NULL;

	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i];
		if (!(mask & GRANT_MASK(r->kind)) || strcmp(r->path, path) == 0 ||
		    !fs_path_within(path, r->path))
			continue;
		if (!best || strlen(r->path) > strlen(best->path))
			best = r;
	}
	return best;
}

static int add_all(struct grant *g, char *const *v, enum grant_kind kind,
		   const char *origin, struct err **e)
{
	for (size_t i = 0; v && v[i]; i++)
		if (v[i][0] && grant_add(g, v[i], kind, origin, e) < 0)
			return -1;
	return 0;
}

static int add_defaults(struct guard_state *s, const struct resolved *r,
			struct err **e)
{
	struct default_deny *d = NULL;
	size_t n = 0;
	int rc = 0;

	if (policy_default_denies(&s->in->defaults, &d, &n, e) < 0)
		return -1;
	for (size_t i = 0; rc == 0 && i < n; i++) {
		/* Lifted only by naming the exact path in the right list. */
		bool lifted = d[i].kind == DEFAULT_CREDENTIAL
				      ? strv_contains(r->allow, d[i].path)
				      : strv_contains(r->sockets, d[i].path);
		if (!lifted)
			rc = grant_add(s->g, d[i].path, GRANT_DENY, "default", e);
		if (rc == 0 && !lifted)
			rc = guard_note_links(s, "default deny", d[i].path, steal_pointer(&d[i].links), e);
	}
	policy_default_denies_free(d, n);
	return rc;
}

/* The workspace's git metadata that host-side git would run code from
 * (guard/planted.h says which). */
static int add_git_needs(struct guard_state *s, struct err **e)
{
	_cleanup_strv_ char **ro = NULL;

	if (planted_git_readonly(s->in->workspace, &ro, e) < 0)
		return -1;
	for (size_t i = 0; ro && ro[i]; i++)
		if (grant_add(s->g, ro[i], GRANT_READ_ONLY, "workspace git", e) < 0)
			return -1;
	return 0;
}

static int add_exceptions(struct guard_state *s, const struct resolved *r,
			  struct err **e)
{
	const struct guard_input *in = s->in;

	for (size_t i = 0; s->exceptions[i]; i++) {
		bool ro = (in->toolbelt_dir && strcmp(s->exceptions[i], in->toolbelt_dir) == 0) ||
			  (in->provider_dir && strcmp(s->exceptions[i], in->provider_dir) == 0);
		if (grant_add(s->g, s->exceptions[i], ro ? GRANT_READ_ONLY : GRANT_READ,
			      "protected exception", e) < 0)
			return -1;
	}
	/* A read.allow entry is an exception only beneath a deny. */
	for (size_t i = 0; r->allow[i]; i++) {
		const struct grant_rule *d;
		if (!r->allow[i][0])
			continue;
		d = holder_above(s->g, r->allow[i], MASK_DENY);
		if (d && grant_add(s->g, r->allow[i], GRANT_READ, "policy", e) < 0)
			return -1;
	}
	for (size_t i = 0; r->sockets[i]; i++) {
		if (!r->sockets[i][0])
			continue;
		if (strv_push(&s->g->sockets, r->sockets[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "sockets");
		if (holder_above(s->g, r->sockets[i], MASK_DENY) &&
		    grant_add(s->g, r->sockets[i], GRANT_READ, "socket", e) < 0)
			return -1;
	}
	return 0;
}

int guard_merge_rules(struct guard_state *s, const struct resolved *r,
		      struct err **e)
{
	const struct needs *n = s->in->executor;

	if (add_defaults(s, r, e) < 0 ||
	    add_all(s->g, r->deny, GRANT_DENY, "policy", e) < 0 ||
	    add_all(s->g, s->protected, GRANT_DENY, "protected", e) < 0 ||
	    (n && add_all(s->g, n->deny, GRANT_DENY, "executor", e) < 0))
		return -1;
	if (add_exceptions(s, r, e) < 0)
		return -1;
	if (add_git_needs(s, e) < 0 ||
	    (n && add_all(s->g, n->read_only, GRANT_READ_ONLY, "executor", e) < 0))
		return -1;
	if (add_all(s->g, r->write, GRANT_WRITE, "policy", e) < 0 ||
	    grant_add(s->g, s->in->run_dir, GRANT_WRITE, "run dir", e) < 0)
		return -1;
	return 0;
}

/* What no provider may be asked to hold: a write grant beneath a deny or
 * a read-only path, or a read exception with a deny beneath it (it would
 * re-expose the deny wherever exceptions are bound over denies). */
int guard_check_rules(const struct guard_state *s, struct err **e)
{
	const struct grant *g = s->g;

	for (size_t i = 0; i < g->n_rules; i++) {
		const struct grant_rule *r = &g->rules[i], *h;

		if (r->kind == GRANT_WRITE) {
			h = holder_above(g, r->path, MASK_ALL & ~GRANT_MASK(GRANT_WRITE));
			/* The protected set's own exceptions sit beneath its deny. */
			bool excepted = h && h->kind == GRANT_DENY &&
					strcmp(h->origin, "protected") == 0 &&
					guard_in_exception(s, r->path);
			if (h && h->kind == GRANT_DENY && !excepted)
				return err_set(e, ERR_DENIED, 0,
					       "write grant `%s` lies beneath denied `%s` (%s)",
					       r->path, h->path, h->origin);
			if (h && h->kind == GRANT_READ_ONLY)
				return err_set(e, ERR_DENIED, 0,
					       "write grant `%s` lies beneath read-only `%s`",
					       r->path, h->path);
		}
		if (r->kind != GRANT_READ || strcmp(r->origin, "protected exception") == 0)
			continue;
		for (size_t j = 0; j < g->n_rules; j++) {
			const struct grant_rule *x = &g->rules[j];
			if (x->kind == GRANT_DENY && strcmp(x->path, r->path) != 0 &&
			    fs_path_within(x->path, r->path))
				return err_set(e, ERR_DENIED, 0,
					       "read exception `%s` holds denied `%s` (%s); "
					       "an exception cannot hold a deeper deny",
					       r->path, x->path, x->origin);
		}
	}
	return 0;
}

/* Refuse a need beneath the protected set or a default deny: those are
 * the host's and no policy grants them to an executor. */
static int need_place(const struct guard_state *s, const char *path,
		      const char *what, struct err **e)
{
	const char *p = guard_protected_holder(s, path);
	const struct grant_rule *d;

	if (p)
		return err_set(e, ERR_DENIED, 0, "%s need `%s` lies in protected `%s`",
			       what, path, p);
	d = grant_holder(s->g, path, MASK_DENY);
	if (d && strcmp(d->origin, "default") == 0)
		return err_set(e, ERR_DENIED, 0,
			       "%s need `%s` lies beneath default deny `%s`", what,
			       path, d->path);
	return 0;
}

static int check_paths(const struct guard_state *s, char *const *v,
		       const char *what, enum grant_kind want, struct err **e)
{
	unsigned int mask = MASK_ALL;

	/* A read-only need is itself a rule; judge it by the rules above. */
	if (want == GRANT_READ_ONLY)
		mask &= ~GRANT_MASK(GRANT_READ_ONLY);
	for (size_t i = 0; v && v[i]; i++) {
		const struct grant_rule *h;

		if (need_place(s, v[i], what, e) < 0)
			return -1;
		h = grant_holder(s->g, v[i], mask);
		if (want == GRANT_WRITE && (!h || h->kind != GRANT_WRITE))
			return err_set(e, ERR_DENIED, 0,
				       "write need `%s` is outside the policy's write grants",
				       v[i]);
		if (want != GRANT_WRITE && h && h->kind == GRANT_DENY)
			return err_set(e, ERR_DENIED, 0,
				       "%s need `%s` is denied by `%s` (%s)", what, v[i],
				       h->path, h->origin);
	}
	return 0;
}

/* What an executor denies (claude-code: the operator's ~/.claude) no
 * grant of the policy may reach: a write grant, read exception or socket
 * at the path or beneath it is refused, not silently overruled. (A grant
 * that holds it keeps it denied inside, as it keeps every deny.) */
int guard_check_denied_needs(const struct guard_state *s, const struct resolved *r,
			     struct err **e)
{
	const struct needs *n = s->in->executor;
	char **const lists[] = { r->write, r->allow, r->sockets };
	static const char *const what[] = { "write grant", "read exception", "socket" };

	for (size_t i = 0; n && n->deny && n->deny[i]; i++)
		for (size_t l = 0; l < 3; l++)
			for (size_t k = 0; lists[l] && lists[l][k]; k++)
				if (lists[l][k][0] && fs_path_within(lists[l][k], n->deny[i]))
					return err_set(e, ERR_DENIED, 0,
						       "the policy's %s `%s` reaches `%s`, which the "
						       "executor denies",
						       what[l], lists[l][k], n->deny[i]);
	return 0;
}

int guard_check_needs(struct guard_state *s, const struct needs *n,
		      struct err **e)
{
	if (check_paths(s, n->write, "write", GRANT_WRITE, e) < 0 ||
	    check_paths(s, n->read, "read", GRANT_READ, e) < 0 ||
	    check_paths(s, n->read_only, "read-only", GRANT_READ_ONLY, e) < 0)
		return -1;
	for (size_t i = 0; n->sockets && n->sockets[i]; i++) {
		if (need_place(s, n->sockets[i], "socket", e) < 0)
			return -1;
		if (!strv_contains(s->g->sockets, n->sockets[i]))
			return err_set(e, ERR_DENIED, 0,
				       "socket need `%s` is not in the policy's sockets",
				       n->sockets[i]);
	}
	for (size_t i = 0; i < n->n_hosts; i++) {
		const struct policy *p = s->in->policy;
		bool covered = false;

		bool denied = false;

		for (size_t j = 0; !covered && j < p->n_net_allow; j++)
			covered = host_covers(&p->net_allow[j], &n->hosts[i]);
		for (size_t j = 0; !denied && j < p->n_net_deny; j++)
			denied = host_covers(&p->net_deny[j], &n->hosts[i]);
		if (!covered || denied) {
			_cleanup_free_ char *h = host_format(&n->hosts[i]);
			return err_set(e, ERR_DENIED, 0,
				       "host need `%s` is %s", h ? h : "?",
				       denied ? "in the policy's network.deny"
					      : "not in the policy's network.allow");
		}
	}
	return 0;
}
