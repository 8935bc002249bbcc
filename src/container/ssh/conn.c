/* conn.c: one connection to a remote, as the SSH provider makes it.
 * The system ssh client connects; what it is told pins everything that
 * decides who is on the other end and what crosses:
 *
 * - the host key: a known_hosts file of the provider's own, holding only
 *   the pinned key under its alias (HostKeyAlias), StrictHostKeyChecking
 *   yes, no global file, no DNS, no KnownHostsCommand, no key updates;
 * - nothing asked: BatchMode (no password, no prompt), no terminal;
 * - nothing forwarded but what the provider asks: no agent, no X11, no
 *   tunnel, no local command, no shared master connection (one made
 *   elsewhere checked its key elsewhere); the operator's own forwards
 *   for the host are cleared on every call but the start helper's, which
 *   asks for its toolbelt's socket, and refused there (the doctor looks);
 * - the environment: ssh gets HOME, PATH, USER, LOGNAME and the agent's
 *   socket (for signing in), never the launch's variables, so no SendEnv
 *   of the operator's config can carry one.
 * The operator's ~/.ssh/config (or the config's "ssh_config", -F) still
 * applies otherwise (a ProxyJump, a user's key), as ssh reads it. */
#include "container/ssh/internal.h"

#include "lib/cleanup.h"
#include "lib/sha256.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/spawn.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define ERR_MAX 4096

/* path: <state>/containers/ssh/<name>; the directory is made
 * owner-only beneath the state dir when missing, no link followed. */
static int write_known_hosts(struct ssh_conn *c, const char *path, struct err **e)
{
	static const char sub[] = "/containers/ssh/";
	_cleanup_free_ char *state = NULL, *line = NULL;
	_cleanup_close_ int sfd = -1, dfd = -1;
	const char *at = strstr(path, sub), *name;

	while (at && strstr(at + 1, sub))
		at = strstr(at + 1, sub);
	name = at ? at + sizeof(sub) - 1 : NULL;
	if (!at || at == path || !*name || strchr(name, '/'))
		return err_set(e, ERR_INTERNAL, 0, "the known_hosts path `%s`", path);
	state = strndup(path, (size_t)(at - path));
	if (!state || asprintf(&line, "%s %s %s\n", c->t.alias, c->t.key_type, c->t.key_b64) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "known_hosts");
	if ((sfd = fs_open_nofollow(AT_FDCWD, state, O_PATH | O_DIRECTORY, 0)) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the state dir `%s`", state);
	if ((dfd = fs_mkdirs_beneath(sfd, "containers/ssh", 0700, e)) < 0)
		return -1;
	free(c->known_hosts);
	c->known_hosts = strdup(path);
	if (!c->known_hosts)
		return err_set(e, ERR_INTERNAL, ENOMEM, "known_hosts");
	return fs_write_atomic(dfd, name, line, strlen(line), 0600, false, e);
}

/* A path ssh takes in an option: no space (a list there), quote or
 * '%' (ssh's tokens), no control character. */
static int option_path(const char *p, const char *what, struct err **e)
{
	for (const char *c = p; *c; c++)
		if ((unsigned char)*c <= ' ' || *c == '"' || *c == '\'' || *c == '%' || *c == 0x7f ||
		    *c == '\\')
			return err_set(e, ERR_CONFIG, 0,
				       "%s: a path ssh takes in an option has no space, quote, '%%' "
				       "or backslash",
				       what);
	return 0;
}

/* "ssh_config": the ssh configuration file the operator gives cordon's
 * connections (-F) instead of ~/.ssh/config. */
static int config_file_of(struct ssh_conn *c, const json_t *o, struct err **e)
{
	const char *f = json_string_value(json_object_get(o, "ssh_config"));

	if (!f)
		return 0;
	if (f[0] != '/' || option_path(f, "container.ssh_config", e) < 0)
		return *e ? -1 : err_set(e, ERR_CONFIG, 0, "container.ssh_config: an absolute path");
	free(c->config_file);
	c->config_file = strdup(f);
	return c->config_file ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "ssh_config");
}

int ssh_conn_from_config(struct ssh_conn *c, const json_t *config, const char *state_dir,
			 struct err **e)
{
	_cleanup_free_ char *kh = NULL;
	const char *id = json_string_value(json_object_get(config, "identity"));

