/* loop.c: the event loop (see loop.h). One round: the hooks, one
 * epoll_wait bounded by the nearest timer, the fd callbacks of what it
 * returned, then the timers that are due. The round's events stay in the
 * loop so that removing a source can drop the ones not dispatched yet. */
#include "lib/loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define BATCH 256

struct loop {
	int ep;
	bool stop, dont_wait;
	struct err *failed;
	struct epoll_event batch[BATCH];
	int batch_n, batch_i;		/* the round's events, the next to dispatch */
	struct loop_timer *timers;	/* armed, by due time */
	uint64_t timer_round;
	struct loop_hook *hooks, *hook_next;	/* hook_next: the walk's cursor */
	struct loop_signal *signals;
	sigset_t saved_mask;
	bool mask_saved;
};

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t loop_now_ms(void)
{
	return now_ns() / 1000000;
}

int loop_new(struct loop **out, struct err **e)
{
	struct loop *l = calloc(1, sizeof(*l));

	if (!l)
		return err_set(e, ERR_INTERNAL, ENOMEM, "event loop");
	l->ep = epoll_create1(EPOLL_CLOEXEC);
	if (l->ep < 0) {
		int saved = errno;

		free(l);
		return err_set(e, ERR_UNAVAILABLE, saved, "event loop: epoll");
	}
	*out = l;
	return 0;
}

void loop_free(struct loop *l)
{
	if (!l)
		return;
	while (l->signals)
		loop_signal_del(l, l->signals);
	err_free(l->failed);
	close(l->ep);
	free(l);
}

void loop_stop(struct loop *l)
{
	l->stop = true;
}

void loop_fail(struct loop *l, struct err *err)
{
	if (l->failed)
		err_free(err);
	else
		l->failed = err;
	l->stop = true;
}

void loop_dont_wait(struct loop *l)
{
	l->dont_wait = true;
}

/* ---- fd sources ---- */

int loop_fd_add(struct loop *l, struct loop_fd *s, int fd, uint32_t events, loop_fd_fn cb,
		void *data, struct err **e)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	*s = (struct loop_fd){ .fd = fd, .events = events, .cb = cb, .data = data };
	if (epoll_ctl(l->ep, EPOLL_CTL_ADD, fd, &ev) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "event loop: watch fd %d", fd);
	s->on = true;
	return 0;
}

int loop_fd_mod(struct loop *l, struct loop_fd *s, uint32_t events, struct err **e)
{
	struct epoll_event ev = { .events = events, .data.ptr = s };

	if (epoll_ctl(l->ep, EPOLL_CTL_MOD, s->fd, &ev) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "event loop: watch fd %d", s->fd);
	s->events = events;
	return 0;
}

/* The round's events for s that are not dispatched yet are dropped: s
 * may be freed as soon as this returns. */
static void forget(struct loop *l, const void *s)
{
	for (int i = l->batch_i; i < l->batch_n; i++)
		if (l->batch[i].data.ptr == s)
			l->batch[i].data.ptr = NULL;
}

void loop_fd_del(struct loop *l, struct loop_fd *s)
{
	if (!s->on)
		return;
	/* the fd may be closed already: the kernel dropped it then */
	epoll_ctl(l->ep, EPOLL_CTL_DEL, s->fd, NULL);
	s->on = false;
	forget(l, s);
}

void loop_fd_closed(struct loop *l, struct loop_fd *s)
{
	if (!s->on)
		return;
	s->on = false;
	forget(l, s);
}

/* ---- timers ---- */

static void timer_unlink(struct loop *l, struct loop_timer *t)
{
	struct loop_timer **pp = &l->timers;

	while (*pp && *pp != t)
		pp = &(*pp)->next;
	if (*pp)
		*pp = t->next;
	t->next = NULL;
	t->armed = false;
}

static void timer_link(struct loop *l, struct loop_timer *t)
{
	struct loop_timer **pp = &l->timers;

	while (*pp && (*pp)->due_ns <= t->due_ns)
		pp = &(*pp)->next;
	t->next = *pp;
	*pp = t;
	t->armed = true;
	t->round = l->timer_round;
}

