/* spawn.h: run a program and capture what it prints, the one way cordon
 * does it for the tools it asks (srt's version and preflight, ssh -G,
 * ssh-keyscan). An argv, never a shell; an environment given whole;
 * stdin from bytes or /dev/null; the output kept up to a bound (and
 * counted past it); a time bound when one is asked; every descriptor
 * close-on-exec, so the program sees only its three. */
#ifndef CORDON_LIB_SPAWN_H
#define CORDON_LIB_SPAWN_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>

struct spawn_req {
	char *const *argv;	/* argv[0] with a '/' is run as it is */
	char *const *envp;	/* the program's whole environment */
	const char *path;	/* where argv[0] without a '/' is looked up (a
				 * PATH value); NULL: this process's PATH */
	const void *in;		/* stdin's bytes; NULL: /dev/null */
	size_t in_len;
	size_t max;		/* bytes of output kept */
	int timeout_ms;		/* > 0: killed (SIGKILL) when not done by then */
	bool merge_err;		/* stderr captured with stdout; else /dev/null */
	bool die_with_parent;	/* killed when this process dies */
};

struct spawn_out {
	char *out;		/* the kept output, NUL-terminated; caller frees */
	size_t kept, total;	/* bytes kept, bytes printed in all */
	int status;		/* the exit status, 128+N for signal N */
	int exec_errno;		/* not 0: the program could not be run (status
				 * is then 127 for ENOENT, else 126) */
};

/* Run q and wait for it. -1 with *e set when it could not be started
 * (ERR_INTERNAL or ERR_UNAVAILABLE "run `argv[0]`") or did not finish
 * in time (ERR_UNAVAILABLE "`argv[0]` did not finish within N s"). A
 * program that ran, or could not be exec'd, is 0: see o. */
int spawn_capture(const struct spawn_req *q, struct spawn_out *o, struct err **e);

void spawn_out_clear(struct spawn_out *o);

#endif
