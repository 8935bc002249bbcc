/* mirror.h: the SSH provider's copy of the host's paths to a remote and
 * of a run's changes back, on file descriptors (nothing here knows ssh).
 * Paths are mirrored: the remote holds each at the same absolute path.
 *
 * Pack (host -> remote): mirror_pack writes the roots as one tar and a
 * manifest of what it wrote. Apply (remote -> host): mirror_apply takes
 * the remote's listing of its write grants and a tar of what the caller
 * chose to fetch, and writes it beneath the write grants only, under the
 * rules below; the remote controls every byte of both, so every rule is
 * enforced here, on the host, whatever the remote sends.
 *
 * The manifest (a JSON object; the caller stores it and hands it back):
 *
 *   {"version": 1,
 *    "roots": ["/abs", ...],            the roots packed (missing ones not)
 *    "paths": {"/abs/path": [type, mode, size, mtime, ctime, dev, ino], ...},
 *    "bytes": n,                        file data packed
 *    "skipped": [{"path": p, "why": w}, ...],
 *    "skipped_more": n}                 (only when "skipped" was cut short)
 *
 * with, for every path packed (absolute, every root and everything
 * packed beneath it): type "d" (directory), "f" (regular file) or "l"
 * (symbolic link); mode the permission bits (& 0777); size st_size;
 * mtime and ctime in nanoseconds since the epoch (saturated at the
 * limits of a signed 64-bit integer); dev and ino as the bits of the
 * unsigned values in a signed 64-bit integer. "skipped" names what was
 * not packed so the caller can say so (at most MIRROR_REPORT_MAX items,
 * then "skipped_more" counts the rest): a fifo, socket or device, a name
 * that is not UTF-8 (a JSON key could not hold it), a missing root. Its
 * "path" is for showing only: control characters, backslashes and bytes
 * that are not UTF-8 are written as \xNN (or \\). */
#ifndef CORDON_CONTAINER_SSH_MIRROR_H
#define CORDON_CONTAINER_SSH_MIRROR_H

#include "lib/err.h"

#include <jansson.h>
#include <stddef.h>

/* What one copy back may write at most (mirror_rules can lower them): a
 * hostile stream cannot fill the host's disk or memory without bound. */
#define MIRROR_APPLY_BYTES_MAX (16ULL << 30)
#define MIRROR_APPLY_ENTRIES_MAX ((size_t)1000000)
/* How deep a pack walks (one open directory per level) and a removal
 * goes. */
#define MIRROR_DEPTH_MAX 256
/* Items kept in each list of a manifest or report; the rest are counted. */
#define MIRROR_REPORT_MAX 1000

/* Write roots (absolute, canonical; files, directories or links; "/"
 * refused) to out_fd as one tar: pax (ustar headers, an extended header
 * only where ustar cannot say it: a long name or link target, a name
 * that is not ASCII, sent as raw bytes with hdrcharset=BINARY; so mtimes
 * go to the second, a header per file would cost a block more each),
 * member names relative to "/" (no leading slash), each root's own entry
 * first and every directory before what it holds, a root's parents not
 * included (the remote makes them). A root beneath another root is
 * packed once, as part of it. Nothing at or beneath a skip path
 * (absolute) is read or written.
 *
 * No symbolic link is followed: a link is packed as a link, its target
 * as it is. Only directories, regular files and links are packed; modes
 * are & 0777 (no set-ID or sticky bit); uid and gid 0, no user or group
 * names (the remote extracts as its own account: use GNU tar's
 * `tar -xpf - -C / --no-same-owner --warning=no-unknown-keyword`).
 * Each file is opened beneath its directory's fd, checked to be the
 * inode the walk saw and still a regular file, and streamed; one whose
 * size changes while it is read fails the pack.
 *
 * out_fd must be blocking; the caller ignores SIGPIPE when it is a pipe.
 * On success *manifest is the manifest above (the caller's). */
int mirror_pack(char *const *roots, char *const *skip, int out_fd, json_t **manifest,
		struct err **e);

struct mirror_rules {
	/* the write grants: absolute, canonical directories, not "/"; the
	 * only places an apply writes (strictly beneath one: a grant's own
	 * root is never replaced, removed or changed) */
	char *const *grants;
	/* never written or removed, nor anything beneath them: the
	 * read-only needs (.git/config, .git/hooks, .git/info) and the
	 * denied paths (a fifo, socket or device the pack skipped stays by
	 * its type: an apply never replaces one on the host). Absolute
	 * and canonical (their canonical forms on the host, where a link
	 * leads elsewhere, are kept as well). */
	char *const *kept;
	/* 0: MIRROR_APPLY_BYTES_MAX and MIRROR_APPLY_ENTRIES_MAX */
	unsigned long long max_bytes;
	size_t max_entries;
};

