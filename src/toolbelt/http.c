/* http.c: the daemon's shared HTTP pieces (see http.h). */
#include "toolbelt/http.h"

#include "lib/cleanup.h"
#include "lib/json.h"

#include <stdlib.h>
#include <string.h>

enum MHD_Result hostd_answer(struct MHD_Connection *c, unsigned int status, json_t *j)
{
	_cleanup_free_ char *text = j ? json_dumps(j, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	struct MHD_Response *r;
	enum MHD_Result ret;

	json_decref(j);
	if (!text)
		return MHD_NO;
	r = MHD_create_response_from_buffer(strlen(text), text, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, "Content-Type", "application/json");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* Every reason either server refuses with, and its status: cordon's own
 * (lib/err.h's names: a config or usage the request brought, a denial,
 * something unavailable) and the servers' (the request itself, who asks,
 * what it names, the state the job is in). */
static const struct {
	const char *reason;
	unsigned int status;
} statuses[] = {
	{ "sandbox_config", 400 },	{ "usage", 400 },	   { "bad_request", 400 },
	{ "unauthorized", 401 },	{ "sandbox_denied", 403 }, { "not_found", 404 },
	{ "not_accepting", 409 },	{ "job_running", 409 },	   { "nothing_to_attach", 409 },
	{ "attach_sandboxed", 409 },	{ "sandbox_unavailable", 503 },
};

unsigned int hostd_status_of(const char *reason)
{
	for (size_t i = 0; reason && i < sizeof(statuses) / sizeof(*statuses); i++)
		if (strcmp(statuses[i].reason, reason) == 0)
			return statuses[i].status;
	return 500;
}

enum MHD_Result hostd_fail_status(struct MHD_Connection *c, unsigned int status,
				  const char *reason, const char *msg)
{
	return hostd_answer(c, status, json_pack("{s:s, s:s}", "error", reason, "message", msg));
}

enum MHD_Result hostd_fail(struct MHD_Connection *c, const char *reason, const char *msg)
{
	return hostd_fail_status(c, hostd_status_of(reason), reason, msg);
}

bool hostd_body_step(void **con_cls, const char *upload, size_t *upload_size, size_t max,
		     enum MHD_Result *ret)
{
	struct hostd_body *b = *con_cls;

	if (!b) {
		b = calloc(1, sizeof(*b));
		*con_cls = b;
		*ret = b ? MHD_YES : MHD_NO;
		return false;
	}
	if (*upload_size) {
		*ret = MHD_YES;
		if (!b->too_big && b->n + *upload_size <= max) {
			char *p = realloc(b->p, b->n + *upload_size + 1);

			if (!p) {
				*ret = MHD_NO;
				return false;
			}
			memcpy(p + b->n, upload, *upload_size);
			b->p = p;
			b->n += *upload_size;
			b->p[b->n] = '\0';
		} else {
			b->too_big = true;
		}
		*upload_size = 0;
		return false;
	}
	return true;
}

void hostd_body_done(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode why)
{
	struct hostd_body *b = *con_cls;

	if (b) {
		free(b->p);
		free(b);
	}
	*con_cls = NULL;
}
