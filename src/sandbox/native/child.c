/* child.c: the sandbox's pid 1, from clone to the command's exec. It
 * builds the filesystem, drops every privilege, then stays as a small
 * init: it reaps, forwards TERM, INT, HUP (and QUIT, USR1, USR2, WINCH) to
 * the command and exits with the command's status. */
#include "sandbox/native/child.h"
#include "sandbox/forward.h"
#include "lib/fs.h"
#include "sandbox/confine/harden.h"
#include "sandbox/native/landlock.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/seccomp.h>
#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

/* Report the failed step and leave; nothing after this runs. */
static noreturn void die(int fd, const char *step, int err, int exec)
{
	struct child_status st = { .err = err, .exec = exec };
	ssize_t w;

	snprintf(st.step, sizeof(st.step), "%s", step);
	do {
		w = write(fd, &st, sizeof(st));
	} while (w < 0 && errno == EINTR);
	_exit(exec ? harden_exec_status(err) : 125);
}

/* The new network namespace has only lo, and it starts down. */
static int loopback_up(void)
{
	struct ifreq ifr = { 0 };
	int s = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0), r;

	if (s < 0)
		return -1;
	strcpy(ifr.ifr_name, "lo");
	r = ioctl(s, SIOCGIFFLAGS, &ifr);
	if (r == 0) {
		ifr.ifr_flags |= IFF_UP | IFF_RUNNING;
		r = ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
	return r;
}

/* The filter is compiled, and the Landlock ruleset built, by the launcher
 * while this process builds the filesystem: they arrive on the sync
 * socket, the filter's length with the ruleset's fd, then its program. */
struct sync_msg {
	struct sock_fprog prog;
	int ruleset;
};

static int receive_sync(int fd, struct sync_msg *m, struct sock_filter *insns, size_t max)
{
	unsigned short len = 0;
	char cbuf[CMSG_SPACE(sizeof(int))] = { 0 };
	struct iovec iov = { &len, sizeof(len) };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;
	ssize_t n;

	/* the length, with the ruleset's fd; then the program */
	do
		n = recvmsg(fd, &msg, MSG_CMSG_CLOEXEC | MSG_WAITALL);
	while (n < 0 && errno == EINTR);
	cm = n == (ssize_t)sizeof(len) ? CMSG_FIRSTHDR(&msg) : NULL;
	if (!cm || cm->cmsg_level != SOL_SOCKET || cm->cmsg_type != SCM_RIGHTS ||
	    cm->cmsg_len != CMSG_LEN(sizeof(int)) || (msg.msg_flags & MSG_CTRUNC))
		return errno = EPROTO, -1;
	memcpy(&m->ruleset, CMSG_DATA(cm), sizeof(int));
	if (len == 0 || len > max || fs_read_exact(fd, insns, len * sizeof(*insns)) < 0) {
		close(m->ruleset);
		return errno = EPROTO, -1;
	}
	m->prog = (struct sock_fprog){ .len = len, .filter = insns };
	return 0;
}

static int listen_on(uint16_t port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 4096) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The gateway's listeners live in this network namespace (127.0.0.1:3128
 * for HTTP, :1080 for SOCKS5) but are served by the root outside: they go
 * over the socketpair, and this process keeps no copy. */
