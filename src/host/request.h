/* request.h: what the management API takes in a request body, checked
 * before anything else looks at it: bounded, strict JSON, unknown keys
 * refused, strings without NUL. Every refusal is ERR_CONFIG with a fixed
 * message naming the key, never echoing a value. */
#ifndef CORDON_HOST_REQUEST_H
#define CORDON_HOST_REQUEST_H

#include "lib/err.h"

#include <stddef.h>

#define HOST_REQUEST_MAX ((size_t)64 * 1024)
/* A job's inbox (what inject leaves there, and whatever its sandbox
 * does) takes a message while it holds fewer than HOST_INBOX_MAX and at
 * most HOST_INBOX_BYTES_MAX with it. */
#define HOST_INBOX_MAX 1024U
#define HOST_INBOX_BYTES_MAX (16ULL * 1024 * 1024)

/* POST /v1/jobs: {"binding": NAME, "args"?: [STRING, ...], "input"?:
 * STRING}. *binding, *args and *input (NULL when the request gives none)
 * are the caller's to free. */
int host_job_request_parse(const char *buf, size_t len, char **binding, char ***args,
			   char **input, struct err **e);
/* POST /v1/jobs/{id}/inject: {"text": STRING}; *text the caller's. */
int host_inject_request_parse(const char *buf, size_t len, char **text, struct err **e);

#endif
