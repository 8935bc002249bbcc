/* tests/fuzz/fuzz_jobreq.c: libFuzzer target for the management API's
 * job request body (src/host/request.c), which any local client of the
 * daemon's socket can send once it holds the token.
 *
 * Any input: host_job_request_parse() returns 0 with a binding name and
 * args that are NUL-free strings, or -1 with an error and nothing
 * returned, never crashes. Any breach aborts. */
#include "host/request.h"
#include "lib/strv.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *b = NULL, **a = NULL, *in = NULL;
	struct err *e = NULL;
	int r = host_job_request_parse((const char *)data, size, &b, &a, &in, &e);

	if (r == 0) {
		if (!b || !*b || e)
			abort();
		for (size_t i = 0; a && a[i]; i++)
			(void)strlen(a[i]);
	} else if (b || a || in || !e || !e->msg) {
		abort();
	}
	free(b);
	free(in);
	strv_free(a);
	err_free(e);
	return 0;
}
