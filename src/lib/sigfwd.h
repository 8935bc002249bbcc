/* sigfwd.h: the one table of the signals cordon catches on a command's
 * behalf when it stands between the operator and that command (a
 * sandbox's root and pid 1, srt's runner, a container's init, the
 * unsandboxed wrapper, a container's start helper, the attach terminal).
 * Each place takes the rows of its role, so a signal added or dropped
 * here is added or dropped everywhere that role is played. */
#ifndef CORDON_LIB_SIGFWD_H
#define CORDON_LIB_SIGFWD_H

#include <signal.h>
#include <stddef.h>

enum sigfwd_role {
	/* passed on to a sandboxed command as it came */
	SIGFWD_COMMAND = 1u << 0,
	/* ends a run whose command is not signalled one by one (the
	 * unsandboxed wrapper, a container's start helper) */
	SIGFWD_STOP = 1u << 1,
	/* acted on by the attach terminal (resize, pass INT, end) */
	SIGFWD_TERMINAL = 1u << 2,
};

static const struct sigfwd {
	int sig;
	unsigned int roles;
} sigfwd_table[] = {
	{ SIGTERM, SIGFWD_COMMAND | SIGFWD_STOP | SIGFWD_TERMINAL },
	{ SIGINT, SIGFWD_COMMAND | SIGFWD_STOP | SIGFWD_TERMINAL },
	{ SIGHUP, SIGFWD_COMMAND | SIGFWD_STOP | SIGFWD_TERMINAL },
	{ SIGQUIT, SIGFWD_COMMAND | SIGFWD_STOP },
	{ SIGUSR1, SIGFWD_COMMAND },
	{ SIGUSR2, SIGFWD_COMMAND },
	{ SIGWINCH, SIGFWD_COMMAND | SIGFWD_TERMINAL },
};

/* Add the signals of role to set. */
static inline void sigfwd_add(sigset_t *set, unsigned int role)
{
	for (size_t i = 0; i < sizeof(sigfwd_table) / sizeof(sigfwd_table[0]); i++)
		if (sigfwd_table[i].roles & role)
			sigaddset(set, sigfwd_table[i].sig);
}

#endif
