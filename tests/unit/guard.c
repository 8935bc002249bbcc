/* guard.c: the guard's merge and refusals, each against a lab laid out on
 * disk (a home with credentials, a state dir with runs, workspaces) and
 * each refusal paired with the control that passes. */
#include "guard/guard.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"
#include "policy/policy.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static char lab[256];
static char home[300], state[300], run[400], ws[300], runtime[300];
static char mountinfo[2048];

static void path(char *out, size_t n, const char *rel)
{
	snprintf(out, n, "%s/%s", lab, rel);
}

static void mk(const char *rel)
{
	char p[512];
	path(p, sizeof(p), rel);
	if (mkdir(p, 0700) < 0 && errno != EEXIST)
		diag("mkdir %s: %s", p, strerror(errno));
}

static void touch(const char *rel)
{
	char p[512];
	int fd;
	path(p, sizeof(p), rel);
	fd = open(p, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
}

static void setup_lab(void)
{
	char tmpl[] = "/tmp/cordon-guard-XXXXXX";
	char *d = mkdtemp(tmpl), *canon = NULL;
	struct err *e = NULL;

	if (!d || fs_canonical(d, &canon, &e) < 0)
		tap_skip_all("cannot make a lab directory");
	snprintf(lab, sizeof(lab), "%s", canon);
	free(canon);
	static const char *const dirs[] = {
		"home", "home/.ssh", "home/.config", "home/.config/gh", "home/proj",
		"state", "state/runs", "state/runs/e1", "state/runs/e1/run",
		"state/runs/e2", "state/workspaces", "state/workspaces/w1",
		"ws", "ws/.git", "ws/.git/hooks", "ws/.git/info", "other",
		"runtime",
	};
	for (size_t i = 0; i < sizeof(dirs) / sizeof(*dirs); i++)
		mk(dirs[i]);
	touch("home/.ssh/id_ed25519");
	touch("home/.config/gh/hosts.yml");
	touch("ws/.git/config");
	touch("ws/file");
	touch("other/secret");
	path(home, sizeof(home), "home");
	path(state, sizeof(state), "state");
	path(run, sizeof(run), "state/runs/e1/run");
	path(ws, sizeof(ws), "ws");
	path(runtime, sizeof(runtime), "runtime");
	snprintf(mountinfo, sizeof(mountinfo),
		 "1 0 8:1 / / rw - ext4 /dev/root rw\n");
}

static struct policy *pol(const char *json)
{
	struct policy *p = NULL;
	struct err *e = NULL;

	if (policy_parse(json, strlen(json), &p, &e) < 0) {
		diag("policy: %s", e->msg);
		err_free(e);
		return NULL;
	}
	return p;
}

struct run_opts {
	const char *policy;
	const char *workspace;
	const char *run_dir;
	const char *mountinfo;	/* NULL: the lab's fixture; "" : live */
	struct needs *needs;
	size_t walk_max;
};

/* Run the guard; returns NULL on success or the error message (static). */
static const char *guard(const struct run_opts *o, struct grant **out)
{
	static char msg[1024];
	_cleanup_policy_ struct policy *p = pol(o->policy);
	struct needs def = { 0 };
	struct grant *g = NULL;
	struct err *e = NULL;
	const char *mi = o->mountinfo ? (o->mountinfo[0] ? o->mountinfo : NULL) : mountinfo;
	struct guard_input in;

	if (!p)
		return "policy did not parse";
	if (!o->needs)
		strv_push(&def.write, o->workspace ? o->workspace : ws);
	in = (struct guard_input){
		.policy = p,
		.executor = o->needs ? o->needs : &def,
		.home = home,
		.workspace = o->workspace ? o->workspace : ws,
		.state_dir = state,
		.run_dir = o->run_dir ? o->run_dir : run,
		.defaults = { home, runtime, NULL, 4242 },
		.mountinfo = mi,
		.walk_max = o->walk_max,
	};
	int r = guard_launch(&in, &g, &e);
	needs_free(&def);
	if (r < 0) {
		snprintf(msg, sizeof(msg), "%s: %s", err_reason_name(e->reason), e->msg);
		err_free(e);
		return msg;
	}
	if (out)
		*out = g;
	else
		grant_free(g);
	return NULL;
}

static bool refused(const char *msg, const char *want)
{
	if (!msg) {
		diag("accepted, wanted a refusal with '%s'", want);
		return false;
	}
	if (!strstr(msg, want)) {
		diag("refused with '%s', wanted '%s'", msg, want);
		return false;
	}
	return true;
}

static bool accepted(const char *msg)
{
	if (msg)
		diag("refused: %s", msg);
	return msg == NULL;
}

static enum grant_kind decide(struct grant *g, const char *rel)
{
	char p[512];
	path(p, sizeof(p), rel);
	return grant_decide(g, p);
}

static void test_basic(void)
{
	struct grant *g = NULL;
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\"]}" };

	ok(accepted(guard(&o, &g)), "default-shaped policy is accepted");
	if (!g)
		return;
	is_int(decide(g, "ws"), GRANT_WRITE, "workspace writable");
	is_int(decide(g, "ws/file"), GRANT_WRITE, "file in workspace writable");
	is_int(decide(g, "ws/.git/config"), GRANT_READ_ONLY, ".git/config read-only");
	is_int(decide(g, "ws/.git/hooks/pre-commit"), GRANT_READ_ONLY, ".git/hooks read-only");
	is_int(decide(g, "ws/.git/info"), GRANT_READ_ONLY, ".git/info read-only");
	is_int(decide(g, "ws/.git/objects"), GRANT_WRITE, ".git/objects writable");
	is_int(decide(g, "home/.ssh/id_ed25519"), GRANT_DENY, "~/.ssh denied by default");
	is_int(decide(g, "home/.config/gh"), GRANT_DENY, "~/.config/gh denied by default");
	is_int(decide(g, "runtime/bus"), GRANT_DENY, "runtime dir denied by default");
	is_int(decide(g, "state/runs/e2"), GRANT_DENY, "another execution denied");
	is_int(decide(g, "state"), GRANT_DENY, "state dir denied");
	is_int(decide(g, "state/runs/e1/run/x"), GRANT_WRITE, "own run dir writable");
	is_int(decide(g, "home/proj"), GRANT_READ, "the rest of home readable only");
	is_int(grant_decide(g, "/etc/passwd"), GRANT_READ, "/etc readable only");
	grant_free(g);
}

