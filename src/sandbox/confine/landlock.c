/* landlock.c: see landlock.h. The access rights cordon handles grow with
 * the ABI: each row of the table is what that ABI added. Handling a right
 * and granting it nowhere is what denies it. */
#include "sandbox/confine/landlock.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif
#ifndef LANDLOCK_CREATE_RULESET_VERSION
#define LANDLOCK_CREATE_RULESET_VERSION (1U << 0)
#endif

/* The rights the ABIs after the first added, by number: the build's
 * kernel headers may be older than the kernel it runs on. */
#define ACCESS_FS_REFER (1ULL << 13)
#define ACCESS_FS_TRUNCATE (1ULL << 14)
#define ACCESS_FS_IOCTL_DEV (1ULL << 15)

/* What each ABI added to the file-system rights. */
static const uint64_t fs_rights_by_abi[] = {
	[LANDLOCK_ABI_FS] = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
	      LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	      LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	      LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	      LANDLOCK_ACCESS_FS_MAKE_SYM,
	[LANDLOCK_ABI_REFER] = ACCESS_FS_REFER,
	[LANDLOCK_ABI_TRUNCATE] = ACCESS_FS_TRUNCATE,
	[LANDLOCK_ABI_IOCTL_DEV] = ACCESS_FS_IOCTL_DEV,
};

/* Scopes, from LANDLOCK_ABI_SCOPE. */
#define SCOPE_ABSTRACT_UNIX 1ULL
#define SCOPE_SIGNAL 2ULL

struct ruleset_attr_v6 {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

int confine_landlock_abi_query(int *err)
{
	long abi = syscall(SYS_landlock_create_ruleset, NULL, 0,
			   LANDLOCK_CREATE_RULESET_VERSION);

	if (abi < 0) {
		*err = errno;
		return 0;
	}
	*err = 0;
	return abi > INT32_MAX ? INT32_MAX : (int)abi;
}

int confine_landlock_abi(void)
{
	int err;

	return confine_landlock_abi_query(&err);
}

static uint64_t fs_rights(int abi)
{
	uint64_t r = 0;

	for (int i = 1; i <= abi && i < (int)(sizeof(fs_rights_by_abi) / sizeof(*fs_rights_by_abi)); i++)
		r |= fs_rights_by_abi[i];
	return r;
}

static int add_rule(int ruleset, int fd, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access, .parent_fd = fd };

	return (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
}

/* A rule on a path that does not exist adds nothing (the native sandbox's
 * own mount points, /dev/shm where there is none). No symbolic link is
 * followed on the way: the host builds most rules, on paths a sandbox
 * of the same workspace might be changing. */
int confine_landlock_allow(int ruleset, const char *path, uint64_t access)
{
	int fd = fs_open_nofollow(AT_FDCWD, path, O_PATH, 0), r;

	if (fd < 0)
		return errno == ENOENT ? 0 : -1;
	r = add_rule(ruleset, fd, access);
	close(fd);
	return r;
}

/* The standard streams the sandbox was handed writable (the operator's
 * terminal, a file its output is redirected to) may be opened again for
 * writing through /dev/stdout and /proc/self/fd: that grants nothing the
 * fd does not. Pipes and sockets are not Landlock's to rule on. */
int confine_landlock_std_streams(int ruleset, uint64_t file_rights)
{
	for (int fd = 0; fd <= 2; fd++) {
		struct landlock_path_beneath_attr pb = { .allowed_access = file_rights,
							 .parent_fd = fd };
		int fl = fcntl(fd, F_GETFL);
		struct stat st;

		if (fl < 0 || (fl & O_ACCMODE) == O_RDONLY || fstat(fd, &st) < 0 ||
		    !(S_ISREG(st.st_mode) || S_ISCHR(st.st_mode)))
			continue;
		if (syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0) < 0 &&
		    errno != EBADFD)
			return -1;
	}
	return 0;
}

