/* internal.h: the SSH provider's parts (ssh.h is what others use). A
 * connection is the system ssh client run with options that pin the one
 * host key and allow nothing but what the provider asks; every call sends
 * a POSIX sh script of its own (scripts.c) with plain words as its
 * arguments, never a value of the environment or a secret. */
#ifndef CORDON_CONTAINER_SSH_INTERNAL_H
#define CORDON_CONTAINER_SSH_INTERNAL_H

#include "container/contract.h"
#include "plan/plan.h"
#include "container/ssh/target.h"

#include <stdbool.h>
#include <sys/types.h>

/* The remote's records of a run: $HOME/.cordon/runs/<id>. */
#define SSH_RECORDS ".cordon/runs"
/* A run's liveness mark in its stub's arguments. */
#define SSH_NONCE_PREFIX "cordon-remote-"
/* ssh's own failure (connection, authentication, host key). */
#define SSH_EXIT_CONNECT 255
/* How long a doctor pass stands, in seconds. */
#define SSH_PASS_SECONDS 600

struct ssh_conn {
	struct ssh_target t;
	char *known_hosts;	/* the provider's file holding the one key */
	char *identity;		/* NULL: ssh's own choice */
	char *config_file;	/* ssh -F; NULL: the operator's ~/.ssh/config */
};

/* From a config ({"remote", "host_key", "identity"?}) and the state dir,
 * or from a pin (which names its known_hosts file). The known_hosts file
 * is (re)written from the key each time: it holds that key only. */
int ssh_conn_from_config(struct ssh_conn *c, const json_t *config, const char *state_dir,
			 struct err **e);
int ssh_conn_from_pin(struct ssh_conn *c, const json_t *pin, struct err **e);
void ssh_conn_clear(struct ssh_conn *c);

/* A file of the provider's for this remote and key, beside the
 * known_hosts file: r-<16 hex of the key's alias and user@host:port>
 * <suffix> (the master connection's socket, the probe's last pass).
 * NULL: no memory. */
char *ssh_conn_file(const struct ssh_conn *c, const char *suffix);
/* ... and one for the account as one of its keys names it (the user and
 * that key's alias, whatever the host's spelling): a-<16 hex><suffix>. */
char *ssh_account_file(const struct ssh_conn *c, const char *alias, const char *suffix);
/* Every host key the remote presents ("<type> <base64>", ssh-keyscan of
 * each type, in an environment of its own), the pinned one among them.
 * NULL with errno: ENOMEM; ENOKEY when the scan found nothing (an
 * ssh_config alias or a jump host it does not take, no answer);
 * EKEYREJECTED when it found keys but not the pinned one
 * (ssh_key_refused says so). What a scan says is the network's: it widens
 * who counts as the account, never what a connection accepts (that checks
 * the pinned key alone). */
char **ssh_presented_keys(const struct ssh_conn *c);
/* The remote does not present the pinned key: the probe's pass dropped,
 * *e naming the key it presents (to set once checked) and the pinned
 * one's fingerprint. -1. */
int ssh_key_refused(const struct ssh_conn *c, struct err **e);

/* The fds of an ssh child: -1 is /dev/null. */
struct ssh_io {
	int in, out, err;
};

/* Start ssh running script (sh -c) with args ($1...) on the remote,
 * with forwards (each "-R" "remote:local", NULL-terminated; may be NULL)
 * and in a process group of its own when own_group. */
int ssh_spawn(const struct ssh_conn *c, const char *script, char *const *args,
	      char *const *forwards, const struct ssh_io *io, bool own_group, pid_t *pid,
	      struct err **e);

/* Run script to its end: in (may be NULL) as its stdin, its stdout in
 * *out (NUL-terminated, at most max bytes: more is an error), its exit
 * status in *status. ssh's own failure (255) is an error naming why: a
 * host key other than the pinned one (ERR_DENIED), or no connection
 * (ERR_UNAVAILABLE). */
int ssh_call(const struct ssh_conn *c, const char *script, char *const *args, const void *in,
	     size_t inlen, char **out, size_t *outlen, size_t max, int *status, struct err **e);

/* Does the operator's ssh configuration add a forward for the remote
 * (`ssh -G`)? The helper's connection (which forwards the toolbelt) would
 * carry it: -1 with *e when it does, or when it cannot be read. */