static void test_policy_is_the_grant(void)
{
	struct run_opts o = { .policy = "{}" };
	struct needs n = { 0 };
	char p[512];

	ok(refused(guard(&o, NULL), "write need `"), "a write need outside the policy is refused");
	ok(refused(guard(&o, NULL), "sandbox_denied"), "... as sandbox_denied");
	o.policy = "{\"write\":[\"{workspace}\"]}";
	ok(accepted(guard(&o, NULL)), "control: the same need inside the policy");

	path(p, sizeof(p), "home/.ssh/known_hosts");
	strv_push(&n.read, p);
	o.needs = &n;
	ok(refused(guard(&o, NULL), "beneath default deny"), "a read need beneath a default deny");
	strv_free(n.read);
	n.read = NULL;
	path(p, sizeof(p), "home/proj");
	strv_push(&n.read, p);
	ok(accepted(guard(&o, NULL)), "control: a read need elsewhere in home");
	strv_free(n.read);
	n.read = NULL;

	path(p, sizeof(p), "state/runs/e2");
	strv_push(&n.read, p);
	ok(refused(guard(&o, NULL), "lies in protected"), "a need in another run dir");
	strv_free(n.read);
	n.read = NULL;

	const char *why = NULL;
	n.hosts = calloc(1, sizeof(*n.hosts));
	n.n_hosts = 1;
	host_parse("api.example.com", 15, &n.hosts[0], &why);
	ok(refused(guard(&o, NULL), "host need `api.example.com`"), "a host need outside network.allow");
	o.policy = "{\"write\":[\"{workspace}\"],\"network\":{\"allow\":[\"*.example.com\"]}}";
	ok(accepted(guard(&o, NULL)), "control: covered by a wildcard");
	o.policy = "{\"write\":[\"{workspace}\"],\"network\":{\"allow\":[\"*.example.com\"],"
		   "\"deny\":[\"api.example.com\"]}}";
	ok(refused(guard(&o, NULL), "in the policy's network.deny"), "a host need the deny list covers");
	o.policy = "{\"write\":[\"{workspace}\"],\"network\":{\"allow\":[\"api.example.com:443\"]}}";
	ok(refused(guard(&o, NULL), "host need"), "a port-pinned entry does not cover any port");

	o.policy = "{\"write\":[\"{workspace}\"]}";
	strv_push(&n.sockets, "/tmp/agent.sock");
	needs_free(&n);
	memset(&n, 0, sizeof(n));
	strv_push(&n.sockets, "/tmp/some.sock");
	ok(refused(guard(&o, NULL), "socket need"), "a socket need outside the policy");
	o.policy = "{\"write\":[\"{workspace}\"],\"sockets\":[\"/tmp/some.sock\"]}";
	ok(accepted(guard(&o, NULL)), "control: the socket listed");
	needs_free(&n);
}

