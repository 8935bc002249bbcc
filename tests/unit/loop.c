/* loop.c (test): lib/loop's sources and rounds: fd readiness, timers in
 * due order (one-shot and periodic), a timer cancelled from inside a
 * callback, a source removed (and freed) by another callback of the same
 * round, a child's exit through its pidfd, a signal through the signalfd
 * and the mask given back, hooks before each wait, stop and fail. Every
 * wait is bounded by a timer that fails the case, so a broken loop fails
 * and never hangs; no case asserts a duration. */
#include "lib/loop.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define GUARD_MS 10000

static bool guard_fired;

/* A case's setup (a loop, pipes) failed: nothing after it can be told. */
static void must(bool cond, const char *what)
{
	if (!cond) {
		printf("Bail out! %s\n", what);
		exit(1);
	}
}

static struct loop *new_loop(void)
{
	struct loop *l = NULL;

	must(loop_new(&l, NULL) == 0, "loop_new");
	return l;
}

static void guard(struct loop *l, struct loop_timer *t)
{
	(void)t;
	guard_fired = true;
	loop_stop(l);
}

/* The loop with a guard armed; run it and disarm the guard. */
static int run_guarded(struct loop *l)
{
	struct loop_timer g = { 0 };
	int r;

	guard_fired = false;
	loop_timer_start(l, &g, GUARD_MS, 0, guard, NULL);
	r = loop_run(l, NULL);
	loop_timer_stop(l, &g);
	return r;
}

static int calls;
static uint32_t last_events;

static void on_readable(struct loop *l, struct loop_fd *s, uint32_t events)
{
	char c;

	calls++;
	last_events = events;
	if (read(s->fd, &c, 1) == 1 && c == 'x')
		*(int *)s->data = 1;
	loop_stop(l);
}

static void test_fd(void)
{
	struct loop *l = NULL;
	struct loop_fd s = { 0 };
	int p[2], seen = 0;

	l = new_loop();
	must(pipe2(p, O_CLOEXEC | O_NONBLOCK) == 0, "pipe2");
	ok(loop_fd_add(l, &s, p[0], EPOLLIN, on_readable, &seen, NULL) == 0, "fd: watched");
	calls = 0;
	ok(write(p[1], "x", 1) == 1, "fd: written");
	run_guarded(l);
	ok(!guard_fired && calls == 1 && seen == 1 && (last_events & EPOLLIN),
	   "fd: the readable end's callback ran once with EPOLLIN and its data");
	/* removed: a readable fd is no longer dispatched */
	loop_fd_del(l, &s);
	ok(write(p[1], "x", 1) == 1, "fd: written again");
	calls = 0;
	run_guarded(l);
	ok(guard_fired && calls == 0, "fd: a removed source is not called");
	struct err *e = NULL;
	ok(loop_fd_add(l, &s, -1, EPOLLIN, on_readable, NULL, &e) < 0 && e && e->errnum == EBADF,
	   "fd: a bad fd is refused with its errno");
	err_free(e);
	close(p[0]);
	close(p[1]);
	loop_free(l);
}

static char order[16];
static size_t n_order;

static void mark(struct loop *l, struct loop_timer *t)
{
	if (n_order < sizeof(order) - 1)
		order[n_order++] = *(const char *)t->data;
	if (*(const char *)t->data == 'z')
		loop_stop(l);
}

static void tick(struct loop *l, struct loop_timer *t)
{
	mark(l, t);
	if (++calls == 3)
		loop_timer_stop(l, t); /* a periodic timer cancels itself */
}

static void test_timer_order(void)
{
	struct loop *l = NULL;
	struct loop_timer a = { 0 }, b = { 0 }, c = { 0 }, z = { 0 }, p = { 0 };

	l = new_loop();
	n_order = 0;
	memset(order, 0, sizeof(order));
	loop_timer_start(l, &a, 30, 0, mark, "a");
	loop_timer_start(l, &b, 10, 0, mark, "b");
	loop_timer_start(l, &c, 20, 0, mark, "c");
	loop_timer_start(l, &z, 200, 0, mark, "z");
	run_guarded(l);
	is_str(order, "bcaz", "timers: fired in due order, not in the order armed");
	/* moved: arming an armed timer moves it */
	n_order = 0;
	memset(order, 0, sizeof(order));
	loop_timer_start(l, &a, 10, 0, mark, "a");
	loop_timer_start(l, &b, 20, 0, mark, "b");
	loop_timer_start(l, &a, 40, 0, mark, "a");
	loop_timer_start(l, &z, 60, 0, mark, "z");
	run_guarded(l);
	is_str(order, "baz", "timers: a re-armed timer fires once, at its new time");
	/* periodic, three times, then it stops itself */
	n_order = 0;
	calls = 0;
	memset(order, 0, sizeof(order));
	loop_timer_start(l, &p, 1, 5, tick, "p");
	loop_timer_start(l, &z, 100, 0, mark, "z");
	run_guarded(l);
	is_str(order, "pppz", "timers: a periodic timer fires until it stops itself");
	ok(!p.armed && !a.armed && !z.armed, "timers: none left armed");
	loop_free(l);
}

