/* created: a sandbox held between create and start, for
 * tests/isolation/created.t.
 * usage: created STATE_DIR WORKSPACE kill|fail|start native|srt -- CMD...
 * It takes `cordon run`'s steps (the embedded default policy) up to the
 * host's record, which the provider's run makes between its create and
 * its start, and there prints pid 1's pid (native: this process's one
 * child; -1 when there is none), how many children pid 1 has (the command
 * is one, forked only after the go) and how many this process has, then:
 *   kill   SIGKILLs itself: a wrapper killed between create and start;
 *   fail   the record fails: once the launch returned, prints "gone" when
 *          nothing of the sandbox is left (pid 1 killed and reaped, no
 *          child of this process), "alive" when something is; the
 *          launch's error on stderr;
 *   start  records the plan; exits with the command's status. */
#include "cli/launch.h"
#include "sandbox/adopt.h"
#include "sandbox/native/native.h"
#include "sandbox/srt/srt.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pid_t pid1 = -1;

static int at_record(void *ctx, struct err **e)
{
	struct host_launch *l = ctx;
	const char *mode = getenv("CREATED_MODE");
	pid_t kids[16];
	int n = adopt_children(getpid(), kids, 16), k = 0;

	pid1 = n == 1 ? kids[0] : -1;
	if (pid1 > 0)
		k = adopt_children(pid1, kids, 16);
	printf("%d %d %d\n", (int)pid1, k, n);
	fflush(stdout);
	if (strcmp(mode, "kill") == 0)
		raise(SIGKILL);
	if (strcmp(mode, "fail") == 0)
		return err_set(e, ERR_INTERNAL, 0, "the record refused by the test");
	return host_launch_record(l, e);
}

int main(int argc, char **argv)
{
	struct launch_opts o = { .quiet = 1, .defer_record = 1 };
	struct host_launch l = { 0 };
	struct provider_record rec = { .fn = at_record, .ctx = &l, .quiet = true };
	struct err *e = NULL;
	int code;

	if (argc < 7 || strcmp(argv[5], "--") != 0 ||
	    (strcmp(argv[3], "kill") != 0 && strcmp(argv[3], "fail") != 0 &&
	     strcmp(argv[3], "start") != 0) ||
	    (strcmp(argv[4], "native") != 0 && strcmp(argv[4], "srt") != 0)) {
		fprintf(stderr,
			"usage: created STATE_DIR WORKSPACE kill|fail|start native|srt -- CMD...\n");
		return 2;
	}
	setenv("CREATED_MODE", argv[3], 1);
	o.state_dir = argv[1];
	o.workspace = argv[2];
	o.argv = argv + 6;
	o.provider = argv[4];
	if (launch_prepare(&o, &l, &e) < 0) {
		err_print(stderr, e);
		err_free(e);
		host_launch_clear(&l);
		return 125;
	}
	code = strcmp(argv[4], "srt") == 0 ? srt_run(l.grant, l.plan, &l.paths, &rec, &e)
					   : native_run(l.grant, l.plan, &l.paths, &rec, &e);
	if (code < 0) {
		err_print(stderr, e);
		err_free(e);
		code = 125;
	}
	if (strcmp(argv[3], "fail") == 0) {
		pid_t kids[16];
		bool gone = (pid1 <= 0 || (kill(pid1, 0) < 0 && errno == ESRCH)) &&
			    adopt_children(getpid(), kids, 16) == 0;

		printf("%s\n", gone ? "gone" : "alive");
		code = 0;
	}
	host_launch_clear(&l);
	return code;
}