static void test_protected(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\"]}" };
	char p[512], buf[1024];
	struct grant *g = NULL;

	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\",\"%s/runs/e2\"]}", state);
	o.policy = buf;
	ok(refused(guard(&o, NULL), "reaches into protected"), "write grant into the state dir");
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\",\"%s\"]}", lab);
	ok(refused(guard(&o, NULL), "contains protected"), "write grant holding the state dir");
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\",\"%s/other\"]}", lab);
	ok(accepted(guard(&o, NULL)), "control: write grant beside it");
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\"],\"read\":{\"deny\":[\"%s\"],"
		 "\"allow\":[\"%s/runs\"]}}", lab, state);
	ok(refused(guard(&o, NULL), "read exception"), "read exception into the state dir");

	o.policy = "{\"write\":[\"{workspace}\"]}";
	o.workspace = lab;
	ok(refused(guard(&o, NULL), "contains protected"), "workspace holding the state dir");
	path(p, sizeof(p), "state/runs/e2");
	o.workspace = p;
	ok(refused(guard(&o, NULL), "lies in protected"), "workspace in another run dir");
	path(p, sizeof(p), "state/workspaces/w1");
	o.workspace = p;
	ok(accepted(guard(&o, &g)), "control: workspace under state/workspaces");
	if (g) {
		is_int(grant_decide(g, p), GRANT_WRITE, "that workspace is writable");
		is_int(decide(g, "state/workspaces"), GRANT_DENY, "its siblings are not");
		grant_free(g);
	}

	mk("state/workspaces/w1/.git");
	mk("state/workspaces/w1/.git/hooks");
	mk("state/workspaces/w1/.git/info");
	touch("state/workspaces/w1/.git/config");
	o.policy = "{\"write\":[\"{workspace}\",\"{workspace}/.git/hooks/x\"]}";
	ok(refused(guard(&o, NULL), "lies beneath read-only"),
	   "inside a workspace under the state dir, .git/hooks stays read-only");
	o.policy = "{\"write\":[\"{workspace}\",\"{workspace}/a/b\"],"
		   "\"read\":{\"deny\":[\"{workspace}/a\"]}}";
	ok(refused(guard(&o, NULL), "lies beneath denied"),
	   "... and a write grant beneath a policy deny is refused there too");
	o.policy = "{\"write\":[\"{workspace}\"]}";
	ok(accepted(guard(&o, NULL)), "control: the plain grant there");

	o.workspace = NULL;
	path(p, sizeof(p), "state/runs/e2");
	o.run_dir = p;
	ok(accepted(guard(&o, NULL)), "control: another run dir under runs/");
	path(p, sizeof(p), "other");
	o.run_dir = p;
	ok(refused(guard(&o, NULL), "is not beneath"), "run dir outside runs/");
	path(p, sizeof(p), "state/runs/link");
	path(buf, sizeof(buf), "state/runs/e1/run");
	if (symlink(buf, p) < 0)
		diag("symlink: %s", strerror(errno));
	o.run_dir = p;
	ok(refused(guard(&o, NULL), "without symbolic links"), "run dir through a symbolic link");
}

