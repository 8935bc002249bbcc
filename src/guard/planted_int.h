/* planted_int.h: shared between planted.c (the git metadata, the look
 * before, the moves, the report) and planted_walk.c (the walk of the
 * workspace after a run); not a contract. */
#ifndef CORDON_GUARD_PLANTED_INT_H
#define CORDON_GUARD_PLANTED_INT_H

#include "lib/err.h"

#include <stdbool.h>
#include <stdio.h>
#include <stddef.h>
#include <sys/stat.h>
#include <time.h>

struct finding {
	char *path;	/* relative to the workspace, printable */
	char *key;	/* printable */
	char *moved_to;	/* absolute, printable; NULL when left in place */
};

struct findings {
	struct finding *v;
	size_t n, cap;
	bool oom;
};

/* Add a finding (path and key escaped to printable ASCII); the same path
 * and key twice is one finding. */
void planted_add(struct findings *f, const char *path, const char *key,
		 const char *moved_to);

void planted_findings_clear(struct findings *f);

/* Was this inode changed (created, written, renamed, linked, chmod-ed)
 * at or after since? */
static inline bool planted_newer(const struct stat *st, const struct timespec *since)
{
	return st->st_ctim.tv_sec > since->tv_sec ||
	       (st->st_ctim.tv_sec == since->tv_sec && st->st_ctim.tv_nsec >= since->tv_nsec);
}

/* rel ("." or "" for the workspace itself) joined to name in out; -1
 * when it does not fit. */
int planted_join(char *out, size_t n, const char *rel, const char *name);

/* openat2 beneath dirfd: no symbolic link, no "..", out of it. */
int planted_open_beneath(int dirfd, const char *rel, int flags);

/* Push to *ro the absolute paths of the files the config at cfgrel
 * (beneath ws_fd, the workspace ws) includes in the workspace, and
 * theirs; ERR_DENIED for one missing or reached through a link there. */
int planted_includes(int ws_fd, const char *ws, const char *cfgrel, char ***ro, struct err **e);

struct walk_stats {
	size_t dirs, entries;
	bool complete;
	char *stopped;	/* where the walk gave up (printable), or NULL */
};

/* Walk the workspace (ws_fd, its canonical path ws) after a run: every
 * git repository but the top one (when top_git is false: it is the
 * host's, guarded), bare ones included, whose .git, config or the way to
 * them changed since `since`, for keys and hooks that run something. */
int planted_walk(int ws_fd, const char *ws, bool top_git, const struct timespec *since,
		 struct findings *out, struct walk_stats *stats);

/* Each finding as a line on f (`cordon: planted: PATH: KEY`, and where
 * it was moved), and a line for a walk cut short. */
void planted_report(FILE *f, const struct findings *fs, const struct walk_stats *ws);
/* The same as planted.json in the record dir (0444, atomically; synced
 * when there is a finding). */
int planted_write_record(int rec_fd, const struct findings *fs, const struct walk_stats *ws,
			 struct err **e);

#endif
