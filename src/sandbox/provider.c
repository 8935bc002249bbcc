/* provider.c: the process providers cordon knows, by name. */
#include "sandbox/provider.h"
#include "sandbox/native/native.h"
#include "sandbox/srt/srt.h"

#include <string.h>

const char provider_names[] = "native, srt";

const struct provider *provider_find(const char *name)
{
	static const struct provider *const all[] = { &native_provider, &srt_provider, NULL };

	if (!name)
		return &native_provider;
	for (size_t i = 0; all[i]; i++)
		if (strcmp(name, all[i]->name) == 0)
			return all[i];
	return NULL;
}
