/* err.h: error chains. A failing function sets an error carrying a reason
 * code (the refusal class the user sees), an errno when one applies, and a
 * message; callers prepend context as the error travels up. Library code
 * never exits: it returns -1 and fills *e. */
#ifndef CORDON_LIB_ERR_H
#define CORDON_LIB_ERR_H

#include <stdio.h>

enum err_reason {
	ERR_INTERNAL = 0,	/* cordon itself failed (I/O, memory) */
	ERR_CONFIG,		/* sandbox_config: refused at load */
	ERR_DENIED,		/* sandbox_denied: the grant or the guard says no */
	ERR_UNAVAILABLE,	/* sandbox_unavailable: cannot be enforced here */
	ERR_USAGE,		/* wrong command line */
};

struct err {
	enum err_reason reason;
	int errnum;	/* 0 when no errno applies */
	char *msg;	/* full message, context first */
};

/* Set *e (which must be NULL) and return -1. The message is formatted;
 * when errnum is non-zero ": strerror(errnum)" is appended. */
int err_set(struct err **e, enum err_reason reason, int errnum,
	    const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Prepend "context: " to *e's message and return -1. A NULL *e is left
 * alone (returns -1 all the same). */
int err_wrap(struct err **e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Change the reason of an existing error (a lower layer's I/O failure that
 * means "cannot be enforced", say). Returns -1. */
int err_reclass(struct err **e, enum err_reason reason);

const char *err_reason_name(enum err_reason reason);

/* "cordon: <reason>: <message>\n" on f. */
void err_print(FILE *f, const struct err *e);

void err_free(struct err *e);
static inline void cleanup_errp(struct err **e)
{
	err_free(*e);
}
#define _cleanup_err_ __attribute__((cleanup(cleanup_errp)))

#endif
