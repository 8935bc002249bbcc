/* guard.c: guard_launch(), the one gate every provider's launch passes.
 * Order: the run dir and workspace are placed; the protected set (with its
 * mount aliases) is built; the policy is resolved and merged with the
 * default denies and the needs; the merged rules are checked for
 * contradictions the providers cannot hold; the needs are checked against
 * the grant; last, the workspace is walked for hard links. */
#include "guard/guard.h"
#include "guard/internal.h"
#include "guard/links.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/procfs.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The run dir: strictly beneath <state>/runs/, canonical, and reached
 * from / without a single symbolic link. */
static int check_run_dir(const struct guard_input *in, struct err **e)
{
	_cleanup_free_ char *runs = fs_path_join(in->state_dir, "runs");
	_cleanup_free_ char *canon = NULL;
	_cleanup_close_ int fd = -1;

	if (!runs)
		return err_set(e, ERR_INTERNAL, ENOMEM, "run dir");
	if (!fs_path_within(in->run_dir, runs) || strcmp(in->run_dir, runs) == 0)
		return err_set(e, ERR_DENIED, 0, "run dir `%s` is not beneath `%s`",
			       in->run_dir, runs);
	fd = fs_open_nofollow(AT_FDCWD, in->run_dir, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return err_set(e, ERR_DENIED, errno,
			       "run dir `%s` must be reached without symbolic links",
			       in->run_dir);
	if (fs_canonical(in->run_dir, &canon, e) < 0)
		return -1;
	if (strcmp(canon, in->run_dir) != 0)
		return err_set(e, ERR_DENIED, 0, "run dir `%s` is not canonical",
			       in->run_dir);
	return 0;
}

/* parent/cordon-srt into buf when parent is an absolute directory, not a
 * link, owned by owner and writable by nobody else, and the result fits. */
static bool sockdir_under(const char *parent, unsigned int owner, char *buf, size_t n)
{
	struct stat st;

	return parent && parent[0] == '/' && lstat(parent, &st) == 0 && S_ISDIR(st.st_mode) &&
	       st.st_uid == owner && (st.st_mode & 022) == 0 &&
	       (size_t)snprintf(buf, n, "%s/cordon-srt", parent) <= GUARD_SRT_SOCKDIR_MAX;
}

int guard_srt_sockdir(const char *state_dir, unsigned int uid, char *buf, size_t n)
{
	char user_run[32];

	/* the operator's runtime dir, as the session names it or as systemd
	 * makes it; root's own /run (nobody else creates there); the state
	 * dir when it is short enough */
	snprintf(user_run, sizeof(user_run), "/run/user/%u", uid);
	if (sockdir_under(getenv("XDG_RUNTIME_DIR"), uid, buf, n) ||
	    sockdir_under(user_run, uid, buf, n) || (uid == 0 && sockdir_under("/run", 0, buf, n)))
		return 0;
	return (size_t)snprintf(buf, n, "%s/srt", state_dir) <= GUARD_SRT_SOCKDIR_MAX ? 0 : -1;
}

static int build_protected(struct guard_state *s, struct err **e)
{
	const struct guard_input *in = s->in;
	char fallback[64], sockets[PATH_MAX];
	char **aliases = NULL;
	int r;

	snprintf(fallback, sizeof(fallback), GUARD_TMP_FMT, (unsigned)in->defaults.uid);
	/* too long for srt: its launch refuses; the name is protected all the same */
	(void)guard_srt_sockdir(in->state_dir, (unsigned)in->defaults.uid, sockets,
				sizeof(sockets));
	if (strv_push(&s->protected, in->state_dir) < 0 ||
	    strv_push(&s->protected, fallback) < 0 || strv_push(&s->protected, sockets) < 0 ||
	    (in->config_path && strv_push(&s->protected, in->config_path) < 0))
		return err_set(e, ERR_INTERNAL, ENOMEM, "protected set");
	if (strv_push(&s->exceptions, in->run_dir) < 0 ||
	    (in->toolbelt_dir && strv_push(&s->exceptions, in->toolbelt_dir) < 0) ||
	    (in->provider_dir && strv_push(&s->exceptions, in->provider_dir) < 0))
		return err_set(e, ERR_INTERNAL, ENOMEM, "protected set");
	if (in->mountinfo)
		r = procfs_mountinfo_parse(in->mountinfo, strlen(in->mountinfo), &s->mounts, e);
	else
		r = procfs_mountinfo_read(0, &s->mounts, e);
	if (r < 0)
		return err_wrap(e, "mount aliases");
	r = guard_mount_aliases(&s->mounts, s->protected, &aliases, e);
	for (size_t i = 0; r == 0 && aliases && aliases[i]; i++)
		if (!strv_contains(s->protected, aliases[i]) &&
		    strv_push(&s->protected, aliases[i]) < 0)
			r = err_set(e, ERR_INTERNAL, ENOMEM, "protected set");
	strv_free(aliases);
	return r;
}

/* A workspace may sit inside the state dir only beneath its workspaces/
 * folder, and never holds a protected path. */
static int place_workspace(struct guard_state *s, struct err **e)
{
	const struct guard_input *in = s->in;
	_cleanup_free_ char *owned = fs_path_join(in->state_dir, "workspaces");
	struct stat st;

	if (!owned)
		return err_set(e, ERR_INTERNAL, ENOMEM, "workspace");
	if (stat(in->workspace, &st) < 0)
		return err_set(e, ERR_DENIED, errno, "workspace `%s`", in->workspace);
	if (!S_ISDIR(st.st_mode))
		return err_set(e, ERR_DENIED, ENOTDIR, "workspace `%s`", in->workspace);
	for (size_t i = 0; s->protected[i]; i++) {
		if (fs_path_within(s->protected[i], in->workspace))
			return err_set(e, ERR_DENIED, 0,
				       "workspace `%s` contains protected `%s`",
				       in->workspace, s->protected[i]);
		if (fs_path_within(s->protected[i], in->run_dir) &&
		    strcmp(s->protected[i], in->state_dir) != 0)
			return err_set(e, ERR_DENIED, 0,
				       "run dir `%s` contains protected `%s`",
				       in->run_dir, s->protected[i]);
	}
	if (fs_path_within(in->workspace, owned) && strcmp(in->workspace, owned) != 0)
		return strv_push(&s->exceptions, in->workspace) < 0
			       ? err_set(e, ERR_INTERNAL, ENOMEM, "workspace")
			       : 0;
	if (guard_protected_holder(s, in->workspace))
		return err_set(e, ERR_DENIED, 0, "workspace `%s` lies in protected `%s`",
			       in->workspace, guard_protected_holder(s, in->workspace));
	return 0;
}

int guard_note_links(struct guard_state *s, const char *what, const char *item,
		     char **links, struct err **e)
{
	for (size_t i = 0; links && links[i]; i++) {
		struct guard_via *v = realloc(s->vias, (s->n_vias + 1) * sizeof(*v));

		if (!v) {
			strv_free(links);
			return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
		}
		s->vias = v;
		v[s->n_vias] = (struct guard_via){ what, strdup(item), strdup(links[i]) };
		if (!v[s->n_vias].item || !v[s->n_vias].link) {
			free(v[s->n_vias].item);
			free(v[s->n_vias].link);
			strv_free(links);
			return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
		}
		s->n_vias++;
	}
	strv_free(links);
	return 0;
}

static int resolve_all(struct guard_state *s, char *const *tmpls, const char *what,
		       char ***out, struct err **e)
{
	for (size_t i = 0; tmpls && tmpls[i]; i++) {
		char *p = NULL, **links = NULL;
		if (policy_path_resolve_links(tmpls[i], &s->ctx, &p, &links, e) < 0) {
			strv_free(links);
			return -1;
		}
		if (strv_push_take(out, p) < 0) {
			strv_free(links);
			return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
		}
		if (guard_note_links(s, what, tmpls[i], links, e) < 0)
			return -1;
	}
	return 0;
}

/* Every deny is denied under each other name a mount gives it too (the
 * home bound at a second path): the protected set's aliases were added
 * with it; these are the other denies' (the defaults', the policy's, the
 * executor's). */
static int add_deny_aliases(struct guard_state *s, struct err **e)
{
	_cleanup_strv_ char **denies = calloc(1, sizeof(char *));
	_cleanup_strv_ char **aliases = NULL;

	if (!denies)
		return err_set(e, ERR_INTERNAL, ENOMEM, "mount aliases");
	for (size_t i = 0; i < s->g->n_rules; i++)
		if (s->g->rules[i].kind == GRANT_DENY &&
		    !strv_contains(s->protected, s->g->rules[i].path) &&
		    strv_push(&denies, s->g->rules[i].path) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "mount aliases");
	if (guard_mount_aliases(&s->mounts, denies, &aliases, e) < 0)
		return err_wrap(e, "mount aliases");
	for (size_t i = 0; aliases && aliases[i]; i++)
		if (grant_add(s->g, aliases[i], GRANT_DENY, "mount alias", e) < 0)
			return -1;
	return 0;
}

/* A path resolved through a symbolic link the sandbox may write (one in a
 * write grant or in the workspace) is refused: between two launches the
 * command could point the link elsewhere, and the same policy would then
 * grant, or stop denying, a path nobody named (a repository can carry
 * `.venv -> /elsewhere`). */
static int check_links(const struct guard_state *s, struct err **e)
{
	const struct grant *g = s->g;

	for (size_t i = 0; i < s->n_vias; i++) {
		const struct guard_via *v = &s->vias[i];
		const char *holder = fs_path_within(v->link, s->in->workspace)
					     ? s->in->workspace : NULL;

		for (size_t k = 0; !holder && k < g->n_rules; k++)
			if (g->rules[k].kind == GRANT_WRITE &&
			    fs_path_within(v->link, g->rules[k].path))
				holder = g->rules[k].path;
		if (holder)
			return err_set(e, ERR_DENIED, 0,
				       "%s `%s` is reached through the symbolic link `%s`, which "
				       "lies in `%s`, where the sandbox may write: name the "
				       "link's target instead",
				       v->what, v->item, v->link, holder);
	}
	return 0;
}

static void resolved_free(struct resolved *r)
{
	strv_free(r->write);
	strv_free(r->deny);
	strv_free(r->allow);
	strv_free(r->sockets);
}

/* Policy grants that reach into the protected set, or hold a part of it
 * that has something writable beneath it, are refused. */
static int check_policy_protected(struct guard_state *s, const struct resolved *r,
				  struct err **e)
{
	const char *p;

	for (size_t i = 0; r->write[i]; i++) {
		if ((p = guard_protected_holder(s, r->write[i])))
			return err_set(e, ERR_DENIED, 0,
				       "write grant `%s` reaches into protected `%s`",
				       r->write[i], p);
		for (size_t j = 0; s->protected[j]; j++) {
			const char *q = s->protected[j];
			bool writable_inside = false;
			if (!fs_path_within(q, r->write[i]))
				continue;
			for (size_t k = 0; s->exceptions[k]; k++)
				writable_inside |= fs_path_within(s->exceptions[k], q);
			if (writable_inside)
				return err_set(e, ERR_DENIED, 0,
					       "write grant `%s` contains protected `%s`",
					       r->write[i], q);
		}
	}
	for (size_t i = 0; r->allow[i]; i++)
		if ((p = guard_protected_holder(s, r->allow[i])))
			return err_set(e, ERR_DENIED, 0,
				       "read exception `%s` reaches into protected `%s`",
				       r->allow[i], p);
	for (size_t i = 0; r->sockets[i]; i++) {
		bool own = s->in->toolbelt_socket &&
			   strcmp(r->sockets[i], s->in->toolbelt_socket) == 0;
		if (!own && (p = guard_protected_holder(s, r->sockets[i])))
			return err_set(e, ERR_DENIED, 0,
				       "socket `%s` lies in protected `%s`",
				       r->sockets[i], p);
	}
	return 0;
}

static int copy_hosts(struct grant *g, const struct policy *p, struct err **e)
{
	struct host_pattern *src[2] = { p->net_allow, p->net_deny };
	size_t cnt[2] = { p->n_net_allow, p->n_net_deny };
	struct host_pattern **dst[2] = { &g->hosts, &g->deny_hosts };
	size_t *dn[2] = { &g->n_hosts, &g->n_deny_hosts };

	for (int k = 0; k < 2; k++) {
		for (size_t i = 0; i < cnt[k]; i++) {
			_cleanup_free_ char *txt = host_format(&src[k][i]);
			const char *why = NULL;
			struct host_pattern *nv;

			if (!txt)
				return err_set(e, ERR_INTERNAL, ENOMEM, "hosts");
			nv = realloc(*dst[k], (*dn[k] + 1) * sizeof(*nv));
			if (!nv)
				return err_set(e, ERR_INTERNAL, ENOMEM, "hosts");
			*dst[k] = nv;
			if (host_parse(txt, strlen(txt), &nv[*dn[k]], &why) < 0)
				return err_set(e, ERR_INTERNAL, 0, "host: %s", why);
			(*dn[k])++;
		}
	}
	return 0;
}

/* The hard-link walk, with the workspace's denied paths counted as
 * outside it. */
static int check_hardlinks(const struct guard_state *s, struct err **e)
{
	_cleanup_strv_ char **denied = calloc(1, sizeof(char *));

	if (!denied)
		return err_set(e, ERR_INTERNAL, ENOMEM, "hard-link check");
	for (size_t i = 0; i < s->g->n_rules; i++)
		if (s->g->rules[i].kind == GRANT_DENY &&
		    fs_path_within(s->g->rules[i].path, s->in->workspace) &&
		    strv_push(&denied, s->g->rules[i].path) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "hard-link check");
	return guard_check_hardlinks(s->in->workspace, denied, s->g->limits.workspace_entries, e);
}

static int guard_run(struct guard_state *s, struct err **e)
{
	const struct guard_input *in = s->in;
	struct resolved r = { 0 };
	int rc = -1;

	/* empty vectors, so loops need no NULL checks */
	r.write = calloc(1, sizeof(char *));
	r.deny = calloc(1, sizeof(char *));
	r.allow = calloc(1, sizeof(char *));
	r.sockets = calloc(1, sizeof(char *));
	if (!r.write || !r.deny || !r.allow || !r.sockets) {
		resolved_free(&r);
		return err_set(e, ERR_INTERNAL, ENOMEM, "policy");
	}

	if (check_run_dir(in, e) < 0 || build_protected(s, e) < 0 ||
	    place_workspace(s, e) < 0)
		goto out;
	if (resolve_all(s, in->policy->write, "write grant", &r.write, e) < 0 ||
	    resolve_all(s, in->policy->read_deny, "deny", &r.deny, e) < 0 ||
	    resolve_all(s, in->policy->read_allow, "read exception", &r.allow, e) < 0 ||
	    resolve_all(s, in->policy->sockets, "socket", &r.sockets, e) < 0)
		goto out;
	rc = check_policy_protected(s, &r, e);
	if (rc == 0)
		rc = guard_check_denied_needs(s, &r, e);
	if (rc == 0)
		rc = guard_merge_rules(s, &r, e);
	if (rc == 0)
		rc = add_deny_aliases(s, e);
	if (rc == 0)
		rc = guard_check_rules(s, e);
	if (rc == 0)
		rc = check_links(s, e);
	if (rc == 0 && in->executor)
		rc = guard_check_needs(s, in->executor, e);
	if (rc == 0)
		rc = copy_hosts(s->g, in->policy, e);
	if (rc == 0)
		rc = check_hardlinks(s, e);
out:
	resolved_free(&r);
	return rc;
}

int guard_launch(const struct guard_input *in, struct grant **out,
		 struct err **e)
{
	struct guard_state s = {
		.in = in,
		.ctx = { in->home, in->workspace, in->run_dir, in->toolbelt_socket },
	};
	int r;

	s.g = calloc(1, sizeof(*s.g));
	if (!s.g)
		return err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	s.g->workspace = strdup(in->workspace);
	s.g->run_dir = strdup(in->run_dir);
	if (in->toolbelt_socket)
		s.g->toolbelt = strdup(in->toolbelt_socket);
	s.g->unix_sockets_all = in->policy->unix_sockets_all;
	s.g->sockets = calloc(1, sizeof(char *));
	s.g->env_pass = strv_dup(in->policy->env_pass);
	s.g->limits = in->policy->limits;
	s.g->pids_default = in->policy->limits.pids == 0;
	if (s.g->pids_default)
		s.g->limits.pids = GRANT_DEFAULT_PIDS;
	if (in->walk_max)
		s.g->limits.workspace_entries = in->walk_max;
	else if (!s.g->limits.workspace_entries)
		s.g->limits.workspace_entries = GUARD_WALK_MAX;
	if (in->policy->n_allow_ranges) {
		s.g->allow_ranges = calloc(in->policy->n_allow_ranges, sizeof(*s.g->allow_ranges));
		if (s.g->allow_ranges) {
			memcpy(s.g->allow_ranges, in->policy->allow_ranges,
			       in->policy->n_allow_ranges * sizeof(*s.g->allow_ranges));
			s.g->n_allow_ranges = in->policy->n_allow_ranges;
		}
	}
	if (!s.g->workspace || !s.g->run_dir || !s.g->sockets || !s.g->env_pass ||
	    (in->policy->n_allow_ranges && !s.g->allow_ranges))
		r = err_set(e, ERR_INTERNAL, ENOMEM, "grant");
	else
		r = guard_run(&s, e);
	strv_free(s.protected);
	strv_free(s.exceptions);
	for (size_t i = 0; i < s.n_vias; i++) {
		free(s.vias[i].item);
		free(s.vias[i].link);
	}
	free(s.vias);
	procfs_mountinfo_free(&s.mounts);
	if (r < 0) {
		grant_free(s.g);
		return -1;
	}
	grant_sort(s.g);
	*out = s.g;
	return 0;
}
