/* json.c: strict parsing and JSON paths (see json.h). */
#include "json.h"
#include "cleanup.h"
#include "strv.h"
#include "text.h"

#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KEY_SHOW_MAX ((size_t)64)

static bool key_is_plain(const char *key)
{
	if (!*key)
		return false;
	for (const char *p = key; *p; p++)
		if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-')
			return false;
	return true;
}

char *json_path_key(const char *parent, const char *key)
{
	char *out = NULL, esc[KEY_SHOW_MAX * 4 + 4];
	size_t w = 0;

	if (key_is_plain(key) && strlen(key) <= KEY_SHOW_MAX) {
		if (asprintf(&out, "%s%s%s", parent, *parent ? "." : "", key) < 0)
			return NULL;
		return out;
	}
	/* Odd keys are shown escaped and cut, never raw. */
	for (const unsigned char *p = (const unsigned char *)key;
	     *p && p < (const unsigned char *)key + KEY_SHOW_MAX; p++) {
		if (*p >= 0x20 && *p < 0x7f && *p != '"' && *p != '\\')
			esc[w++] = (char)*p;
		else
			w += (size_t)snprintf(esc + w, sizeof(esc) - w, "\\x%02x", *p);
	}
	esc[w] = '\0';
	if (asprintf(&out, "%s[\"%s%s\"]", parent, esc,
		     strlen(key) > KEY_SHOW_MAX ? "..." : "") < 0)
		return NULL;
	return out;
}

int json_check_keys(const json_t *obj, const char *path, const char *const *keys,
		    struct err **e)
{
	const char *key;
	json_t *v;

	json_object_foreach((json_t *)obj, key, v) {
		const char *near = NULL;
		size_t i;

		for (i = 0; keys[i] && strcmp(keys[i], key) != 0; i++)
			if (!near && text_one_edit(key, keys[i]))
				near = keys[i];
		if (keys[i])
			continue;
		_cleanup_free_ char *kp = json_path_key(path, key);

		if (!kp)
			return err_set(e, ERR_INTERNAL, ENOMEM, "json");
		if (near)
			return err_set(e, ERR_CONFIG, 0, "%s: unknown key (did you mean \"%s\"?)",
				       json_path_show(kp), near);
		return err_set(e, ERR_CONFIG, 0, "%s: unknown key", json_path_show(kp));
	}
	return 0;
}

char *json_path_index(const char *parent, size_t index)
{
	char *out = NULL;

	if (asprintf(&out, "%s[%zu]", parent, index) < 0)
		return NULL;
	return out;
}

const char *json_path_show(const char *path)
{
	return (path && *path) ? path : "(root)";
}

/* One open container while scanning. */
struct frame {
	bool object;
	bool expect_key;
	size_t index;
	char *key; /* last key read in an object */
};

#define SCAN_DEPTH 64