void confine_ruleset_rights(struct confine_ruleset *rs, int abi)
{
	rs->all = fs_rights(abi);
	/* file rights only: a rule on a file may not carry directory rights */
	rs->file = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
		   LANDLOCK_ACCESS_FS_WRITE_FILE |
		   (abi >= LANDLOCK_ABI_TRUNCATE ? ACCESS_FS_TRUNCATE : 0) |
		   (abi >= LANDLOCK_ABI_IOCTL_DEV ? ACCESS_FS_IOCTL_DEV : 0);
	rs->dev = rs->file | LANDLOCK_ACCESS_FS_READ_DIR;
}

int confine_ruleset_open(struct confine_ruleset *rs, int abi, bool scope, const char **step)
{
	struct ruleset_attr_v6 attr = { .handled_access_fs = fs_rights(abi) };
	/* the attribute's size tells the kernel which fields it has: the
	 * network word from LANDLOCK_ABI_NET, the scopes from LANDLOCK_ABI_SCOPE */
	size_t size = abi >= LANDLOCK_ABI_SCOPE ? sizeof(attr) : 2 * sizeof(uint64_t);

	confine_ruleset_rights(rs, abi);
	if (abi >= LANDLOCK_ABI_SCOPE && scope)
		attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
	if (abi < LANDLOCK_ABI_NET)
		size = sizeof(uint64_t);
	rs->fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs->fd < 0) {
		*step = "landlock: create the ruleset";
		return -1;
	}
	return 0;
}

/* --- the read side ---------------------------------------------------------
 *
 * A mount masks what was at a denied path when the sandbox started; the
 * host may create, rename over or replace that path during the run (a
 * login tool writes a new token file and renames it into place), and the
 * new entry is not masked. So reading is not granted at "/": it is granted
 * on every entry, as the sandbox starts, of each directory on the way to
 * a deny, except the step toward it. Landlock's rules belong to the
 * entries that exist now; an entry made or renamed in later gets no rule
 * and cannot be read. Listing stays allowed from the directories on the
 * way (a rule's right holds beneath it): the names in a denied directory
 * the host makes anew during the run can be listed, never read. */

static bool listed(char *const *v, const char *p)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], p) == 0)
			return true;
	return false;
}

static bool beneath_any(char *const *v, const char *p)
{
	for (size_t i = 0; v && v[i]; i++)
		if (fs_path_within(p, v[i]))
			return true;
	return false;
}

/* The directories on the way to the denies (not "/": it is the first
 * listed, on its own), none of them denied itself. -1 on no memory. */
static int ways(char *const *denies, char ***out)
{
	char **v = calloc(1, sizeof(char *));
	size_t n = 0;

	if (!v)
		return -1;
	for (size_t i = 0; denies && denies[i]; i++) {
		char buf[4096];
		size_t len = strlen(denies[i]);

		if (len >= sizeof(buf))
			continue;
		memcpy(buf, denies[i], len + 1);
		for (char *slash = strrchr(buf, '/'); slash && slash != buf;
		     slash = strrchr(buf, '/')) {
			*slash = '\0';
			if (listed(v, buf) || beneath_any(denies, buf))
				continue;
			char **nv = realloc(v, (n + 2) * sizeof(*v));
			if (!nv || !(nv[n] = strdup(buf))) {
				v = nv ? nv : v;
				v[n] = NULL;
				for (size_t k = 0; k < n; k++)
					free(v[k]);
				free(v);
				return -1;
			}
			v = nv;
			v[++n] = NULL;
		}
	}
	*out = v;
	return 0;
}

/* The O_PATH descriptors a read side opened for its rules, closed in as
 * few calls as their numbers allow (a launch makes a few hundred rules,
 * and every call into the kernel costs): at the end, or whenever
 * FDSET_MAX are open, so that a directory of any size fits under a low
 * open-file limit. */
#define FDSET_MAX 128
struct fdset {
	int *v;
	size_t n, cap;
};

