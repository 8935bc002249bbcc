/* wrap.c: `cordon wrap --ctl FD`, internal: the daemon starts it for each
 * segment (host/wrapper.h says what it does). */
#include "cli/cli.h"
#include "host/wrapper.h"
#include "lib/num.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static const char wrap_usage[] =
	"usage: cordon wrap --ctl FD\n\n"
	"Internal: the host-side process the daemon runs a segment under. It\n"
	"reads the launch's request from the control socket FD, records and\n"
	"pins the plan, answers the pin, and launches on the daemon's word.\n\n"
	"Exit status: the command's; 125 when cordon refused or failed.\n";

int cli_wrap(int argc, char **argv)
{
	unsigned long fd = 0;
	struct stat st;
	int type = 0;
	socklen_t len = sizeof(type);

	if (argc == 2 && strcmp(argv[1], "--help") == 0) {
		fputs(wrap_usage, stdout);
		return 0;
	}
	if (argc != 3 || strcmp(argv[1], "--ctl") != 0 ||
	    num_parse_ulong(argv[2], INT_MAX, &fd) < 0 || fd < 3) {
		fputs(wrap_usage, stderr);
		return EXIT_CORDON;
	}
	if (fstat((int)fd, &st) < 0 || !S_ISSOCK(st.st_mode) ||
	    getsockopt((int)fd, SOL_SOCKET, SO_TYPE, &type, &len) < 0 || type != SOCK_SEQPACKET) {
		fprintf(stderr, "cordon: usage: --ctl %lu: not a SOCK_SEQPACKET socket\n", fd);
		return EXIT_CORDON;
	}
	/* what the wrapper's starter left open without close-on-exec goes
	 * no further (the host's git, an unsandboxed command): 0-2 and the
	 * control socket are all it is given */
	if ((fd > 3 && syscall(SYS_close_range, 3U, (unsigned int)fd - 1, 0U) < 0) ||
	    syscall(SYS_close_range, (unsigned int)fd + 1, ~0U, 0U) < 0) {
		fprintf(stderr, "cordon: sandbox_unavailable: wrap: close inherited descriptors\n");
		return EXIT_CORDON;
	}
	return host_wrapper_main((int)fd);
}
