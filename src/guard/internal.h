/* internal.h: shared between the guard's own files; not a contract. */
#ifndef CORDON_GUARD_INTERNAL_H
#define CORDON_GUARD_INTERNAL_H

#include "guard/guard.h"

struct guard_state {
	const struct guard_input *in;
	struct grant *g;
	char **protected;	/* denied, with aliases */
	char **exceptions;	/* inside the protected set, still granted */
	struct path_ctx ctx;
};

/* The policy's paths, resolved for this launch. */
struct resolved {
	char **write, **deny, **allow, **sockets;
};

/* Is path inside one of the protected set's exceptions? */
bool guard_in_exception(const struct guard_state *s, const char *path);
/* The protected path that path reaches into, outside the exceptions. */
const char *guard_protected_holder(const struct guard_state *s,
				   const char *path);

int guard_merge_rules(struct guard_state *s, const struct resolved *r,
		      struct err **e);
int guard_check_rules(const struct guard_state *s, struct err **e);
int guard_check_needs(struct guard_state *s, const struct needs *n,
		      struct err **e);

#endif