char *json_path_at(const char *buf, size_t len, size_t pos, bool key_at_pos)
{
	struct frame st[SCAN_DEPTH];
	int depth = -1;
	char *path = NULL, *last_str = NULL;
	size_t i = 0;

	if (pos > len)
		pos = len;
	memset(st, 0, sizeof(st));
	while (i < pos) {
		char c = buf[i];

		if (c == '"') {
			size_t start = ++i;
			while (i < pos && buf[i] != '"')
				i += (buf[i] == '\\') ? 2 : 1;
			/* A key counts once its colon is read: until then the
			 * string may be a misplaced value, never to be shown. */
			if (depth >= 0 && st[depth].object && st[depth].expect_key) {
				free(last_str);
				last_str = strndup(buf + start, (i < pos ? i : pos) - start);
			}
			i++;
			continue;
		}
		if ((c == '{' || c == '[') && depth + 1 < SCAN_DEPTH) {
			depth++;
			st[depth] = (struct frame){ .object = c == '{',
						    .expect_key = c == '{' };
		} else if ((c == '}' || c == ']') && depth >= 0) {
			free(st[depth].key);
			st[depth].key = NULL;
			depth--;
		} else if (c == ':' && depth >= 0 && st[depth].object) {
			if (st[depth].expect_key && last_str) {
				free(st[depth].key);
				st[depth].key = last_str;
				last_str = NULL;
			}
			st[depth].expect_key = false;
		} else if (c == ',' && depth >= 0) {
			free(last_str);
			last_str = NULL;
			if (st[depth].object)
				st[depth].expect_key = true;
			else
				st[depth].index++;
		}
		i++;
	}
	/* The parser vouches that the string just read is a key (a duplicate). */
	if (key_at_pos && depth >= 0 && st[depth].object && st[depth].expect_key && last_str) {
		free(st[depth].key);
		st[depth].key = last_str;
		last_str = NULL;
	}
	path = strdup("");
	for (int d = 0; d <= depth && path; d++) {
		char *next;

		if (st[d].object) {
			if (!st[d].key)
				break;
			next = json_path_key(path, st[d].key);
		} else {
			next = json_path_index(path, st[d].index);
		}
		free(path);
		path = next;
	}
	for (int d = 0; d <= depth; d++)
		free(st[d].key);
	free(last_str);
	return path;
}

static const char *json_error_reason(enum json_error_code code)
{
	switch (code) {
	case json_error_duplicate_key:
		return "duplicate key";
	case json_error_null_character:
	case json_error_null_byte_in_key:
		return "embedded NUL character";
	case json_error_invalid_utf8:
		return "invalid UTF-8";
	case json_error_premature_end_of_input:
		return "unexpected end of input";
	case json_error_end_of_input_expected:
		return "trailing data after the document";
	case json_error_numeric_overflow:
		return "number out of range";
	case json_error_item_not_found:
	case json_error_index_out_of_range:
	case json_error_wrong_type:
	case json_error_invalid_format:
	case json_error_invalid_syntax:
	case json_error_null_value:
	case json_error_out_of_memory:
	case json_error_stack_overflow:
	case json_error_cannot_open_file:
	case json_error_invalid_argument:
	case json_error_unknown:
	default:
		break;
	}
	return "invalid JSON";
}

json_t *json_parse_strict(const char *buf, size_t len, struct err **e)
{
	json_error_t je;
	json_t *j;

	j = json_loadb(buf, len, JSON_REJECT_DUPLICATES, &je);
	if (!j) {
		_cleanup_free_ char *path = NULL;
		size_t pos = je.position > 0 ? (size_t)je.position : 0;

		path = json_path_at(buf, len, pos,
				    json_error_code(&je) == json_error_duplicate_key);
		err_set(e, ERR_CONFIG, 0, "%s: %s (line %d, column %d)",
			json_path_show(path), json_error_reason(json_error_code(&je)),
			je.line, je.column);
		return NULL;
	}
	return j;
}

char *json_dump_canonical(const json_t *j)
{
	return json_dumps(j, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENSURE_ASCII |
				     JSON_ENCODE_ANY);
}

int json_array_push_string(json_t *arr, const char *s)
{
	return json_array_append_new(arr, json_string(s));
}

json_t *json_strv(char *const *v)
{
	json_t *arr = json_array();

	for (size_t i = 0; arr && v && v[i]; i++) {
		if (json_array_push_string(arr, v[i]) < 0) {
			json_decref(arr);
			return NULL;
		}
	}
	return arr;
}

int json_to_strv(const json_t *arr, char ***out)
{
	json_t *v;
	size_t i;

	*out = calloc(1, sizeof(char *));
	if (!*out || !json_is_array(arr))
		return -1;
	json_array_foreach(arr, i, v) {
		if (!json_is_string(v) || strlen(json_string_value(v)) != json_string_length(v) ||
		    strv_push(out, json_string_value(v)) < 0)
			return -1;
	}
	return 0;
}
