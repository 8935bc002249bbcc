/* landlock.c: see landlock.h. The access rights cordon handles grow with
 * the ABI: each row of the table is what that ABI added. Handling a right
 * and granting it nowhere is what denies it. */
#include "sandbox/native/landlock.h"
#include "lib/fs.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/landlock.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_landlock_create_ruleset
#define SYS_landlock_create_ruleset 444
#define SYS_landlock_add_rule 445
#define SYS_landlock_restrict_self 446
#endif

#define FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
		 LANDLOCK_ACCESS_FS_READ_DIR)

/* What each ABI added to the file-system rights. */
static const uint64_t fs_rights_by_abi[] = {
	[1] = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_WRITE_FILE |
	      LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR |
	      LANDLOCK_ACCESS_FS_REMOVE_DIR | LANDLOCK_ACCESS_FS_REMOVE_FILE |
	      LANDLOCK_ACCESS_FS_MAKE_CHAR | LANDLOCK_ACCESS_FS_MAKE_DIR |
	      LANDLOCK_ACCESS_FS_MAKE_REG | LANDLOCK_ACCESS_FS_MAKE_SOCK |
	      LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_BLOCK |
	      LANDLOCK_ACCESS_FS_MAKE_SYM,
	[2] = 1ULL << 13, /* REFER */
	[3] = 1ULL << 14, /* TRUNCATE */
	[5] = 1ULL << 15, /* IOCTL_DEV */
};

/* Scopes, from ABI 6. */
#define SCOPE_ABSTRACT_UNIX 1ULL
#define SCOPE_SIGNAL 2ULL

struct ruleset_attr_v6 {
	uint64_t handled_access_fs;
	uint64_t handled_access_net;
	uint64_t scoped;
};

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
 * own mount points, /dev/shm where there is none). */
static int allow(int ruleset, const char *path, uint64_t access)
{
	int fd = open(path, O_PATH | O_CLOEXEC), r;

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
static int allow_std_streams(int ruleset, uint64_t file_rights)
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

/* The rights for a ruleset of this ABI, and the ruleset. */
struct ruleset {
	int fd;
	uint64_t all;	/* every right handled */
	uint64_t file;	/* the rights a rule on a file may carry */
	uint64_t dev;	/* device nodes: the file rights and listing */
};

static int ruleset_open(struct ruleset *rs, int abi, bool scope, const char **step)
{
	struct ruleset_attr_v6 attr = { .handled_access_fs = fs_rights(abi) };
	size_t size = abi >= 6 ? sizeof(attr) : 2 * sizeof(uint64_t);

	rs->all = attr.handled_access_fs;
	/* file rights only: a rule on a file may not carry directory rights */
	rs->file = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
		   LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? (1ULL << 14) : 0) |
		   (abi >= 5 ? (1ULL << 15) : 0);
	rs->dev = rs->file | LANDLOCK_ACCESS_FS_READ_DIR;
	if (abi >= 6 && scope)
		attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
	if (abi < 4)
		size = sizeof(uint64_t);
	rs->fd = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs->fd < 0) {
		*step = "landlock: create the ruleset";
		return -1;
	}
	return 0;
}

/* What every layout has: read and execute everywhere, the device nodes,
 * the shared-memory directory, the standard streams. */
static int common_rules(const struct ruleset *rs)
{
	int r = allow(rs->fd, "/", FS_READ);

	if (r == 0)
		r = allow(rs->fd, "/dev", rs->dev);
	if (r == 0)
		r = allow(rs->fd, "/dev/pts", rs->dev);
	if (r == 0)
		r = allow(rs->fd, "/dev/shm", rs->all);
	if (r == 0)
		r = allow_std_streams(rs->fd, rs->file);
	return r;
}

/* Apply the ruleset to this process (and what it runs) and close it. */
static int ruleset_restrict(struct ruleset *rs, int r, const char **step)
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

int native_landlock_apply(const struct mount_plan *mp, int abi, const char **step)
{
	struct ruleset rs;
	int r = 0;

	*step = NULL;
	if (ruleset_open(&rs, abi, true, step) < 0)
		return -1;
	for (size_t i = 0; r == 0 && i < mp->n; i++)
		if (mp->ops[i].kind == MOP_WRITE || mp->ops[i].kind == MOP_PIN)
			r = allow(rs.fd, mp->ops[i].path, mp->ops[i].source_dir ? rs.all : rs.file);
	if (r == 0 && mp->tmp_private)
		r = allow(rs.fd, "/tmp", rs.all);
	if (r == 0)
		r = common_rules(&rs);
	return ruleset_restrict(&rs, r, step);
}

int native_landlock_apply_paths(char *const *write, size_t n, int abi, bool scope,
				size_t *failed, const char **step)
{
	struct ruleset rs;
	int r = 0;

	*step = NULL;
	if (ruleset_open(&rs, abi, scope, step) < 0)
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
		r = common_rules(&rs);
	return ruleset_restrict(&rs, r, step);
}
