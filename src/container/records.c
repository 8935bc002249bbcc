/* records.c: the container records the host keeps of a segment's
 * signals, whichever provider runs it: every signal the host passes to a
 * container is appended (and synced) before it is sent, so a TERM the
 * container got that is not there was not the host's. And the start
 * helper's signals, read from a signalfd. */
#include "container/contract.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/sha256.h"
#include "lib/sigfwd.h"

#include <limits.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <time.h>
#include <unistd.h>

/* Append {"segment", "signal", "time"} to the job's signals record and
 * sync it, before the signal is sent: every signal that reaches the
 * container through the host is there. */
int container_record_signal(const struct plan_paths *paths, int sig, struct err **e)
{
	_cleanup_close_ int xfd = fs_open_nofollow(AT_FDCWD, paths->exec_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_close_ int dfd = -1, fd = -1;
	char line[160];
	struct timespec ts;

	if (xfd < 0 || (dfd = fs_mkdirs_beneath(xfd, CONTAINER_RECORDS_DIR, 0700, e)) < 0)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "container records");
	fd = openat(dfd, "signals", O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	clock_gettime(CLOCK_REALTIME, &ts);
	int n = snprintf(line, sizeof(line), "{\"segment\":%u,\"signal\":%d,\"time\":%lld}\n",
			 paths->segment, sig, (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
	if (fd < 0 || fs_write_exact(fd, line, (size_t)n) < 0 || fsync(fd) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "container records: signals");
	return 0;
}

/* Did the host send this segment a TERM (its signals record says so)? */
bool container_host_sent_term(const struct plan_paths *paths)
{
	_cleanup_free_ char *path = NULL, *buf = NULL;
	struct err *e = NULL;
	char want[64];
	size_t len = 0;

	if (asprintf(&path, "%s/%s/signals", paths->exec_dir, CONTAINER_RECORDS_DIR) < 0)
		return false;
	if (fs_read_file(AT_FDCWD, path, (size_t)1 << 20, &buf, &len, &e) < 0) {
		err_free(e);
		return false;
	}
	snprintf(want, sizeof(want), "{\"segment\":%u,\"signal\":%d,", paths->segment, SIGTERM);
	return strstr(buf, want) != NULL;
}


int container_helper_signals(struct err **e)
{
	sigset_t set;
	int sfd;

	sigemptyset(&set);
	sigfwd_add(&set, SIGFWD_STOP);
	if (sigprocmask(SIG_BLOCK, &set, NULL) < 0 || (sfd = signalfd(-1, &set, SFD_CLOEXEC)) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "start helper: signals");
	return sfd;
}

int container_runtime(char **bytes, size_t *len, char hex[65], struct err **e)
{
	char self[PATH_MAX], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 16);

	if (n <= 0 || !(slash = memrchr(self, '/', (size_t)n)))
		return err_set(e, ERR_UNAVAILABLE, errno, "cannot find this program");
	snprintf(slash + 1, sizeof(self) - (size_t)(slash + 1 - self), "cordon-static");
	if (fs_read_file(AT_FDCWD, self, (size_t)64 << 20, bytes, len, e) < 0)
		return err_wrap(e, "cordon's static binary (a container's runtime)");
	if (sha256_hex(*bytes, *len, hex) < 0) {
		free(*bytes);
		*bytes = NULL;
		return err_set(e, ERR_INTERNAL, 0, "runtime digest");
	}
	return 0;
}

int container_write_pin(const struct plan_paths *paths, const json_t *pin, struct err **e)
{
	_cleanup_free_ char *text = json_dumps(pin, JSON_COMPACT);
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, paths->record_dir, O_PATH | O_DIRECTORY, 0);

	if (!text || dfd < 0 ||
	    fs_write_atomic(dfd, "container.json", text, strlen(text), 0444, true, e) < 0)
		return *e ? -1 : err_set(e, ERR_UNAVAILABLE, errno, "container record");
	return 0;
}
