/* inner.c: see inner.h. The order is the native child's, less what
 * srt has done already (namespaces, mounts): descriptors, the sandbox's
 * cgroups or RLIMIT_NPROC, capabilities,
 * no_new_privs, Landlock, then the seccomp filter, which comes last so
 * that every step before it may still make any call it needs. */
#include "sandbox/inner.h"
#include "sandbox/confine/harden.h"
#include "sandbox/confine/landlock.h"
#include "sandbox/confine/seccomp.h"
#include "sandbox/limits.h"

#include <errno.h>
#include <linux/seccomp.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

static int step_failed(struct err **e, const char *step, int errnum)
{
	return err_set(e, ERR_UNAVAILABLE, errnum, "%s", step);
}

static int apply_landlock(const struct inner_layer *c, struct err **e)
{
	int abi = confine_landlock_abi();
	const char *step = NULL;
	size_t failed = 0;

	if (abi < LANDLOCK_ABI_FLOOR)
		return step_failed(e, "landlock: not available in this kernel", EOPNOTSUPP);
	if (c->scope && abi < LANDLOCK_ABI_SCOPE)
		return err_set(e, ERR_UNAVAILABLE, EOPNOTSUPP,
			       "landlock: scopes need ABI %d, the kernel has %d",
			       LANDLOCK_ABI_SCOPE, abi);
	if (confine_landlock_apply_paths(c->write, c->n_write, c->deny, c->read, abi, true,
					&failed, &step) == 0)
		return 0;
	if (step && strcmp(step, "landlock: write grant") == 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "landlock: write grant `%s`",
			       c->write[failed]);
	return step_failed(e, step ? step : "landlock", errno);
}

/* The command leads a process group of its own, as under native: srt
 * ends everything with SIGKILL when it is told to stop, so the host
 * reaches the command's own handlers by signalling this group (the one
 * group beneath srt whose leader does not lead a session). Left as it is
 * when the command is in a terminal's foreground, which would otherwise
 * stop it at its first read; srt starts commands in a new session,
 * without one. */
static void own_group(void)
{
	if (isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp())
		return;
	(void)setpgid(0, 0); /* fails only for a session leader, which leads its group */
}

/* Into the sandbox's cgroups (srt binds them writable; Landlock below
 * leaves them read-only to the command), or the pids limit as
 * RLIMIT_NPROC where srt's user namespace is the sandbox's own. */
static int apply_limits(const struct inner_layer *c, struct err **e)
{
	const char *why = NULL;

	for (size_t i = 0; i < c->n_cgroups; i++)
		if (limits_join_dir(c->cgroups[i]) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "limits: join the cgroup `%s`",
				       c->cgroups[i]);
	if (!c->pids)
		return 0;
	if (!limits_nproc_usable(&why))
		return c->pids_strict ? err_set(e, ERR_UNAVAILABLE, 0,
						"limits.pids: RLIMIT_NPROC cannot hold it here: %s",
						why) : 0;
	if (setrlimit(RLIMIT_NPROC, &(struct rlimit){ c->pids, c->pids }) < 0)
		return step_failed(e, "limits: set RLIMIT_NPROC", errno);
	return 0;
}

int inner_layer_exec(const struct inner_layer *c, struct err **e)
{
	struct confine_filter f = { 0 };
	struct sock_fprog prog;
	const char *step = NULL;
	int err;

	/* Nothing srt or its helpers left open reaches the command. */
	if (harden_close_all() < 0)
		return step_failed(e, "close inherited descriptors", errno);
	if (!c->argv || !c->argv[0])
		return err_set(e, ERR_UNAVAILABLE, 0, "no command");
	if (apply_limits(c, e) < 0)
		return -1;
	/* Compiled while every call is still allowed; loaded last. */
	if (confine_seccomp_compile(c->unix_all, &f, e) < 0)
		return -1;
	if (harden_drop_caps_any(&step) < 0) {
		err = errno;
		confine_filter_free(&f);
		return step_failed(e, step, err);
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0) {
		err = errno;
		confine_filter_free(&f);
		return step_failed(e, "set no_new_privs", err);
	}
	if (apply_landlock(c, e) < 0) {
		confine_filter_free(&f);
		return -1;
	}
	prog = (struct sock_fprog){ .len = f.len, .filter = f.insns };
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) < 0) {
		err = errno;
		confine_filter_free(&f);
		return step_failed(e, "load the seccomp filter", err);
	}
	confine_filter_free(&f);
	own_group();
	execvp(c->argv[0], c->argv);
	err = errno;
	err_set(e, ERR_UNAVAILABLE, err, "exec `%s`", c->argv[0]);
	return harden_exec_status(err);
}