/* Split a NUL-separated listing of absolute paths (a trailing NUL
 * optional) into a NULL-terminated vector (the caller frees it with
 * strv_free). Each path must be absolute with no empty, "." or ".."
 * element and shorter than PATH_MAX, and there may be at most
 * MIRROR_APPLY_ENTRIES_MAX: a listing that breaks either is refused
 * whole (ERR_DENIED), since a path dropped from it would read as one the
 * remote removed. */
int mirror_paths_split(const char *buf, size_t len, char ***paths, struct err **e);

/* The paths of remote_paths the manifest does not hold, in their order
 * (a NULL-terminated vector; the caller frees it with strv_free). */
int mirror_unknown_paths(const json_t *manifest, char *const *remote_paths, char ***unknown,
			 struct err **e);

/* One path of the remote's listing of its write grants. */
struct mirror_remote_entry {
	const char *path; /* absolute */
	char type;	  /* 'd', 'f', 'l'; any other letter for another type */
	long long mtime_ns, ctime_ns;
};

/* The fetch choice: of the n entries, those strictly beneath a write
 * grant and not kept (nothing else would be applied) that are a
 * directory, are not in the manifest, have another type than the
 * manifest says, or whose mtime or ctime is later than stamp_ns (the
 * remote's time once the upload was in place: a rename or cp -p keeps
 * the mtime, not the ctime). Sorted, so a directory comes before what
 * it holds. A NULL-terminated vector; the caller frees it with
 * strv_free. *dropped (when dropped is not NULL), likewise: the paths
 * beneath a write grant and kept that are not a directory and that the
 * same test finds changed: what the run changed and will not come back,
 * for the caller to say. */
int mirror_fetch_choice(const struct mirror_rules *r, const json_t *manifest,
			const struct mirror_remote_entry *ent, size_t n, long long stamp_ns,
			char ***fetch, char ***dropped, struct err **e);

/* Apply a copy back. remote_paths is the remote's listing of every path
 * now under the write grants (NULL-terminated, as mirror_paths_split
 * makes it); tar_fd (blocking) a tar of what the caller fetched: ustar,
 * pax or GNU, names relative to "/" (one leading "/" is dropped, as GNU
 * tar does), no compression. manifest is mirror_pack's.
 *
 * Each tar entry is refused, and the apply goes on, when its name is not
 * a path without empty or ".." elements (a "." element is dropped), when
 * it is not strictly beneath a write grant (a directory entry for a
 * grant's root is taken and changes nothing), when it is kept or beneath
 * a kept path, when it is a fifo, device, socket, hard link or anything
 * but a directory, regular file or link, when it would make a pinned
 * directory (a grant's directory holding a kept path, however deep)
 * anything but a directory, or when a directory on its way, walked from
 * the grant's root one element at a time without following a link, is a
 * link or not a directory on the host. A missing directory on the way is
 * made (0700 until its own entry says otherwise).
 *
 * A directory entry replaces a file or link at its path with a
 * directory (its mode and mtime are set at the end, deepest first, so
 * a read-only directory does not stop the apply; a pinned directory
 * keeps its mode). A file is written to a temporary name in its
 * directory (created exclusively, 0600), then fchmod (& 0777), futimens
 * (the tar's mtime) and renamed over the path; a link likewise. A
 * directory in their way is removed (no link followed) unless pinned.
 * Nothing is chowned. More than max_bytes of file data or max_entries
 * entries fails the apply.
 *
 * Then removals: a manifest path strictly beneath a grant that neither
 * remote_paths nor the tar holds is removed, deepest first, unless it is
 * kept or pinned (refused), changed on the host since the pack (its
 * type, dev or ino differ, or for a non-directory its size, mtime or
 * ctime: left), a directory that is not empty (left), or beneath a
 * directory the remote lists, or a pinned one, that did not come back
 * in the tar as a directory (left: the remote's one is not a directory,
 * so what the listing lacks beneath it says nothing, and a pinned
 * directory's content goes only with a directory that came back). A
 * manifest path the remote still has and the tar does not is left
 * alone.
 *
 * On success (refusals included) *report is
 *   {"written": files and links written, "dirs": directories made or
 *    updated, "removed": n, "bytes": file data written,
 *    "refused": [{"path", "why"}], "left": [{"path", "why"}],
 *    "refused_more": n, "left_more": n}
 * (lists cut at MIRROR_REPORT_MAX, the *_more counts only when cut;
 * paths shown as in the manifest's "skipped"; no file content anywhere).
 * A corrupt stream, a bound exceeded, or an I/O error on the host is -1
 * with *e: what was applied before it stays. */
int mirror_apply(const struct mirror_rules *r, const json_t *manifest, char *const *remote_paths,
		 int tar_fd, json_t **report, struct err **e);

#endif