static int fdset_add(struct fdset *f, int fd)
{
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 256;
		int *v = realloc(f->v, cap * sizeof(*v));

		if (!v)
			return -1;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = fd;
	return 0;
}

static int int_cmp(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;

	return (x > y) - (x < y);
}

/* Close every fd of the set: each run of consecutive numbers, all of them
 * the set's, with one close_range. */
static void fdset_close(struct fdset *f)
{
	if (!f->v)
		return;
	qsort(f->v, f->n, sizeof(*f->v), int_cmp);
	for (size_t i = 0; i < f->n;) {
		size_t j = i;

		while (j + 1 < f->n && f->v[j + 1] == f->v[j] + 1)
			j++;
		if (syscall(SYS_close_range, (unsigned)f->v[i], (unsigned)f->v[j], 0) < 0)
			for (size_t k = i; k <= j; k++)
				close(f->v[k]);
		i = j + 1;
	}
	free(f->v);
	f->v = NULL;
	f->n = f->cap = 0;
}

/* An entry that cannot be opened for its rule: gone since it was listed,
 * or beneath a directory this user may list but not search (the sandbox
 * cannot reach it either) grants nothing; anything else (the open-file
 * limit, no memory) is a rule that would be dropped, and fails. */
static bool nothing_to_grant(int err)
{
	return err == ENOENT || err == EACCES;
}

/* Grant reading on the entries of dir but those on the way to a deny (in
 * ways) and the denies themselves, and listing on dir. A directory that
 * is not there, or cannot be read, grants nothing beneath it. The kind of
 * each entry is the listing's: a link is passed over (followed at its
 * use, where its target's rules decide), a directory gets the rights a
 * directory may carry, anything else a file's. */