static struct loop_timer *victim;

static void cancel_other(struct loop *l, struct loop_timer *t)
{
	mark(l, t);
	loop_timer_stop(l, victim);
}

static void rearm_now(struct loop *l, struct loop_timer *t)
{
	mark(l, t);
	/* at 0 ms, from its own callback: not again in this round */
	if (n_order < 3)
		loop_timer_start(l, t, 0, 0, rearm_now, t->data);
	else
		loop_stop(l);
}

static void test_timer_cancel(void)
{
	struct loop *l = NULL;
	struct loop_timer a = { 0 }, b = { 0 }, z = { 0 };

	l = new_loop();
	n_order = 0;
	memset(order, 0, sizeof(order));
	/* both due in the same round: a runs first and cancels b */
	loop_timer_start(l, &a, 0, 0, cancel_other, "a");
	loop_timer_start(l, &b, 0, 0, mark, "b");
	loop_timer_start(l, &z, 50, 0, mark, "z");
	victim = &b;
	run_guarded(l);
	is_str(order, "az", "cancel: a timer stopped by another's callback in its round never fires");
	n_order = 0;
	memset(order, 0, sizeof(order));
	loop_timer_start(l, &a, 0, 0, rearm_now, "r");
	run_guarded(l);
	is_str(order, "rrr", "cancel: a timer re-armed at 0 from its callback fires on later rounds");
	ok(!guard_fired, "cancel: without the guard");
	loop_free(l);
}

/* Two readable fds in one round: the first called removes the other and
 * frees it (ASan would see a call through freed memory). */
struct victim_fd {
	struct loop_fd s;
	struct victim_fd *other;
	int fd;
};

static int removed_calls;
static struct victim_fd *survivor;

static void remove_other(struct loop *l, struct loop_fd *s, uint32_t events)
{
	struct victim_fd *v = s->data;

	(void)events;
	removed_calls++;
	if (v->other) {
		loop_fd_del(l, &v->other->s);
		v->other->other = NULL;
		free(v->other);
		v->other = NULL;
		survivor = v;
	}
}

static void stop_now(struct loop *l, struct loop_timer *t)
{
	(void)t;
	loop_stop(l);
}

static void test_remove_in_round(void)
{
	struct loop *l = NULL;
	struct loop_timer z = { 0 };
	int p[2], q[2];
	struct victim_fd *a = calloc(1, sizeof(*a)), *b = calloc(1, sizeof(*b));

	l = new_loop();
	must(pipe2(p, O_CLOEXEC) == 0 && pipe2(q, O_CLOEXEC) == 0 && a && b, "pipe2");
	a->other = b;
	b->other = a;
	loop_fd_add(l, &a->s, p[0], EPOLLIN, remove_other, a, NULL);
	loop_fd_add(l, &b->s, q[0], EPOLLIN, remove_other, b, NULL);
	ok(write(p[1], "x", 1) == 1 && write(q[1], "x", 1) == 1, "remove: both readable");
	removed_calls = 0;
	/* a timer due at once ends the run after the round with both events */
	loop_timer_start(l, &z, 0, 0, stop_now, NULL);
	run_guarded(l);
	is_int(removed_calls, 1, "remove: the source removed in the round is not called in it");
	/* the survivor is still watched; level-triggered, it runs again */
	loop_timer_start(l, &z, 0, 0, stop_now, NULL);
	run_guarded(l);
	is_int(removed_calls, 2, "remove: the one that removed it is still watched");
	/* whichever survived is freed here */
	free(survivor);
	for (int i = 0; i < 2; i++) {
		close(p[i]);
		close(q[i]);
	}
	loop_free(l);
}

static int exit_status = -1;

static void on_exit_cb(struct loop *l, struct loop_pid *s, const siginfo_t *info)
{
	(void)s;
	if (info && info->si_code == CLD_EXITED)
		exit_status = info->si_status;
	loop_stop(l);
}

static void test_pid(void)
{
	struct loop *l = NULL;
	struct loop_pid s = { 0 };
	int fd;
	pid_t pid;

	l = new_loop();
	pid = fork();
	if (pid == 0)
		_exit(7);
	fd = (int)syscall(SYS_pidfd_open, pid, 0);
	ok(fd >= 0, "pid: pidfd_open");
	ok(loop_pid_add(l, &s, fd, true, on_exit_cb, NULL, NULL) == 0, "pid: watched");
	run_guarded(l);
	is_int(exit_status, 7, "pid: the child's exit status, reaped by the loop");
	ok(!s.src.on, "pid: the source removed itself");
	errno = 0;
	ok(waitpid(pid, NULL, WNOHANG) < 0 && errno == ECHILD, "pid: nothing left to reap");
	close(fd);
	loop_free(l);
}

