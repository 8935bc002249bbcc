/* stub.c: the namespaces, made ahead of the plan (see stub.h). */
#include "sandbox/native/stub.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/text.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define NS_STEP "create the namespaces (user namespaces usable? see `cordon doctor`)"
/* What the root sends at most: the command's argv and environment are
 * bounded by the kernel's own limit on exec arguments, the mount plan by
 * the policy's size. */
#define ARGS_MAX (16u << 20)

/* The stub's answer: pid 1's pid, or the step that failed. */
struct reply {
	pid_t pid;
	struct child_status st;
};

static struct {
	bool started;
	pid_t root;		/* the host process that forked the stub */
	int err;		/* errno when the stub could not be forked */
	pid_t pid;
	int ctl;		/* root's end of the control socket */
	int sync_w, status_r, gw_root;	/* the ends the root keeps */
	int sync_r, status_w, gw_child;	/* the ends pid 1 keeps (closed here) */
} stub = { .ctl = -1, .sync_w = -1, .status_r = -1, .gw_root = -1,
	   .sync_r = -1, .status_w = -1, .gw_child = -1 };

/* --- a flat encoding of struct child_args -------------------------------- */

struct buf {
	char *p;
	size_t n, cap, off;
	bool bad;
};

static void put(struct buf *b, const void *v, size_t n)
{
	if (b->bad)
		return;
	if (b->n + n > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n)
			cap *= 2;
		char *p = cap <= ARGS_MAX ? realloc(b->p, cap) : NULL;
		if (!p) {
			b->bad = true;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	memcpy(b->p + b->n, v, n);
	b->n += n;
}

static void put_u32(struct buf *b, uint32_t v)
{
	put(b, &v, sizeof(v));
}

static void put_str(struct buf *b, const char *s)
{
	size_t n = strlen(s);

	put_u32(b, (uint32_t)n);
	put(b, s, n);
}

static void put_strv(struct buf *b, char *const *v)
{
	uint32_t n = 0;

	while (v && v[n])
		n++;
	put_u32(b, n);
	for (uint32_t i = 0; i < n; i++)
		put_str(b, v[i]);
}

static void get(struct buf *b, void *v, size_t n)
{
	if (b->bad || n > b->n - b->off) {
		b->bad = true;
		memset(v, 0, n);
		return;
	}
	memcpy(v, b->p + b->off, n);
	b->off += n;
}

static uint32_t get_u32(struct buf *b)
{
	uint32_t v = 0;

	get(b, &v, sizeof(v));
	return v;
}

/* A string of the buffer, copied (the stub's memory is its own). */
static char *get_str(struct buf *b)
{
	uint32_t n = get_u32(b);
	char *s;

	if (b->bad || n > b->n - b->off || !(s = malloc((size_t)n + 1))) {
		b->bad = true;
		return NULL;
	}
	memcpy(s, b->p + b->off, n);
	s[n] = '\0';
	b->off += n;
	return s;
}

static char **get_strv(struct buf *b)
{
	uint32_t n = get_u32(b);
	char **v;

	if (b->bad || n > (b->n - b->off) / sizeof(uint32_t) ||
	    !(v = calloc((size_t)n + 1, sizeof(*v)))) {
		b->bad = true;
		return NULL;
	}
	for (uint32_t i = 0; i < n && !b->bad; i++)
		v[i] = get_str(b);
	return v;
}

static void encode(struct buf *b, const struct child_args *a)
{
	const struct mount_plan *mp = a->mp;
	uint32_t flags = (a->sigpipe_ignored ? 1u : 0) | (a->foreground ? 2u : 0) |
			 (a->gw_fd >= 0 ? 4u : 0) | (mp->tmp_private ? 8u : 0);

	put_u32(b, flags);
	put_u32(b, (uint32_t)a->landlock_abi);
	put(b, &a->caller_mask, sizeof(a->caller_mask));
	put_str(b, mp->workspace);
	put_u32(b, (uint32_t)mp->n);
	for (size_t i = 0; i < mp->n; i++) {
		const struct mop *o = &mp->ops[i];
		put_u32(b, (uint32_t)o->kind | (o->source_dir ? 0x100u : 0) |
				   (o->create ? 0x200u : 0) | (o->holds_exceptions ? 0x400u : 0));
		put_str(b, o->path);
	}
	put_strv(b, mp->read_denies);
	put_strv(b, mp->read_exceptions);
	put_strv(b, a->argv);
	put_strv(b, a->env);
	put(b, &mp->tmp_size, sizeof(mp->tmp_size));
	put(b, &mp->shm_size, sizeof(mp->shm_size));
	put_u32(b, mp->sys_keep);
}

/* Decoded into memory the stub then hands to pid 1 (never freed: pid 1
 * uses it until it execs, and the stub leaves). */
static int decode(struct buf *b, struct child_args *a, struct mount_plan *mp)
{
	uint32_t flags = get_u32(b), n;

	a->landlock_abi = (int)get_u32(b);
	get(b, &a->caller_mask, sizeof(a->caller_mask));
	a->sigpipe_ignored = flags & 1u;
	a->foreground = flags & 2u;
	a->gw_fd = (flags & 4u) ? stub.gw_child : -1;
	mp->tmp_private = flags & 8u;
	mp->workspace = get_str(b);
	n = get_u32(b);
	if (b->bad || n > (b->n - b->off) / (2 * sizeof(uint32_t)) ||
	    !(mp->ops = calloc((size_t)n + 1, sizeof(*mp->ops))))
		return -1;
	mp->n = n;
	for (uint32_t i = 0; i < n && !b->bad; i++) {
		uint32_t k = get_u32(b);
		if ((k & 0xffu) > MOP_MASK_FILE) {
			b->bad = true;
			break;
		}
		mp->ops[i] = (struct mop){ .kind = (enum mop_kind)(k & 0xffu),
					   .source_dir = k & 0x100u, .create = k & 0x200u,
					   .holds_exceptions = k & 0x400u, .path = get_str(b) };
	}
	mp->read_denies = get_strv(b);
	mp->read_exceptions = get_strv(b);
	a->argv = get_strv(b);
	a->env = get_strv(b);
	get(b, &mp->tmp_size, sizeof(mp->tmp_size));
	get(b, &mp->shm_size, sizeof(mp->shm_size));
	mp->sys_keep = get_u32(b);
	a->mp = mp;
	if (b->bad || b->off != b->n || !a->argv || !a->argv[0] || !mp->read_denies ||
	    !mp->read_exceptions)
		return -1;
	return 0;
}

/* --- the stub ------------------------------------------------------------ */

static noreturn void stub_fail(int ctl, const char *step, int err)
{
	struct reply r = { .pid = -1, .st = { .err = err } };

	snprintf(r.st.step, sizeof(r.st.step), "%s", step);
	(void)fs_write_exact(ctl, &r, sizeof(r));
	_exit(125);
}

static int write_self(const char *name, const char *text)
{
	char path[64];
	int fd, r;

	snprintf(path, sizeof(path), "/proc/self/%s", name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	r = fs_write_exact(fd, text, strlen(text));
	close(fd);
	return r;
}

/* The operator's own ids, and nobody else's, inside. */
static void write_maps(int ctl, uid_t uid, gid_t gid)
{
	char map[64];

	if (write_self("setgroups", "deny") < 0)
		stub_fail(ctl, "user namespace: write setgroups", errno);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)uid, (unsigned)uid);
	if (write_self("uid_map", map) < 0)
		stub_fail(ctl, "user namespace: write uid_map", errno);
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)gid, (unsigned)gid);
	if (write_self("gid_map", map) < 0)
		stub_fail(ctl, "user namespace: write gid_map", errno);
}

