/* provider.c: finding a provider among the program's (its registry,
 * `providers[]`, defined beside each main()): by name, by the name a pin
 * or config gives, and the names of one kind for messages. Nothing here
 * knows a provider by name: the registry is the only list. */
#include "provider/provider.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const struct provider *provider_find(const char *name)
{
	if (!name)
		return providers[0];
	for (size_t i = 0; providers[i]; i++)
		if (strcmp(name, providers[i]->name) == 0)
			return providers[i];
	return NULL;
}

const struct provider *provider_find_kind(const char *name, enum provider_kind kind)
{
	const struct provider *p = provider_find(name);

	return p && p->kind == kind ? p : NULL;
}

const char *provider_names(enum provider_kind kind, char *buf, size_t size)
{
	size_t used = 0;

	if (size == 0)
		return buf;
	buf[0] = '\0';
	for (size_t i = 0; providers[i]; i++) {
		int n;

		if (providers[i]->kind != kind)
			continue;
		n = snprintf(buf + used, size - used, "%s%s", used ? ", " : "", providers[i]->name);
		if (n < 0 || (size_t)n >= size - used) {
			buf[used] = '\0';	/* whole names only */
			break;
		}
		used += (size_t)n;
	}
	return buf;
}

const struct provider *provider_of(const json_t *obj, enum provider_kind kind, struct err **e)
{
	const char *name = json_string_value(json_object_get(obj, "provider"));
	const struct provider *p = name ? provider_find_kind(name, kind) : NULL;

	if (!p)
		err_set(e, ERR_UNAVAILABLE, 0, "the %sprovider `%s` is not in this program",
			kind == PROVIDER_CONTAINER ? "container " : "", name ? name : "(none)");
	return p;
}

void provider_state_clear(struct provider_state *st)
{
	if (!st)
		return;
	free(st->started_at);
	st->started_at = NULL;
}
