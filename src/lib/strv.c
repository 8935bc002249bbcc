/* strv.c: NULL-terminated string vectors (see strv.h). */
#include "strv.h"
#include "cleanup.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

size_t strv_len(char *const *v)
{
	size_t n = 0;

	while (v && v[n])
		n++;
	return n;
}

int strv_push_take(char ***v, char *s)
{
	size_t n = strv_len(*v);
	char **nv;

	if (!s)
		return errno = ENOMEM, -1;
	nv = realloc(*v, (n + 2) * sizeof(*nv));
	if (!nv) {
		free(s);
		return errno = ENOMEM, -1;
	}
	nv[n] = s;
	nv[n + 1] = NULL;
	*v = nv;
	return 0;
}

int strv_push(char ***v, const char *s)
{
	return strv_push_take(v, strdup(s));
}

bool strv_contains(char *const *v, const char *s)
{
	for (size_t i = 0; v && v[i]; i++)
		if (strcmp(v[i], s) == 0)
			return true;
	return false;
}

char **strv_dup(char *const *v)
{
	char **out = calloc(1, sizeof(*out));

	if (!out)
		return NULL;
	for (size_t i = 0; v && v[i]; i++) {
		if (strv_push(&out, v[i]) < 0) {
			strv_free(out);
			return NULL;
		}
	}
	return out;
}

void strv_free(char **v)
{
	for (size_t i = 0; v && v[i]; i++)
		free(v[i]);
	free(v);
}

void cleanup_strvp(char ***v)
{
	strv_free(*v);
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

void strv_sort_unique(char **v)
{
	size_t n = strv_len(v), w = 0;

	if (n < 2)
		return;
	qsort(v, n, sizeof(*v), cmp_str);
	for (size_t r = 0; r < n; r++) {
		if (w > 0 && strcmp(v[w - 1], v[r]) == 0) {
			free(v[r]);
			continue;
		}
		v[w++] = v[r];
	}
	v[w] = NULL;
}
