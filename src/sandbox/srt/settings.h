/* settings.h: a merged grant as srt's settings file. Every path is
 * absolute and marked literal, so srt never reads one as a pattern. A
 * grant srt cannot hold exactly is refused, never approximated:
 *
 *   denyRead    every deny (the policy's, the default denies, the
 *               protected set, the executor's)
 *   allowRead   every readable rule strictly beneath a deny (exceptions,
 *               the run dir, write grants inside the protected set)
 *   allowWrite  every write grant, the run dir among them
 *   denyWrite   every read-only need, and every deny or read exception
 *               inside a write grant (srt's deny of a directory is a tmpfs,
 *               which a write grant around it would leave writable)
 *   network     cordon's gateway, as srt's external HTTP and SOCKS proxy
 *
 * Refused (sandbox_config, naming the paths): an exception holding a
 * deeper deny; a read-only path holding a write grant; a write grant
 * beneath a read exception that is not itself writable (srt binds the
 * exception over it); an existing denied directory inside a write grant
 * (srt's deny of a directory is a writable tmpfs, which nothing takes
 * back there). Refused as sandbox_unavailable: a write grant on a
 * path that does not exist (srt ignores it), and unix sockets by path. */
#ifndef CORDON_SANDBOX_SRT_SETTINGS_H
#define CORDON_SANDBOX_SRT_SETTINGS_H

#include "guard/guard.h"
#include "lib/err.h"

#include <jansson.h>

#define SRT_SETTINGS_FILE "srt-settings.json"

/* The helpers srt runs, pinned by absolute path in the settings, and
 * cordon's own binary, which srt runs inside the sandbox (NULL: none). */
struct srt_helpers {
	const char *bwrap;
	const char *socat;
	const char *rg;
	const char *self;
};

/* The gateway's loopback ports; 0 in a plan's record, which binds none. */
struct srt_ports {
	int http;
	int socks;
};

/* Whether the sandbox's /tmp is its own (no write grant holds /tmp, and
 * the policy does not deny it outright): the host's /tmp is then denied
 * to srt (an empty tmpfs) and confine lets the command write there. */
bool srt_settings_tmp_private(const struct grant *g);

/* Refuse what srt cannot hold (see above); 0 when it holds g exactly. */
int srt_settings_check(const struct grant *g, struct err **e);

/* The settings for g (checked first). *out is the caller's. */
int srt_settings_build(const struct grant *g, const struct srt_helpers *h,
		       const struct srt_ports *ports, json_t **out, struct err **e);

/* The settings as text (indented, keys in order, ASCII only). */
char *srt_settings_text(const json_t *s);

/* Write the settings into the record dir, 0444, atomically; durable
 * fsyncs them before they are renamed into place. */
int srt_settings_write(const char *record_dir, const json_t *s, bool durable,
		       struct err **e);

#endif