static void test_defaults(void)
{
	struct run_opts o = { 0 };
	struct grant *g = NULL;

	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"allow\":[\"~/.ssh\"]}}";
	ok(accepted(guard(&o, &g)), "naming ~/.ssh in read.allow is accepted");
	if (g) {
		is_int(decide(g, "home/.ssh/id_ed25519"), GRANT_READ, "and lifts it");
		is_int(decide(g, "home/.config/gh"), GRANT_DENY, "others stay");
		grant_free(g);
	}
	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"allow\":[\"~/.config\"]}}";
	ok(accepted(guard(&o, &g)), "a broad allow is accepted");
	if (g) {
		is_int(decide(g, "home/.config/gh/hosts.yml"), GRANT_DENY,
		       "but never lifts a default beneath it");
		grant_free(g);
	}
	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"deny\":[\"~\"],\"allow\":[\"~/.config\"]}}";
	ok(refused(guard(&o, NULL), "/home/.config/g"),
	   "an allow holding a default beneath a deny of its own is refused, naming it");
	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"deny\":[\"~\"],\"allow\":[\"~/proj\"]}}";
	ok(accepted(guard(&o, &g)), "control: an allow holding no default");
	if (g) {
		is_int(decide(g, "home/proj"), GRANT_READ, "the exception is readable");
		is_int(decide(g, "home/other"), GRANT_DENY, "the rest of the deny is not");
		grant_free(g);
	}
	o.policy = "{\"write\":[\"{workspace}\",\"~/.ssh/out\"]}";
	ok(refused(guard(&o, NULL), "lies beneath denied"), "a write grant beneath a default deny");
	o.policy = "{\"write\":[\"{workspace}\",\"~/proj\"]}";
	ok(accepted(guard(&o, NULL)), "control: a write grant elsewhere in home");

	char buf[1024];
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\"],\"sockets\":[\"%s/tb.sock\"]}", runtime);
	o.policy = buf;
	ok(accepted(guard(&o, &g)), "a socket beneath the runtime dir is an exception");
	if (g) {
		is_int(decide(g, "runtime/tb.sock"), GRANT_READ, "that socket is visible");
		is_int(decide(g, "runtime/bus"), GRANT_DENY, "the rest of the runtime dir is not");
		grant_free(g);
	}
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\"],\"sockets\":[\"%s\"]}", runtime);
	ok(accepted(guard(&o, &g)), "naming the runtime dir in sockets");
	if (g) {
		is_int(decide(g, "runtime/bus"), GRANT_READ, "lifts it");
		grant_free(g);
	}
	snprintf(buf, sizeof(buf), "{\"write\":[\"{workspace}\"],\"read\":{\"allow\":[\"%s\"]}}", runtime);
	ok(accepted(guard(&o, &g)), "naming a socket default in read.allow");
	if (g) {
		is_int(decide(g, "runtime/bus"), GRANT_DENY, "does not lift it");
		grant_free(g);
	}
}

static void test_read_only(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\",\"{workspace}/.git/hooks/x\"]}" };
	char p[512], t[512];

	ok(refused(guard(&o, NULL), "lies beneath read-only"), "a write grant beneath .git/hooks");
	o.policy = "{\"write\":[\"{workspace}\",\"{workspace}/.git/objects\"]}";
	ok(accepted(guard(&o, NULL)), "control: a write grant beside it");
	o.policy = "{\"write\":[\"{workspace}\"]}";
	path(p, sizeof(p), "ws/.git/info");
	path(t, sizeof(t), "other");
	rmdir(p);
	if (symlink(t, p) < 0)
		diag("symlink: %s", strerror(errno));
	ok(refused(guard(&o, NULL), "is a symbolic link"), ".git/info as a symbolic link");
	unlink(p);
	mk("ws/.git/info");
	ok(accepted(guard(&o, NULL)), "control: .git/info a directory again");

	/* .git itself a symbolic link: refused, the directory restored accepted */
	char ws2[512], real[512];
	path(ws2, sizeof(ws2), "ws2");
	mk("ws2");
	mk("gitreal");
	path(p, sizeof(p), "ws2/.git");
	path(real, sizeof(real), "gitreal");
	if (symlink(real, p) < 0)
		diag("symlink: %s", strerror(errno));
	o.workspace = ws2;
	ok(refused(guard(&o, NULL), "is a symbolic link; a workspace's .git must be its own"),
	   ".git as a symbolic link is refused");
	unlink(p);
	ok(accepted(guard(&o, NULL)), "control: the same workspace without it");
	o.workspace = NULL;
}

