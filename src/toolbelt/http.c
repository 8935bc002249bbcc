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

enum MHD_Result hostd_fail(struct MHD_Connection *c, unsigned int status, const char *reason,
			   const char *msg)
{
	return hostd_answer(c, status, json_pack("{s:s, s:s}", "error", reason, "message", msg));
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
