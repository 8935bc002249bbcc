/* defaults.h: what every launch denies unless the policy lifts it by name:
 * common credential stores and the sockets that lead out of a sandbox. */
#ifndef CORDON_POLICY_DEFAULTS_H
#define CORDON_POLICY_DEFAULTS_H

#include "lib/err.h"

#include <stddef.h>
#include <sys/types.h>

enum default_kind {
	DEFAULT_CREDENTIAL,	/* lifted only by naming it in read.allow */
	DEFAULT_SOCKET,		/* lifted only by naming it in sockets */
};

struct default_deny {
	char *path;		/* absolute, canonical */
	enum default_kind kind;
	char **links;		/* where the links met resolving it lie; may be NULL */
};

/* The operator's environment the defaults depend on. runtime_dir and
 * ssh_auth_sock may be NULL. */
struct default_env {
	const char *home;
	const char *runtime_dir;	/* $XDG_RUNTIME_DIR */
	const char *ssh_auth_sock;	/* $SSH_AUTH_SOCK */
	uid_t uid;
};

/* The default credentials, NULL-terminated: paths relative to HOME, and
 * absolute paths of the host. docs/policy.md lists the same. */
extern const char *const policy_home_credentials[];
extern const char *const policy_host_credentials[];

int policy_default_denies(const struct default_env *env,
			  struct default_deny **out, size_t *n, struct err **e);
void policy_default_denies_free(struct default_deny *d, size_t n);

#endif
