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
 * there, by a name the policy passes. */
#ifndef CORDON_HOST_WRAPPER_H
#define CORDON_HOST_WRAPPER_H

/* In the record dir: {"pid", "start_ticks"} of the wrapper, and
 * {"code"[, "error", "message"]} once the segment ended (both 0444). */
#define HOST_WRAPPER_STAMP "wrapper.json"
#define HOST_WRAPPER_EXIT "exit.json"

struct container_provider;
/* Everything above; ctl is the control socket; containers the container
 * providers this program has (NULL-terminated; NULL: none, and a
 * container launch is refused). Returns the exit status. */
int host_wrapper_main(int ctl, const struct container_provider *const *containers);

#endif
