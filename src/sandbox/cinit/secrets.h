/* secrets.h: the secrets file of a container's run dir, for `cordon
 * cinit`. The host writes the command's secrets (credentials, the
 * sign-in) into `<run>/.cordon-secrets` rather than into the container's
 * environment, which the Engine's API shows to anyone who may inspect the
 * container. pid 1 takes them into the command's environment and removes
 * the file before anything of the command runs. No value is ever
 * printed: every message names the file and the problem only. */
#ifndef CORDON_SANDBOX_CINIT_SECRETS_H
#define CORDON_SANDBOX_CINIT_SECRETS_H

#include "lib/err.h"

#define SECRETS_NAME ".cordon-secrets"
#define SECRETS_MAX ((size_t)1 << 20)

/* Take the secrets file beneath dirfd (the run dir, named dir in
 * messages), if there is one: opened without following a link, removed
 * at once (it must have no other name), then checked: a regular file of
 * this uid, no group or other mode bits, at most SECRETS_MAX bytes,
 * holding one JSON object without duplicate names whose names are
 * environment names ([A-Z_][A-Z0-9_]*) and whose values are strings.
 * *out gets "NAME=value" entries (NULL when there is no file). -1 with
 * *e otherwise; a file that was opened is gone either way. */
int secrets_take(int dirfd, const char *dir, char ***out, struct err **e);

#endif
