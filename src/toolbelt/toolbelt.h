/* toolbelt.h: the daemon's per-job toolbelt, through which a job's command
 * calls back to the host. Each job with operations granted gets a
 * directory <state>/toolbelt/<job>/ (0700) holding its token (0400) and
 * a listening unix socket, served over HTTP by libmicrohttpd. The sandbox
 * reads the token (a read-only exception) and reaches the socket through
 * its gateway's reserved name, never by a unix socket of its own. A call
 * on a job's socket is authorised by that job's token alone (constant
 * time); the directory is removed, token and socket with it, when the job
 * ends (revoked). The operations themselves are the daemon's: the server
 * hands each authorised call to its callback. */
#ifndef CORDON_TOOLBELT_TOOLBELT_H
#define CORDON_TOOLBELT_TOOLBELT_H

#include "lib/err.h"

#include <jansson.h>
#include <stdbool.h>

#define TOOLBELT_DIR "toolbelt"
#define TOOLBELT_TOKEN "token"
#define TOOLBELT_SOCKET "toolbelt.sock"

/* Answer one authorised call of job: a JSON result (status 200), or NULL
 * with *status (400 bad_request, 403 not granted, ...) and *why set. */
typedef json_t *(*tb_call_fn)(void *ctx, const char *job, const char *op, json_t *args,
			      int *status, const char **why);

struct loop;
struct toolbelt;

/* The server, on the caller's loop l (its sources, a hook before each
 * wait and its timers are removed by toolbelt_free, before l is freed). */
int toolbelt_new(struct loop *l, const char *state_dir, tb_call_fn fn, void *ctx,
		 struct toolbelt **out, struct err **e);
void toolbelt_free(struct toolbelt *t);

/* A job's toolbelt: made (a new token), or taken up again after a restart
 * from the token its directory holds (reuse). ops: the host_op bits
 * granted. */
int toolbelt_open(struct toolbelt *t, const char *job, unsigned int ops, bool reuse,
		  struct err **e);
/* Revoke: the listener closed, the directory removed. */
void toolbelt_close(struct toolbelt *t, const char *job);
/* The job's toolbelt directory and socket paths (caller frees); NULL when
 * it has none. */
char *toolbelt_dir_of(const struct toolbelt *t, const char *job);
char *toolbelt_socket_of(const struct toolbelt *t, const char *job);

#endif
