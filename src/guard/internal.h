/* internal.h: shared between the guard's own files; not a contract. */
#ifndef CORDON_GUARD_INTERNAL_H
#define CORDON_GUARD_INTERNAL_H

#include "guard/guard.h"
#include "lib/procfs.h"

/* A symbolic link met while resolving one of the policy's or the
 * defaults' paths: if the sandbox may write where it lies, it could point
 * the entry elsewhere before a later launch. */
struct guard_via {
	const char *what;	/* static: "write grant", "read exception", ... */
	char *item;		/* the entry as the operator wrote it */
	char *link;		/* where the link lies, its directory resolved */
};

struct guard_state {
	const struct guard_input *in;
	struct grant *g;
	char **protected;	/* denied, with aliases */
	char **exceptions;	/* inside the protected set, still granted */
	struct path_ctx ctx;
	struct guard_via *vias;
	size_t n_vias;
	struct mountinfo_table mounts;	/* to search for aliases */
};

/* Note the links met resolving item (taking them). */
int guard_note_links(struct guard_state *s, const char *what, const char *item,
		     char **links, struct err **e);

/* The policy's paths, resolved for this launch. */
struct resolved {
	char **write, **deny, **allow, **sockets;
};

/* Is path inside one of the protected set's exceptions? */
bool guard_in_exception(const struct guard_state *s, const char *path);
/* The protected path that path reaches into, outside the exceptions. */
const char *guard_protected_holder(const struct guard_state *s,
				   const char *path);

/* No policy grant at or beneath what the executor denies. */
int guard_check_denied_needs(const struct guard_state *s, const struct resolved *r,
			     struct err **e);
int guard_merge_rules(struct guard_state *s, const struct resolved *r,
		      struct err **e);
int guard_check_rules(const struct guard_state *s, struct err **e);
int guard_check_needs(struct guard_state *s, const struct needs *n,
		      struct err **e);

#endif
