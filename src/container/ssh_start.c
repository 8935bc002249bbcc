/* ssh_start.c: the SSH provider's start helper, on the host's word (in
 * the segment's wrapper, which stays in the executor's group). ssh runs
 * in a process group of its own, on this process's stdin, stdout and
 * stderr, with the toolbelt's socket forwarded to the same path on the
 * remote; the remote starts the stub in a session of its own. TERM, INT
 * and HUP are recorded as the host's and then sent to the stub over a
 * second connection (retried until the run has started). When ssh ends,
 * the run's status is asked of the remote: a run a lost connection left
 * running is stopped (TERM, then KILL to its group after ten seconds),
 * its changes are copied back, and the helper fails (125), as it does
 * when the run never started or its status or changes cannot be read: a
 * segment never reports success with its work left on the remote. Then
 * the run's records and copies there are removed. */
#include "container/ssh.h"
#include "container/ssh_int.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define STOP_GRACE_MS 10000

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void nap_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
}

static const char *sig_name(int sig)
{
	return sig == SIGTERM ? "TERM" : sig == SIGINT ? "INT" : sig == SIGHUP ? "HUP" : NULL;
}

/* A run a lost connection left running: TERM, then KILL to its group
 * after the grace; 0 once the remote says it is not running. */
static int stop_left_running(const struct ssh_conn *c, const json_t *pin, struct err **e)
{
	struct ssh_run_status st;
	long long until = now_ms() + STOP_GRACE_MS;

	if (ssh_signal_run(c, pin, "TERM", false, e) < 0)
		return -1;
	do {
		nap_ms(200);
		if (ssh_status(c, pin, &st, e) < 0)
			return -1;
		if (st.state != CONTAINER_RUNNING)
			return 0;
	} while (now_ms() < until);
	if (ssh_signal_run(c, pin, "KILL", true, e) < 0)
		return -1;
	for (int i = 0; i < 50; i++) {
		nap_ms(200);
		if (ssh_status(c, pin, &st, e) < 0)
			return -1;
		if (st.state != CONTAINER_RUNNING)
			return 0;
	}
	return err_set(e, ERR_UNAVAILABLE, 0,
		       "container_stop_unverified: the remote run still runs after KILL");
}

/* Run ssh (the start script) until it ends, passing signals on. */
static int run_attached(const struct ssh_conn *c, const json_t *pin, const struct plan_paths *paths,
			const char *toolbelt_dir, int sfd, struct err **e)
{
	_cleanup_free_ char *sock = NULL, *fwd = NULL;
	_cleanup_close_ int pidfd = -1;
	char started[32];
	char *fwds[2] = { NULL, NULL };
	int pending[8], npending = 0, status;
	pid_t pid = -1;

	if (toolbelt_dir) {
		if (asprintf(&sock, "%s/toolbelt.sock", toolbelt_dir) < 0 ||
		    asprintf(&fwd, "%s:%s", sock, sock) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh start");
		if (access(sock, F_OK) == 0)
			fwds[0] = fwd;
	}
	snprintf(started, sizeof(started), "%lld", now_ms());
	char *const args[] = { (char *)json_string_value(json_object_get(pin, "container")),
			       (char *)json_string_value(json_object_get(pin, "container")), started,
			       NULL };
	struct ssh_io io = { 0, 1, 2 };
	if (ssh_spawn(c, ssh_script_start, args, fwds, &io, true, &pid, e) < 0)
		return -1;
	if ((pidfd = (int)syscall(SYS_pidfd_open, pid, 0)) < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh start: pidfd");
	}
	for (;;) {
		struct pollfd p[2] = { { sfd, POLLIN, 0 }, { pidfd, POLLIN, 0 } };
		int n = poll(p, 2, npending ? 200 : -1);

		if (n < 0 && errno != EINTR)
			break;
		if (n > 0 && (p[0].revents & POLLIN)) {
			struct signalfd_siginfo si;

			if (read(sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
			    sig_name((int)si.ssi_signo) && npending < 8) {
				struct err *se = NULL;

				/* recorded first: every signal the run gets
				 * through the host is there */
				if (container_record_signal(paths, (int)si.ssi_signo, &se) < 0)
					err_print(stderr, se);
				err_free(se);
				pending[npending++] = (int)si.ssi_signo;
			}
		}
		/* send what is pending; not started yet: again later */
		while (npending > 0) {
			struct err *se = NULL;
			int r = ssh_signal_run(c, pin, sig_name(pending[0]), false, &se);

			if (r < 0)
				err_print(stderr, se);
			err_free(se);
			if (r == 1)
				break;
			memmove(pending, pending + 1, (size_t)--npending * sizeof(*pending));
		}
		if (n > 0 && (p[1].revents & POLLIN))
			break;
	}
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return err_set(e, ERR_UNAVAILABLE, errno, "ssh start: wait");
	return 0;
}

int ssh_start(const struct plan *p, const struct plan_paths *paths, const json_t *pin,
	      bool *interrupted, struct err **e)
{
	const json_t *pc = json_object_get(p->data, "container");
	struct ssh_conn c = { 0 };
	struct ssh_run_status st = { 0 };
	_cleanup_close_ int sfd = -1;
	int code = -1;
	bool lost = false;

	*interrupted = false;
	if (!pc || ssh_conn_from_pin(&c, pin, e) < 0)
		goto out;
	if ((sfd = container_helper_signals(e)) < 0)
		goto remove;
	if (run_attached(&c, pin, paths, json_string_value(json_object_get(pc, "toolbelt_dir")), sfd,
			 e) < 0)
		goto remove;
	/* ssh ended: how is the run? (the answer may take a moment to be
	 * there: the connection can end before the stub's status is
	 * written, never the other way) */
	for (int i = 0;; i++) {
		if (ssh_status(&c, pin, &st, e) < 0)
			goto remove;
		if (st.state != CONTAINER_RUNNING || i >= 10)
			break;
		nap_ms(100);
	}
	if (st.state == CONTAINER_RUNNING) {
		lost = true;
		if (stop_left_running(&c, pin, e) < 0)
			goto remove;
		if (ssh_status(&c, pin, &st, e) < 0)
			goto remove;
	}
	if (st.state == CONTAINER_GONE || st.state == CONTAINER_CREATED) {
		err_set(e, ERR_UNAVAILABLE, 0, "the run never started on the remote");
		goto remove;
	}
	if (ssh_copy_back(&c, pc, pin, paths, e) < 0)
		goto remove;
	if (lost) {
		err_set(e, ERR_UNAVAILABLE, 0,
			"the connection to the remote was lost: the run was stopped and its changes "
			"copied back");
		goto remove;
	}
	code = st.code;
	*interrupted = st.term && !container_host_sent_term(paths);
remove:
	/* its status is known (or never will be): its records and copies go */
	if (c.known_hosts) {
		struct err *re = NULL;

		if (ssh_remove(pin, &re) < 0) {
			err_wrap(&re, "remove the run on the remote");
			err_print(stderr, re);
		}
		err_free(re);
	}
out:
	ssh_conn_clear(&c);
	return code;
}