static void test_hardlinks(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\"]}" };
	char out[512], in[512];

	path(out, sizeof(out), "other/secret");
	path(in, sizeof(in), "ws/innocent");
	if (link(out, in) < 0)
		diag("link: %s", strerror(errno));
	ok(refused(guard(&o, NULL), "ws/innocent` is a hard link"),
	   "a hard link to a file outside the workspace, named");
	unlink(in);
	ok(accepted(guard(&o, NULL)), "control: the link removed");
	o.walk_max = 3;
	ok(refused(guard(&o, NULL), "more than 3 entries"), "a workspace over the walk limit");
	o.walk_max = 0;
	o.policy = "{\"write\":[\"{workspace}\"],\"limits\":{\"workspace_entries\":3}}";
	ok(refused(guard(&o, NULL), "more than 3 entries, the most the hard-link check walks"),
	   "the policy's limits.workspace_entries bounds the walk");
	o.policy = "{\"write\":[\"{workspace}\"],\"limits\":{\"workspace_entries\":1000}}";
	ok(accepted(guard(&o, NULL)), "control: a bound above the workspace's size passes");
}

/* A bind mount of the state dir inside the workspace: the fixture case and
 * the real one, in a private mount namespace. */
static void test_aliases(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\"]}" };
	char mi[2048], target[512];

	mk("ws/mnt");
	path(target, sizeof(target), "ws/mnt");
	snprintf(mi, sizeof(mi), "1 0 8:1 / / rw - ext4 /dev/root rw\n"
				 "2 1 8:1 %s %s rw - ext4 /dev/root rw\n", state, target);
	o.mountinfo = mi;
	ok(refused(guard(&o, NULL), target), "a bind of the state dir in the workspace (fixture)");
	snprintf(mi, sizeof(mi), "1 0 8:1 / / rw - ext4 /dev/root rw\n"
				 "2 1 8:2 %s %s rw - ext4 /dev/other rw\n", state, target);
	ok(accepted(guard(&o, NULL)), "control: another device's mount there");

	if (geteuid() != 0) {
		ok(1, "# skip real bind mount needs root");
		return;
	}
	int pfd[2];
	if (pipe(pfd) < 0)
		return;
	pid_t pid = fork();
	if (pid == 0) {
		const char *msg;
		close(pfd[0]);
		if (unshare(CLONE_NEWNS) < 0 ||
		    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0 ||
		    mount(state, target, NULL, MS_BIND, NULL) < 0)
			_exit(3);
		o.mountinfo = "";
		msg = guard(&o, NULL);
		if (write(pfd[1], msg ? msg : "accepted", strlen(msg ? msg : "accepted")) < 0)
			_exit(4);
		umount2(target, MNT_DETACH);
		msg = guard(&o, NULL);
		_exit(msg ? 5 : 0);
	}
	close(pfd[1]);
	char got[1024] = "";
	ssize_t n = read(pfd[0], got, sizeof(got) - 1);
	int st = 0;
	got[n > 0 ? n : 0] = '\0';
	close(pfd[0]);
	waitpid(pid, &st, 0);
	ok(refused(got, target), "a real bind of the state dir in the workspace is refused, named");
	is_int(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0, "control: accepted once unmounted");
}

/* Every deny, not only the protected set, is denied under its other
 * names: the home bound at a second path. */
