/* planted_report.c: the findings of the look after a run, as lines on
 * stderr and as <record>/planted.json, every name of the command's
 * choosing made printable first. */
#include "guard/planted.h"
#include "guard/planted_int.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Printable ASCII: another byte as \xNN, a backslash doubled, so that a
 * name of the command's choosing prints as itself and nothing more. */
static char *printable(const char *s)
{
	size_t n = strlen(s);
	char *o = malloc(n * 4 + 1), *p = o;

	if (!o)
		return NULL;
	for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
		if (*c == '\\')
			p += sprintf(p, "\\\\");
		else if (*c < 0x20 || *c > 0x7e)
			p += sprintf(p, "\\x%02x", *c);
		else
			*p++ = (char)*c;
	}
	*p = '\0';
	return o;
}

void planted_add(struct findings *f, const char *path, const char *key, const char *moved_to)
{
	struct finding n = { printable(path), printable(key), moved_to ? printable(moved_to) : NULL };

	if (!n.path || !n.key || (moved_to && !n.moved_to))
		goto drop;
	for (size_t i = 0; i < f->n; i++)
		if (strcmp(f->v[i].path, n.path) == 0 && strcmp(f->v[i].key, n.key) == 0)
			goto drop_quiet;
	if (f->n == f->cap) {
		size_t cap = f->cap ? f->cap * 2 : 16;
		struct finding *v = realloc(f->v, cap * sizeof(*v));
		if (!v)
			goto drop;
		f->v = v;
		f->cap = cap;
	}
	f->v[f->n++] = n;
	return;
drop:
	f->oom = true;
drop_quiet:
	free(n.path);
	free(n.key);
	free(n.moved_to);
}

void planted_findings_clear(struct findings *f)
{
	for (size_t i = 0; i < f->n; i++) {
		free(f->v[i].path);
		free(f->v[i].key);
		free(f->v[i].moved_to);
	}
	free(f->v);
	memset(f, 0, sizeof(*f));
}

void planted_report(FILE *f, const struct findings *fs, const struct walk_stats *ws)
{
	for (size_t i = 0; i < fs->n; i++) {
		if (fs->v[i].moved_to)
			fprintf(f, "cordon: planted: %s: %s (moved to %s)\n", fs->v[i].path,
				fs->v[i].key, fs->v[i].moved_to);
		else
			fprintf(f, "cordon: planted: %s: %s\n", fs->v[i].path, fs->v[i].key);
	}
	if (!ws->complete)
		fprintf(f, "cordon: planted: %s: not looked at beyond here (the walk stops at %d entries "
			   "or %d levels)\n", ws->stopped ? ws->stopped : ".", PLANTED_WALK_MAX,
			PLANTED_DEPTH_MAX);
	if (fs->oom)
		fprintf(f, "cordon: planted: .: some findings were lost (out of memory)\n");
}

/* <record>/planted.json: the same findings, and how far the walk went. */
int planted_write_record(int rec_fd, const struct findings *fs, const struct walk_stats *ws,
			 struct err **e)
{
	_cleanup_json_ json_t *doc = NULL;
	_cleanup_free_ char *text = NULL;
	json_t *arr = json_array();

	doc = json_pack("{s:o*, s:{s:I, s:I, s:b, s:s*}}", "findings", arr, "walk", "directories",
			(json_int_t)ws->dirs, "entries", (json_int_t)ws->entries, "complete",
			ws->complete && !fs->oom, "stopped_at", ws->stopped);
	for (size_t i = 0; doc && arr && i < fs->n; i++) {
		json_t *o = json_pack("{s:s, s:s}", "path", fs->v[i].path, "key", fs->v[i].key);
		if (o && fs->v[i].moved_to)
			json_object_set_new(o, "moved_to", json_string(fs->v[i].moved_to));
		if (!o || json_array_append_new(arr, o) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "planted.json");
	}
	text = doc ? json_dumps(doc, JSON_INDENT(2) | JSON_PRESERVE_ORDER | JSON_ENSURE_ASCII) : NULL;
	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "planted.json");
	return fs_write_atomic(rec_fd, "planted.json", text, strlen(text), 0444, fs->n > 0, e);
}

