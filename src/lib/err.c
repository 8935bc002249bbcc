/* err.c: error chains (see err.h). Allocation failure while building an
 * error falls back to a static error so that a refusal is never lost. */
#include "err.h"
#include "text.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

static struct err err_oom = { ERR_INTERNAL, 12, (char *)"out of memory" };

static void err_setv(struct err **e, enum err_reason reason, int errnum,
		     const char *fmt, va_list ap)
	__attribute__((format(printf, 4, 0)));

static void err_setv(struct err **e, enum err_reason reason, int errnum,
		     const char *fmt, va_list ap)
{
	char *body = NULL, *msg = NULL;
	struct err *n;

	if (vasprintf(&body, fmt, ap) < 0)
		body = NULL;
	if (body && errnum) {
		if (asprintf(&msg, "%s: %s", body, strerror(errnum)) < 0)
			msg = NULL;
		free(body);
	} else {
		msg = body;
	}
	n = calloc(1, sizeof(*n));
	if (!n || !msg) {
		free(n);
		free(msg);
		*e = &err_oom;
		return;
	}
	n->reason = reason;
	n->errnum = errnum;
	n->msg = msg;
	*e = n;
}

int err_set(struct err **e, enum err_reason reason, int errnum,
	    const char *fmt, ...)
{
	va_list ap;

	if (!e)
		return -1;
	if (*e) /* keep the first error: it is the cause */
		return -1;
	va_start(ap, fmt);
	err_setv(e, reason, errnum, fmt, ap);
	va_end(ap);
	return -1;
}

int err_wrap(struct err **e, const char *fmt, ...)
{
	char *ctx = NULL, *msg = NULL;
	va_list ap;

	if (!e || !*e || *e == &err_oom)
		return -1;
	va_start(ap, fmt);
	if (vasprintf(&ctx, fmt, ap) < 0)
		ctx = NULL;
	va_end(ap);
	if (ctx && asprintf(&msg, "%s: %s", ctx, (*e)->msg) >= 0) {
		free((*e)->msg);
		(*e)->msg = msg;
	}
	free(ctx);
	return -1;
}

int err_reclass(struct err **e, enum err_reason reason)
{
	if (e && *e && *e != &err_oom)
		(*e)->reason = reason;
	return -1;
}

const char *err_reason_name(enum err_reason reason)
{
	switch (reason) {
	case ERR_CONFIG:
		return "sandbox_config";
	case ERR_DENIED:
		return "sandbox_denied";
	case ERR_UNAVAILABLE:
		return "sandbox_unavailable";
	case ERR_USAGE:
		return "usage";
	case ERR_INTERNAL:
		break;
	}
	return "error";
}

void err_print(FILE *f, const struct err *e)
{
	if (!e)
		return;
	/* a message may name what a sandbox made: a path, a key */
	fprintf(f, "cordon: %s: ", err_reason_name(e->reason));
	text_term_puts(f, e->msg, true);
	fputc('\n', f);
}

void err_free(struct err *e)
{
	if (!e || e == &err_oom)
		return;
	free(e->msg);
	free(e);
}
