/* native.h: cordon's own Linux sandbox, the native process provider.
 *
 * A native plan runs cordon itself: `cordon sandbox-exec RECORD_DIR --
 * CMD...`. That process (the sandbox root) reads the recorded plan back,
 * verifies it against the pin, builds the sandbox from the recorded grant
 * and waits for it; so what runs is exactly what was recorded. */
#ifndef CORDON_SANDBOX_NATIVE_NATIVE_H
#define CORDON_SANDBOX_NATIVE_NATIVE_H

#include "sandbox/provider.h"

#define NATIVE_EXEC_VERB "sandbox-exec"

extern const struct provider native_provider;

/* The sandbox root: argv is this process's own (it must equal the
 * recorded plan's). Returns the exit status to exit with: the command's
 * (128+N for a signal), 126/127 when it could not be executed, 125 when
 * the sandbox could not be made (*e says why). */
int native_run(char **argv, struct err **e);

/* The provider's adopt (see provider.h). */
int native_adopt(const struct plan *p, const char *record_dir, pid_t parent,
		 pid_t root, struct err **e);

#endif
