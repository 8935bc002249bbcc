/* daemon.c: `cordon daemon` (see daemon.h): its main, which sets the
 * state dir up (state.c), recovers what a previous daemon left
 * (recovery.c) and runs the one loop; and the list of the segments it
 * supervises. A job's segment runs under `cordon wrap`: the daemon hands
 * it the request, gets the pin back, opens the segment with that pin in
 * its database, and only then gives the word (spawn.c); the wrapper's
 * pidfd tells when it ended, and its exit file what came of it
 * (settle.c). */
#include "daemon/internal.h"
#include "host/config.h"
#include "host/db.h"
#include "lib/cleanup.h"
#include "toolbelt/toolbelt.h"

#include <errno.h>
#include <microhttpd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

int64_t hostd_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* --- segments ----------------------------------------------------------- */

/* The loop's: a wrapper answered (or closed its control socket). */
static void seg_answered(struct loop *l, struct loop_fd *src, uint32_t events)
{
	struct seg *s = src->data;

	(void)l;
	(void)events;
	hostd_on_answer(s->d, s);
}

/* The loop's: a wrapper (or a settle child) ended; the source is gone
 * already, and the callback reaps it (waitid in hostd_on_exit_of). */
static void seg_exited(struct loop *l, struct loop_pid *src, const siginfo_t *info)
{
	struct seg *s = src->data;

	(void)l;
	(void)info;
	hostd_on_exit_of(s->d, s);
}

int hostd_watch_ctl(struct hostd *d, struct seg *s)
{
	s->d = d;
	return loop_fd_add(d->loop, &s->ctl_src, s->ctl, EPOLLIN, seg_answered, s, NULL);
}

int hostd_watch_pid(struct hostd *d, struct seg *s)
{
	s->d = d;
	return loop_pid_add(d->loop, &s->pid_src, s->pidfd, false, seg_exited, s, NULL);
}

void hostd_seg_free(struct hostd *d, struct seg *s)
{
	for (struct seg **p = &d->segs; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	/* out of the epoll set before closing: a wrapper forked meanwhile and
	 * not yet exec'd holds copies, which would keep them in it */
	loop_fd_del(d->loop, &s->ctl_src);
	loop_pid_del(d->loop, &s->pid_src);
	loop_timer_stop(d->loop, &s->grace);
	loop_timer_stop(d->loop, &s->confirm);
	if (s->root.src.on) {
		loop_pid_del(d->loop, &s->root);
		close(s->root.src.fd);
	}
	json_decref(s->exit);
	if (s->ctl >= 0)
		close(s->ctl);
	if (s->pidfd >= 0)
		close(s->pidfd);
	free(s->record);
	free(s);
}

/* Has the job a segment this daemon runs or is starting (a retry's is
 * started before the last one is let go)? */
bool hostd_job_live(struct hostd *d, const char *job)
{
	for (struct seg *s = d->segs; s; s = s->next)
		if (strcmp(s->job, job) == 0)
			return true;
	return false;
}

/* --- the loop ------------------------------------------------------------ */

/* TERM or INT: the daemon stops once this round's API turn is taken
 * (serve); HUP does nothing. */
static void on_signal(struct loop *l, struct loop_signal *src, const struct signalfd_siginfo *si)
{
	struct hostd *d = src->data;

	(void)l;
	if (si->ssi_signo != SIGHUP)
		d->stop = true;
}

/* libmicrohttpd's epoll fd is ready: its turn comes in serve, before
 * the next wait (it takes one every round). */
static void on_api(struct loop *l, struct loop_fd *src, uint32_t events)
{
	(void)l;
	(void)src;
	(void)events;
}

static void on_reconcile(struct loop *l, struct loop_timer *t)
{
	(void)l;
	hostd_reconcile(t->data);
}

/* Before every wait: the followed logs looked at again (every FOLLOW_MS),
 * the API's turn (libmicrohttpd's connections, its resumed ones, their
 * timeouts; the toolbelt takes its own in its hook), then the stop a signal asked for; the
 * wait is bounded by libmicrohttpd's timeout, at most 1 s (FOLLOW_MS
 * while a log is followed). */
static void serve(struct loop *l, struct loop_hook *h)
{
	struct hostd *d = h->data;
	MHD_UNSIGNED_LONG_LONG to = 0;
	int timeout;

	if (d->followers && hostd_wall_ms() - d->last_follow >= FOLLOW_MS) {
		d->last_follow = hostd_wall_ms();
		hostd_follow_resume(d);
	}
	MHD_run(d->mhd);
	hostd_admit_sweep(d);
	if (d->stop) {
		loop_stop(l);
		return;
	}
	timeout = MHD_get_timeout(d->mhd, &to) == MHD_YES ? (int)(to > 1000 ? 1000 : to) : 1000;
	if (d->followers && timeout > FOLLOW_MS)
		timeout = FOLLOW_MS;
	loop_wake_in(l, &d->wake, timeout);
}

/* The API served on the loop: the signals read from it, libmicrohttpd
 * started on the listening socket (its epoll fd a source, its turn the
 * serve hook), reconcile every RECONCILE_S. */
static int serve_api(struct hostd *d, struct err **e)
{
	sigset_t set;
	bool sig_ok;

	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	/* (blocked from here, read from a signalfd) */
	sig_ok = loop_signal_add(d->loop, &d->sig, &set, on_signal, d, NULL) == 0;
	signal(SIGPIPE, SIG_IGN);
	d->mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0,
				  NULL, NULL, hostd_api_request, d, MHD_OPTION_LISTEN_SOCKET, d->lfd,
				  MHD_OPTION_NOTIFY_COMPLETED, hostd_on_completed, d,
				  MHD_OPTION_NOTIFY_CONNECTION, hostd_admit_notify, d,
				  MHD_OPTION_CONNECTION_LIMIT, 256U, MHD_OPTION_CONNECTION_TIMEOUT, 60U,
				  MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)(128 * 1024),
				  MHD_OPTION_END);
	if (!sig_ok || !d->mhd)
		return err_set(e, ERR_UNAVAILABLE, errno, "the management API");
	/* libmicrohttpd runs on its own epoll fd, a source of the loop */
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d->mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di || loop_fd_add(d->loop, &d->api, di->epoll_fd, EPOLLIN, on_api, d, NULL) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the event loop");
	loop_timer_start(d->loop, &d->reconcile, (int64_t)RECONCILE_S * 1000,
			 (int64_t)RECONCILE_S * 1000, on_reconcile, d);
	loop_hook_add(d->loop, &d->serve, serve, d);
	return 0;
}