static noreturn void stub_main(int ctl)
{
	static struct child_args a;
	static struct mount_plan mp;
	struct buf b = { 0 };
	uid_t uid = getuid();
	gid_t gid = getgid();
	uint32_t len;
	sigset_t all;
	pid_t pid;

	/* Signals meant for `cordon run` are the root's to handle; the stub
	 * goes with the root whatever happens to it. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		stub_fail(ctl, "set the parent-death signal", errno);
	if (getppid() != stub.root)
		_exit(125); /* the root is gone already */
	close(stub.sync_w);
	close(stub.status_r);
	close(stub.gw_root);
	/* The new user namespace first (the kernel makes it the owner of the
	 * others), then mount, pid (for the children), network, ipc, uts and
	 * cgroup. */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET | CLONE_NEWIPC |
		    CLONE_NEWUTS | CLONE_NEWCGROUP) < 0)
		stub_fail(ctl, NS_STEP, errno);
	write_maps(ctl, uid, gid);

	/* Wait for the plan; a root that refused the launch closes the socket. */
	if (fs_read_exact(ctl, &len, sizeof(len)) < 0)
		_exit(0);
	if (len == 0 || len > ARGS_MAX || !(b.p = malloc(len)))
		stub_fail(ctl, "receive the sandbox's plan", EMSGSIZE);
	b.n = b.cap = len;
	if (fs_read_exact(ctl, b.p, len) < 0)
		_exit(0);
	if (decode(&b, &a, &mp) < 0)
		stub_fail(ctl, "receive the sandbox's plan", EINVAL);
	a.sync_fd = stub.sync_r;
	a.status_fd = stub.status_w;

	/* pid 1 of the new pid namespace, as the root's own child: the root
	 * waits for it and its pidfd as it would for a child it cloned. */
	pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		close(ctl);
		native_child(&a);
	}
	if (pid < 0)
		stub_fail(ctl, NS_STEP, errno);
	struct reply r = { .pid = pid };
	(void)fs_write_exact(ctl, &r, sizeof(r));
	_exit(0);
}

