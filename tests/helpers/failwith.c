/* failwith: run a command with one system call made to fail, so a test
 * can show what cordon does when a step of the sandbox cannot be taken.
 * usage: failwith SYSCALL ERRNO [aN=VALUE] -- CMD...
 * With aN=VALUE, only calls whose argument N (0-5) equals VALUE fail
 * (prctl options, ioctl requests). The filter is inherited by everything CMD
 * starts, namespaces included. */
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	scmp_filter_ctx ctx;
	int nr, err, cmd = 3, r;

	if (argc < 5) {
		fprintf(stderr, "usage: failwith SYSCALL ERRNO [aN=VALUE] -- CMD...\n");
		return 2;
	}
	nr = seccomp_syscall_resolve_name(argv[1]);
	err = atoi(argv[2]);
	if (nr == __NR_SCMP_ERROR || err <= 0) {
		fprintf(stderr, "failwith: unknown syscall or errno\n");
		return 2;
	}
	ctx = seccomp_init(SCMP_ACT_ALLOW);
	if (strcmp(argv[3], "--") != 0) {
		if (argv[3][0] != 'a' || argv[3][1] < '0' || argv[3][1] > '5' || argv[3][2] != '=') {
			fprintf(stderr, "failwith: argument match is aN=VALUE\n");
			return 2;
		}
		struct scmp_arg_cmp a0 = { .arg = (unsigned)(argv[3][1] - '0'), .op = SCMP_CMP_EQ,
					   .datum_a = strtoull(argv[3] + 3, NULL, 0) };
		r = seccomp_rule_add_array(ctx, SCMP_ACT_ERRNO((unsigned)err), nr, 1, &a0);
		cmd = 4;
	} else {
		r = seccomp_rule_add(ctx, SCMP_ACT_ERRNO((unsigned)err), nr, 0);
	}
	if (!ctx || r < 0 || strcmp(argv[cmd], "--") != 0 || seccomp_load(ctx) < 0) {
		fprintf(stderr, "failwith: cannot install the filter\n");
		return 2;
	}
	seccomp_release(ctx);
	execvp(argv[cmd + 1], argv + cmd + 1);
	perror("failwith: exec");
	return 127;
}
