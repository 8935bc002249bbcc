/* providers.h: the providers every cordon program has, as one list for
 * each program's registry (cordon.c, cordon-host.c): the process
 * sandboxes and none. A process provider is added here, once; the
 * first is the default a launch that names none gets. */
#ifndef CORDON_SANDBOX_PROVIDERS_H
#define CORDON_SANDBOX_PROVIDERS_H

#include "sandbox/native/native.h"
#include "sandbox/none/none.h"
#include "sandbox/srt/srt.h"

#define SANDBOX_PROVIDERS &native_provider, &srt_provider, &none_provider

#endif