void native_stub_start(void)
{
	int ctl[2] = { -1, -1 }, sync[2] = { -1, -1 }, status[2] = { -1, -1 };
	int gw[2] = { -1, -1 };

	if (stub.started)
		return;
	stub.started = true;
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ctl) < 0 ||
	    /* a socket, so that the root can hand pid 1 descriptors on it
	     * (its way out of the sandbox's cgroups, the Landlock ruleset) */
	    socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sync) < 0 ||
	    /* a socket, not a pipe: pid 1 holds its end for the sandbox's
	     * life, and a pipe could be opened anew through /proc/1/fd by
	     * the command (same user) to forge a status; a socket cannot */
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) < 0 ||
	    socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, gw) < 0) {
		stub.err = errno;
		goto fail;
	}
	stub.sync_r = sync[0];
	stub.sync_w = sync[1];
	stub.status_r = status[0];
	stub.status_w = status[1];
	stub.gw_root = gw[0];
	stub.gw_child = gw[1];
	stub.root = getpid();
	stub.pid = fork();
	if (stub.pid == 0) {
		close(ctl[0]);
		stub_main(ctl[1]);
	}
	if (stub.pid < 0) {
		stub.err = errno;
		goto fail;
	}
	close(ctl[1]);
	stub.ctl = ctl[0];
	/* pid 1's ends are the stub's to hand on */
	close(stub.sync_r);
	close(stub.status_w);
	close(stub.gw_child);
	stub.sync_r = stub.status_w = stub.gw_child = -1;
	return;
fail:
	for (int i = 0; i < 2; i++) {
		if (ctl[i] >= 0)
			close(ctl[i]);
		if (sync[i] >= 0)
			close(sync[i]);
		if (status[i] >= 0)
			close(status[i]);
		if (gw[i] >= 0)
			close(gw[i]);
	}
	stub.sync_r = stub.sync_w = stub.status_r = stub.status_w = -1;
	stub.gw_root = stub.gw_child = -1;
}

int native_stub_launch(struct child_args *a, bool gateway, pid_t *pid, int *pidfd,
		       struct err **e)
{
	struct buf b = { 0 };
	struct reply r = { .pid = -1 };
	uint32_t len;
	int ok;

	native_stub_start();
	if (stub.pid <= 0)
		return err_set(e, ERR_UNAVAILABLE, stub.err, NS_STEP);
	a->gw_fd = gateway ? 0 : -1; /* encoded as a flag; the stub's end goes in */
	encode(&b, a);
	len = (uint32_t)b.n;
	/* The stub may have failed already: its answer, not the write's
	 * error, says why (the root ignores SIGPIPE). */
	ok = !b.bad && fs_write_exact(stub.ctl, &len, sizeof(len)) == 0 &&
	     fs_write_exact(stub.ctl, b.p, b.n) == 0;
	free(b.p);
	if (fs_read_exact(stub.ctl, &r, sizeof(r)) < 0)
		r.pid = -1;
	close(stub.ctl);
	stub.ctl = -1;
	waitpid(stub.pid, NULL, 0);
	stub.pid = -1;
	if (r.pid <= 0) {
		text_printable(r.st.step, sizeof(r.st.step));
		if (r.st.step[0])
			return err_set(e, ERR_UNAVAILABLE, r.st.err, "%.*s", CHILD_STEP_MAX,
				       r.st.step);
		return err_set(e, ERR_UNAVAILABLE, ok ? EPIPE : ENOMEM, NS_STEP);
	}
	*pid = r.pid;
	*pidfd = (int)syscall(SYS_pidfd_open, r.pid, 0);
	if (*pidfd < 0) {
		int saved = errno;
		kill(r.pid, SIGKILL);
		waitpid(r.pid, NULL, 0);
		return err_set(e, ERR_UNAVAILABLE, saved, NS_STEP);
	}
	a->sync_fd = stub.sync_w;
	a->status_fd = stub.status_r;
	if (gateway)
		a->gw_fd = stub.gw_root;
	else
		close(stub.gw_root);
	stub.sync_w = stub.status_r = stub.gw_root = -1;
	return 0;
}