int ssh_forwards_configured(const struct ssh_conn *c, struct err **e);

/* Why ssh exited 255, from its stderr (read from errfd): *e set. */
int ssh_failed(const struct ssh_conn *c, int errfd, struct err **e);

/* What the remote says of a run (ssh_status). */
struct ssh_run_status {
	int state;		/* PROVIDER_* */
	int code;		/* its status once exited; 137 when its stub left none */
	long long started_ms;	/* the host's clock as the helper started it */
	bool term;		/* the stub got a TERM */
};
/* Ask (labels checked against the pin: another run is ERR_DENIED). */
int ssh_status(const struct ssh_conn *c, const json_t *pin, struct ssh_run_status *st,
	       struct err **e);
/* Send sig (a name: TERM, KILL...) to the stub, or its whole group: 0
 * sent (or it had ended), 1 not started yet, -1 with *e. */
int ssh_signal_run(const struct ssh_conn *c, const json_t *pin, const char *sig, bool group,
		   struct err **e);
/* The remote's probe: its home in *home, whether user namespaces work
 * for the account (a native sandbox can run) in *userns; the checks in
 * *report (may be NULL); a pass younger than SSH_PASS_SECONDS is taken
 * when use_pass. */
int ssh_probe(const struct ssh_conn *c, const char *state_dir, bool use_pass, char **home,
	      bool *userns, json_t **report, struct err **e);
/* The socket on the remote, in a native run's records, where ssh
 * forwards the host's gateway. */
#define SSH_CHANNEL "gw.sock"
/* Copy the plan's roots to the remote (one tar on ssh's stdin), the
 * manifest kept in the record dir (ssh-manifest.json). */
int ssh_upload(const struct ssh_conn *c, const json_t *pc, const json_t *pin,
	       const struct plan_paths *paths, struct err **e);
/* The changes of the write grants back (copy.c): 0, or -1 when they
 * could not be read or applied; refusals are said on stderr. */
int ssh_copy_back(const struct ssh_conn *c, const json_t *pc, const json_t *pin,
		  const struct plan_paths *paths, struct err **e);

/* The entry stub (stub.c) of the run whose records are rec: in cwd,
 * argv (isolation none) or cordon's native sandbox on the plan of digest;
 * NULL: no memory. */
char *ssh_make_stub(const char *rec, const char *cwd, char *const *argv, const char *digest,
		    size_t *len);
/* The run's environment for its stub, on the start connection's stdin
 * ahead of the command's: "NAME <value, printf %b escapes>" lines, then
 * ".". NULL: no memory. The caller wipes and frees it. */
char *ssh_env_block(const struct plan *p, const char *home, size_t *len);

/* The account as a tenant (account.c); keys: every key the remote
 * presents (ssh_presented_keys), each naming the account. -1 (ERR_DENIED)
 * when it ran isolation none work under any of them: for a native run
 * (!none), any; for a none run of binding (NULL: not known), another
 * binding's (the account is the first none binding's for as long as it
 * exists, whatever the config says now). */
int ssh_account_tainted(const struct ssh_conn *c, char *const *keys, bool none,
			const char *binding, struct err **e);
/* A none run's: the account's locks (one per key) taken for this
 * process's life (another's: container_busy, ERR_DENIED), and the
 * account marked under every key as having run none work (job, of
 * binding, which may be NULL). */
int ssh_account_take(const struct ssh_conn *c, char *const *keys, const char *job,
		     const char *binding, struct err **e);
/* The config's other ssh bindings ("peers": [{"binding", "remote",
 * "host_key", "isolation"}], the daemon's; its own name in "binding"):
 * one on the same account (the same user, and its pinned key one the
 * remote presents, or the same host and port) when either runs isolation
 * none is refused (ERR_CONFIG, naming both). */
int ssh_account_peers(const struct ssh_conn *c, const json_t *config, char *const *keys,
		      struct err **e);

/* The scripts (scripts.c). */
extern const char ssh_script_probe[];
extern const char ssh_script_create[];
extern const char ssh_script_upload[];
extern const char ssh_script_start[];
extern const char ssh_script_status[];
extern const char ssh_script_signal[];
extern const char ssh_script_list[];
extern const char ssh_script_remove[];
extern const char ssh_script_paths[];
extern const char ssh_script_fetch[];
extern const char ssh_script_unbind[];
extern const char ssh_script_watch[];

#endif
