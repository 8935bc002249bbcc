/* wrapper.h: `cordon wrap`, the host-side process a daemon segment runs
 * under. Over a control socket (SOCK_SEQPACKET, one message each way and
 * then a byte) it takes a request: {"policy": <a policy document>,
 * "workspace", "state_dir", "execution", "segment", "argv", "provider",
 * "quiet", "job_dirs"}; it prepares the launch (host/launch.h), records and pins the
 * plan with itself as the root, durably, and writes its stamp; it answers
 * {"execution", "record", "segment", "digest", "summary", "provider",
 * "pid"} (or {"error": <reason>, "message"} and exits 125); then it
 * launches only when the next byte is 'g', in a session and process group
 * of its own. When the command ends it writes the exit file and exits
 * with the command's status. The environment it was started with is the
 * command's, through the policy's env filter: a secret travels only
 * there, by a name the policy passes. Its stdout and stderr (the job's
 * log) are the host's: what it launches writes to a pipe it drains into
 * the log (host/logdrain.h). */
#ifndef CORDON_HOST_WRAPPER_H
#define CORDON_HOST_WRAPPER_H

#include <stdbool.h>

/* In the record dir: {"pid", "start_ticks"} of the wrapper, and
 * {"code"[, "error", "message"]} once the segment ended (both 0444). */
#define HOST_WRAPPER_STAMP "wrapper.json"
#define HOST_WRAPPER_EXIT "exit.json"

struct err;
/* The exit file: code, and the refusal (reason and message) when there
 * was one, interrupted when a container got a TERM the host did not
 * send. Said on stderr when it cannot be written. */
void host_wrapper_write_exit(const char *record_dir, int code, const struct err *refusal,
			     bool interrupted);
/* Everything above; ctl is the control socket. The provider is the
 * program's (its registry: a container launch is refused by a program
 * without container providers). Returns the exit status. */
int host_wrapper_main(int ctl);

#endif
