/* landlock.c: see landlock.h. The access rights cordon handles grow with
 * the ABI: each row of the table is what that ABI added. Handling a right
 * and granting it nowhere is what denies it. */
#include "sandbox/native/landlock.h"

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

static int allow(int ruleset, const char *path, uint64_t access)
{
	struct landlock_path_beneath_attr pb = { .allowed_access = access };
	int r;

	pb.parent_fd = open(path, O_PATH | O_CLOEXEC);
	if (pb.parent_fd < 0)
		return errno == ENOENT ? 0 : -1;
	r = (int)syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &pb, 0);
	close(pb.parent_fd);
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

int native_landlock_apply(const struct mount_plan *mp, int abi, const char **step)
{
	struct ruleset_attr_v6 attr = { .handled_access_fs = fs_rights(abi) };
	uint64_t all = attr.handled_access_fs;
	/* file rights only: a rule on a file may not carry directory rights */
	uint64_t file = LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE |
			LANDLOCK_ACCESS_FS_WRITE_FILE | (abi >= 3 ? (1ULL << 14) : 0) |
			(abi >= 5 ? (1ULL << 15) : 0);
	uint64_t dev = file | LANDLOCK_ACCESS_FS_READ_DIR;
	size_t size = abi >= 6 ? sizeof(attr) : 2 * sizeof(uint64_t);
	int rs, r = 0;

	if (abi >= 6)
		attr.scoped = SCOPE_ABSTRACT_UNIX | SCOPE_SIGNAL;
	if (abi < 4)
		size = sizeof(uint64_t);
	rs = (int)syscall(SYS_landlock_create_ruleset, &attr, size, 0);
	if (rs < 0) {
		*step = "landlock: create the ruleset";
		return -1;
	}
	r = allow(rs, "/", FS_READ);
	for (size_t i = 0; r == 0 && i < mp->n; i++)
		if (mp->ops[i].kind == MOP_WRITE || mp->ops[i].kind == MOP_PIN)
			r = allow(rs, mp->ops[i].path, mp->ops[i].source_dir ? all : file);
	if (r == 0 && mp->tmp_private)
		r = allow(rs, "/tmp", all);
	if (r == 0)
		r = allow(rs, "/dev", dev);
	if (r == 0)
		r = allow(rs, "/dev/pts", dev);
	if (r == 0)
		r = allow(rs, "/dev/shm", all);
	if (r == 0)
		r = allow_std_streams(rs, file);
	if (r < 0) {
		*step = "landlock: add a rule";
		close(rs);
		return -1;
	}
	if (syscall(SYS_landlock_restrict_self, rs, 0) < 0) {
		*step = "landlock: restrict";
		close(rs);
		return -1;
	}
	close(rs);
	return 0;
}