/* The daemon's end: what it holds let go. The wrappers (and the jobs
 * under them) outlive it. */
static void teardown(struct hostd *d)
{
	if (d->mhd) {
		/* a suspended connection is resumed before the server stops */
		hostd_follow_resume(d);
		for (struct attaching *a = d->attaches; a; a = a->next)
			if (a->c && !a->status)
				MHD_resume_connection(a->c);
		MHD_stop_daemon(d->mhd);
		hostd_admit_clear(d);
	}
	toolbelt_free(d->tb);
	while (d->segs)
		hostd_seg_free(d, d->segs);
	while (d->attaches) {
		struct attaching *a = d->attaches;

		d->attaches = a->next;
		if (a->ctl >= 0)
			close(a->ctl);
		json_decref(a->answer);
		free(a);
	}
	if (d->lfd >= 0)
		close(d->lfd);
	if (d->lockfd >= 0)
		close(d->lockfd);
	/* (the signals' mask given back: the fds above are closed already) */
	loop_free(d->loop);
	host_db_close(d->db);
	free(d->state);
	free(d->config);
	free(d->self);
}

int hostd_daemon_main(const char *state_dir, const char *config_path)
{
	struct hostd d = { .lfd = -1, .lockfd = -1 };
	_cleanup_err_ struct err *e = NULL, *le = NULL;
	_cleanup_free_ char *dbp = NULL;
	int rc = 125;

	if (hostd_state_open(&d, state_dir, config_path, &dbp, &e) < 0)
		goto out;
	/* the loop first: recovery watches the wrappers it adopts */
	if (loop_new(&d.loop, &le) < 0) {
		err_set(&e, ERR_UNAVAILABLE, le ? le->errnum : 0, "the event loop");
		goto out;
	}
	/* the toolbelt first: a segment adopted takes its job's up again */
	if (toolbelt_new(d.loop, d.state, hostd_tb_call, &d, &d.tb, &e) < 0)
		goto out;
	if (host_db_open(dbp, d.history, &d.db, &e) < 0 || host_db_running(d.db, hostd_recover_one, &d, &e) < 0)
		goto out;
	hostd_settle_unlaunched(&d);
	hostd_sweep_toolbelts(&d);
	if (hostd_listen_socket(&d, &e) < 0 || serve_api(&d, &e) < 0)
		goto out;
	hostd_reconcile(&d);
	fprintf(stderr, "cordon: daemon: serving %s/%s\n", d.state, HOSTD_SOCKET);
	if (loop_run(d.loop, &le) < 0) {
		err_set(&e, ERR_UNAVAILABLE, le ? le->errnum : 0, "the event loop");
		goto out;
	}
	/* The wrappers (and the jobs under them) outlive the daemon. */
	rc = 0;
out:
	if (e)
		err_print(stderr, e);
	teardown(&d);
	return rc;
}
