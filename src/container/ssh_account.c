/* ssh_account.c: a remote account as a tenant. A run with isolation
 * "none" is the account's to do anything with: read what else is there,
 * write another run's copies, leave a process or a forced command behind.
 * So such an account is one binding's (the config refuses another on it,
 * sshcfg_accounts_check), holds one run at a time (a lock the helper holds
 * on the host for as long as its run lives, beside the remote's own
 * listing), and once it ran none work it is never given to a native run
 * again (a mark in the state dir, which only the operator removes). Each
 * is one file beside the provider's known_hosts files, named by the
 * account (the user and the pinned key), not by the host's spelling. */
#include "container/ssh_int.h"

#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

int ssh_account_tainted(const struct ssh_conn *c, struct err **e)
{
	_cleanup_free_ char *mark = ssh_account_file(c, ".none"), *job = NULL;
	struct err *re = NULL;

	if (!mark)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
	if (fs_read_file(AT_FDCWD, mark, 256, &job, NULL, &re) < 0) {
		bool missing = re && re->errnum == ENOENT;

		err_free(re);
		return missing ? 0
			       : err_set(e, ERR_DENIED, 0, "the remote account's mark `%s` cannot be read",
					 mark);
	}
	for (char *ch = job; *ch; ch++)
		if ((unsigned char)*ch < ' ' || *ch == 0x7f)
			*ch = ' ';
	return err_set(e, ERR_DENIED, 0,
		       "the remote account `%s@%s:%u` ran isolation none work (job %.64s), which "
		       "could leave anything there: a native run is not given it (remove `%s` once "
		       "the account is made anew)",
		       c->t.user, c->t.host, c->t.port, job, mark);
}

/* (held until the process ends: the helper that made the run is the one
 * that removes it) */
static int account_lock = -1;

int ssh_account_take(const struct ssh_conn *c, const char *job, struct err **e)
{
	_cleanup_free_ char *lock = ssh_account_file(c, ".lock"), *mark = ssh_account_file(c, ".none");
	char *slash;
	int fd;

	if (!lock || !mark || !(slash = strrchr(mark, '/')))
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
	if (account_lock < 0) {
		fd = open(lock, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "the remote account's lock");
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int saved = errno;

			close(fd);
			return saved == EWOULDBLOCK
				       ? err_set(e, ERR_DENIED, 0,
						 "container_busy: the remote account `%s@%s:%u` runs "
						 "another job's isolation none run: one at a time",
						 c->t.user, c->t.host, c->t.port)
				       : err_set(e, ERR_UNAVAILABLE, saved, "the remote account's lock");
		}
		account_lock = fd;
	}
	/* the mark: made once, kept */
	if (access(mark, F_OK) == 0)
		return 0;
	*slash = '\0';
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, mark, O_PATH | O_DIRECTORY, 0);
	*slash = '/';
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the remote account's mark");
	return fs_write_atomic(dfd, slash + 1, job, strlen(job), 0600, false, e);
}
