/* fs.h: path and file helpers that never follow a symbolic link where
 * that matters (openat2 with RESOLVE_NO_SYMLINKS / RESOLVE_BENEATH), plus
 * lexical path handling and canonicalisation. */
#ifndef CORDON_LIB_FS_H
#define CORDON_LIB_FS_H

#include "err.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Is b equal to a or beneath it, on '/' boundaries? Both absolute and
 * normalised ("/" is beneath nothing but itself, and holds everything). */
bool fs_path_within(const char *b, const char *a);
/* a joined with b ('/' between, no doubled slash). Caller frees. */
char *fs_path_join(const char *a, const char *b);
/* Already in normal form: absolute, no empty, "." or ".." component. */
bool fs_path_normal(const char *p);

/* Resolve symbolic links in the longest existing prefix of an absolute,
 * normalised path (no ".."), the way the kernel would walk it; a dangling
 * link's target is followed textually, so the result names where a file
 * would land. The part that does not exist is appended as given. */
int fs_canonical(const char *path, char **out, struct err **e);
/* The same, noting in *links (appended to; the caller frees) where each
 * symbolic link met on the way lies: its path with its own directory
 * resolved. A caller can then tell whether anything on the way could be
 * changed by someone who may write there. */
int fs_canonical_links(const char *path, char **out, char ***links, struct err **e);

/* openat2 beneath nothing, refusing every symbolic link and magic link on
 * the way: O_CLOEXEC is added. Returns the fd or -1 (errno set). */
int fs_open_nofollow(int dirfd, const char *path, int flags, mode_t mode);

/* Make every missing directory of rel beneath dirfd (mode), refusing
 * symbolic links and "..", and return an O_PATH|O_DIRECTORY fd of the
 * last one. */
int fs_mkdirs_beneath(int dirfd, const char *rel, mode_t mode, struct err **e);

/* Write a file atomically beneath dirfd: a temporary name, then rename,
 * so a reader sees the whole old file or the whole new one. With durable,
 * the data is fsynced before the rename. The file gets mode (applied with
 * fchmod, so the umask does not change it). */
int fs_write_atomic(int dirfd, const char *name, const void *buf, size_t len,
		    mode_t mode, bool durable, struct err **e);

/* Read at most max bytes of a regular file beneath dirfd (no symbolic
 * links); a larger file is an error. *buf is NUL-terminated. */
int fs_read_file(int dirfd, const char *path, size_t max, char **buf,
		 size_t *len, struct err **e);

/* Read exactly n bytes from fd, through short reads and EINTR: 0, or -1
 * (errno set; EOF before n bytes is -1 with errno 0). Allocates nothing,
 * so a child after clone may use it. */
int fs_read_exact(int fd, void *buf, size_t n);
/* Remove name beneath at and everything in it, never following a
 * symbolic link (a link is removed, not its target), at most max_depth
 * levels down: 0, or -1 with errno when something stays. */
int fs_remove_tree(int at, const char *name, int max_depth);

/* Every symbolic link and directory beneath dirfd, none followed, no
 * more than depth_max directories down and entries_max entries in all
 * (each listed name counts, a file too: the listing is all it costs):
 * visit(rel, DT_LNK or DT_DIR, arg) with rel relative to dirfd; for a
 * directory, 1 skips it. 0 when all were seen; visit's negative value;
 * or -1 with errno (E2BIG beyond a bound). */
int fs_find_links(int dirfd, size_t depth_max, size_t entries_max,
		  int (*visit)(const char *rel, unsigned char type, void *arg), void *arg);

/* Write all n bytes to fd, through short writes and EINTR: 0 or -1. */
int fs_write_exact(int fd, const void *buf, size_t n);

/* The same for an fd the caller opened; what names it in errors. */
int fs_read_fd(int fd, const char *what, size_t max, char **buf, size_t *len,
	       struct err **e);

#endif