static int hand_listeners(int sock)
{
	int fds[2] = { listen_on(3128), listen_on(1080) };
	char byte = 'L', cbuf[CMSG_SPACE(sizeof(fds))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	int r = -1;

	if (fds[0] >= 0 && fds[1] >= 0) {
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN(sizeof(fds));
		memcpy(CMSG_DATA(cm), fds, sizeof(fds));
		r = sendmsg(sock, &msg, MSG_NOSIGNAL) == 1 ? 0 : -1;
	}
	int saved = errno;
	for (int i = 0; i < 2; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	close(sock);
	errno = saved;
	return r;
}

/* Where execvp would find NAME: itself when it holds a slash, else the
 * first executable file of that name on PATH. */
static char *find_in_path(const char *name)
{
	const char *path = getenv("PATH");
	char *dirs, *save = NULL, *out = NULL;

	if (strchr(name, '/') || !path)
		return strdup(name);
	dirs = strdup(path);
	for (char *d = dirs ? strtok_r(dirs, ":", &save) : NULL; d && !out;
	     d = strtok_r(NULL, ":", &save)) {
		if (asprintf(&out, "%s/%s", *d ? d : ".", name) < 0) {
			out = NULL;
			break;
		}
		if (access(out, X_OK) != 0) {
			free(out);
			out = NULL;
		}
	}
	free(dirs);
	return out ? out : strdup(name);
}

/* The command: its own process group, the terminal's foreground when
 * the sandbox was started in it, signals as a fresh process has them.
 * posix_spawn shares pid 1's memory until the exec (vfork) instead of
 * copying its page tables: the sandbox starts sooner. On failure the
 * errno is written to the status pipe as the exec step and pid 1 ends. */
static pid_t spawn_command(const struct child_args *a, const sigset_t *orig)
{
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def;
	pid_t pid = -1;
	int err;

	/* The host built the command's environment (policy/envfilter.h);
	 * pid 1's own is the caller's, secrets and all, which the command
	 * (the same user) could read in /proc/1/environ or /proc/1/mem: it
	 * is zeroed. PATH is then searched as the command will see it. */
	envfilter_scrub(environ);
	environ = (char **)a->env;
	/* exec resets handled signals; an ignored one stays ignored, as the
	 * caller left it, except SIGPIPE, which the launcher ignored itself */
	sigemptyset(&def);
	if (!a->sigpipe_ignored)
		sigaddset(&def, SIGPIPE);
	if (posix_spawnattr_init(&at) != 0 || posix_spawn_file_actions_init(&fa) != 0)
		die(a->status_fd, "prepare the command", ENOMEM, 0);
	err = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGMASK |
						    POSIX_SPAWN_SETSIGDEF);
	if (err == 0)
		err = posix_spawnattr_setpgroup(&at, 0);
	if (err == 0)
		err = posix_spawnattr_setsigmask(&at, orig);
	if (err == 0)
		err = posix_spawnattr_setsigdefault(&at, &def);
	if (err == 0 && a->foreground)
		err = posix_spawn_file_actions_addtcsetpgrp_np(&fa, STDIN_FILENO);
	if (err != 0)
		die(a->status_fd, "prepare the command", err, 0);
	err = posix_spawnp(&pid, a->argv[0], &fa, &at, a->argv, environ);
	if (err == ENOEXEC) {
		/* a script without an interpreter line runs under sh, as
		 * execvp would run it */
		char *file = find_in_path(a->argv[0]);
		size_t n = 0;

		while (a->argv[n])
			n++;
		char **sh = file ? calloc(n + 2, sizeof(*sh)) : NULL;
		err = ENOMEM;
		if (sh) {
			sh[0] = (char *)"sh";
			sh[1] = file;
			for (size_t i = 1; i < n; i++)
				sh[i + 1] = a->argv[i];
			err = posix_spawn(&pid, "/bin/sh", &fa, &at, sh, environ);
		}
		free(sh);
		free(file);
	}
	if (err != 0)
		die(a->status_fd, "exec", err, 1);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	return pid;
}

/* pid 1 goes back to cordon's own cgroups once the command holds the
 * sandbox's, so that its exit (which takes the namespaces down) does not
 * hold their removal up. The root hands it, after the word on the sync
 * socket, one byte with its v1 cgroups' `tasks` files, where "0" moves
 * this process, alone, cheaply. It is not dumpable while it holds them,
 * so the command cannot reopen them through /proc/1/fd. */
struct leave {
	int fds[8];
	size_t n;
	int dumpable;
};

static int take_leave_files(int sync_fd, struct leave *l)
{
	char byte, cbuf[CMSG_SPACE(sizeof(l->fds))];
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cbuf,
			      .msg_controllen = sizeof(cbuf) };
	struct cmsghdr *cm;

	l->n = 0;
	l->dumpable = prctl(PR_GET_DUMPABLE, 0, 0, 0, 0);
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0 ||
	    recvmsg(sync_fd, &msg, MSG_CMSG_CLOEXEC) != 1 || (msg.msg_flags & MSG_CTRUNC))
		return errno = errno ? errno : EPROTO, -1;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) {
		l->n = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(l->fds, CMSG_DATA(cm), l->n * sizeof(int));
	}
	return 0;
}

/* The command is in the sandbox's cgroups: leave them (failures only
 * slow their removal), and tell the root, which moves this process out
 * of a v2 one. */
