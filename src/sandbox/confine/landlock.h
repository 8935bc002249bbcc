/* landlock.h: cordon's Landlock layer, shared by every sandbox that takes
 * it (the native child, `cordon confine` inside srt's sandbox or a
 * container): reading everywhere but the denies, by rules on what exists
 * as the sandbox starts (so a denied path the host creates or replaces
 * during the run stays unreadable), writing only beneath the write
 * grants, with abstract unix sockets and signals scoped to the sandbox
 * where the kernel's ABI has scopes. The rulesets' pieces are here; the
 * native sandbox adds its mount plan's rules with them
 * (sandbox/native/landlock.c); `cordon confine` builds and applies one
 * from lists of paths (confine_landlock_apply_paths). */
#ifndef CORDON_SANDBOX_CONFINE_LANDLOCK_H
#define CORDON_SANDBOX_CONFINE_LANDLOCK_H

#include <linux/landlock.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The Landlock ABI versions by what each added (the kernel's ABI number
 * grows by one with each; a feature is there when the ABI is at least
 * its number). */
#define LANDLOCK_ABI_FS 1		/* file-system rights (Linux 5.13) */
#define LANDLOCK_ABI_REFER 2		/* linking and renaming across directories */
#define LANDLOCK_ABI_TRUNCATE 3		/* truncation */
#define LANDLOCK_ABI_NET 4		/* TCP bind and connect: the ruleset's second word */
#define LANDLOCK_ABI_IOCTL_DEV 5	/* ioctl on device files */
#define LANDLOCK_ABI_SCOPE 6		/* abstract unix sockets and signals scoped (Linux 6.12) */

/* The lowest ABI cordon runs on: it gives write confinement to the
 * grants; the later ABIs' rights and scopes are used where the kernel
 * has them. */
#define LANDLOCK_ABI_FLOOR LANDLOCK_ABI_FS

/* Reading: files and listing directories. */
#define CONFINE_LANDLOCK_FS_READ (LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_READ_FILE | \
				  LANDLOCK_ACCESS_FS_READ_DIR)

/* The kernel's Landlock ABI version, 0 when Landlock is unavailable; the
 * query's form gives *err too: ENOSYS when the kernel was built without
 * Landlock, EOPNOTSUPP when it is built in but not enabled. */
int confine_landlock_abi(void);
int confine_landlock_abi_query(int *err);

/* A ruleset and the rights it handles, for one ABI. */
struct confine_ruleset {
	int fd;
	uint64_t all;	/* every right handled */
	uint64_t file;	/* the rights a rule on a file may carry */
	uint64_t dev;	/* device nodes: the file rights and listing */
};

/* The rights of an ABI, for a ruleset opened elsewhere (rs->fd is left). */
void confine_ruleset_rights(struct confine_ruleset *rs, int abi);
/* A new ruleset handling every right of abi (and the scopes, with scope
 * and an ABI that has them). 0, or -1 with errno and *step. */
int confine_ruleset_open(struct confine_ruleset *rs, int abi, bool scope, const char **step);
/* Apply the ruleset to this process (and what it runs) and close it; r is
 * the result of the rules added (a failure there is passed on, named
 * in *step when nothing named it yet). 0, or -1 with errno and *step. */
int confine_ruleset_restrict(struct confine_ruleset *rs, int r, const char **step);

/* A rule granting access beneath path, reached without following a
 * symbolic link; a path that does not exist adds nothing. 0 or -1 (errno). */
int confine_landlock_allow(int ruleset, const char *path, uint64_t access);
/* The read side: reading everywhere but the denies (NULL-terminated, may
 * be NULL) and, beneath them, the exceptions again. What is gone or this
 * user cannot reach grants nothing; any other failure to make a rule (the
 * open-file limit) is -1 with errno and *step, never a rule dropped. */
int confine_landlock_read_side(const struct confine_ruleset *rs, char *const *denies,
			       char *const *exceptions, const char **step);
/* The standard streams handed in writable stay writable through
 * /dev/stdout and /proc/self/fd. 0 or -1 (errno). */
int confine_landlock_std_streams(int ruleset, uint64_t file_rights);
/* /dev, /dev/pts and /dev/shm as the sandbox sees them. 0 or -1 (errno). */
int confine_landlock_dev_rules(const struct confine_ruleset *rs);

/* The whole layer over a filesystem cordon did not build (another
 * provider's sandbox, for `cordon confine`): writing only beneath the n
 * paths in write, each of which must exist and be reached without a
 * symbolic link; reading everywhere but the denies (NULL-terminated, may
 * be NULL) and beneath them the exceptions, as for the native sandbox;
 * scope: abstract unix sockets and signals scoped where the ABI has
 * scopes. Returns 0, or -1 with errno
 * and *step set, and *failed the index of a write path that could not be
 * granted. */
int confine_landlock_apply_paths(char *const *write, size_t n, char *const *denies,
				 char *const *exceptions, int abi, bool scope, size_t *failed,
				 const char **step);

#endif
