/* container_mounts.c (test): a container's mounts from a grant. Each
 * rule against a real tree in a temporary directory: a write grant
 * mounted read-write (and refused when missing or a link); read-only
 * paths inside it covered by a bind of themselves (refused when missing
 * or a link: the container could make or swap them); denies inside a
 * mount covered by the empty dir or file (refused when missing beneath a
 * writable mount, left out beneath a read-only one or outside every
 * mount); an exception beneath a covered deny bound again; readable
 * paths outside mounts mounted when they exist; parents before children;
 * the records and toolbelt read-only; "/" and sockets refused. */
#include "plan/container.h"
#include "tap.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[256];

static char *p(const char *rel)
{
	static char buf[8][512];
	static int k;

	k = (k + 1) % 8;
	snprintf(buf[k], sizeof(buf[k]), "%s%s", root, rel);
	return buf[k];
}

static void mkfile(const char *rel)
{
	int fd = open(p(rel), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

	if (fd >= 0)
		close(fd);
}

struct rule {
	const char *rel;
	enum grant_kind kind;
};

/* Plan a grant of these rules; the result or NULL with *e. */
static json_t *plan(const struct rule *r, size_t n, bool extras, struct err **e)
{
	struct grant g = { 0 };
	json_t *out = NULL;

	for (size_t i = 0; i < n; i++)
		if (grant_add(&g, p(r[i].rel), r[i].kind, "test", e) < 0)
			goto done;
	grant_sort(&g);
	struct container_mount_input in = { .g = &g,
					    .empty_dir = p("/empty"),
					    .empty_file = p("/emptyf"),
					    .record_dir = extras ? p("/state/runs/j/sandbox/1") : NULL,
					    .toolbelt_dir = extras ? p("/state/toolbelt/j") : NULL };
	if (container_mounts(&in, &out, e) < 0)
		out = NULL;
done:
	for (size_t i = 0; i < g.n_rules; i++)
		free(g.rules[i].path);
	free(g.rules);
	return out;
}

/* The mount of target (relative), or NULL. */
static json_t *find(json_t *m, const char *rel)
{
	size_t i;
	json_t *v;

	json_array_foreach(m, i, v)
		if (strcmp(json_string_value(json_object_get(v, "target")), p(rel)) == 0)
			return v;
	return NULL;
}

static bool is_mount(json_t *m, const char *rel, const char *src_rel, bool ro)
{
	json_t *v = find(m, rel);

	return v && strcmp(json_string_value(json_object_get(v, "source")), p(src_rel)) == 0 &&
	       json_is_true(json_object_get(v, "read_only")) == ro;
}

static size_t index_of(json_t *m, const char *rel)
{
	size_t i;
	json_t *v;

	json_array_foreach(m, i, v)
		if (strcmp(json_string_value(json_object_get(v, "target")), p(rel)) == 0)
			return i;
	return (size_t)-1;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void refused(const struct rule *r, size_t n, const char *what)
{
	struct err *e = NULL;
	json_t *m = plan(r, n, false, &e);

	ok(!m && e && e->reason == ERR_UNAVAILABLE, "refused: %s", what);
	if (e)
		diag("%s", e->msg);
	json_decref(m);
	err_free(e);
}

int main(void)
{
	struct err *e = NULL;
	json_t *m;

	snprintf(root, sizeof(root), "/tmp/cordon-cmounts.XXXXXX");
	if (!mkdtemp(root)) {
		tap_skip_all("no temporary directory");
		return 0;
	}
	const char *dirs[] = { "/ws", "/ws/.git", "/ws/.git/hooks", "/ws/.git/info", "/ws/secret",
			       "/ws/secret/ok", "/empty", "/etc2", "/state", "/state/runs",
			       "/state/runs/j", "/state/runs/j/run", "/state/runs/j/sandbox",
			       "/state/runs/j/sandbox/1", "/state/toolbelt", "/state/toolbelt/j",
			       "/ro", "/home" };
	for (size_t i = 0; i < N(dirs); i++)
		mkdir(p(dirs[i]), 0755);
	mkfile("/emptyf");
	mkfile("/ws/.git/config");
	mkfile("/ws/.env");
	mkfile("/etc2/shadow");
	symlink("/etc", p("/ws/link"));
	symlink("/etc", p("/linkdir"));

	/* the usual launch: workspace and run dir writable, .git's three
	 * read-only, the state denied around the run dir, host files denied */
	const struct rule usual[] = {
		{ "/ws", GRANT_WRITE },
		{ "/ws/.git/config", GRANT_READ_ONLY },
		{ "/ws/.git/hooks", GRANT_READ_ONLY },
		{ "/ws/.git/info", GRANT_READ_ONLY },
		{ "/ws/.env", GRANT_DENY },
		{ "/ws/secret", GRANT_DENY },
		{ "/ws/secret/ok", GRANT_READ },
		{ "/ws/nothere", GRANT_READ },
		{ "/state", GRANT_DENY },
		{ "/state/runs/j/run", GRANT_WRITE },
		{ "/etc2/shadow", GRANT_DENY },
		{ "/nothere", GRANT_DENY },
		{ "/ro", GRANT_READ },
	};
	m = plan(usual, N(usual), true, &e);
	ok(m != NULL, "the usual launch is planned");
	if (!m) {
		diag("%s", e ? e->msg : "?");
		return done_testing();
	}
	ok(is_mount(m, "/ws", "/ws", false), "the workspace: read-write at its own path");
	ok(is_mount(m, "/state/runs/j/run", "/state/runs/j/run", false), "the run dir: read-write");
	ok(is_mount(m, "/ws/.git/config", "/ws/.git/config", true) &&
		   is_mount(m, "/ws/.git/hooks", "/ws/.git/hooks", true) &&
		   is_mount(m, "/ws/.git/info", "/ws/.git/info", true),
	   ".git/config, hooks and info: covered by read-only binds of themselves");
	ok(is_mount(m, "/ws/.env", "/emptyf", true), "a denied file inside: the empty file over it");
	ok(is_mount(m, "/ws/secret", "/empty", true), "a denied dir inside: the empty dir over it");
	ok(is_mount(m, "/ws/secret/ok", "/ws/secret/ok", true),
	   "an exception beneath a covered deny: bound again, read-only");
	ok(index_of(m, "/ws/secret") < index_of(m, "/ws/secret/ok") &&
		   index_of(m, "/ws") < index_of(m, "/ws/secret"),
	   "parents come before what they hold");
	ok(!find(m, "/state") && !find(m, "/etc2/shadow") && !find(m, "/nothere"),
	   "denies outside every mount: nothing mounted (the container never sees them)");
	ok(!find(m, "/ws/nothere"), "a missing readable path: left out");
	ok(is_mount(m, "/ro", "/ro", true), "a readable path outside mounts: read-only");
	ok(is_mount(m, "/state/runs/j/sandbox/1", "/state/runs/j/sandbox/1", true) &&
		   is_mount(m, "/state/toolbelt/j", "/state/toolbelt/j", true),
	   "the records and the toolbelt's dir: read-only");
	ok(json_array_size(m) == 11, "nothing else is mounted (%zu)", json_array_size(m));
	json_decref(m);

	/* control for the refusals: the same shapes with what they need */
	const struct rule fine[] = { { "/ws", GRANT_WRITE }, { "/ws/.git/hooks", GRANT_READ_ONLY } };
	m = plan(fine, N(fine), false, &e);
	ok(m && json_array_size(m) == 2, "control: a present read-only dir inside is covered");
	json_decref(m);

	const struct rule missing_ro[] = { { "/ws", GRANT_WRITE },
					   { "/ws/.git/nohooks", GRANT_READ_ONLY } };
	refused(missing_ro, N(missing_ro), "a missing read-only path inside a writable mount");
	const struct rule link_ro[] = { { "/ws", GRANT_WRITE }, { "/ws/link", GRANT_READ_ONLY } };
	refused(link_ro, N(link_ro), "a read-only path that is a symbolic link");
	const struct rule missing_deny[] = { { "/ws", GRANT_WRITE }, { "/ws/.ssh", GRANT_DENY } };
	refused(missing_deny, N(missing_deny), "a missing deny inside a writable mount");
	const struct rule link_deny[] = { { "/ws", GRANT_WRITE }, { "/ws/link", GRANT_DENY } };
	refused(link_deny, N(link_deny), "a deny that is a symbolic link inside a mount");
	const struct rule missing_write[] = { { "/nowrite", GRANT_WRITE } };
	refused(missing_write, N(missing_write), "a missing write grant");
	const struct rule link_write[] = { { "/linkdir", GRANT_WRITE } };
	refused(link_write, N(link_write), "a write grant that is a symbolic link");

	/* a write grant inside a writable mount is not mounted again: the
	 * daemon would resolve its path, in what the sandbox writes */
	const struct rule nested[] = { { "/ws", GRANT_WRITE }, { "/ws/secret", GRANT_WRITE } };
	m = plan(nested, N(nested), false, &e);
	ok(m && json_array_size(m) == 1 && is_mount(m, "/ws", "/ws", false),
	   "a write grant inside a writable mount: not mounted again");
	json_decref(m);

	/* beneath a read-only mount, a missing deny cannot be made: left out */
	const struct rule ro_deny[] = { { "/ws", GRANT_READ }, { "/ws/.ssh", GRANT_DENY } };
	m = plan(ro_deny, N(ro_deny), false, &e);
	ok(m && json_array_size(m) == 1 && is_mount(m, "/ws", "/ws", true),
	   "a missing deny beneath a read-only mount: nothing to cover");
	json_decref(m);

	/* "/" and sockets */
	{
		struct grant g = { 0 };
		char *socks[] = { "/run/x.sock", NULL };
		struct container_mount_input in = { .g = &g, .empty_dir = p("/empty"),
						    .empty_file = p("/emptyf") };

		grant_add(&g, "/", GRANT_WRITE, "test", &e);
		m = NULL;
		ok(container_mounts(&in, &m, &e) < 0 && e && e->reason == ERR_UNAVAILABLE,
		   "refused: the host's / as a mount");
		err_free(e);
		e = NULL;
		g.sockets = socks;
		ok(container_mounts(&in, &m, &e) < 0 && e && e->reason == ERR_DENIED,
		   "refused: a unix socket granted by path");
		err_free(e);
		e = NULL;
		free(g.rules[0].path);
		free(g.rules);
	}
	{
		char cmd[600];

		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
		if (system(cmd) != 0)
			diag("could not remove %s", root);
	}
	return done_testing();
}
