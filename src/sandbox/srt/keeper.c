/* keeper.c: srt started beneath the keeper, a process in namespaces of
 * cordon's own (keeper.h). */
#include "sandbox/srt/keeper.h"
#include "sandbox/srt/tools.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/sigfwd.h"
#include "lib/strv.h"
#include "lib/text.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

/* The command's environment: the process's, less the credential-like
 * variables the policy does not pass (policy/envfilter.h), with the
 * plan's own keys. srt hands it on to the command as it is. */
static char **child_environ(const struct grant *g, const struct plan *p, bool quiet)
{
	char **env = NULL;

	return envfilter_for_command(environ, g->env_pass, p->env, quiet ? NULL : stderr,
				     &env) < 0 ? NULL : env;
}

/* What the keeper reports when it could not set srt's namespaces up: the
 * step, as the root prints it. */
struct keeper_fail {
	int err;	/* the errno of the step */
	int exec;	/* 1: srt itself could not be executed */
	char step[64];
};

/* The keeper's signal that the root is gone: not one the root forwards. */
#define KEEPER_ORPHANED (SIGRTMIN + 1)

static noreturn void keeper_die(int status_fd, const char *step, int err, int exec)
{
	struct keeper_fail f = { .err = err, .exec = exec };

	snprintf(f.step, sizeof(f.step), "%s", step);
	(void)fs_write_exact(status_fd, &f, sizeof(f));
	_exit(exec ? 127 : 125);
}

/* The keeper is the first process of namespaces of cordon's own around
 * srt: a pid namespace (every process of the sandbox, srt's helpers on the
 * host side and the command alike, ends when the keeper does, however it
 * ends), and IPC, UTS and cgroup namespaces (srt's own sandbox shares the
 * host's: a command could reach the host's System V and POSIX IPC), a
 * mount namespace for a /proc of that pid namespace (srt names its own
 * files by its pid under /proc), and, when the operator is not root, a
 * user namespace that owns them. The keeper passes on the signals the
 * root forwards and exits with srt's status. When srt exits, or the root
 * dies (the plan's stop is a SIGKILL of the root, which nothing in srt
 * would notice), it ends everything beneath it, then removes what the
 * root would have: the sandbox's cgroups and its bridge socket dir. */
static noreturn void keeper(const struct plan *p, char **env, const sigset_t *mask,
			    int status_fd, int go_fd, struct limits_plan *lp, const char *sockdir)
{
	struct pollfd root_gone = { .fd = go_fd, .events = POLLIN };
	sigset_t set;
	pid_t srt;
	char go;
	int sfd, code = 125;

	sigemptyset(&set);
	sigfwd_add(&set, SIGFWD_COMMAND);
	sigaddset(&set, SIGCHLD);
	sigaddset(&set, KEEPER_ORPHANED);
	/* blocked, so queued for the signalfd even to a namespace's init */
	sigprocmask(SIG_BLOCK, &set, NULL);
	/* The root writes the id maps first. */
	if (fs_read_exact(go_fd, &go, 1) < 0)
		_exit(125);
	prctl(PR_SET_PDEATHSIG, KEEPER_ORPHANED);
	/* the root keeps its end open for its life: gone already? */
	if (poll(&root_gone, 1, 0) != 0)
		_exit(125);
	if (mount(NULL, "/", NULL, MS_REC | MS_SLAVE, NULL) < 0)
		keeper_die(status_fd, "srt's namespaces: mount propagation", errno, 0);
	if (mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, NULL) < 0)
		keeper_die(status_fd, "srt's namespaces: mount /proc", errno, 0);
	sfd = signalfd(-1, &set, SFD_CLOEXEC);
	if (sfd < 0)
		keeper_die(status_fd, "srt's namespaces: signalfd", errno, 0);
	srt = fork();
	if (srt == 0) {
		/* srt dies with the keeper, whatever else happens. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		sigprocmask(SIG_SETMASK, mask, NULL);
		execve(p->argv[0], p->argv, env);
		keeper_die(status_fd, "exec srt", errno, 1);
	}
	if (srt < 0)
		keeper_die(status_fd, "srt's namespaces: fork", errno, 0);
	close(status_fd);
	for (;;) {
		struct signalfd_siginfo si;
		int ws;
		pid_t w;

		if (read(sfd, &si, sizeof(si)) != (ssize_t)sizeof(si))
			break;
		if ((int)si.ssi_signo == KEEPER_ORPHANED)
			break;
		if (si.ssi_signo != SIGCHLD) {
			kill(srt, (int)si.ssi_signo);
			continue;
		}
		while ((w = waitpid(-1, &ws, WNOHANG)) > 0)
			if (w == srt) {
				code = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
				srt = 0;
			}
		if (srt == 0)
			break;
	}
	/* The first process of its pid namespace: this ends every other,
	 * and so would the keeper's own end. */
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	/* the root may be gone; it tries again when it is not */
	limits_remove(lp);
	srt_sockdir_remove(sockdir);
	_exit(code);
}

