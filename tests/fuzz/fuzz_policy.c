/* tests/fuzz/fuzz_policy.c: libFuzzer target for the policy parser
 * (src/policy/policy.c, paths.c, host.c, src/lib/json.c).
 *
 * Any input: policy_parse() must return 0 or -1 with an error, never
 * crash. An accepted input must normalise to a fixed point: its canonical
 * JSON parses again, and the second canonical JSON is byte-identical to
 * the first. A refusal's message is printable ASCII only: it names a JSON
 * path, which must never carry raw bytes of the input to a terminal. Any
 * breach aborts, so libFuzzer records the input. */
#include "lib/err.h"
#include "lib/json.h"
#include "policy/policy.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The canonical text of a parsed policy; aborts on allocation failure,
 * which libFuzzer reports separately anyway. */
static char *canonical(const struct policy *p)
{
	json_t *j = policy_to_json(p);
	char *text;

	if (!j)
		abort();
	text = json_dump_canonical(j);
	json_decref(j);
	if (!text)
		abort();
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct policy *p = NULL, *again = NULL;
	struct err *e = NULL;
	char *text, *text2;

	if (policy_parse((const char *)data, size, &p, &e) < 0) {
		/* A refusal always explains itself, as sandbox_config, and
		 * leaves nothing behind. */
		if (!e || !e->msg || p)
			abort();
		if (e->reason != ERR_CONFIG && e->reason != ERR_INTERNAL)
			abort();
		for (const char *c = e->msg; *c; c++)
			if (*c < 0x20 || *c > 0x7e)
				abort();
		err_free(e);
		return 0;
	}
	if (!p || e)
		abort();

	text = canonical(p);
	if (policy_parse(text, strlen(text), &again, &e) < 0) {
		fprintf(stderr, "normalised policy refused: %s\n%s\n",
			e ? e->msg : "(no error)", text);
		abort();
	}
	text2 = canonical(again);
	if (strcmp(text, text2) != 0) {
		fprintf(stderr, "normalisation is not a fixed point:\n%s\n%s\n", text,
			text2);
		abort();
	}
	free(text2);
	free(text);
	policy_free(again);
	policy_free(p);
	return 0;
}
