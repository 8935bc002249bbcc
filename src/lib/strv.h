/* strv.h: NULL-terminated string vectors, owned element by element. */
#ifndef CORDON_LIB_STRV_H
#define CORDON_LIB_STRV_H

#include <stdbool.h>
#include <stddef.h>

size_t strv_len(char *const *v);
/* Append a copy of s; returns -1 (errno ENOMEM) on failure. */
int strv_push(char ***v, const char *s);
/* Append s itself, taking ownership (freed on failure). */
int strv_push_take(char ***v, char *s);
bool strv_contains(char *const *v, const char *s);
char **strv_dup(char *const *v);
void strv_free(char **v);
/* Sort in place with strcmp and drop adjacent duplicates. */
void strv_sort_unique(char **v);

#endif