static int write_proc(pid_t pid, const char *name, const char *text)
{
	char path[64];
	_cleanup_close_ int fd = -1;

	snprintf(path, sizeof(path), "/proc/%d/%s", (int)pid, name);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	return fs_write_exact(fd, text, strlen(text));
}

/* The operator's own ids, and nobody else's, in the keeper's user
 * namespace. */
static int keeper_maps(pid_t pid)
{
	char map[64];

	if (write_proc(pid, "setgroups", "deny") < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)getuid(), (unsigned)getuid());
	if (write_proc(pid, "uid_map", map) < 0)
		return -1;
	snprintf(map, sizeof(map), "%u %u 1\n", (unsigned)getgid(), (unsigned)getgid());
	return write_proc(pid, "gid_map", map);
}

pid_t srt_keeper_spawn(const struct grant *g, const struct plan *p, bool quiet,
			const sigset_t *mask, struct limits_plan *lp, const char *sockdir,
			int *pidfd, int *go_keep, struct err **e)
{
	_cleanup_strv_ char **env = child_environ(g, p, quiet);
	unsigned long flags = SIGCHLD | CLONE_NEWPID | CLONE_NEWNS | CLONE_NEWIPC |
			      CLONE_NEWUTS | CLONE_NEWCGROUP |
			      (geteuid() != 0 ? CLONE_NEWUSER : 0);
	int status[2] = { -1, -1 }, go[2] = { -1, -1 };
	struct keeper_fail f;
	pid_t pid;

	if (!env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "start srt");
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, status) < 0 ||
	    pipe2(go, O_CLOEXEC) < 0) {
		int saved = errno;
		for (int i = 0; i < 2; i++) {
			if (status[i] >= 0)
				close(status[i]);
		}
		return err_set(e, ERR_UNAVAILABLE, saved, "start srt");
	}
	pid = (pid_t)syscall(SYS_clone, flags, NULL, NULL, NULL, NULL);
	if (pid == 0) {
		close(status[0]);
		close(go[1]);
		keeper(p, env, mask, status[1], go[0], lp, sockdir);
	}
	close(status[1]);
	close(go[0]);
	if (pid < 0) {
		int saved = errno;
		close(status[0]);
		close(go[1]);
		return err_set(e, ERR_UNAVAILABLE, saved,
			       "srt's namespaces: clone (user namespaces usable? see `cordon doctor`)");
	}
	const char *step = NULL;
	if ((flags & CLONE_NEWUSER) && keeper_maps(pid) < 0)
		step = "srt's namespaces: write the id maps";
	else if ((*pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0 ||
		 fs_write_exact(go[1], "g", 1) < 0)
		step = "start srt";
	if (step) {
		int saved = errno;
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		close(status[0]);
		close(go[1]);
		return err_set(e, ERR_UNAVAILABLE, saved, "%s", step);
	}
	*go_keep = go[1];
	/* srt started (the status socket closed by its exec) or a step failed */
	if (fs_read_exact(status[0], &f, sizeof(f)) == 0) {
		close(status[0]);
		waitpid(pid, NULL, 0);
		f.step[sizeof(f.step) - 1] = '\0';
		text_printable(f.step, sizeof(f.step));
		return err_set(e, ERR_UNAVAILABLE, f.err, "%s", f.step);
	}
	close(status[0]);
	return pid;
}
