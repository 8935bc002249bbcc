/* seccomp.h: cordon's system call filter, shared by every sandbox layer
 * (the native child, `cordon confine`), compiled with libseccomp in the
 * launcher (before any namespace exists) into a BPF program the child
 * only has to load. */
#ifndef CORDON_SANDBOX_CONFINE_SECCOMP_H
#define CORDON_SANDBOX_CONFINE_SECCOMP_H

#include "lib/err.h"

#include <linux/filter.h>
#include <stdbool.h>

struct confine_filter {
	struct sock_filter *insns;
	unsigned short len;
};

/* unix_all: leave socket(AF_UNIX) open ("unix_sockets": "all"). */
int confine_seccomp_compile(bool unix_all, struct confine_filter *out,
			    struct err **e);
void confine_filter_free(struct confine_filter *f);

#endif