	if (ssh_target_from(&c->t, config, e) < 0)
		return -1;
	if (id && (option_path(id, "container.identity", e) < 0 || !(c->identity = strdup(id))))
		return *e ? -1 : err_set(e, ERR_INTERNAL, ENOMEM, "identity");
	if (config_file_of(c, config, e) < 0)
		return -1;
	if (option_path(state_dir, "the state dir (for an ssh remote's known_hosts)", e) < 0)
		return -1;
	if (asprintf(&kh, "%s/containers/ssh/%s.known_hosts", state_dir, c->t.alias) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "known_hosts");
	return write_known_hosts(c, kh, e);
}

int ssh_conn_from_pin(struct ssh_conn *c, const json_t *pin, struct err **e)
{
	const char *kh = json_string_value(json_object_get(pin, "known_hosts"));
	const char *id = json_string_value(json_object_get(pin, "identity"));

	if (!kh || kh[0] != '/')
		return err_set(e, ERR_DENIED, 0, "the pin names no known_hosts file");
	if (option_path(kh, "the pin's known_hosts", e) < 0 ||
	    (id && option_path(id, "the pin's identity", e) < 0) || config_file_of(c, pin, e) < 0)
		return -1;
	if (ssh_target_from(&c->t, pin, e) < 0)
		return -1;
	if (id && !(c->identity = strdup(id)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "identity");
	return write_known_hosts(c, kh, e);
}

void ssh_conn_clear(struct ssh_conn *c)
{
	ssh_target_clear(&c->t);
	free(c->known_hosts);
	free(c->identity);
	free(c->config_file);
	c->known_hosts = c->identity = c->config_file = NULL;
}

/* A word for the remote's shell: in single quotes. */
static int sq(char **out, const char *s)
{
	size_t n = 2;

	for (const char *p = s; *p; p++)
		n += *p == '\'' ? 4 : 1;
	char *q = malloc(n + 1), *w = q;

	if (!q)
		return -1;
	*w++ = '\'';
	for (const char *p = s; *p; p++) {
		if (*p == '\'') {
			memcpy(w, "'\\''", 4);
			w += 4;
		} else {
			*w++ = *p;
		}
	}
	*w++ = '\'';
	*w = '\0';
	*out = q;
	return 0;
}

/* The command line the remote's login shell runs: /bin/sh -c with the
 * script and its arguments, each quoted. */
static char *remote_command(const char *script, char *const *args)
{
	_cleanup_free_ char *qs = NULL;
	char *cmd = NULL;

	if (sq(&qs, script) < 0 || asprintf(&cmd, "exec /bin/sh -c %s cordon", qs) < 0)
		return NULL;
	for (size_t i = 0; args && args[i]; i++) {
		_cleanup_free_ char *qa = NULL;
		char *more = NULL;

		if (sq(&qa, args[i]) < 0 || asprintf(&more, "%s %s", cmd, qa) < 0) {
			free(cmd);
			return NULL;
		}
		free(cmd);
		cmd = more;
	}
	return cmd;
}

/* "-o" "<key>=<value>" (key ends in '=', or value is the whole option) */
static int push_opt(char ***argv, const char *key, const char *v)
{
	_cleanup_free_ char *o = NULL;

	if (asprintf(&o, "%s%s", key, v) < 0)
		return -1;
	return strv_push(argv, "-o") < 0 || strv_push(argv, o) < 0 ? -1 : 0;
}

/* <known_hosts dir>/<kind>-<16 hex of who><suffix> (short: a socket's
 * path must fit 108 bytes with ssh's temporary suffix) */
static char *file_beside(const struct ssh_conn *c, const char *kind, const char *who,
			 const char *suffix)
{
	const char *slash = c->known_hosts ? strrchr(c->known_hosts, '/') : NULL;
	char hex[SHA256_HEX_LEN + 1];
	char *p = NULL;

	if (!slash || !who || sha256_hex(who, strlen(who), hex) < 0)
		return NULL;
	return asprintf(&p, "%.*s/%s-%.16s%s", (int)(slash - c->known_hosts), c->known_hosts, kind,
			hex, suffix) < 0
		       ? NULL
		       : p;
}

char *ssh_conn_file(const struct ssh_conn *c, const char *suffix)
{
	_cleanup_free_ char *where = NULL;

	if (asprintf(&where, "%s %s@%s:%u", c->t.alias, c->t.user, c->t.host, c->t.port) < 0)
		return NULL;
	return file_beside(c, "r", where, suffix);
}

char *ssh_account_file(const struct ssh_conn *c, const char *alias, const char *suffix)
{
	_cleanup_free_ char *who = NULL;

	/* (the account: the user and a key of the remote's, not the host's
	 * spelling) */
	if (asprintf(&who, "%s %s", alias, c->t.user) < 0)
		return NULL;
	return file_beside(c, "a", who, suffix);
}

/* The provider's own master connection to a remote, shared by its short
 * calls (never the helper's, whose connection is the run's): in the state
 * dir's owner-only containers/ssh, one per remote and key
 * (ssh_conn_file), made by the first call with these same options (the
 * pinned key checked then) and kept a minute after the last. NULL when
 * the path would not fit a socket address (each call then connects on
 * its own). */
static char *mux_path(const struct ssh_conn *c)
{
	char *p = ssh_conn_file(c, ".mux");

	/* (ssh binds a temporary name of about 20 more bytes first) */
	if (p && strlen(p) + 24 >= 108) {
		free(p);
		p = NULL;
	}
	return p;
}

/* ssh's argv; with show, `ssh -G` (the configuration it would use,
 * forwards not cleared: what the operator's config adds is seen); with
 * mux, through the provider's master connection (mux_path). */
static char **ssh_argv(const struct ssh_conn *c, const char *script, char *const *args,
		       char *const *forwards, bool show, bool mux)
{
	static const char *const fixed[] = {
		"BatchMode=yes",
		"StrictHostKeyChecking=yes",
		"GlobalKnownHostsFile=/dev/null",
		"CheckHostIP=no",
		"UpdateHostKeys=no",
		"VerifyHostKeyDNS=no",
		"KnownHostsCommand=none",
		"ForwardAgent=no",
		"ForwardX11=no",
		"ForwardX11Trusted=no",
		"Tunnel=no",
		"PermitLocalCommand=no",
		"RequestTTY=no",
		"RemoteCommand=none",
		"ConnectTimeout=15",
		"ServerAliveInterval=15",
		"ServerAliveCountMax=4",
		"ExitOnForwardFailure=yes",
		"StreamLocalBindMask=0177",
		"LogLevel=ERROR",
		NULL,
	};
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *cmd = remote_command(script, args);
	char port[8];

	snprintf(port, sizeof(port), "%u", c->t.port);
	if (!cmd || strv_push(&argv, "ssh") < 0 || (show && strv_push(&argv, "-G") < 0))
		return NULL;
	if (c->config_file && (strv_push(&argv, "-F") < 0 || strv_push(&argv, c->config_file) < 0))
		return NULL;
	for (size_t i = 0; fixed[i]; i++)
		if (push_opt(&argv, "", fixed[i]) < 0)
			return NULL;
	_cleanup_free_ char *mp = mux && !show ? mux_path(c) : NULL;
	if (mp ? push_opt(&argv, "ControlMaster=", "auto") < 0 ||
			 push_opt(&argv, "ControlPath=", mp) < 0 ||
			 push_opt(&argv, "ControlPersist=", "60") < 0
	       : push_opt(&argv, "ControlMaster=", "no") < 0 ||
			 push_opt(&argv, "ControlPath=", "none") < 0)
		return NULL;
	if (push_opt(&argv, "UserKnownHostsFile=", c->known_hosts) < 0 ||
	    push_opt(&argv, "HostKeyAlias=", c->t.alias) < 0 ||
	    push_opt(&argv, "ClearAllForwardings=", show || (forwards && forwards[0]) ? "no" : "yes") < 0)
		return NULL;
	if (c->identity && (push_opt(&argv, "IdentityFile=", c->identity) < 0 ||
			    push_opt(&argv, "IdentitiesOnly=", "yes") < 0))
		return NULL;
	for (size_t i = 0; forwards && forwards[i]; i++)
		if (strv_push(&argv, "-R") < 0 || strv_push(&argv, forwards[i]) < 0)
			return NULL;
	if (strv_push(&argv, "-p") < 0 || strv_push(&argv, port) < 0 ||
	    strv_push(&argv, "-l") < 0 || strv_push(&argv, c->t.user) < 0 ||
	    strv_push(&argv, "--") < 0 || strv_push(&argv, c->t.host) < 0 ||
	    strv_push(&argv, cmd) < 0)
		return NULL;
	return steal_pointer(&argv);
}

/* ssh's environment: what it needs to find its config and sign in. */
static char **ssh_env(void)
{
	static const char *const keep[] = { "PATH", "HOME", "USER", "LOGNAME", "SSH_AUTH_SOCK",
					    NULL };
	_cleanup_strv_ char **env = NULL;

	for (size_t i = 0; keep[i]; i++) {
		const char *v = getenv(keep[i]);
		_cleanup_free_ char *kv = NULL;

		if (!v && strcmp(keep[i], "PATH") == 0)
			v = "/usr/local/bin:/usr/bin:/bin";
		if (!v)
			continue;
		if (asprintf(&kv, "%s=%s", keep[i], v) < 0 || strv_push(&env, kv) < 0)
			return NULL;
	}
	if (strv_push(&env, "LC_ALL=C") < 0)
		return NULL;
	return steal_pointer(&env);
}

int ssh_spawn(const struct ssh_conn *c, const char *script, char *const *args,
	      char *const *forwards, const struct ssh_io *io, bool own_group, pid_t *pid,
	      struct err **e)
{
	/* the helper's connection is the run's own; short calls share the
	 * provider's master */
	_cleanup_strv_ char **argv = ssh_argv(c, script, args, forwards, false,
					      !own_group && !(forwards && forwards[0])),
			    **env = ssh_env();
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t none, dfl;
	int fds[3] = { io->in, io->out, io->err }, rc;

	if (!argv || !env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh");
	sigemptyset(&none);
	sigemptyset(&dfl);
	sigaddset(&dfl, SIGPIPE);
	sigaddset(&dfl, SIGINT);
	sigaddset(&dfl, SIGTERM);
	sigaddset(&dfl, SIGHUP);
	if ((rc = posix_spawn_file_actions_init(&fa)) != 0)
		return err_set(e, ERR_UNAVAILABLE, rc, "ssh");
	if ((rc = posix_spawnattr_init(&at)) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		return err_set(e, ERR_UNAVAILABLE, rc, "ssh");
	}
	for (int i = 0; i < 3 && rc == 0; i++)
		rc = fds[i] < 0 ? posix_spawn_file_actions_addopen(&fa, i, "/dev/null",
								    i ? O_WRONLY : O_RDONLY, 0)
				: posix_spawn_file_actions_adddup2(&fa, fds[i], i);
	if (rc == 0)
		rc = posix_spawnattr_setsigmask(&at, &none);
	if (rc == 0)
		rc = posix_spawnattr_setsigdefault(&at, &dfl);
	if (rc == 0 && own_group)
		rc = posix_spawnattr_setpgroup(&at, 0);
	if (rc == 0)
		rc = posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF |
							   (own_group ? POSIX_SPAWN_SETPGROUP : 0));
	if (rc == 0)
		rc = posix_spawnp(pid, "ssh", &fa, &at, argv, env);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	if (rc != 0)
		return err_set(e, ERR_UNAVAILABLE, rc, "cannot run ssh (the OpenSSH client)");
	return 0;
}

/* The first line of what ssh said, printable only. */
static void first_line(int fd, char *buf, size_t max)
{
	ssize_t n;
	size_t i = 0;

	buf[0] = '\0';
	if (lseek(fd, 0, SEEK_SET) < 0)
		return;
	n = read(fd, buf, max - 1);
	if (n <= 0)
		return;
	buf[n] = '\0';
	for (; buf[i] && buf[i] != '\n'; i++)
		if ((unsigned char)buf[i] < ' ' || buf[i] == 0x7f)
			buf[i] = '?';
	buf[i] = '\0';
}

/* ssh-keyscan's answer: read whole up to a bound, a line at most what a
 * key's takes (16384-bit RSA: under 3 KiB) */
#define KEYSCAN_MAX ((size_t)1 << 20)
#define KEYSCAN_LINE_MAX 16384

/* ssh-keyscan's answer for types (a comma list of its -t words): each
 * line that is a key (the network's answer, so only a key passes), as
 * "<type> <base64>", in *keys (NULL-terminated; may be empty). -1: no
 * memory or no ssh-keyscan. */
static int keyscan(const struct ssh_conn *c, const char *types, char ***keys)
{
	/* (an environment of its own: none of the launch's; the host and
	 * types are narrow words: target.c lets nothing else by) */
	static const char path[] = "/usr/local/bin:/usr/bin:/bin";
	char port[8], *env[] = { (char *)"PATH=/usr/local/bin:/usr/bin:/bin", NULL };
	char *argv[] = { (char *)"ssh-keyscan", (char *)"-T", (char *)"5", (char *)"-t",
			 (char *)types, (char *)"-p", port, (char *)"--", c->t.host, NULL };
	struct spawn_req q = { .argv = argv, .envp = env, .path = path, .max = KEYSCAN_MAX };
	_cleanup_strv_ char **found = NULL;
	struct spawn_out o;
	struct err *se = NULL;
	char *line, *next;

	*keys = NULL;
	snprintf(port, sizeof(port), "%u", c->t.port);
	if (spawn_capture(&q, &o, &se) < 0) {
		err_free(se);
		return -1;
	}
	if (!(found = calloc(1, sizeof(*found)))) {
		spawn_out_clear(&o);
		return -1;
	}
	/* (a bound on the count: a remote presents a key of each type; a
	 * scan that could not run found none) */
	line = o.out;
	for (size_t n = 0; n < 16 && *line; line = next) {
		char *sp, *end;

		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		sp = strchr(line, ' ');
		if (line[0] == '#' || !sp || strlen(line) >= KEYSCAN_LINE_MAX)
			continue;
		struct ssh_target t = { 0 };
		struct err *ke = NULL;

		if (ssh_target_key(&t, sp + 1, "keyscan", &ke) == 0) {
			/* the type and blob, no comment */
			if ((end = strchr(strchr(sp + 1, ' ') + 1, ' ')))
				*end = '\0';
			if (strv_push(&found, sp + 1) < 0) {
				err_free(ke);
				ssh_target_clear(&t);
				spawn_out_clear(&o);
				return -1;
			}
			n++;
		}
		err_free(ke);
		ssh_target_clear(&t);
	}
	spawn_out_clear(&o);
	*keys = steal_pointer(&found);
	return 0;
}

/* What the remote presents now, for a refusal that names the value to
 * set: ssh-keyscan's line of the pinned key's type, or NULL. */
static char *presented_key(const struct ssh_conn *c)
{
	_cleanup_strv_ char **keys = NULL;

	if (keyscan(c, c->t.key_type, &keys) < 0 || !keys || !keys[0])
		return NULL;
	return strdup(keys[0]);
}

char **ssh_presented_keys(const struct ssh_conn *c)
{
	_cleanup_strv_ char **keys = NULL;
	_cleanup_free_ char *pinned = NULL;

	if (asprintf(&pinned, "%s %s", c->t.key_type, c->t.key_b64) < 0 ||
	    keyscan(c, "ed25519,ecdsa,rsa", &keys) < 0) {
		errno = ENOMEM;
		return NULL;
	}
	/* a scan without the pinned key saw another key (refused as a
	 * connection would be) or none (an ssh_config alias or a jump host
	 * the scan does not take, no answer in time): the account's other
	 * keys are not known, so neither are its other bindings, locks and
	 * marks; fail closed */
	if (!strv_contains(keys, pinned)) {
		errno = keys && keys[0] ? EKEYREJECTED : ENOKEY;
		return NULL;
	}
	return steal_pointer(&keys);
}

int ssh_key_refused(const struct ssh_conn *c, struct err **e)
{
	/* a pass of the probe made before the change stands no more */
	_cleanup_free_ char *pass = ssh_conn_file(c, ".pass"), *k = presented_key(c);

	if (pass)
		(void)unlink(pass);
	if (k)
		return err_set(e, ERR_DENIED, 0,
			       "container.host_key: the remote `%s@%s:%u` presents another key: "
			       "\"%s\", not the pinned host key (%s); set it once you have checked "
			       "it is the remote's, not a machine in between: nothing is run "
			       "there, adopted or confirmed stopped",
			       c->t.user, c->t.host, c->t.port, k, c->t.fingerprint);
	return err_set(e, ERR_DENIED, 0,
		       "the remote `%s@%s:%u` does not present the pinned host key (%s): "
		       "nothing is run there, adopted or confirmed stopped",
		       c->t.user, c->t.host, c->t.port, c->t.fingerprint);
}

int ssh_failed(const struct ssh_conn *c, int errfd, struct err **e)
{
	char all[ERR_MAX], line[ERR_MAX];
	ssize_t n = -1;

	first_line(errfd, line, sizeof(line));
	if (lseek(errfd, 0, SEEK_SET) == 0)
		n = read(errfd, all, sizeof(all) - 1);
	all[n > 0 ? n : 0] = '\0';
	if (strstr(all, "Host key verification failed") || strstr(all, "HOST IDENTIFICATION") ||
	    strstr(all, "No ED25519 host key is known") || strstr(all, "host key is known for"))
		return ssh_key_refused(c, e);
	return err_set(e, ERR_UNAVAILABLE, 0, "cannot reach the remote `%s@%s:%u`%s%s", c->t.user,
		       c->t.host, c->t.port, line[0] ? ": " : "", line);
}

static int wait_child(pid_t pid, int *status)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	return 0;
}

