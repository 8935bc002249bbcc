/* loop.h: one event loop (epoll) for a process or a thread: fd sources,
 * timers, a child's exit (pidfd), signals (signalfd), hooks that run
 * before each sleep, a stop request. Everything is a callback; nothing
 * in the loop sleeps except epoll_wait, whose timeout is the nearest
 * timer's (no timerfd per timer).
 *
 * Sources are the caller's memory (embed them in what they serve): the
 * loop allocates nothing per source and keeps no table by fd. A source
 * removed with its *_del call is never called again, even when the kernel
 * already reported it in the round being dispatched, so a callback may
 * remove (and free) any source, its own or another's.
 *
 * Signals: a signal source blocks the signals it reads (a signalfd only
 * sees blocked ones); the mask the loop found is restored when the last
 * source is removed or the loop freed. The mask is per thread and is
 * inherited across fork and kept across exec: a child forked while a
 * signal source is live starts with those signals blocked, so it must set
 * loop_signal_mask_saved()'s mask (or its own) before it execs; threads
 * started after the first signal source inherit the blocked mask, which
 * is what a signalfd needs. The signalfd itself is O_CLOEXEC. */
#ifndef CORDON_LIB_LOOP_H
#define CORDON_LIB_LOOP_H

#include "lib/err.h"

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/epoll.h>
#include <sys/signalfd.h>

struct loop;
struct loop_fd;
struct loop_timer;
struct loop_pid;
struct loop_signal;
struct loop_hook;

/* events: EPOLL* bits as epoll reported them */
typedef void (*loop_fd_fn)(struct loop *l, struct loop_fd *s, uint32_t events);
typedef void (*loop_timer_fn)(struct loop *l, struct loop_timer *t);
/* info: the child's exit as waitid(2) reaped it; NULL when the source
 * was added with reap false (the callback reaps it itself) */
typedef void (*loop_pid_fn)(struct loop *l, struct loop_pid *s, const siginfo_t *info);
typedef void (*loop_signal_fn)(struct loop *l, struct loop_signal *s,
			       const struct signalfd_siginfo *si);
typedef void (*loop_hook_fn)(struct loop *l, struct loop_hook *h);

struct loop_fd {
	int fd;
	uint32_t events;
	loop_fd_fn cb;
	void *data;
	bool on;		/* registered */
};

struct loop_timer {
	int64_t due_ns;		/* CLOCK_MONOTONIC */
	int64_t period_ns;	/* 0: one-shot */
	uint64_t round;		/* armed in this timer round: not run in it */
	loop_timer_fn cb;
	void *data;
	struct loop_timer *next;
	bool armed;
};

struct loop_pid {
	struct loop_fd src;
	bool reap;
	loop_pid_fn cb;
	void *data;
};

struct loop_signal {
	struct loop_fd src;	/* the signalfd, the source's own */
	sigset_t set;
	loop_signal_fn cb;
	void *data;
	struct loop_signal *next;
};

struct loop_hook {
	loop_hook_fn cb;
	void *data;
	struct loop_hook *next;
	bool on;
};

int loop_new(struct loop **out, struct err **e);
/* Removes the signal sources (restoring the mask) and closes the epoll
 * set; fd, pid and timer sources are the caller's to close. NULL: nothing. */
void loop_free(struct loop *l);

/* Run rounds (hooks, wait, fd callbacks, due timers) until loop_stop or
 * loop_fail; -1 with *e when the wait fails or a callback failed. */
int loop_run(struct loop *l, struct err **e);
/* loop_run returns as soon as the running callback returns: the rest of
 * the round is not dispatched. Outside loop_run, the next loop_run
 * returns at once. */
void loop_stop(struct loop *l);
/* Stop with an error (the loop takes it); the first one is kept. */
void loop_fail(struct loop *l, struct err *err);
/* The next wait does not block (a hook with more work queued). */
void loop_dont_wait(struct loop *l);
/* CLOCK_MONOTONIC in ms, as timers count. */
int64_t loop_now_ms(void);

/* Watch fd for events (EPOLLIN, EPOLLOUT, EPOLLET, ...). The fd stays
 * the caller's. Closing it ends the kernel's registration without
 * loop_fd_del; events already fetched for the round are then still
 * delivered, so such a caller keeps the source valid until the round
 * ends (loop_fd_del drops them instead). */
int loop_fd_add(struct loop *l, struct loop_fd *s, int fd, uint32_t events, loop_fd_fn cb,
		void *data, struct err **e);
int loop_fd_mod(struct loop *l, struct loop_fd *s, uint32_t events, struct err **e);
void loop_fd_del(struct loop *l, struct loop_fd *s);
/* s's fd was closed already: the round's events for it are dropped, and
 * no epoll_ctl is made (the fd's number may be another source's now). */
void loop_fd_closed(struct loop *l, struct loop_fd *s);

/* Arm t to fire after after_ms, then every period_ms (0: once). Arming
 * an armed timer moves it. A timer armed from a timer callback does not
 * fire in the same round, even with after_ms 0. */
void loop_timer_start(struct loop *l, struct loop_timer *t, int64_t after_ms,
		      int64_t period_ms, loop_timer_fn cb, void *data);
void loop_timer_stop(struct loop *l, struct loop_timer *t);
/* For a hook that knows its next deadline: the loop wakes within ms
 * (0: the next wait does not block; -1: t sets no deadline), and the
 * hook runs again before the wait after it. t is the hook's own. */
void loop_wake_in(struct loop *l, struct loop_timer *t, int ms);

/* The child behind pidfd exits: cb once, and the source is removed
 * before it runs. reap: the loop reaps it (waitid P_PIDFD) first; a
 * failed waitid fails the loop. The pidfd stays the caller's. */
int loop_pid_add(struct loop *l, struct loop_pid *s, int pidfd, bool reap, loop_pid_fn cb,
		 void *data, struct err **e);
void loop_pid_del(struct loop *l, struct loop_pid *s);

/* The signals in set, blocked from now on and read from a signalfd: cb
 * once per signal delivered. */
int loop_signal_add(struct loop *l, struct loop_signal *s, const sigset_t *set,
		    loop_signal_fn cb, void *data, struct err **e);
void loop_signal_del(struct loop *l, struct loop_signal *s);
/* The mask the thread had before the first signal source: what a child
 * forked from here sets before it execs. false: no signal source yet (the
 * thread's mask is its own). */
bool loop_signal_mask_saved(const struct loop *l, sigset_t *out);

/* cb before every wait, in the order added; a hook may remove any hook. */
void loop_hook_add(struct loop *l, struct loop_hook *h, loop_hook_fn cb, void *data);
void loop_hook_del(struct loop *l, struct loop_hook *h);

#endif
