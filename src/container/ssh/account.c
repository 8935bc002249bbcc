/* account.c: a remote account as a tenant. A run with isolation
 * "none" is the account's to do anything with: read what else is there,
 * write another run's copies, leave a process or a forced command behind.
 * So such an account is one binding's (the config refuses another on it,
 * sshcfg_accounts_check, and each launch again, ssh_account_peers), holds
 * one run at a time (a lock the helper holds on the host for as long as
 * its run lives, beside the remote's own listing), and once it ran none
 * work it is never given to a native run again (a mark in the state dir,
 * which only the operator removes).
 *
 * An account is the user on the remote machine, whatever key or spelling
 * pins it: a remote presents a key of each type (ed25519, ecdsa, rsa), and
 * a binding may pin any of them. So each launch learns every key the
 * remote presents (ssh_presented_keys; the run's own connection still
 * checks the pinned one), and the lock and the mark are one file per
 * presented key (the user and that key's alias, beside the provider's
 * known_hosts files): a lock or a mark under any of them is the
 * account's. */
#include "container/ssh/internal.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

/* a-<16 hex of "<alias of key> <user>"><suffix>; NULL: no memory or key
 * not a key (a presented key was checked as one already) */
static char *account_file(const struct ssh_conn *c, const char *key, const char *suffix)
{
	struct ssh_target k = { 0 };
	struct err *ke = NULL;
	char *p = NULL;

	if (ssh_target_key(&k, key, "key", &ke) == 0)
		p = ssh_account_file(c, k.alias, suffix);
	err_free(ke);
	ssh_target_clear(&k);
	return p;
}

static void printable(char *s)
{
	for (char *ch = s; *ch; ch++)
		if ((unsigned char)*ch < ' ' || *ch == 0x7f)
			*ch = ' ';
}

/* A mark's binding (its second line; NULL: it names none), the job
 * left as the first line; both printable. */
static const char *mark_binding(char *text)
{
	char *nl = strchr(text, '\n'), *b = NULL;

	if (nl) {
		*nl = '\0';
		b = nl + 1;
		b[strcspn(b, "\n")] = '\0';
		printable(b);
	}
	printable(text);
	return b && *b ? b : NULL;
}

int ssh_account_tainted(const struct ssh_conn *c, char *const *keys, bool none,
			const char *binding, struct err **e)
{
	for (size_t i = 0; keys && keys[i]; i++) {
		_cleanup_free_ char *mark = account_file(c, keys[i], ".none"), *job = NULL;
		struct err *re = NULL;
		const char *had;

		if (!mark)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
		if (fs_read_file(AT_FDCWD, mark, 256, &job, NULL, &re) < 0) {
			bool missing = re && re->errnum == ENOENT;

			err_free(re);
			if (missing)
				continue;
			return err_set(e, ERR_DENIED, 0,
				       "the remote account's mark `%s` cannot be read", mark);
		}
		had = mark_binding(job);
		if (!none)
			return err_set(e, ERR_DENIED, 0,
				       "the remote account `%s@%s:%u` ran isolation none work (job "
				       "%.64s), which could leave anything there: a native run is "
				       "not given it (remove `%s` once the account is made anew)",
				       c->t.user, c->t.host, c->t.port, job, mark);
		if (binding && had && strcmp(had, binding) != 0)
			return err_set(e, ERR_DENIED, 0,
				       "the remote account `%s@%s:%u` ran isolation none work of "
				       "binding `%.64s` (job %.64s), which could leave anything "
				       "there: it is that binding's, not `%s`'s (remove `%s` once "
				       "the account is made anew)",
				       c->t.user, c->t.host, c->t.port, had, job, binding, mark);
	}
	return 0;
}

/* (held until the process ends: the helper that made the run is the one
 * that removes it; one per presented key) */
#define ACCOUNT_LOCKS_MAX 16
static int account_locks[ACCOUNT_LOCKS_MAX];
static size_t account_nlocks;

static void locks_drop(size_t from)
{
	while (account_nlocks > from)
		close(account_locks[--account_nlocks]);
}

static int lock_one(const struct ssh_conn *c, const char *lock, struct err **e)
{
	int fd;

	if (account_nlocks == ACCOUNT_LOCKS_MAX)
		return err_set(e, ERR_UNAVAILABLE, 0, "the remote presents too many host keys");
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
	account_locks[account_nlocks++] = fd;
	return 0;
}

/* The mark: "<job>\n<binding>\n", made once and kept. */
static int mark_one(const char *mark, const char *job, const char *binding, struct err **e)
{
	_cleanup_free_ char *text = NULL;
	char *slash = strrchr(mark, '/');

	if (access(mark, F_OK) == 0)
		return 0;
	_cleanup_free_ char *dir = slash ? strndup(mark, (size_t)(slash - mark)) : NULL;
	if (!dir || asprintf(&text, "%s\n%s\n", job, binding ? binding : "") < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the remote account's mark");
	return fs_write_atomic(dfd, slash + 1, text, strlen(text), 0600, false, e);
}

int ssh_account_take(const struct ssh_conn *c, char *const *keys, const char *job,
		     const char *binding, struct err **e)
{
	/* every key's lock first (none left held when one is busy), then
	 * every key's mark */
	if (account_nlocks == 0) {
		for (size_t i = 0; keys && keys[i]; i++) {
			_cleanup_free_ char *lock = account_file(c, keys[i], ".lock");

			if (!lock || lock_one(c, lock, e) < 0) {
				locks_drop(0);
				return *e ? -1 : err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
			}
		}
	}
	for (size_t i = 0; keys && keys[i]; i++) {
		_cleanup_free_ char *mark = account_file(c, keys[i], ".none");

		if (!mark)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
		if (mark_one(mark, job, binding, e) < 0)
			return -1;
	}
	return 0;
}

int ssh_account_peers(const struct ssh_conn *c, const json_t *config, char *const *keys,
		      struct err **e)
{
	const char *self = json_string_value(json_object_get(config, "binding"));
	const char *iso = json_string_value(json_object_get(config, "isolation"));
	bool none = iso && strcmp(iso, "none") == 0;
	size_t i;
	json_t *peer;

	json_array_foreach(json_object_get(config, "peers"), i, peer) {
		const char *name = json_string_value(json_object_get(peer, "binding"));
		const char *piso = json_string_value(json_object_get(peer, "isolation"));
		struct ssh_target t = { 0 };
		struct err *pe = NULL;
		_cleanup_free_ char *line = NULL;
		bool same;

		if (!name || (!none && !(piso && strcmp(piso, "none") == 0)))
			continue;
		/* (a peer's config was checked at load; one that does not
		 * parse names no account) */
		if (ssh_target_from(&t, peer, &pe) < 0) {
			err_free(pe);
			continue;
		}
		if (asprintf(&line, "%s %s", t.key_type, t.key_b64) < 0) {
			ssh_target_clear(&t);
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh account");
		}
		same = strcmp(t.user, c->t.user) == 0 &&
		       (ssh_target_same_account(&t, &c->t) || strv_contains(keys, line));
		ssh_target_clear(&t);
		if (same)
			return err_set(e, ERR_CONFIG, 0,
				       "bindings.%s.container.remote: the account `%s@%s:%u` is the "
				       "one binding `%s` uses (its host key is one the remote "
				       "presents, or its host and port are), and isolation none "
				       "work can do anything there: it is not shared (give each "
				       "its own account)",
				       self ? self : "?", c->t.user, c->t.host, c->t.port, name);
	}
	return 0;
}