void loop_timer_start(struct loop *l, struct loop_timer *t, int64_t after_ms,
		      int64_t period_ms, loop_timer_fn cb, void *data)
{
	if (t->armed)
		timer_unlink(l, t);
	t->cb = cb;
	t->data = data;
	t->period_ns = period_ms > 0 ? period_ms * 1000000 : 0;
	t->due_ns = now_ns() + (after_ms > 0 ? after_ms * 1000000 : 0);
	timer_link(l, t);
}

void loop_timer_stop(struct loop *l, struct loop_timer *t)
{
	if (t->armed)
		timer_unlink(l, t);
}

static void wake_only(struct loop *l, struct loop_timer *t)
{
	(void)l;
	(void)t;
}

void loop_wake_in(struct loop *l, struct loop_timer *t, int ms)
{
	if (ms > 0) {
		loop_timer_start(l, t, ms, 0, wake_only, NULL);
		return;
	}
	loop_timer_stop(l, t);
	if (ms == 0)
		loop_dont_wait(l);
}

/* The wait's timeout: the nearest timer's, rounded up to a whole ms so
 * that a wake is never early (an early wake would wait again at 0). */
static int timeout_ms(const struct loop *l)
{
	int64_t d;

	if (l->dont_wait)
		return 0;
	if (!l->timers)
		return -1;
	d = l->timers->due_ns - now_ns();
	if (d <= 0)
		return 0;
	d = (d + 999999) / 1000000;
	return d > INT32_MAX ? INT32_MAX : (int)d;
}

/* Every timer due now, once, in due order; a timer armed from one of
 * them waits for the next round. Each is unlinked (or re-armed) before
 * its callback, which may then stop or move any timer. */
static void run_timers(struct loop *l)
{
	int64_t now = now_ns();

	l->timer_round++;
	while (!l->stop) {
		struct loop_timer *t = l->timers;

		while (t && t->due_ns <= now && t->round == l->timer_round)
			t = t->next;
		if (!t || t->due_ns > now)
			return;
		timer_unlink(l, t);
		if (t->period_ns) {
			t->due_ns += t->period_ns;
			if (t->due_ns <= now) /* late: no burst to catch up */
				t->due_ns = now + t->period_ns;
			timer_link(l, t);
		}
		t->cb(l, t);
	}
}

/* ---- pid sources ---- */

static void pid_ready(struct loop *l, struct loop_fd *fs, uint32_t events)
{
	struct loop_pid *s = fs->data;
	siginfo_t info;

	(void)events;
	/* a pidfd stays readable once the child is gone: once is all */
	loop_fd_del(l, &s->src);
	if (!s->reap) {
		s->cb(l, s, NULL);
		return;
	}
	memset(&info, 0, sizeof(info));
	while (waitid(P_PIDFD, (id_t)s->src.fd, &info, WEXITED) < 0) {
		struct err *err = NULL;

		if (errno == EINTR)
			continue;
		err_set(&err, ERR_UNAVAILABLE, errno, "event loop: reap a child");
		loop_fail(l, err);
		return;
	}
	s->cb(l, s, &info);
}

int loop_pid_add(struct loop *l, struct loop_pid *s, int pidfd, bool reap, loop_pid_fn cb,
		 void *data, struct err **e)
{
	s->reap = reap;
	s->cb = cb;
	s->data = data;
	return loop_fd_add(l, &s->src, pidfd, EPOLLIN, pid_ready, s, e);
}

void loop_pid_del(struct loop *l, struct loop_pid *s)
{
	loop_fd_del(l, &s->src);
}

/* ---- signal sources ---- */

static void signal_ready(struct loop *l, struct loop_fd *fs, uint32_t events)
{
	struct loop_signal *s = fs->data;
	struct signalfd_siginfo si;

	(void)events;
	/* one a turn: the fd is level-triggered, the next comes next round */
	if (read(s->src.fd, &si, sizeof(si)) == (ssize_t)sizeof(si))
		s->cb(l, s, &si);
}

