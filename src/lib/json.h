/* json.h: strict JSON on top of jansson. Duplicate keys and embedded NULs
 * are refused, and a parse error names the JSON path where it happened
 * (network.allow[2]) rather than echoing the input, which may hold
 * something the operator would not want printed. */
#ifndef CORDON_LIB_JSON_H
#define CORDON_LIB_JSON_H

#include "err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* Parse one JSON document. On failure *e is an ERR_CONFIG error whose
 * message is "<path>: <fixed reason>". */
json_t *json_parse_strict(const char *buf, size_t len, struct err **e);

/* JSON path of the innermost key or element open at byte offset pos of a
 * document whose prefix [0, pos) is well-formed. A string counts as a key
 * once its colon is read, or when key_at_pos says the string ending at pos
 * is one. Caller frees. */
char *json_path_at(const char *buf, size_t len, size_t pos, bool key_at_pos);

/* Child paths: "parent.key" (or "parent[\"odd key\"]"), "parent[i]". The
 * root is "". Caller frees; NULL on allocation failure. */
char *json_path_key(const char *parent, const char *key);
char *json_path_index(const char *parent, size_t index);
/* The path as printed: the root shows as "(root)". */
const char *json_path_show(const char *path);

/* Is every key of obj (an object at path) one of keys (NULL-terminated)?
 * If not, *e is ERR_CONFIG "<path of the key>: unknown key", with
 * ` (did you mean "<known>"?)` when one edit makes it a known key. */
int json_check_keys(const json_t *obj, const char *path, const char *const *keys,
		    struct err **e);

/* An array of the strings of v; NULL when one is not valid UTF-8 (or on
 * allocation failure), so nothing is ever dropped quietly. */
json_t *json_strv(char *const *v);
/* A new NULL-terminated copy of an array of strings (no NUL inside);
 * -1 when arr is not one. *out is the caller's to free either way. */
int json_to_strv(const json_t *arr, char ***out);
/* Append s to arr; -1 when it is not valid UTF-8. */
int json_array_push_string(json_t *arr, const char *s);

/* Canonical text: compact, keys sorted, ASCII only. Caller frees. */
char *json_dump_canonical(const json_t *j);

static inline void cleanup_json_decrefp(json_t **j)
{
	json_decref(*j);
}
#define _cleanup_json_ __attribute__((cleanup(cleanup_json_decrefp)))

#endif
