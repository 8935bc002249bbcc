/* seccomp.h: the native sandbox's system call filter, compiled with
 * libseccomp in the launcher (before any namespace exists) into a BPF
 * program the child only has to load. */
#ifndef CORDON_SANDBOX_NATIVE_SECCOMP_H
#define CORDON_SANDBOX_NATIVE_SECCOMP_H

#include "lib/err.h"

#include <linux/filter.h>
#include <stdbool.h>

struct native_filter {
	struct sock_filter *insns;
	unsigned short len;
};

/* unix_all: leave socket(AF_UNIX) open ("unix_sockets": "all"). */
int native_seccomp_compile(bool unix_all, struct native_filter *out,
			   struct err **e);
void native_filter_free(struct native_filter *f);

#endif