/* The saved mask plus every live source's signals. */
static void mask_apply(struct loop *l)
{
	sigset_t m = l->saved_mask;

	for (struct loop_signal *s = l->signals; s; s = s->next)
		for (int sig = 1; sig < NSIG; sig++)
			if (sigismember(&s->set, sig) == 1)
				sigaddset(&m, sig);
	sigprocmask(SIG_SETMASK, &m, NULL);
}

int loop_signal_add(struct loop *l, struct loop_signal *s, const sigset_t *set,
		    loop_signal_fn cb, void *data, struct err **e)
{
	sigset_t before;
	int fd;

	sigprocmask(SIG_BLOCK, set, &before);
	if (!l->mask_saved) {
		l->saved_mask = before;
		l->mask_saved = true;
	}
	fd = signalfd(-1, set, SFD_CLOEXEC | SFD_NONBLOCK);
	if (fd < 0) {
		int saved = errno;

		mask_apply(l);
		return err_set(e, ERR_UNAVAILABLE, saved, "event loop: signalfd");
	}
	s->set = *set;
	s->cb = cb;
	s->data = data;
	if (loop_fd_add(l, &s->src, fd, EPOLLIN, signal_ready, s, e) < 0) {
		close(fd);
		mask_apply(l);
		return -1;
	}
	s->next = l->signals;
	l->signals = s;
	return 0;
}

void loop_signal_del(struct loop *l, struct loop_signal *s)
{
	struct loop_signal **pp = &l->signals;

	while (*pp && *pp != s)
		pp = &(*pp)->next;
	if (!*pp)
		return;
	*pp = s->next;
	s->next = NULL;
	loop_fd_del(l, &s->src);
	close(s->src.fd);
	s->src.fd = -1;
	mask_apply(l);
}

bool loop_signal_mask_saved(const struct loop *l, sigset_t *out)
{
	if (!l->mask_saved)
		return false;
	*out = l->saved_mask;
	return true;
}

/* ---- hooks ---- */

void loop_hook_add(struct loop *l, struct loop_hook *h, loop_hook_fn cb, void *data)
{
	struct loop_hook **pp = &l->hooks;

	if (h->on)
		return;
	while (*pp)
		pp = &(*pp)->next;
	*h = (struct loop_hook){ .cb = cb, .data = data, .on = true };
	*pp = h;
}

void loop_hook_del(struct loop *l, struct loop_hook *h)
{
	struct loop_hook **pp = &l->hooks;

	if (!h->on)
		return;
	while (*pp && *pp != h)
		pp = &(*pp)->next;
	if (*pp)
		*pp = h->next;
	if (l->hook_next == h)
		l->hook_next = h->next;
	h->next = NULL;
	h->on = false;
}

static void run_hooks(struct loop *l)
{
	l->hook_next = l->hooks;
	while (l->hook_next && !l->stop) {
		struct loop_hook *h = l->hook_next;

		l->hook_next = h->next;
		h->cb(l, h);
	}
	l->hook_next = NULL;
}

/* ---- the rounds ---- */

static int round_once(struct loop *l, struct err **e)
{
	int n;

	run_hooks(l);
	if (l->stop)
		return 0;
	n = epoll_wait(l->ep, l->batch, BATCH, timeout_ms(l));
	l->dont_wait = false;
	if (n < 0) {
		if (errno == EINTR)
			return 0;
		return err_set(e, ERR_UNAVAILABLE, errno, "event loop: wait");
	}
	l->batch_n = n;
	for (l->batch_i = 0; l->batch_i < l->batch_n && !l->stop;) {
		struct epoll_event *ev = &l->batch[l->batch_i++];
		struct loop_fd *s = ev->data.ptr;

		if (s)
			s->cb(l, s, ev->events);
	}
	l->batch_n = l->batch_i = 0;
	if (!l->stop)
		run_timers(l);
	return 0;
}

int loop_run(struct loop *l, struct err **e)
{
	while (!l->stop)
		if (round_once(l, e) < 0)
			return -1;
	l->stop = false;
	if (l->failed) {
		if (e && !*e)
			*e = l->failed;
		else
			err_free(l->failed);
		l->failed = NULL;
		return -1;
	}
	return 0;
}
