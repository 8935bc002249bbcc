/* import.h: `cordon policy import-srt FILE`, srt's settings (Anthropic's
 * sandbox-runtime, 0.0.83) read as a cordon policy. The settings are
 * checked against srt's schema first (every key it has, each value's
 * type); then each item is carried over as exactly as a cordon policy can
 * hold it, and no grant is ever wider: what cordon cannot hold is made
 * stricter (a deny pattern denies the directory it starts from) or
 * dropped (an allow pattern). Each such item is one note naming its JSON
 * path. A restriction of srt's that no policy key can say (a variable
 * withheld that cordon would pass, a check inside a tunnel) refuses the
 * settings: the import never prints a policy wider than srt's reading.
 *
 * The files: import.c (the filesystem, credentials and the remaining
 * keys), schema.c (srt's schema), net.c (the network); the command is
 * cli/policy.c's. */
#ifndef CORDON_SANDBOX_SRT_IMPORT_IMPORT_H
#define CORDON_SANDBOX_SRT_IMPORT_IMPORT_H

#include "lib/err.h"
#include "policy/policy.h"

#include <jansson.h>
#include <stdio.h>

/* One import under way: the policy it fills and where its notes go. */
struct srt_import {
	struct policy *p;
	FILE *notes;
	char **cred;	/* credentials.files' denies: srt binds nothing back beneath them */
};

/* Read settings (len bytes of JSON) into a new policy; the notes go to
 * notes, one line each. A refusal is ERR_CONFIG "<json path>: <reason>". */
int srt_import(const char *buf, size_t len, FILE *notes, struct policy **out,
	       struct err **e);

/* Is root shaped as srt's schema says: known keys only (at every level),
 * the required ones present, each value of its type (integers in range,
 * enumerations among their values)? ERR_CONFIG "<json path>: <reason>". */
int srt_schema_check(const json_t *root, struct err **e);

/* The network object (checked): allow and deny lists, unix sockets, and
 * a note for each key cordon has no equivalent of. */
int srt_import_network(struct srt_import *im, json_t *net, struct err **e);

/* How a path entry is used: a deny (made stricter when cordon cannot name
 * it), an allow (dropped then), or a write grant (an allow, but a
 * trailing slash-star-star names its directory, as srt on Linux has it). */
enum srt_path_use { SRT_PATH_DENY, SRT_PATH_ALLOW, SRT_PATH_WRITE };

/* Entry v of a path list (a string, or {"path": ..., "literal": true})
 * at where, as a cordon path template in *out, or NULL when it is
 * dropped. A note says what was done when it is not taken as written;
 * extra, if not NULL, is added to that note (and makes one). */
int srt_import_path(struct srt_import *im, const char *where, const json_t *v,
		    enum srt_path_use use, const char *extra, char **out,
		    struct err **e);

enum srt_when { SRT_WHEN_ANY, SRT_WHEN_TRUE, SRT_WHEN_FALSE, SRT_WHEN_NONEMPTY };

/* A key cordon has no equivalent of, and what becomes of it: a note when
 * the key is present and its value is as when says (NONEMPTY: an array
 * or object with something in it). A table ends with a NULL key. */
struct srt_drop {
	const char *key;
	enum srt_when when;
	const char *what;
};

/* The notes of drops for the keys of obj, an object at path. */
void srt_drop_notes(struct srt_import *im, const json_t *obj, const char *path,
		    const struct srt_drop *drops);

/* The read deny of the policy so far that holds template t (t itself or
 * a directory above it, by spelling or, where both lie outside the
 * workspace, by where they lead on this host) with no read.allow entry
 * between them, or NULL: what cordon's guard would turn an entry at t
 * into a read exception beneath. */
const char *srt_denied_at(const struct srt_import *im, const char *t);

/* One note: "cordon: import-srt: <where>: <text>". */
void srt_note(struct srt_import *im, const char *where, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* s between backquotes as printable ASCII (other bytes as \xNN, a
 * backslash doubled), for a note. Caller frees; NULL without memory. */
char *srt_quote(const char *s);

#endif
