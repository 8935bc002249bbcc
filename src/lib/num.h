/* num.h: strict number parsing: decimal digits only, the whole string,
 * no sign, no overflow. */
#ifndef CORDON_LIB_NUM_H
#define CORDON_LIB_NUM_H

/* 0 and *out on success; -1 (errno EINVAL or ERANGE) otherwise. */
int num_parse_ulong(const char *s, unsigned long max, unsigned long *out);

#endif
