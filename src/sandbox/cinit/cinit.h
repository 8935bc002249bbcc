/* cinit.h: cordon's runtime inside a container, `cordon cinit`. The
 * Docker provider copies cordon's static binary into the created, stopped
 * container and makes it the entry point, so any image works and nothing
 * of cordon need be in it. It runs as the container's pid 1, as the
 * operator, with no capabilities and no_new_privs, in a network of
 * loopback alone, and, in this order:
 *   1. takes the secrets file of the run dir into the command's
 *      environment and removes it (secrets.h);
 *   2. listens on 127.0.0.1:3128 and :1080 and relays each connection to
 *      the gateway companion's unix socket (relay.h); the command's
 *      environment points every client there;
 *   3. starts the command with the container's stdin, stdout and stderr,
 *      under cordon's Landlock and seccomp layer (sandbox/inner.h);
 *   4. stays as its init: reaps every process, passes signals on (a TERM
 *      first leaves a marker in the run dir) and exits with the
 *      command's status. */
#ifndef CORDON_SANDBOX_CINIT_CINIT_H
#define CORDON_SANDBOX_CINIT_CINIT_H

#include "sandbox/inner.h"

/* Left in the run dir (created exclusively, mode 0644, holding the UTC
 * time) when pid 1 gets TERM, before the TERM is passed on. */
#define CINIT_TERM_MARKER ".cordon-term"

struct cinit_args {
	const char *run_dir;	/* absolute, without symbolic links */
	const char *channel;	/* the gateway companion's unix socket */
	struct inner_layer confine;	/* the command and its layer */
};

/* Be the container's pid 1 until the command ends. Returns only on a
 * failure before the command ran: 125 with the reason on stderr;
 * otherwise the process leaves with the command's status (128 + N for
 * signal N; 126 or 127 when it could not be executed; 125 when its
 * layer could not be applied). */
int cinit_run(const struct cinit_args *a);

#endif
