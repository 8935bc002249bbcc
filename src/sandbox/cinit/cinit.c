/* cinit.c: see cinit.h. pid 1's own steps and its loop; the secrets file
 * is secrets.c's, the proxies gateway/relay.c's, the command's layer
 * sandbox/inner.c's (the same that `cordon confine` applies). */
#include "sandbox/cinit/cinit.h"
#include "gateway/relay.h"
#include "sandbox/cinit/secrets.h"
#include "sandbox/forward.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/loop.h"
#include "lib/strv.h"
#include "policy/envfilter.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The command gets the signals native's pid 1 passes on, and its
 * clients are pointed at the relays (sandbox/forward.h). */

static size_t name_len(const char *entry)
{
	const char *eq = strchr(entry, '=');

	return eq ? (size_t)(eq - entry) : strlen(entry);
}

static bool named_in(const char *const *v, const char *entry)
{
	size_t n = name_len(entry);

	for (; v && *v; v++)
		if (name_len(*v) == n && strncmp(*v, entry, n) == 0)
			return true;
	return false;
}

static void push(const char **v, size_t *n, const char *s)
{
	v[(*n)++] = s;
	v[*n] = NULL;
}

/* The command's environment: the container's, each secret over a
 * variable of its name, and the proxies over everything. The vector
 * borrows its strings (the secrets' are scrubbed after the fork). */
static const char **command_env(char *const *secrets)
{
	size_t n = 0, max = strv_len(environ) + strv_len(secrets) + 9;
	const char **set = calloc(strv_len(secrets) + 9, sizeof(*set));
	const char **env = calloc(max + 1, sizeof(*env));
	size_t ns = 0;

	if (!set || !env) {
		free(set);
		free(env);
		return NULL;
	}
	for (size_t i = 0; secrets && secrets[i]; i++)
		if (!named_in(sandbox_proxy_env, secrets[i]))
			push(set, &ns, secrets[i]);
	for (size_t i = 0; sandbox_proxy_env[i]; i++)
		push(set, &ns, sandbox_proxy_env[i]);
	for (char **p = environ; p && *p; p++)
		if (strchr(*p, '=') && !named_in(set, *p))
			push(env, &n, *p);
	for (size_t i = 0; i < ns; i++)
		push(env, &n, set[i]);
	free(set);
	return env;
}

/* The child: the command in a process group of its own (as under
 * native), the terminal's foreground if pid 1 held it, signals as a new
 * process has them, then cordon's layer and the exec. */
static noreturn void run_command(const struct cinit_args *a, const char **env)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };
	struct err *e = NULL;
	sigset_t all;
	bool foreground;
	int code;

	/* SIGTTOU too, while taking the terminal from the background */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	foreground = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	(void)setpgid(0, 0);
	if (foreground)
		(void)tcsetpgrp(STDIN_FILENO, getpid());
	for (int s = 1; s < NSIG; s++)
		if (s != SIGKILL && s != SIGSTOP)
			(void)sigaction(s, &dfl, NULL); /* glibc's own refuse: EINVAL */
	sigemptyset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	environ = (char **)env;
	code = inner_layer_exec(&a->confine, &e);
	if (code < 0)
		err_print(stderr, e);
	else
		fprintf(stderr, "cordon: %s\n", e ? e->msg : "exec failed");
	/* the filter may be loaded: no exit handlers (see cli/confine.c) */
	fflush(stderr);
	_exit(code < 0 ? 125 : code);
}

/* A TERM came: say so in the run dir before passing it on, so the host
 * can tell a stop it asked for from one it did not. Once: a marker there
 * already (or anything else of that name) is left as it is. */
