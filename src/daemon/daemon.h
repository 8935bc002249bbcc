/* daemon.h: `cordon daemon`: owns the state dir, answers the management
 * API on its unix socket, and runs jobs through bindings, each segment
 * under a wrapper (`cordon wrap`) that outlives the daemon. One event loop
 * (lib/loop.h): the API (libmicrohttpd on the daemon's own listening
 * socket), the toolbelt, the wrappers' control sockets and pidfds, the
 * stops' graces and reconcile as timers, and the signals. */
#ifndef CORDON_DAEMON_DAEMON_H
#define CORDON_DAEMON_DAEMON_H

#define HOSTD_TOKEN_FILE "private/operator.token"
#define HOSTD_SOCKET "management.sock"
#define HOSTD_DB "cordon.db"
#define HOSTD_TOKEN_HEX 64

/* The state dir and config the way `cordon daemon` and `cordon job`
 * default them: $XDG_STATE_HOME/cordon, $XDG_CONFIG_HOME/cordon/config.json.
 * Caller frees. */
char *hostd_default_state_dir(void);
char *hostd_default_config(void);

/* Run the daemon until TERM or INT; the process exit status. */
int hostd_daemon_main(const char *state_dir, const char *config_path);

#endif
