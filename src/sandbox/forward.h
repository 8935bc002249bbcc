/* forward.h: what every sandbox's pid 1 and root share about the
 * command: the signals passed on to it (sigfwd_add(SIGFWD_COMMAND)), its status as cordon reports it,
 * and the environment that points its clients at the gateway's
 * listeners on its own loopback (native's netns, a container's). */
#ifndef CORDON_SANDBOX_FORWARD_H
#define CORDON_SANDBOX_FORWARD_H

#include "lib/sigfwd.h"

#include <signal.h>
#include <sys/wait.h>

/* The signals passed on to the command: lib/sigfwd.h's SIGFWD_COMMAND. */

/* The proxy variables, replacing whatever the command was given. */
static const char *const sandbox_proxy_env[] = {
	"HTTP_PROXY=http://127.0.0.1:3128",   "HTTPS_PROXY=http://127.0.0.1:3128",
	"ALL_PROXY=socks5h://127.0.0.1:1080", "http_proxy=http://127.0.0.1:3128",
	"https_proxy=http://127.0.0.1:3128",  "all_proxy=socks5h://127.0.0.1:1080",
	"NO_PROXY=localhost,127.0.0.1,::1",   "no_proxy=localhost,127.0.0.1,::1",
	NULL,
};

/* A wait status as cordon reports it: the exit status, 128+N for
 * signal N, 125 for anything else. */
static inline int sandbox_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 125;
}

#endif
