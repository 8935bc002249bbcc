/* http.h: what the daemon's two servers (the management API and the
 * toolbelt, below it) share: JSON answers and a request body gathered
 * within a bound, over libmicrohttpd. */
#ifndef CORDON_TOOLBELT_HTTP_H
#define CORDON_TOOLBELT_HTTP_H

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* Queue j (taken) as a JSON answer with status. */
enum MHD_Result hostd_answer(struct MHD_Connection *c, unsigned int status, json_t *j);
/* The HTTP status a refusal's reason answers with, on both servers: one
 * table (http.c). A reason it does not name answers 500. */
unsigned int hostd_status_of(const char *reason);
/* {"error": reason, "message": msg} with the reason's status. */
enum MHD_Result hostd_fail(struct MHD_Connection *c, const char *reason, const char *msg);
/* The same with another status than the reason's: only for the few
 * answers whose status clients depend on as it is (each call says why). */
enum MHD_Result hostd_fail_status(struct MHD_Connection *c, unsigned int status,
				  const char *reason, const char *msg);

/* A request body, gathered up to max bytes (NUL-terminated). */
struct hostd_body {
	char *p;
	size_t n;
	bool too_big;
};

/* libmicrohttpd's access handler steps: the first call makes the body
 * (*con_cls), the uploads are gathered; returns true when the request is
 * complete and the caller answers it, else *ret is what to return. */
bool hostd_body_step(void **con_cls, const char *upload, size_t *upload_size, size_t max,
		     enum MHD_Result *ret);
/* MHD_OPTION_NOTIFY_COMPLETED: free the body. */
void hostd_body_done(void *cls, struct MHD_Connection *c, void **con_cls,
		     enum MHD_RequestTerminationCode why);

#endif