static int got_signal;

static void on_signal(struct loop *l, struct loop_signal *s, const struct signalfd_siginfo *si)
{
	(void)s;
	got_signal = (int)si->ssi_signo;
	loop_stop(l);
}

static bool blocked(int sig)
{
	sigset_t now;

	sigprocmask(SIG_SETMASK, NULL, &now);
	return sigismember(&now, sig) == 1;
}

static void test_signal(void)
{
	struct loop *l = NULL;
	struct loop_signal s = { 0 };
	sigset_t set, saved;

	l = new_loop();
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	ok(!blocked(SIGUSR1), "signal: SIGUSR1 not blocked before");
	ok(loop_signal_add(l, &s, &set, on_signal, NULL, NULL) == 0, "signal: watched");
	ok(blocked(SIGUSR1), "signal: blocked while watched");
	ok(loop_signal_mask_saved(l, &saved) && sigismember(&saved, SIGUSR1) == 0,
	   "signal: the saved mask (a child's before exec) does not block it");
	kill(getpid(), SIGUSR1);
	run_guarded(l);
	is_int(got_signal, SIGUSR1, "signal: read from the signalfd");
	loop_free(l);
	ok(!blocked(SIGUSR1), "signal: the mask given back when the loop is freed");
}

static int hook_calls, hook_waits;

static void hook(struct loop *l, struct loop_hook *h)
{
	hook_calls++;
	if (hook_calls < 3) {
		loop_dont_wait(l); /* more work: the wait must not block */
	} else {
		loop_hook_del(l, h);
		loop_stop(l);
	}
}

static struct loop_timer wake_t;

/* Woken by its own deadline (5 ms), then at once (0), then stops. */
static void wake_hook(struct loop *l, struct loop_hook *h)
{
	hook_calls++;
	if (hook_calls == 1)
		loop_wake_in(l, &wake_t, 5);
	else if (hook_calls == 2)
		loop_wake_in(l, &wake_t, 0);
	else {
		loop_wake_in(l, &wake_t, -1);
		loop_hook_del(l, h);
		loop_stop(l);
	}
}

static void test_wake_in(void)
{
	struct loop *l = NULL;
	struct loop_hook h = { 0 };

	l = new_loop();
	loop_hook_add(l, &h, wake_hook, NULL);
	hook_calls = 0;
	run_guarded(l);
	ok(!guard_fired && hook_calls == 3 && !wake_t.armed,
	   "wake_in: a hook's deadline wakes the loop, 0 does not wait, -1 disarms");
	loop_free(l);
}

static void test_hook_and_stop(void)
{
	struct loop *l = NULL;
	struct loop_hook h = { 0 };
	struct loop_fd a = { 0 }, b = { 0 };
	int p[2], q[2];
	struct err *e = NULL;

	l = new_loop();
	loop_hook_add(l, &h, hook, NULL);
	hook_calls = hook_waits = 0;
	run_guarded(l);
	ok(!guard_fired && hook_calls == 3 && !h.on,
	   "hook: before each wait, its dont_wait honoured, removed by itself");
	/* stop: the rest of the round is not dispatched */
	must(pipe2(p, O_CLOEXEC) == 0 && pipe2(q, O_CLOEXEC) == 0, "pipe2");
	loop_fd_add(l, &a, p[0], EPOLLIN, on_readable, &hook_waits, NULL);
	loop_fd_add(l, &b, q[0], EPOLLIN, on_readable, &hook_waits, NULL);
	ok(write(p[1], "y", 1) == 1 && write(q[1], "y", 1) == 1, "stop: two readable");
	calls = 0;
	run_guarded(l);
	ok(!guard_fired && calls == 1, "stop: the loop returns after the callback that stopped it");
	/* stopped outside a run: the next run returns at once */
	loop_stop(l);
	calls = 0;
	ok(loop_run(l, NULL) == 0 && calls == 0, "stop: a stop before the run ends it at once");
	/* fail: the error comes out of loop_run */
	struct err *f = NULL;
	err_set(&f, ERR_INTERNAL, 0, "a callback failed");
	loop_fail(l, f);
	ok(loop_run(l, &e) < 0 && e && strcmp(e->msg, "a callback failed") == 0,
	   "fail: loop_run returns -1 with the callback's error");
	err_free(e);
	for (int i = 0; i < 2; i++) {
		close(p[i]);
		close(q[i]);
	}
	loop_free(l);
}

int main(void)
{
	test_fd();
	test_timer_order();
	test_timer_cancel();
	test_remove_in_round();
	test_pid();
	test_signal();
	test_hook_and_stop();
	test_wake_in();
	return done_testing();
}
