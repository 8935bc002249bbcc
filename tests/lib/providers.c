/* tests/lib/providers.c: the provider registry of a test program (a unit
 * test, a fuzz target): cordon's own (src/cordon.c), so that the
 * library's lookups find what cordon would. */
#include "sandbox/providers.h"

const struct provider *const providers[] = { SANDBOX_PROVIDERS, NULL };
