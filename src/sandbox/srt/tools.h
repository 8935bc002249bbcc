/* tools.h: what srt needs of this machine, found and checked (tools.c):
 * srt and its helpers, the version srt says it is, its environment, the
 * preflight; the bridge sockets' dirs; cordon's own binary (srt.c), which
 * srt runs inside its sandbox. */
#ifndef CORDON_SANDBOX_SRT_TOOLS_H
#define CORDON_SANDBOX_SRT_TOOLS_H

#include "guard/guard.h"
#include "lib/err.h"
#include "plan/plan.h"

#include <stdbool.h>

#define SRT_VERSION_MIN "0.0.81"
#define SRT_VERSION_TESTED "0.0.83"
/* Where srt makes its bridge sockets (its TMPDIR): a short path, since a
 * unix socket's path must fit in 108 bytes; not /tmp, which the sandbox
 * gets private (a tmpfs over it would hide the sockets srt binds in); a
 * place only the operator can make (guard_srt_sockdir: under
 * $XDG_RUNTIME_DIR, or the state dir; never a shared, world-writable
 * parent, where another user could make it first), checked (0700, owned,
 * not a link); in cordon's protected set so that no sandbox reaches
 * another's bridges; one subdirectory per launch (its execution id), the
 * only part its own sandbox sees. */
/* A launch's own socket dir, <socket dir>/<execution>; caller frees. */
char *srt_run_sockdir(const struct plan_paths *paths);
/* Make the socket dir and the launch's own in it (run_dir), or check the
 * ones there (a directory, not a link, owned by this user, mode 0700).
 * ERR_UNAVAILABLE otherwise, or when the socket dir's path is too long. */
int srt_sockdir_make(const char *run_dir, struct err **e);
/* Remove a launch's own socket dir and what srt left in it. */
void srt_sockdir_remove(const char *run_dir);
/* Scratch files of cordon's own, on the host (doctor's settings). */
#define SRT_SCRATCH "/tmp"
#define SRT_PREFLIGHT_LOG "srt-preflight.log"

/* What srt needs of this machine, as found. */
struct srt_env {
	char *srt;		/* absolute */
	char *version;		/* as `srt --version` printed it */
	int vs_tested;		/* <0 older than tested, 0 the tested one, >0 newer */
	char *bwrap, *socat, *rg;
	char *path;		/* the PATH they were found on; srt runs with it */
};

/* Find srt and its helpers and, with version, ask srt its version.
 * ERR_CONFIG for a bad $CORDON_SRT; ERR_UNAVAILABLE ("srt_unavailable:
 * ...") for anything missing or too old. */
int srt_locate(struct srt_env *t, bool version, struct err **e);
void srt_env_clear(struct srt_env *t);
/* "a.b.c" (anything after a '-' or '+' ignored) against another: <0, 0,
 * >0; -2 when a is not a version. */
int srt_version_cmp(const char *a, const char *b);

/* The keys the wrapper sets for srt, and gives the command back. */
extern const char *const srt_wrapper_keys[];
/* The keys removed from srt's environment and not given back: srt would
 * take a proxy variable as its parent proxy (inside, srt sets its own). */
extern const char *const srt_cleared_keys[];
/* srt's environment: the caller's, without srt_cleared_keys, PATH and
 * TMPDIR (tmpdir; NULL: the socket dir) set. */
char **srt_environ(const struct srt_env *t, const char *tmpdir);

/* /usr/bin/true under the settings, srt started in cwd (as the launch
 * starts it: outside every grant); ERR_UNAVAILABLE "preflight_failed"
 * when srt fails or prints anything. srt's output is kept in log_dir
 * (when not NULL), never echoed: it may quote what it was given. */
int srt_preflight(const struct srt_env *t, const char *settings, const char *cwd,
		  const char *log_dir, const char *tmpdir, struct err **e);

/* cordon's own binary (srt runs it inside the sandbox), refused when the
 * grant denies it or it was replaced since it started. */
int srt_self_exe(const struct grant *g, char **out, struct err **e);

#endif