int ssh_call(const struct ssh_conn *c, const char *script, char *const *args, const void *in,
	     size_t inlen, char **out, size_t *outlen, size_t max, int *status, struct err **e)
{
	_cleanup_close_ int ifd = memfd_create("ssh-in", MFD_CLOEXEC);
	_cleanup_close_ int ofd = memfd_create("ssh-out", MFD_CLOEXEC);
	_cleanup_close_ int efd = memfd_create("ssh-err", MFD_CLOEXEC);
	struct ssh_io io = { ifd, ofd, efd };
	pid_t pid = -1;

	*out = NULL;
	if (ifd < 0 || ofd < 0 || efd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh: memfd");
	if (in && (fs_write_exact(ifd, in, inlen) < 0 || lseek(ifd, 0, SEEK_SET) < 0))
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh: input");
	if (ssh_spawn(c, script, args, NULL, &io, false, &pid, e) < 0)
		return -1;
	if (wait_child(pid, status) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh: wait");
	if (*status == SSH_EXIT_CONNECT)
		return ssh_failed(c, efd, e);
	if (lseek(ofd, 0, SEEK_SET) < 0 || fs_read_fd(ofd, "the remote's answer", max, out,
						       outlen, e) < 0)
		return -1;
	return 0;
}

/* what ssh -G prints is read whole, up to this */
#define SSH_G_MAX ((size_t)1 << 20)

int ssh_forwards_configured(const struct ssh_conn *c, struct err **e)
{
	_cleanup_strv_ char **argv = ssh_argv(c, "true", NULL, NULL, true, false), **env = ssh_env();
	struct spawn_out o = { 0 };
	_cleanup_free_ char *out = NULL;

	if (!argv || !env)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh -G");
	struct spawn_req q = { .argv = argv, .envp = env, .max = SSH_G_MAX };
	if (spawn_capture(&q, &o, e) < 0)
		return err_wrap(e, "ssh -G");
	out = o.out;
	if (o.exec_errno)
		return err_set(e, ERR_UNAVAILABLE, o.exec_errno,
			       "cannot run ssh (the OpenSSH client)");
	if (o.status != 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "ssh -G could not read the configuration for `%s`", c->t.host);
	if (o.total > SSH_G_MAX)
		return err_set(e, ERR_UNAVAILABLE, EFBIG, "read `%s`", "ssh -G");
	static const char *const kinds[] = { "localforward ", "remoteforward ", "dynamicforward ",
					     NULL };
	for (const char *l = out; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		for (size_t i = 0; kinds[i]; i++)
			if (strncmp(l, kinds[i], strlen(kinds[i])) == 0)
				return err_set(e, ERR_UNAVAILABLE, 0,
					       "the ssh configuration forwards for `%s` (%.*s): a "
					       "run there would get what cordon did not grant; "
					       "remove it for this host",
					       c->t.host, (int)strlen(kinds[i]) - 1, kinds[i]);
	return 0;
}
