/* srt.h: the srt process provider: Anthropic's sandbox-runtime (bwrap, a
 * seccomp filter and a network bridge on Linux) wrapped so that cordon's
 * grant, and nothing else, is what it enforces.
 *
 * A plan's argv is the wrapper:
 *   /usr/bin/env -u SRT_DEBUG -u <proxy variables> -C <record>
 *     PATH=<cordon's> TMPDIR=<srt's socket dir> <srt>
 *     --settings <record>/srt-settings.json --
 *     <cordon> confine [--write PATH]... [--unix-all] [--scope] --
 *     /usr/bin/env -C <workspace> <the command's own values of those keys>
 *     CMD...
 * The command's environment is the process environment, so a secret is
 * never in an argv or a file. srt is found at $CORDON_SRT (an absolute
 * path) or on PATH; it must be 0.0.81 or later, and bwrap, socat and rg
 * must be on PATH. Before every launch /usr/bin/true runs under the real
 * settings, and a failure or any output refuses the launch. */
#ifndef CORDON_SANDBOX_SRT_SRT_H
#define CORDON_SANDBOX_SRT_SRT_H

#include "sandbox/provider.h"
#include "sandbox/srt/run.h"
#include "sandbox/srt/settings.h"
#include "sandbox/srt/tools.h"

extern const struct provider srt_provider;

/* The provider's run: srt_create, the host's record, srt_start,
 * srt_wait (run.h). */
static inline int srt_run(const struct grant *g, const struct plan *p,
			  const struct plan_paths *paths, const struct provider_record *rec,
			  struct err **e)
{
	return srt_run_steps(g, p, paths, rec->fn, rec->ctx, rec->quiet, e);
}

/* Is p a plan this provider made for record_dir? */
bool srt_plan_is_srt(const struct plan *p, const char *record_dir);

#endif