static void test_deny_aliases(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\"],\"read\":"
					"{\"deny\":[\"~/proj\"]}}" };
	char mi[2048], alias[512], a_ssh[600], a_proj[600], a_other[600];
	struct grant *g = NULL;

	mk("alias");
	path(alias, sizeof(alias), "alias");
	snprintf(a_ssh, sizeof(a_ssh), "%s/.ssh/id_ed25519", alias);
	snprintf(a_proj, sizeof(a_proj), "%s/proj", alias);
	snprintf(a_other, sizeof(a_other), "%s/.profile", alias);
	snprintf(mi, sizeof(mi), "1 0 8:1 / / rw - ext4 /dev/root rw\n"
				 "2 1 8:1 %s %s rw - ext4 /dev/root rw\n", home, alias);
	o.mountinfo = mi;
	ok(accepted(guard(&o, &g)), "the home bound at a second path: accepted");
	if (g) {
		is_int(grant_decide(g, a_ssh), GRANT_DENY,
		       "a default deny (~/.ssh) is denied at the alias too");
		is_int(grant_decide(g, a_proj), GRANT_DENY,
		       "a policy deny (~/proj) is denied at the alias too");
		is_int(grant_decide(g, a_other), GRANT_READ,
		       "control: the rest of the alias stays readable");
		grant_free(g);
		g = NULL;
	}
	snprintf(mi, sizeof(mi), "1 0 8:1 / / rw - ext4 /dev/root rw\n"
				 "2 1 8:2 %s %s rw - ext4 /dev/other rw\n", home, alias);
	ok(accepted(guard(&o, &g)), "another device's mount at that path: accepted");
	if (g)
		is_int(grant_decide(g, a_ssh), GRANT_READ,
		       "control: no alias, no deny there (another device)");
	grant_free(g);
}

/* A grant, exception or deny reached through a link the sandbox may write
 * is refused: the command could point the link elsewhere before the next
 * launch. */
static void test_links_in_grants(void)
{
	struct run_opts o = { .policy = "{\"write\":[\"{workspace}\",\"{workspace}/.venv\"]}" };
	char link_path[512], target[512];

	mk("elsewhere");
	path(target, sizeof(target), "elsewhere");
	path(link_path, sizeof(link_path), "ws/.venv");
	if (symlink(target, link_path) < 0)
		diag("symlink: %s", strerror(errno));
	ok(refused(guard(&o, NULL), "write grant `{workspace}/.venv` is reached through the "
				    "symbolic link"),
	   "a write grant through a link in the workspace is refused, named");
	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"deny\":[\"{workspace}/.venv\"]}}";
	ok(refused(guard(&o, NULL), "deny `{workspace}/.venv` is reached through"),
	   "a deny through a link in the workspace is refused");
	o.policy = "{\"write\":[\"{workspace}\"],\"read\":{\"deny\":[\"~/proj\"],"
		   "\"allow\":[\"~/proj/l\"]}}";
	char l2[512];
	path(l2, sizeof(l2), "home/proj/l");
	if (symlink(target, l2) < 0)
		diag("symlink: %s", strerror(errno));
	ok(accepted(guard(&o, NULL)),
	   "control: an exception through a link the sandbox cannot write is accepted");
	o.policy = "{\"write\":[\"{workspace}\",\"~/proj\"],\"read\":{\"allow\":[\"~/proj/l\"]}}";
	ok(refused(guard(&o, NULL), "read exception `~/proj/l` is reached through"),
	   "an exception through a link in a write grant is refused");
	o.policy = "{\"write\":[\"{workspace}\",\"~/proj\"],\"read\":{\"deny\":[\"~/proj/l\"]}}";
	ok(refused(guard(&o, NULL), "lies in `"),
	   "a deny through a link in another write grant is refused");
	unlink(l2);
	unlink(link_path);
	o.policy = "{\"write\":[\"{workspace}\",\"{workspace}/.venv\"]}";
	mk("ws/.venv");
	ok(accepted(guard(&o, NULL)), "control: .venv a directory of its own, accepted");
}

int main(void)
{
	setup_lab();
	test_basic();
	test_policy_is_the_grant();
	test_protected();
	test_defaults();
	test_read_only();
	test_hardlinks();
	test_aliases();
	test_deny_aliases();
	test_links_in_grants();
	return done_testing();
}
