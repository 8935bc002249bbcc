/* spawn.c: lib/spawn's run-and-capture: output kept to its bound and
 * counted past it, stdin from bytes or /dev/null, stderr merged or
 * dropped, argv looked up in the PATH given, an exec that fails told
 * apart from a program that ran, a signal's status, the time bound, and
 * no descriptor of the caller's reaching the program. */
#include "lib/spawn.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static char *env[] = { (char *)"PATH=/usr/bin:/bin", (char *)"LC_ALL=C", NULL };

static int sh(const char *script, const char *in, size_t max, int timeout_ms, bool merge,
	      struct spawn_out *o, struct err **e)
{
	char *argv[] = { (char *)"sh", (char *)"-c", (char *)script, NULL };
	struct spawn_req q = { .argv = argv, .envp = env, .path = "/usr/bin:/bin",
			       .in = in, .in_len = in ? strlen(in) : 0, .max = max,
			       .timeout_ms = timeout_ms, .merge_err = merge };

	return spawn_capture(&q, o, e);
}

int main(void)
{
	struct spawn_out o;
	struct err *e = NULL;
	int leak;

	ok(sh("printf hello; exit 3", NULL, 64, 0, false, &o, &e) == 0 && o.status == 3 &&
		   o.exec_errno == 0 && strcmp(o.out, "hello") == 0 && o.kept == 5 && o.total == 5,
	   "the output and the exit status");
	spawn_out_clear(&o);

	ok(sh("printf 0123456789", NULL, 4, 0, false, &o, &e) == 0 && strcmp(o.out, "0123") == 0 &&
		   o.kept == 4 && o.total == 10,
	   "output past the bound is counted, not kept");
	spawn_out_clear(&o);

	ok(sh("cat", "from the caller", 64, 0, false, &o, &e) == 0 &&
		   strcmp(o.out, "from the caller") == 0,
	   "stdin is the bytes given");
	spawn_out_clear(&o);

	ok(sh("cat; echo end", NULL, 64, 0, false, &o, &e) == 0 && strcmp(o.out, "end\n") == 0,
	   "stdin is /dev/null when no bytes are given");
	spawn_out_clear(&o);

	ok(sh("echo out; echo err >&2", NULL, 64, 0, true, &o, &e) == 0 &&
		   strcmp(o.out, "out\nerr\n") == 0,
	   "stderr merged into the capture when asked");
	spawn_out_clear(&o);

	ok(sh("echo out; echo err >&2", NULL, 64, 0, false, &o, &e) == 0 &&
		   strcmp(o.out, "out\n") == 0,
	   "stderr dropped otherwise");
	spawn_out_clear(&o);

	ok(sh("echo \"$LC_ALL:${HOME-unset}\"", NULL, 64, 0, false, &o, &e) == 0 &&
		   strcmp(o.out, "C:unset\n") == 0,
	   "the environment is the one given, whole");
	spawn_out_clear(&o);

	ok(sh("kill -USR1 $$", NULL, 64, 0, false, &o, &e) == 0 && o.status == 128 + 10,
	   "a signal's status is 128+N");
	spawn_out_clear(&o);

	leak = open("/dev/null", O_RDONLY); /* without O_CLOEXEC, on purpose */
	{
		char script[64];

		snprintf(script, sizeof(script), "ls /proc/self/fd/%d 2>/dev/null; exit 0", leak);
		ok(leak >= 0 && sh(script, "x", 64, 0, false, &o, &e) == 0 && o.out[0] == '\0',
		   "none of the caller's other descriptors reaches the program (fd %d)", leak);
	}
	spawn_out_clear(&o);
	if (leak >= 0)
		close(leak);

	{
		char *argv[] = { (char *)"cordon-no-such-program", NULL };
		struct spawn_req q = { .argv = argv, .envp = env, .path = "/usr/bin:/bin",
				       .max = 16 };

		ok(spawn_capture(&q, &o, &e) == 0 && o.exec_errno == ENOENT && o.status == 127,
		   "a program not on the path given: ENOENT, status 127");
		spawn_out_clear(&o);
		q.path = "/nonexistent";
		argv[0] = (char *)"sh";
		ok(spawn_capture(&q, &o, &e) == 0 && o.exec_errno == ENOENT,
		   "argv[0] is looked up in the path given, not the caller's");
		spawn_out_clear(&o);
	}

	/* a caller with its standard descriptors closed: the pipes take 0
	 * and 1, and the program still gets its input and gives its output */
	{
		int pfd[2], status = 0;
		pid_t pid;

		if (pipe(pfd) < 0)
			return 1;
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			close(STDIN_FILENO);
			close(STDOUT_FILENO);
			bool good = sh("cat; echo out", "in ", 64, 0, false, &o, &e) == 0 &&
				    strcmp(o.out, "in out\n") == 0 && o.status == 0;
			(void)!write(pfd[1], good ? "y" : "n", 1);
			_exit(0);
		}
		char c = 0;
		close(pfd[1]);
		(void)!read(pfd[0], &c, 1);
		close(pfd[0]);
		waitpid(pid, &status, 0);
		ok(pid > 0 && c == 'y', "a caller whose fds 0 and 1 are closed: input and output still reach the program and back");
	}

	ok(sh("sleep 30", NULL, 64, 300, false, &o, &e) == -1 && e &&
		   strstr(e->msg, "did not finish within") && o.out == NULL,
	   "killed at the time bound, and said so");
	err_free(e);
	e = NULL;
	return done_testing();
}
