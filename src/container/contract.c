/* contract.c: the helpers every container provider and the lifecycle
 * share (contract.h): a provider's plan part, the run between create and
 * wait, the host label, what an image reference must be. */
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

/* Between create and wait: what the helper and discard are given. */
struct provider_run {
	const struct plan *p;
	const struct plan_paths *paths;
	json_t *pin;
	container_discard_fn discard;
};

int container_run_create(container_make_fn make, container_discard_fn discard,
			 const struct plan *p, const struct plan_paths *paths,
			 const struct provider_launch *pl, struct provider_run **run, json_t **pin,
			 struct err **e)
{
	struct provider_run *r = NULL;

	if (make(p, paths, pl, pin, e) < 0)
		return -1;
	if (!(r = malloc(sizeof(*r)))) {
		if (discard)
			discard(paths, *pin);
		json_decref(*pin);
		*pin = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "container");
	}
	*r = (struct provider_run){ p, paths, json_incref(*pin), discard };
	*run = r;
	return 0;
}

int container_run_wait(container_helper_fn helper, struct provider_run *run,
		       struct provider_exit *x, struct err **e)
{
	bool interrupted = false;
	int code = helper(run->p, run->paths, run->pin, &interrupted, e);

	json_decref(run->pin);
	free(run);
	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code, .interrupted = interrupted };
	return 0;
}

void container_run_discard(container_discard_fn discard, struct provider_run *run)
{
	if (discard)
		discard(run->paths, run->pin);
	container_run_release(run);
}

void container_run_release(struct provider_run *run)
{
	json_decref(run->pin);
	free(run);
}

int container_run_resume(container_helper_fn helper, const struct plan *p,
			 const struct plan_paths *paths, const json_t *pin, struct provider_exit *x,
			 struct err **e)
{
	bool interrupted = false;
	int code = helper(p, paths, pin, &interrupted, e);

	if (code < 0)
		return -1;
	*x = (struct provider_exit){ .code = code, .interrupted = interrupted };
	return 0;
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
