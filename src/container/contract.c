/* contract.c: the helpers of the container contract (contract.h) every
 * provider and the lifecycle share: finding a provider by the name a pin
 * or config gives, a provider's plan part, the host label, what an image
 * reference must be. */
#include "container/contract.h"

#include "lib/sha256.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int container_host_label(const char *state_dir, char out[17], struct err **e)
{
	char hex[SHA256_HEX_LEN + 1];

	if (sha256_hex(state_dir, strlen(state_dir), hex) < 0)
		return err_set(e, ERR_INTERNAL, 0, "host label");
	memcpy(out, hex, 16);
	out[16] = '\0';
	return 0;
}

void container_state_clear(struct container_state *st)
{
	if (!st)
		return;
	free(st->started_at);
	st->started_at = NULL;
}

const struct container_provider *container_provider_find(const struct container_provider *const *known,
							 const char *name)
{
	for (size_t i = 0; name && known && known[i]; i++)
		if (strcmp(known[i]->name, name) == 0)
			return known[i];
	return NULL;
}

int container_plan_part(struct plan *p, json_t *part, const char *where, struct err **e)
{
	char *summary = NULL;

	if (!part || json_object_set_new(p->data, "container", part) < 0)
		return err_set(e, ERR_CONFIG, 0, "the container plan cannot be recorded (not UTF-8?)");
	if (asprintf(&summary, "%s: %s", where, p->summary) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "container plan");
	free(p->summary);
	p->summary = summary;
	p->signals = PLAN_SIGNALS_TERM;
	return 0;
}

const struct container_provider *container_of(const struct container_provider *const *known,
					      const json_t *obj, struct err **e)
{
	const char *name = json_string_value(json_object_get(obj, "provider"));
	const struct container_provider *p = container_provider_find(known, name);

	if (!p)
		err_set(e, ERR_UNAVAILABLE, 0, "the container provider `%s` is not in this program",
			name ? name : "(none)");
	return p;
}

bool container_image_pinned(const char *image)
{
	const char *at = strstr(image, "@sha256:"), *hex = NULL;

	if (strncmp(image, "sha256:", 7) == 0)
		hex = image + 7;
	else if (at && at != image)
		hex = at + 8;
	if (!hex || strlen(hex) != 64 || strspn(hex, "0123456789abcdef") != 64)
		return false;
	/* the name before a digest: no space, no control, no second '@' */
	for (const char *p = image; at && p < at; p++)
		if (*p <= ' ' || *p == '@' || *p == 0x7f)
			return false;
	return true;
}
