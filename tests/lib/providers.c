/* tests/lib/providers.c: the provider registry of a test program (a unit
 * test, a fuzz target): cordon's own (src/cordon.c), so that the
 * library's lookups find what cordon would. */
#include "provider/provider.h"
#include "sandbox/native/native.h"
#include "sandbox/none/none.h"
#include "sandbox/srt/srt.h"

const struct provider *const providers[] = { &native_provider, &srt_provider, &none_provider,
					     NULL };
