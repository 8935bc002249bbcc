/* tests/fuzz/check.h: what every libFuzzer target here shares: its entry
 * point's prototype, and CHECK, which aborts on a broken invariant so
 * that libFuzzer records the input. */
#ifndef CORDON_TESTS_FUZZ_CHECK_H
#define CORDON_TESTS_FUZZ_CHECK_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond)                                                            \
	do {                                                                   \
		if (!(cond)) {                                                 \
			fprintf(stderr, "invariant broken: %s (line %d)\n",   \
				#cond, __LINE__);                              \
			abort();                                               \
		}                                                              \
	} while (0)

#endif
