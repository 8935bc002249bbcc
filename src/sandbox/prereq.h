/* prereq.h: what the native sandbox needs of the kernel, checked before
 * every launch and reported by `cordon doctor`. A launch refuses
 * (sandbox_unavailable) when any check fails; there is no degraded mode.
 * The srt provider's doctor reports the checks it shares (user
 * namespaces, seccomp) from the same run, and the limits theirs in the
 * same shape. */
#ifndef CORDON_SANDBOX_PREREQ_H
#define CORDON_SANDBOX_PREREQ_H

#include "lib/err.h"

#include <stdbool.h>

enum prereq_status { PREREQ_PASS, PREREQ_WARN, PREREQ_FAIL };

struct prereq_check {
	const char *id;		/* "kernel", "userns", "landlock", "seccomp", ... */
	enum prereq_status status;
	char detail[512];	/* what was found */
	char fix[256];		/* what to do, for a warn or fail; "" otherwise */
};

#define PREREQ_MAX 8

struct prereq_report {
	struct prereq_check checks[PREREQ_MAX];
	int n;
	int landlock_abi;	/* 0 when unavailable */
};

/* Run every check, as the calling user. Never fails itself: each problem
 * is a check with status PREREQ_FAIL. */
void prereq_run(struct prereq_report *r);

/* 0 when every check passes (warnings allowed); otherwise -1 with an
 * ERR_UNAVAILABLE error naming the first failed check and its fix. */
int prereq_require(const struct prereq_report *r, struct err **e);


#endif
