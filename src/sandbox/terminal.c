/* terminal.c: see terminal.h. */
#include "sandbox/terminal.h"

#include <signal.h>
#include <unistd.h>

void terminal_save(struct terminal *t)
{
	t->fd = -1;
	if (isatty(STDIN_FILENO) && tcgetattr(STDIN_FILENO, &t->saved) == 0)
		t->fd = STDIN_FILENO;
}

void terminal_restore(const struct terminal *t)
{
	sigset_t tt, old;

	if (t->fd < 0 || tcgetpgrp(t->fd) != getpgrp())
		return;
	/* tcsetattr from a process group that is not in the foreground
	 * stops it with SIGTTOU: held off, as reclaiming the terminal is */
	sigemptyset(&tt);
	sigaddset(&tt, SIGTTOU);
	sigprocmask(SIG_BLOCK, &tt, &old);
	/* what the command wrote reaches the terminal first, so an
	 * answer-back it provoked is in the input queue to be discarded */
	if (isatty(STDOUT_FILENO))
		(void)tcdrain(STDOUT_FILENO);
	(void)tcflush(t->fd, TCIFLUSH);
	(void)tcsetattr(t->fd, TCSANOW, &t->saved);
	sigprocmask(SIG_SETMASK, &old, NULL);
}
