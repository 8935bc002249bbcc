/* tests/fuzz/fuzz_gitconfig.c: libFuzzer target for the git config
 * reader (src/lib/gitconfig.c), which reads files a sandboxed command
 * wrote.
 *
 * Any input: gitconfig_parse() returns 0 or -1, never crashes, and every
 * key it hands over has git's shape: a lower-case section of key
 * characters and dots, and a last part that starts with a letter and
 * holds only lower-case key characters (whatever a subsection between
 * them holds; a NUL in a subsection cuts the key there, as it does for
 * git, so the last part is checked only for input without one).
 * gitconfig_key_runs() takes every key and value. Any breach aborts, so
 * libFuzzer records the input. */
#include "lib/gitconfig.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int lower_keychar(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-';
}

static int check(const char *key, const char *value, void *ctx)
{
	const char *first = strchr(key, '.'), *last = strrchr(key, '.');
	const char *name = last ? last + 1 : key;
	const int *has_nul = ctx;

	for (const char *c = key; first && c < first; c++)
		if (!lower_keychar((unsigned char)*c) && *c != '.')
			abort();
	if (!*has_nul) {
		if (!(*name >= 'a' && *name <= 'z'))
			abort();
		for (const char *c = name; *c; c++)
			if (!lower_keychar((unsigned char)*c))
				abort();
	}
	(void)gitconfig_key_runs(key, value);
	if (value)
		(void)gitconfig_bool(value);
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t line = 0;
	int has_nul = memchr(data, 0, size) != NULL;
	int rc = gitconfig_parse((const char *)data, size, check, &has_nul, &line);

	if (rc != 0 && rc != -1)
		abort();
	if (rc == -1 && line == 0)
		abort();
	return 0;
}
