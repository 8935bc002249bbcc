/* place.h: is this the same place? A directory (or a file) is named by
 * what its path reaches, never by how the path is spelled: the canonical
 * path (links followed the way the kernel walks them) and the device and
 * inode of its longest existing part. `ws`, `ws/`, `ws/.`, a link to ws and
 * a bind mount of ws are one place. A place beneath another counts with
 * it: whoever may write a directory may write all that is in it, and
 * replace any of it with a link. */
#ifndef CORDON_LIB_PLACE_H
#define CORDON_LIB_PLACE_H

#include "err.h"

/* Is a the place b, or inside it? Both absolute; either may not exist
 * (the part that does not is taken as written, beneath the part that
 * does). 1 yes, 0 no, -1 with *e when either cannot be resolved (a caller
 * asking to allow something takes that as a no to the thing, never as
 * "elsewhere"). */
int place_within(const char *a, const char *b, struct err **e);

/* Is a the place b, inside it, or holding it? 1, 0, -1 as above. */
int place_overlap(const char *a, const char *b, struct err **e);

#endif
