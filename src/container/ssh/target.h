/* target.h: what a binding's SSH container config names: the remote
 * (user@host:port) and the one host key every connection checks. Parsed
 * where the config is loaded and again where the provider connects, by
 * the same code. */
#ifndef CORDON_CONTAINER_SSH_TARGET_H
#define CORDON_CONTAINER_SSH_TARGET_H

#include "lib/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct ssh_target {
	char *user;
	char *host;
	unsigned int port;
	char *key_type;		/* "ssh-ed25519", ... */
	char *key_b64;		/* the key blob, base64 as the remote's .pub has it */
	char alias[24];		/* "cordon-" and 16 hex of the blob's SHA-256: the
				 * HostKeyAlias the known_hosts file holds it under */
	char fingerprint[80];	/* "SHA256:<base64>", as ssh prints it */
};

/* "user@host[:port]": a user and host ssh takes as they are (no option,
 * no space, no quote), port 1-65535 (22 when absent). where names the
 * item in messages. */
int ssh_target_remote(struct ssh_target *t, const char *remote, const char *where,
		      struct err **e);
/* "<type> <base64> [comment]": a key type ssh knows, a blob that decodes
 * and names that type itself. */
int ssh_target_key(struct ssh_target *t, const char *line, const char *where, struct err **e);
/* Both, from a config object ({"remote", "host_key"}). */
int ssh_target_from(struct ssh_target *t, const json_t *config, struct err **e);
void ssh_target_clear(struct ssh_target *t);

/* Do a and b name one remote account, as far as their configs say? The
 * same user, and the same host key or the same host and port as spelled
 * (a remote may present a key of each type, and be reached by more than
 * one name: either alone makes them one account). Two keys of one
 * machine under two names are not seen here: the SSH provider asks the
 * remote for all its keys at each launch (ssh_account_peers). */
bool ssh_target_same_account(const struct ssh_target *a, const struct ssh_target *b);

/* A config's ssh bindings (an array of their "container" objects, and
 * their names in the same order): a
 * remote account a binding with isolation "none" runs on is that
 * binding's alone (as ssh_target_same_account sees it; each launch
 * checks again with the remote's keys) (its runs can do anything there, for as long as the
 * account exists): another binding on the same account is refused
 * (ERR_CONFIG, naming both). */
int sshcfg_accounts_check(const json_t *containers, const char *const *names, struct err **e);

#endif
