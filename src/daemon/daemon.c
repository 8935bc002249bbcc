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
#include <sys/signalfd.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

int64_t hostd_wall_ms(void)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

/* --- segments ----------------------------------------------------------- */

int hostd_watch_add(struct hostd *d, int fd, struct watch *w)
{
	struct epoll_event ev = { .events = EPOLLIN, .data.ptr = w };

	return epoll_ctl(d->epfd, EPOLL_CTL_ADD, fd, &ev);
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
	for (int *fd = (int[]){ s->ctl, s->pidfd, s->grace_fd }, i = 0; i < 3; i++)
		if (fd[i] >= 0) {
			epoll_ctl(d->epfd, EPOLL_CTL_DEL, fd[i], NULL);
			close(fd[i]);
		}
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

int hostd_daemon_main(const char *state_dir, const char *config_path)
{
	struct hostd d = { .epfd = -1, .sfd = -1, .lfd = -1, .rfd = -1, .lockfd = -1 };
	_cleanup_err_ struct err *e = NULL;
	_cleanup_free_ char *priv = NULL, *runs = NULL, *ws = NULL, *dbp = NULL;
	struct host_config *cfg = NULL;
	int64_t last_follow = 0;
	sigset_t set;
	int rc = 125;

	d.state = realpath(state_dir, NULL);
	if (!d.state && hostd_own_dir(state_dir, &e) == 0)
		d.state = realpath(state_dir, NULL);
	d.config = strdup(config_path);
	d.self = hostd_cordon_beside();
	if (!d.state || !d.config || !d.self) {
		if (!e)
			err_set(&e, ERR_UNAVAILABLE, errno, "state dir `%s`", state_dir);
		goto out;
	}
	if (asprintf(&priv, "%s/private", d.state) < 0 || asprintf(&runs, "%s/runs", d.state) < 0 ||
	    asprintf(&ws, "%s/workspaces", d.state) < 0 ||
	    asprintf(&dbp, "%s/%s", d.state, HOSTD_DB) < 0) {
		err_set(&e, ERR_INTERNAL, ENOMEM, "paths");
		goto out;
	}
	if (hostd_own_dir(d.state, &e) < 0 || hostd_own_dir(priv, &e) < 0 ||
	    hostd_own_dir(runs, &e) < 0 || hostd_own_dir(ws, &e) < 0 || hostd_lock_state(&d, &e) < 0 ||
	    hostd_token(&d, &e) < 0)
		goto out;
	/* the config is checked now; it is read again for each launch */
	if (host_config_load(d.config, &cfg, &e) < 0)
		goto out;
	host_config_free(cfg);
	/* the loop's epoll first: recovery watches the wrappers it adopts */
	d.epfd = epoll_create1(EPOLL_CLOEXEC);
	if (d.epfd < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
		goto out;
	}
	/* the toolbelt first: a segment adopted takes its job's up again */
	if (toolbelt_new(d.state, hostd_tb_call, &d, &d.tb, &e) < 0)
		goto out;
	d.wtb = (struct watch){ .kind = W_TOOLBELT, .seg = NULL };
	if (hostd_watch_add(&d, toolbelt_fd(d.tb), &d.wtb) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the toolbelt");
		goto out;
	}
	if (host_db_open(dbp, &d.db, &e) < 0 || host_db_running(d.db, hostd_recover_one, &d, &e) < 0)
		goto out;
	hostd_settle_unlaunched(&d);
	hostd_sweep_toolbelts(&d);
	if (hostd_listen_socket(&d, &e) < 0)
		goto out;
	sigemptyset(&set);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGHUP);
	sigprocmask(SIG_BLOCK, &set, NULL);
	signal(SIGPIPE, SIG_IGN);
	d.sfd = signalfd(-1, &set, SFD_CLOEXEC);
	d.mhd = MHD_start_daemon(MHD_USE_EPOLL | MHD_USE_ERROR_LOG | MHD_ALLOW_SUSPEND_RESUME, 0, NULL, NULL, hostd_api_request, &d,
				 MHD_OPTION_LISTEN_SOCKET, d.lfd, MHD_OPTION_NOTIFY_COMPLETED,
				 hostd_on_completed, &d, MHD_OPTION_CONNECTION_LIMIT, 256U,
				 MHD_OPTION_CONNECTION_TIMEOUT, 60U, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
				 (size_t)(128 * 1024), MHD_OPTION_END);
	if (d.sfd < 0 || !d.mhd) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the management API");
		goto out;
	}
	d.wapi = (struct watch){ .kind = W_API, .seg = NULL };
	d.wsig = (struct watch){ .kind = W_SIGNAL, .seg = NULL };
	const union MHD_DaemonInfo *di = MHD_get_daemon_info(d.mhd, MHD_DAEMON_INFO_EPOLL_FD);
	if (!di || hostd_watch_add(&d, di->epoll_fd, &d.wapi) < 0 || hostd_watch_add(&d, d.sfd, &d.wsig) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
		goto out;
	}
	d.rfd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
	d.wrec = (struct watch){ .kind = W_RECONCILE, .seg = NULL };
	if (d.rfd < 0 ||
	    timerfd_settime(d.rfd, 0,
			    &(struct itimerspec){ .it_value = { RECONCILE_S, 0 },
						  .it_interval = { RECONCILE_S, 0 } },
			    NULL) < 0 ||
	    hostd_watch_add(&d, d.rfd, &d.wrec) < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "the reconcile timer");
		goto out;
	}
	hostd_reconcile(&d);
	fprintf(stderr, "cordon: daemon: serving %s/%s\n", d.state, HOSTD_SOCKET);
	for (;;) {
		struct epoll_event ev[16];
		MHD_UNSIGNED_LONG_LONG to = 0;
		int timeout = MHD_get_timeout(d.mhd, &to) == MHD_YES ? (int)(to > 1000 ? 1000 : to)
								   : 1000;
		int n;
		bool stop = false;

		if (d.followers && timeout > FOLLOW_MS)
			timeout = FOLLOW_MS;
		n = epoll_wait(d.epfd, ev, 16, timeout);
		if (d.followers && hostd_wall_ms() - last_follow >= FOLLOW_MS) {
			last_follow = hostd_wall_ms();
			hostd_follow_resume(&d);
		}

		if (n < 0 && errno != EINTR) {
			err_set(&e, ERR_UNAVAILABLE, errno, "the event loop");
			goto out;
		}
		for (int i = 0; i < n; i++) {
			struct watch *w = ev[i].data.ptr;

			if (w->kind == W_SIGNAL) {
				struct signalfd_siginfo si;

				if (read(d.sfd, &si, sizeof(si)) == (ssize_t)sizeof(si) &&
				    si.ssi_signo != SIGHUP)
					stop = true;
			} else if (w->kind == W_CTL) {
				hostd_on_answer(&d, w->seg);
			} else if (w->kind == W_ATTACH) {
				hostd_on_attach_answer(&d, w->att);
			} else if (w->kind == W_GRACE) {
				hostd_on_grace(&d, w->seg);
			} else if (w->kind == W_TOOLBELT) {
				toolbelt_run(d.tb);
			} else if (w->kind == W_RECONCILE) {
				uint64_t ticks;

				(void)!read(d.rfd, &ticks, sizeof(ticks));
				hostd_reconcile(&d);
			} else if (w->kind == W_PIDFD) {
				hostd_on_exit_of(&d, w->seg);
				break; /* the segment (and its watches) may be gone */
			}
		}
		MHD_run(d.mhd);
		toolbelt_run(d.tb); /* (its connections' timeouts) */
		if (stop)
			break;
	}
	/* The wrappers (and the jobs under them) outlive the daemon. */
	rc = 0;
out:
	if (e)
		err_print(stderr, e);
	if (d.mhd) {
		/* a suspended connection is resumed before the server stops */
		hostd_follow_resume(&d);
		for (struct attaching *a = d.attaches; a; a = a->next)
			if (a->c && !a->status)
				MHD_resume_connection(a->c);
		MHD_stop_daemon(d.mhd);
	}
	toolbelt_free(d.tb);
	while (d.segs) {
		struct seg *s = d.segs;

		d.segs = s->next;
		if (s->ctl >= 0)
			close(s->ctl);
		if (s->pidfd >= 0)
			close(s->pidfd);
		free(s->record);
		free(s);
	}
	while (d.attaches) {
		struct attaching *a = d.attaches;

		d.attaches = a->next;
		if (a->ctl >= 0)
			close(a->ctl);
		json_decref(a->answer);
		free(a);
	}
	if (d.lfd >= 0)
		close(d.lfd);
	if (d.epfd >= 0)
		close(d.epfd);
	if (d.sfd >= 0)
		close(d.sfd);
	if (d.rfd >= 0)
		close(d.rfd);
	if (d.lockfd >= 0)
		close(d.lockfd);
	host_db_close(d.db);
	free(d.state);
	free(d.config);
	free(d.self);
	return rc;
}