static void leave_cgroups(int status_fd, struct leave *l)
{
	for (size_t i = 0; i < l->n; i++) {
		(void)!write(l->fds[i], "0", 1);
		close(l->fds[i]);
	}
	if (l->dumpable > 0)
		prctl(PR_SET_DUMPABLE, l->dumpable, 0, 0, 0);
	(void)!write(status_fd, &(struct child_status){ .spawned = 1 },
		     sizeof(struct child_status));
}

/* The command is gone: end every other process of the sandbox and reap
 * it, then tell the root the status. The root reports as soon as it has
 * it, without waiting for the kernel to take the namespaces down after
 * pid 1; by then nothing of the sandbox but this exiting pid 1 is left. */
static noreturn void finish(int status_fd, int code)
{
	struct child_status st = { .done = 1, .code = code };
	ssize_t w;

	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	do {
		w = write(status_fd, &st, sizeof(st));
	} while (w < 0 && errno == EINTR);
	_exit(code);
}

static noreturn void init_loop(pid_t cmd, int sfd, int status_fd)
{
	struct signalfd_siginfo si;

	for (;;) {
		ssize_t n = read(sfd, &si, sizeof(si));
		int status;
		pid_t p;

		if (n != (ssize_t)sizeof(si))
			continue;
		if (si.ssi_signo != SIGCHLD) {
			kill(cmd, (int)si.ssi_signo);
			continue;
		}
		while ((p = waitpid(-1, &status, WNOHANG)) > 0)
			if (p == cmd)
				finish(status_fd, sandbox_exit_code(status));
	}
}

noreturn void native_child(const struct child_args *a)
{
	const char *step = NULL;
	unsigned long nproc = 0;
	struct leave leave;
	sigset_t forward, orig;
	int sfd;
	pid_t cmd;

	/* The launcher's death ends the sandbox; so does the launcher giving up. */
	if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0)
		die(a->status_fd, "set the parent-death signal", errno, 0);
	if (loopback_up() < 0)
		die(a->status_fd, "bring up loopback", errno, 0);
	if (a->gw_fd >= 0 && hand_listeners(a->gw_fd) < 0)
		die(a->status_fd, "hand the gateway its listeners", errno, 0);
	if (mounts_apply(a->mp, a->sync_fd, &nproc, &step) < 0)
		die(a->status_fd, step, errno, 0);
	if (harden_drop_caps(&step) < 0)
		die(a->status_fd, step, errno, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		die(a->status_fd, "set no_new_privs", errno, 0);
	/* In this user namespace the kernel counts only the sandbox's tasks
	 * against it; hard and soft, so that nothing inside raises it. */
	if (nproc && setrlimit(RLIMIT_NPROC, &(struct rlimit){ nproc, nproc }) < 0)
		die(a->status_fd, "limits: set RLIMIT_NPROC", errno, 0);
	if (harden_close_others(a->status_fd, a->sync_fd) < 0)
		die(a->status_fd, "close inherited descriptors", errno, 0);
	if (take_leave_files(a->sync_fd, &leave) < 0)
		die(a->status_fd, "limits: take the way out of the cgroups", errno, 0);
	/* Nothing of the command runs before the host has recorded the plan:
	 * it sends what comes next only then, and a closed socket ends us. */
	static struct sock_filter insns[4096];
	struct sync_msg sm;
	if (receive_sync(a->sync_fd, &sm, insns, 4096) < 0)
		die(a->status_fd, "receive the filter and the Landlock rules", errno, 0);
	close(a->sync_fd);
	if (native_landlock_enforce(sm.ruleset, a->mp, a->landlock_abi, &step) < 0)
		die(a->status_fd, step, errno, 0);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &sm.prog, 0, 0) < 0)
		die(a->status_fd, "load the seccomp filter", errno, 0);

	/* The launcher blocked these before clone; they arrive on a signalfd. */
	sigemptyset(&forward);
	sigaddset(&forward, SIGCHLD);
	sigfwd_add(&forward, SIGFWD_COMMAND);
	sigprocmask(SIG_SETMASK, &forward, NULL);
	orig = a->caller_mask; /* the command gets the mask cordon was given */
	sfd = signalfd(-1, &forward, SFD_CLOEXEC);
	if (sfd < 0)
		die(a->status_fd, "signalfd", errno, 0);
	cmd = spawn_command(a, &orig);
	leave_cgroups(a->status_fd, &leave);
	init_loop(cmd, sfd, a->status_fd);
}
