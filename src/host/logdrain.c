/* logdrain.c: the pipe between a segment's command and the job's log
 * (see logdrain.h). */
#include "host/logdrain.h"

#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

_Static_assert(HOST_LOG_MAX == 268435456, "the line below names the bound");
static const char over[] = "cordon: log: the job's log reached its bound of 256 MiB; the rest "
			   "of the command's output is dropped\n";

/* Append what the pipe brings, up to the bound; then read on and drop. */
static noreturn void drain(int in, int log)
{
	static char buf[65536];
	bool said = false;
	ssize_t n;

	for (;;) {
		struct stat st;
		off_t room;

		do
			n = read(in, buf, sizeof(buf));
		while (n < 0 && errno == EINTR);
		if (n <= 0)
			_exit(0);
		/* (others append too: the daemon's notify lines, a later
		 * segment's drain after this one's wrapper is gone) */
		room = fstat(log, &st) == 0 && S_ISREG(st.st_mode) ? HOST_LOG_MAX - st.st_size
								   : (off_t)n;
		if (room > 0)
			(void)fs_write_exact(log, buf, room < n ? (size_t)room : (size_t)n);
		if (room < n && !said) {
			(void)fs_write_exact(log, over, sizeof(over) - 1);
			said = true;
		}
	}
}

int host_logdrain_start(struct host_logdrain *d, struct err **e)
{
	int pfd[2] = { -1, -1 }, done[2] = { -1, -1 }, saved, status = -1;
	pid_t mid;

	d->done = -1;
	d->log = fcntl(1, F_DUPFD_CLOEXEC, 3);
	if (d->log < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the job's log");
	if (pipe2(pfd, O_CLOEXEC) < 0 || pipe2(done, O_CLOEXEC) < 0) {
		saved = errno;
		goto fail;
	}
	mid = fork();
	if (mid == 0) {
		/* a grandchild, so that the sandbox root (this process) waits
		 * for nothing but its sandbox; in the wrapper's process group:
		 * a stop's TERM is the command's, the drain ends when the last
		 * writer has (a KILL ends both) */
		pid_t g = fork();

		if (g != 0)
			_exit(g < 0 ? 1 : 0);
		signal(SIGTERM, SIG_IGN);
		signal(SIGINT, SIG_IGN);
		signal(SIGHUP, SIG_IGN);
		signal(SIGQUIT, SIG_IGN);
		signal(SIGPIPE, SIG_IGN);
		/* (out of every workspace: the stray sweep goes by a process's
		 * working directory) */
		(void)!chdir("/");
		/* nothing of the wrapper's but the ends it works with: 0 the
		 * pipe, 1 the log, 3 done (its end tells the wrapper) */
		if (dup2(pfd[0], 0) < 0 || dup2(d->log, 1) < 0 || dup2(1, 2) < 0 ||
		    dup2(done[1], 3) < 0)
			_exit(0);
		(void)syscall(SYS_close_range, 4, ~0U, 0);
		drain(0, 1);
	}
	if (mid < 0) {
		saved = errno;
		goto fail;
	}
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		saved = EAGAIN; /* no drain: its fork failed */
		goto fail;
	}
	close(pfd[0]);
	close(done[1]);
	pfd[0] = done[1] = -1;
	if (dup2(pfd[1], 1) < 0 || dup2(pfd[1], 2) < 0) {
		saved = errno;
		(void)dup2(d->log, 1);
		(void)dup2(d->log, 2);
		goto fail;
	}
	close(pfd[1]);
	d->done = done[0];
	return 0;
fail:
	for (int *fd = (int[]){ pfd[0], pfd[1], done[0], done[1], d->log }, i = 0; i < 5; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	d->log = -1;
	return err_set(e, ERR_UNAVAILABLE, saved, "the job's log: its drain");
}

void host_logdrain_finish(struct host_logdrain *d, bool wait)
{
	struct pollfd p = { .fd = d->done, .events = POLLIN };

	if (d->log < 0)
		return;
	fflush(stdout);
	fflush(stderr);
	(void)dup2(d->log, 1);
	(void)dup2(d->log, 2);
	close(d->log);
	d->log = -1;
	/* the drain's end closes done's write end */
	while (wait && poll(&p, 1, HOST_LOGDRAIN_WAIT_MS) < 0 && errno == EINTR)
		;
	close(d->done);
	d->done = -1;
}