static int read_entries(const struct confine_ruleset *rs, const char *dir, char *const *way,
			char *const *denies, struct fdset *fds)
{
	_cleanup_close_ int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	char path[4096];
	struct dirent *de;
	DIR *d;
	int r = 0;

	if (dfd < 0)
		return errno == ENOENT || errno == EACCES || errno == ENOTDIR ? 0 : -1;
	if (add_rule(rs->fd, dfd, LANDLOCK_ACCESS_FS_READ_DIR) < 0)
		return -1;
	d = fdopendir(dfd);
	if (!d)
		return -1;
	(void)steal_fd(&dfd);
	while (r == 0 && (de = readdir(d))) {
		struct stat st;
		unsigned char type = de->d_type;
		int fd;

		if (type == DT_LNK || strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if ((size_t)snprintf(path, sizeof(path), "%s/%s", strcmp(dir, "/") ? dir : "",
				     de->d_name) >= sizeof(path))
			continue;
		if (listed(way, path) || listed(denies, path))
			continue;
		fd = openat(dirfd(d), de->d_name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		if (fd < 0 && nothing_to_grant(errno))
			continue;
		if (fd < 0) {
			r = -1;
			break;
		}
		if (fds->n >= FDSET_MAX)
			fdset_close(fds);
		if (fdset_add(fds, fd) < 0) {
			close(fd);
			r = -1;
			break;
		}
		/* a type the listing did not give is asked for */
		if (type == DT_UNKNOWN)
			type = fstat(fd, &st) < 0 ? DT_LNK : S_ISDIR(st.st_mode) ? DT_DIR :
							   S_ISLNK(st.st_mode) ? DT_LNK : DT_REG;
		if (type != DT_LNK)
			r = add_rule(rs->fd, fd, type == DT_DIR ? CONFINE_LANDLOCK_FS_READ & rs->all
								: (CONFINE_LANDLOCK_FS_READ & rs->file));
	}
	closedir(d);
	return r;
}

int confine_landlock_read_side(const struct confine_ruleset *rs, char *const *denies,
			       char *const *exceptions, const char **step)
{
	_cleanup_strv_ char **way = NULL;
	int r;

	if (!denies || !denies[0])
		return confine_landlock_allow(rs->fd, "/", CONFINE_LANDLOCK_FS_READ);
	struct fdset fds = { 0 };
	if (ways(denies, &way) < 0)
		return errno = ENOMEM, -1;
	r = read_entries(rs, "/", way, denies, &fds);
	for (size_t i = 0; r == 0 && way[i]; i++)
		r = read_entries(rs, way[i], way, denies, &fds);
	int saved = errno;
	fdset_close(&fds);
	errno = saved;
	/* the readable rules beneath a deny: what is bound into its mask */
	for (size_t i = 0; r == 0 && exceptions && exceptions[i]; i++) {
		_cleanup_close_ int fd = open(exceptions[i], O_PATH | O_CLOEXEC);
		struct stat st;

		if (fd < 0 && nothing_to_grant(errno))
			continue;
		if (fd < 0 || fstat(fd, &st) < 0) {
			r = -1;
			break;
		}
		r = add_rule(rs->fd, fd, S_ISDIR(st.st_mode) ? CONFINE_LANDLOCK_FS_READ & rs->all
						     : (CONFINE_LANDLOCK_FS_READ & rs->file));
	}
	/* a rule that cannot be added is never dropped: the launch is
	 * refused, naming why (a low open-file limit is the likely one) */
	if (r < 0)
		*step = errno == EMFILE || errno == ENFILE
				? "landlock: a read rule (the open-file limit, `ulimit -n`, is reached)"
				: "landlock: a read rule";
	return r;
}

/* The device nodes and the shared-memory directory, as the sandbox sees
 * them (the native sandbox's own /dev; srt's). */
int confine_landlock_dev_rules(const struct confine_ruleset *rs)
{
	int r = confine_landlock_allow(rs->fd, "/dev", rs->dev);

	if (r == 0)
		r = confine_landlock_allow(rs->fd, "/dev/pts", rs->dev);
	if (r == 0)
		r = confine_landlock_allow(rs->fd, "/dev/shm", rs->all);
	return r;
}

/* Apply the ruleset to this process (and what it runs) and close it. */
int confine_ruleset_restrict(struct confine_ruleset *rs, int r, const char **step)
{
	int saved;

	if (r < 0) {
		if (!*step)
			*step = "landlock: add a rule";
	} else if (syscall(SYS_landlock_restrict_self, rs->fd, 0) < 0) {
		*step = "landlock: restrict";
		r = -1;
	}
	saved = errno;
	close(rs->fd);
	errno = saved;
	return r;
}

int confine_landlock_apply_paths(char *const *write, size_t n, char *const *denies,
				 char *const *exceptions, int abi, bool scope, size_t *failed,
				 const char **step)
{
	struct confine_ruleset rs;
	int r = 0;

	*step = NULL;
	if (confine_ruleset_open(&rs, abi, scope, step) < 0)
		return -1;
	for (size_t i = 0; r == 0 && i < n; i++) {
		/* A grant must exist and be reached without a symbolic link:
		 * a grant that names nothing is refused, never skipped. */
		int fd = fs_open_nofollow(AT_FDCWD, write[i], O_PATH, 0);
		struct stat st;

		if (fd < 0 || fstat(fd, &st) < 0) {
			r = -1;
		} else if (S_ISLNK(st.st_mode)) {
			/* O_PATH|O_NOFOLLOW opens a final link itself */
			errno = ELOOP;
			r = -1;
		} else {
			r = add_rule(rs.fd, fd, S_ISDIR(st.st_mode) ? rs.all : rs.file);
		}
		if (fd >= 0) {
			int saved = errno;
			close(fd);
			errno = saved;
		}
		if (r < 0) {
			*failed = i;
			*step = "landlock: write grant";
		}
	}
	if (r == 0)
		r = confine_landlock_read_side(&rs, denies, exceptions, step);
	if (r == 0)
		r = confine_landlock_dev_rules(&rs);
	if (r == 0)
		r = confine_landlock_std_streams(rs.fd, rs.file);
	return confine_ruleset_restrict(&rs, r, step);
}