static void mark_term(int dirfd, const char *dir)
{
	char when[40] = "";
	struct timespec ts;
	struct tm tm;
	int fd = fs_open_nofollow(dirfd, CINIT_TERM_MARKER, O_WRONLY | O_CREAT | O_EXCL, 0644);

	if (fd < 0) {
		if (errno != EEXIST)
			fprintf(stderr, "cordon: cinit: cannot write `%s/%s`: %s\n", dir,
				CINIT_TERM_MARKER, strerror(errno));
		return;
	}
	(void)fchmod(fd, 0644); /* whatever the umask */
	clock_gettime(CLOCK_REALTIME, &ts);
	if (gmtime_r(&ts.tv_sec, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ\n", &tm);
	if (fs_write_exact(fd, when, strlen(when)) < 0)
		fprintf(stderr, "cordon: cinit: cannot write `%s/%s`: %s\n", dir,
			CINIT_TERM_MARKER, strerror(errno));
	close(fd);
}

/* The command is gone: so is everything else in the container (pid 1's
 * exit would take it anyway; this reaps it first). */
static noreturn void finish(int code)
{
	kill(-1, SIGKILL);
	while (waitpid(-1, NULL, 0) > 0 || errno == EINTR)
		;
	fflush(stderr);
	_exit(code);
}

/* What pid 1 waits for beside the relay. */
struct init_state {
	pid_t cmd;
	int dirfd;
	const char *dir;
};

static void take_signals(struct loop *l, struct loop_fd *s, uint32_t events)
{
	const struct init_state *st = s->data;
	pid_t cmd = st->cmd;
	struct signalfd_siginfo si;
	int status;
	pid_t p;

	(void)l;
	(void)events;
	if (cmd <= 0)
		return; /* no command yet (the loop runs after it starts): never kill(-1) */
	while (read(s->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo != SIGCHLD) {
			if (si.ssi_signo == SIGTERM)
				mark_term(st->dirfd, st->dir);
			kill(cmd, (int)si.ssi_signo);
			continue;
		}
		/* orphans of the container are pid 1's to reap too */
		while ((p = waitpid(-1, &status, WNOHANG)) > 0)
			if (p == cmd)
				finish(sandbox_exit_code(status));
	}
}

/* pid 1 ends in take_signals, with the command: nothing else ends the
 * loop, and a wait that fails is tried again. */
static noreturn void init_loop(struct loop *loop)
{
	for (;;) {
		struct err *le = NULL;

		loop_run(loop, &le);
		err_free(le);
	}
}

static void scrub_strvp(char ***v)
{
	if (*v) {
		envfilter_scrub(*v);
		strv_free(*v);
	}
}

static void relay_freep(struct relay **r)
{
	relay_free(*r);
}

static void loop_freep(struct loop **l)
{
	loop_free(*l);
}

static int failed(struct err **e, const char *what, int errnum)
{
	err_set(e, ERR_UNAVAILABLE, errnum, "%s", what);
	err_print(stderr, *e);
	return 125;
}

int cinit_run(const struct cinit_args *a)
{
	__attribute__((cleanup(scrub_strvp))) char **secrets = NULL;
	__attribute__((cleanup(loop_freep))) struct loop *loop = NULL;
	__attribute__((cleanup(relay_freep))) struct relay *r = NULL;
	_cleanup_close_ int dirfd = -1, sfd = -1;
	_cleanup_err_ struct err *e = NULL;
	struct loop_fd sig = { .fd = -1 };
	/* filled in once the command runs: the loop first runs then */
	struct init_state st = { .cmd = -1, .dirfd = -1 };
	const char **env;
	sigset_t mask;
	pid_t cmd;

	/* kill(-1) at the end must reach no one outside the container */
	if (getpid() != 1)
		return failed(&e, "cinit: not pid 1 (it is a container's init)", 0);
	/* Signals wait on the signalfd from the start: none is lost, or
	 * acted on by default, before the command runs. */
	sigemptyset(&mask);
	sigaddset(&mask, SIGCHLD);
	sigfwd_add(&mask, SIGFWD_COMMAND);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN); /* a relay's peer may go at any time */
	/* The command runs as the same user: it may not open pid 1's
	 * memory, environment or descriptors through /proc/1. */
	if (prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) < 0)
		return failed(&e, "cinit: make pid 1 undumpable", errno);
	if (loop_new(&loop, &e) < 0) {
		int errnum = e->errnum;

		err_free(e);
		e = NULL;
		return failed(&e, "cinit: watch signals", errnum);
	}
	if ((sfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK)) < 0 ||
	    loop_fd_add(loop, &sig, sfd, EPOLLIN, take_signals, &st, NULL) < 0)
		return failed(&e, "cinit: watch signals", errno);

	/* 1. the secrets, out of the run dir before anything runs */
	dirfd = fs_open_nofollow(AT_FDCWD, a->run_dir, O_PATH | O_DIRECTORY, 0);
	if (dirfd < 0) {
		err_set(&e, ERR_UNAVAILABLE, errno, "cinit: the run dir `%s`%s", a->run_dir,
			errno == ELOOP ? " (a symbolic link on the way?)" : "");
		err_print(stderr, e);
		return 125;
	}
	if (secrets_take(dirfd, a->run_dir, &secrets, &e) < 0) {
		err_wrap(&e, "cinit: secrets");
		err_print(stderr, e);
		return 125;
	}
	/* 2. the proxies */
	if (relay_new(loop, a->channel, &r, &e) < 0) {
		err_wrap(&e, "cinit: proxies");
		err_print(stderr, e);
		return 125;
	}
	/* 3. the command */
	if (!(env = command_env(secrets)))
		return failed(&e, "cinit: the command's environment", ENOMEM);
	fflush(stderr);
	cmd = fork();
	if (cmd == 0)
		run_command(a, env);
	free(env);
	if (cmd < 0)
		return failed(&e, "cinit: start the command", errno);
	/* pid 1 keeps no copy of a secret */
	scrub_strvp(&secrets);
	secrets = NULL;
	/* 4. init */
	st = (struct init_state){ cmd, dirfd, a->run_dir };
	init_loop(loop);
}
