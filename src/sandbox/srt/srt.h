/* srt.h: the srt process provider: Anthropic's sandbox-runtime (bwrap, a
 * seccomp filter and a network bridge on Linux) wrapped so that cordon's
 * grant, and nothing else, is what it enforces.
 *
 * A plan's argv is the wrapper:
 *   /usr/bin/env -u SRT_DEBUG PATH=<cordon's> TMPDIR=/tmp <srt>
 *     --settings <record>/srt-settings.json --
 *     <cordon> confine [--write PATH]... [--unix-all] [--scope] --
 *     /usr/bin/env <the command's own values of those keys> CMD...
 * The command's environment is the process environment, so a secret is
 * never in an argv or a file. srt is found at $CORDON_SRT (an absolute
 * path) or on PATH; it must be 0.0.81 or later, and bwrap, socat and rg
 * must be on PATH. Before every launch /usr/bin/true runs under the real
 * settings, and a failure or any output refuses the launch. */
#ifndef CORDON_SANDBOX_SRT_SRT_H
#define CORDON_SANDBOX_SRT_SRT_H

#include "sandbox/provider.h"
#include "sandbox/srt/settings.h"

#define SRT_VERSION_MIN "0.0.81"
#define SRT_VERSION_TESTED "0.0.83"
/* Where srt makes its bridge sockets: a short path, since a unix socket's
 * path must fit in 108 bytes. */
#define SRT_TMPDIR "/tmp"
#define SRT_PREFLIGHT_LOG "srt-preflight.log"

extern const struct provider srt_provider;

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

/* The keys the wrapper sets for srt, and removes from its environment. */
extern const char *const srt_wrapper_keys[];
/* srt's environment: the caller's, SRT_DEBUG removed, PATH and TMPDIR set. */
char **srt_environ(const struct srt_env *t);

/* Run argv with envp, stdin from /dev/null, stdout and stderr captured
 * together (the first max bytes kept, *len counting all), killed after
 * timeout_ms. *status: the exit status, 128+N for signal N. */
int srt_capture(char *const argv[], char *const envp[], size_t max, int timeout_ms,
		char **out, size_t *len, int *status, struct err **e);

/* /usr/bin/true under the settings; ERR_UNAVAILABLE "preflight_failed"
 * when srt fails or prints anything. srt's output is kept in log_dir
 * (when not NULL), never echoed: it may quote what it was given. */
int srt_preflight(const struct srt_env *t, const char *settings, const char *log_dir,
		  struct err **e);

/* The provider's run (run.c). */
int srt_run(const struct grant *g, const struct plan *p, const struct plan_paths *paths,
	    const struct provider_record *rec, struct err **e);

/* Is p a plan this provider made for record_dir? */
bool srt_plan_is_srt(const struct plan *p, const char *record_dir);

#endif
