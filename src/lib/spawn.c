/* spawn.c: run a program and capture its output (see spawn.h). A fork,
 * so that the child can ask to die with its parent before it execs; the
 * child does only async-signal-safe work, marks every descriptor above
 * stderr close-on-exec, and tells an exec that failed over a
 * close-on-exec pipe (closed unread when the exec succeeds). */
#include "spawn.h"
#include "cleanup.h"
#include "fs.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <linux/close_range.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static _Noreturn void child_fail(int st, int err)
{
	(void)!write(st, &err, sizeof(err));
	_exit(err == ENOENT ? 127 : 126);
}

/* execve argv[0], looked up in path (as execvp does: the first that
 * runs; EACCES reported over ENOENT when one was found but not run). */
static _Noreturn void child_exec(const struct spawn_req *q, const char *path, int st)
{
	const char *name = q->argv[0];
	size_t nlen = strlen(name);
	char full[PATH_MAX];
	int err = ENOENT;

	if (strchr(name, '/')) {
		execve(name, q->argv, q->envp);
		child_fail(st, errno);
	}
	for (const char *p = path, *end; p; p = *end ? end + 1 : NULL) {
		size_t dlen;

		end = strchr(p, ':');
		if (!end)
			end = p + strlen(p);
		dlen = (size_t)(end - p);
		if (dlen == 0 || dlen + 1 + nlen + 1 > sizeof(full))
			continue;
		memcpy(full, p, dlen);
		full[dlen] = '/';
		memcpy(full + dlen + 1, name, nlen + 1);
		execve(full, q->argv, q->envp);
		if (errno == EACCES)
			err = EACCES;
		else if (errno != ENOENT && errno != ENOTDIR && err != EACCES)
			err = errno;
	}
	child_fail(st, err);
}

/* fd moved above the standard three (close-on-exec): a caller that ran
 * with 0, 1 or 2 closed has its pipes there, where one dup2 below would
 * overwrite another, or leave one close-on-exec on itself. */
static int above_stdio(int fd)
{
	return fd < 0 || fd > STDERR_FILENO ? fd : fcntl(fd, F_DUPFD_CLOEXEC, STDERR_FILENO + 1);
}

static _Noreturn void child(const struct spawn_req *q, const char *path, int in, int out,
			    int st)
{
	int null = open("/dev/null", O_RDWR | O_CLOEXEC);
	sigset_t none;

	/* the status pipe first: child_fail reports through it */
	if ((st = above_stdio(st)) < 0)
		_exit(127);
	in = above_stdio(in);
	out = above_stdio(out);
	null = above_stdio(null);
	if (q->die_with_parent)
		prctl(PR_SET_PDEATHSIG, SIGKILL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (null < 0 || dup2(in >= 0 ? in : null, STDIN_FILENO) < 0 ||
	    dup2(out, STDOUT_FILENO) < 0 || dup2(q->merge_err ? out : null, STDERR_FILENO) < 0)
		child_fail(st, errno);
	/* every descriptor is opened close-on-exec; one that was not (a
	 * library's) still does not reach the program */
	(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
	child_exec(q, path, st);
}

/* Read fd to its end into buf (the first max bytes kept), until the
 * deadline (0: none). false when the deadline passed. */
static bool drain(int fd, char *buf, size_t max, int64_t deadline, struct spawn_out *o)
{
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		char chunk[4096];
		int64_t left = deadline ? deadline - now_ms() : -1;
		ssize_t n;

		if (deadline && left <= 0)
			return false;
		if (poll(&pfd, 1, deadline ? (int)left : -1) < 0 && errno != EINTR)
			return true;
		if (!pfd.revents)
			continue;
		n = read(fd, chunk, sizeof(chunk));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return true;
		if (o->kept < max) {
			size_t keep = (size_t)n < max - o->kept ? (size_t)n : max - o->kept;

			memcpy(buf + o->kept, chunk, keep);
			o->kept += keep;
		}
		o->total += (size_t)n;
	}
}

int spawn_capture(const struct spawn_req *q, struct spawn_out *o, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_close_ int in = -1, st_r = -1;
	const char *path = q->path ? q->path : getenv("PATH");
	int64_t deadline = q->timeout_ms > 0 ? now_ms() + q->timeout_ms : 0;
	int out[2] = { -1, -1 }, st[2] = { -1, -1 }, ws = 0, err = 0;
	bool in_time;
	pid_t pid;

	*o = (struct spawn_out){ 0 };
	if (!path)
		path = "/bin:/usr/bin"; /* execvp's own default */
	if (q->in) {
		in = memfd_create("spawn-in", MFD_CLOEXEC);
		if (in < 0 || fs_write_exact(in, q->in, q->in_len) < 0 ||
		    lseek(in, 0, SEEK_SET) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "run `%s`: its input",
				       q->argv[0]);
	}
	buf = malloc(q->max + 1);
	if (!buf || pipe2(out, O_CLOEXEC) < 0 || pipe2(st, O_CLOEXEC) < 0) {
		err = buf ? errno : ENOMEM;
		if (out[0] >= 0) {
			close(out[0]);
			close(out[1]);
		}
		return err_set(e, ERR_INTERNAL, err, "run `%s`", q->argv[0]);
	}
	pid = fork();
	if (pid == 0)
		child(q, path, in, out[1], st[1]);
	err = errno;
	close(out[1]);
	close(st[1]);
	st_r = st[0];
	if (pid < 0) {
		close(out[0]);
		return err_set(e, ERR_UNAVAILABLE, err, "run `%s`", q->argv[0]);
	}
	in_time = drain(out[0], buf, q->max, deadline, o);
	close(out[0]);
	if (!in_time)
		kill(pid, SIGKILL);
	while (waitpid(pid, &ws, 0) < 0 && errno == EINTR)
		;
	if (!in_time) {
		*o = (struct spawn_out){ 0 };
		return err_set(e, ERR_UNAVAILABLE, 0, "`%s` did not finish within %d s",
			       q->argv[0], q->timeout_ms / 1000);
	}
	if (read(st_r, &err, sizeof(err)) == (ssize_t)sizeof(err))
		o->exec_errno = err ? err : EIO;
	buf[o->kept] = '\0';
	o->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	o->out = steal_pointer(&buf);
	return 0;
}

void spawn_out_clear(struct spawn_out *o)
{
	free(o->out);
	*o = (struct spawn_out){ 0 };
}
