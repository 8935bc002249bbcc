/* state.c: the daemon's start on its state dir (see daemon.h): the
 * default places, the state dir made the user's own (0700), the lock
 * that keeps one daemon per state dir, the operator's token (made once,
 * 0600) and the management socket (0600); and where the wrappers'
 * binary is. hostd_state_open is the daemon's set-up up to its loop. */
#include "daemon/internal.h"
#include "host/config.h"
#include "lib/cleanup.h"
#include "lib/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

char *hostd_default_state_dir(void)
{
	const char *x = getenv("XDG_STATE_HOME"), *h = getenv("HOME");
	char *out = NULL;

	if (x && x[0] == '/')
		return asprintf(&out, "%s/cordon", x) < 0 ? NULL : out;
	if (h && h[0] == '/')
		return asprintf(&out, "%s/.local/state/cordon", h) < 0 ? NULL : out;
	return NULL;
}

char *hostd_default_config(void)
{
	const char *x = getenv("XDG_CONFIG_HOME"), *h = getenv("HOME");
	char *out = NULL;

	if (x && x[0] == '/')
		return asprintf(&out, "%s/cordon/config.json", x) < 0 ? NULL : out;
	if (h && h[0] == '/')
		return asprintf(&out, "%s/.config/cordon/config.json", h) < 0 ? NULL : out;
	return NULL;
}

int hostd_own_dir(const char *path, struct err **e)
{
	struct stat st;

	if (mkdir(path, 0700) < 0 && errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	if (lstat(path, &st) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return err_set(e, ERR_UNAVAILABLE, 0, "state dir `%s`: not a directory of this user's",
			       path);
	if ((st.st_mode & 077) && chmod(path, 0700) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", path);
	return 0;
}

/* One daemon per state dir, for its whole life: a second would recover
 * (and stop) the first one's jobs and take its socket. */
int hostd_lock_state(struct hostd *d, struct err **e)
{
	_cleanup_free_ char *path = NULL;

	if (asprintf(&path, "%s/private/daemon.lock", d->state) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "lock");
	d->lockfd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (d->lockfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "lock `%s`", path);
	if (flock(d->lockfd, LOCK_EX | LOCK_NB) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno == EWOULDBLOCK ? 0 : errno,
			       "another daemon serves the state dir `%s`", d->state);
	return 0;
}

/* The operator's token: made once (0600), then read. */
int hostd_token(struct hostd *d, struct err **e)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	unsigned char rnd[HOSTD_TOKEN_HEX / 2];
	size_t len = 0;

	if (asprintf(&path, "%s/%s", d->state, HOSTD_TOKEN_FILE) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "token");
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd >= 0) {
		if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
			return err_set(e, ERR_INTERNAL, errno, "getrandom");
		for (size_t i = 0; i < sizeof(rnd); i++)
			snprintf(d->token + 2 * i, 3, "%02x", rnd[i]);
		if (fs_write_exact(fd, d->token, HOSTD_TOKEN_HEX) < 0 || fsync(fd) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
		return 0;
	}
	if (errno != EEXIST)
		return err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0 || fs_read_fd(fd, path, 256, &buf, &len, e) < 0)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "token `%s`", path);
	if (len != HOSTD_TOKEN_HEX || strspn(buf, "0123456789abcdef") != HOSTD_TOKEN_HEX)
		return err_set(e, ERR_UNAVAILABLE, 0, "token `%s` is damaged", path);
	memcpy(d->token, buf, HOSTD_TOKEN_HEX + 1);
	return 0;
}

int hostd_listen_socket(struct hostd *d, struct err **e)
{
	struct sockaddr_un a = { .sun_family = AF_UNIX };
	mode_t old;
	int r;

	if ((size_t)snprintf(a.sun_path, sizeof(a.sun_path), "%s/%s", d->state, HOSTD_SOCKET) >=
	    sizeof(a.sun_path))
		return err_set(e, ERR_CONFIG, 0, "state dir `%s`: too long for a socket path",
			       d->state);
	d->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (d->lfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "management socket");
	/* a socket left by a daemon that died; its state dir is ours */
	(void)unlink(a.sun_path);
	old = umask(077);
	r = bind(d->lfd, (struct sockaddr *)&a, sizeof(a));
	umask(old);
	if (r < 0 || chmod(a.sun_path, 0600) < 0 || listen(d->lfd, 64) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "management socket `%s`", a.sun_path);
	return 0;
}

/* The wrappers are `cordon wrap`: cordon is beside this binary. */
char *hostd_cordon_beside(void)
{
	char *self = realpath("/proc/self/exe", NULL), *slash, *out = NULL;

	if (!self || !(slash = strrchr(self, '/'))) {
		free(self);
		return NULL;
	}
	*slash = '\0';
	if (asprintf(&out, "%s/cordon", self) < 0)
		out = NULL;
	free(self);
	return out;
}

/* Does dir hold anything (a run of a job)? A directory that cannot be
 * read counts as holding something: the database is then vouched for. */
static bool has_entry(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	bool any = d == NULL;

	while (d && !any && (de = readdir(d)))
		any = strcmp(de->d_name, ".") != 0 && strcmp(de->d_name, "..") != 0;
	if (d)
		closedir(d);
	return any;
}

int hostd_state_open(struct hostd *d, const char *state_dir, const char *config_path,
		     char **db_path, struct err **e)
{
	_cleanup_free_ char *priv = NULL, *runs = NULL, *ws = NULL;
	struct host_config *cfg = NULL;

	d->state = realpath(state_dir, NULL);
	if (!d->state && hostd_own_dir(state_dir, e) == 0)
		d->state = realpath(state_dir, NULL);
	d->config = strdup(config_path);
	d->self = hostd_cordon_beside();
	if (!d->state || !d->config || !d->self)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", state_dir);
	if (asprintf(&priv, "%s/private", d->state) < 0 || asprintf(&runs, "%s/runs", d->state) < 0 ||
	    asprintf(&ws, "%s/workspaces", d->state) < 0 ||
	    asprintf(db_path, "%s/%s", d->state, HOSTD_DB) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "paths");
	if (hostd_own_dir(d->state, e) < 0 || hostd_own_dir(priv, e) < 0 ||
	    hostd_own_dir(runs, e) < 0 || hostd_own_dir(ws, e) < 0 || hostd_lock_state(d, e) < 0 ||
	    hostd_token(d, e) < 0)
		return -1;
	/* runs of jobs: the database must hold a history (host_db_open) */
	d->history = has_entry(runs);
	/* the config is checked now; it is read again for each launch */
	if (host_config_load(d->config, &cfg, e) < 0)
		return -1;
	host_config_free(cfg);
	return 0;
}
