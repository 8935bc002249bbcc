/* feeder.c: a stream-json stdin fed from the first message and the inbox
 * (see feeder.h). */
#include "host/feeder.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/loop.h"
#include "lib/strv.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdnoreturn.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define FEED_POLL_MS 100
#define FEED_MESSAGE_MAX ((size_t)1 << 20)
#define FEED_LINE_MAX ((size_t)4 << 20)
#define FEED_NAMES_MAX 4096

struct feed {
	int out;		/* the pipe's write end */
	int log;		/* the job's log, read from where it stood */
	char *inbox;
	char **seen;		/* inbox names handled (or there before) */
	unsigned long sent, answered;
	char *line;		/* a log line not yet ended */
	size_t n;
	bool too_long;
};

char *host_claude_user_message(const char *text)
{
	_cleanup_json_ json_t *m = json_pack(
		"{s:s, s:{s:s, s:[{s:s, s:s}]}}", "type", "user", "message", "role", "user",
		"content", "type", "text", "text", text);
	_cleanup_free_ char *line = m ? json_dumps(m, JSON_COMPACT | JSON_ENSURE_ASCII) : NULL;
	char *out = NULL;

	if (!line || asprintf(&out, "%s\n", line) < 0)
		return NULL;
	return out;
}

static int send_text(struct feed *f, const char *text)
{
	_cleanup_free_ char *msg = host_claude_user_message(text);

	if (!msg)
		return 0; /* not UTF-8: not sendable, and not the command's fault */
	if (fs_write_exact(f->out, msg, strlen(msg)) < 0)
		return -1;
	f->sent++;
	return 0;
}

static int cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The inbox's names, sorted (inject names them by time). */
/* The inbox is in the run dir, which the sandbox may write: it is opened
 * without following a link (an inbox replaced by a link to a host
 * directory lists nothing), and at most FEED_NAMES_MAX names are taken. */
static char **inbox_names(const char *inbox)
{
	int fd = fs_open_nofollow(AT_FDCWD, inbox, O_RDONLY | O_DIRECTORY, 0);
	DIR *d = fd >= 0 ? fdopendir(fd) : NULL;
	struct dirent *de;
	char **v = NULL;
	size_t n = 0;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while (n < FEED_NAMES_MAX && (de = readdir(d)))
		if (de->d_name[0] != '.' && strv_push(&v, de->d_name) == 0)
			n++;
	closedir(d);
	if (v)
		qsort(v, n, sizeof(*v), cmp);
	return v;
}

static bool seen_before(char **seen, const char *name)
{
	return seen && bsearch(&name, seen, strv_len(seen), sizeof(*seen), cmp) != NULL;
}

/* New messages in the inbox, in order, each sent once. What was seen is
 * what this look found (sorted): a name gone from the inbox is
 * forgotten, so the list stays as short as the inbox however many names
 * the sandbox makes and removes there. */
static int feed_inbox(struct feed *f, bool *pending)
{
	_cleanup_strv_ char **names = inbox_names(f->inbox);
	_cleanup_close_ int dfd = -1;
	int r = 0;

	*pending = false;
	for (size_t i = 0; names && names[i] && r == 0; i++) {
		_cleanup_free_ char *buf = NULL;
		struct err *e = NULL;

		if (seen_before(f->seen, names[i]))
			continue;
		if (dfd < 0)
			dfd = fs_open_nofollow(AT_FDCWD, f->inbox, O_PATH | O_DIRECTORY, 0);
		/* a message the host wrote (a regular file); anything else the
		 * sandbox may have left there (a link, a FIFO, which would
		 * block an open without O_NONBLOCK) is not read */
		_cleanup_close_ int fd =
			dfd < 0 ? -1 : fs_open_nofollow(dfd, names[i], O_RDONLY | O_NONBLOCK, 0);
		struct stat st;
		if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
		    fs_read_fd(fd, names[i], FEED_MESSAGE_MAX, &buf, NULL, &e) < 0) {
			err_free(e);
			continue;
		}
		if (send_text(f, buf) < 0) {
			r = -1;
			break;
		}
		*pending = true;
	}
	strv_free(f->seen);
	f->seen = names;
	names = NULL;
	return r;
}

/* Count the "result" lines the log gained. */
static void read_log(struct feed *f)
{
	char buf[65536];
	ssize_t got;

	while ((got = read(f->log, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < got; i++) {
			if (buf[i] != '\n') {
				if (f->n + 1 >= FEED_LINE_MAX) {
					f->too_long = true;
					continue;
				}
				char *p = f->n % 4096 == 0 ? realloc(f->line, f->n + 4097) : f->line;
				if (!p) {
					f->too_long = true;
					continue;
				}
				f->line = p;
				f->line[f->n++] = buf[i];
				continue;
			}
			if (!f->too_long && f->n > 0) {
				json_t *j;

				/* (the command's words: parsed as hostile, a
				 * duplicate key refused like any malformed line) */
				f->line[f->n] = '\0';
				j = json_parse_strict(f->line, f->n, NULL);
				if (json_is_object(j) &&
				    json_string_value(json_object_get(j, "type")) &&
				    strcmp(json_string_value(json_object_get(j, "type")), "result") == 0)
					f->answered++;
				json_decref(j);
			}
			f->n = 0;
			f->too_long = false;
		}
	}
}

/* Every FEED_POLL_MS: the log's new answers, the inbox's new messages. */
static void feed_turn(struct loop *l, struct loop_timer *t)
{
	struct feed *f = t->data;
	bool pending = false;

	(void)l;
	read_log(f);
	if (feed_inbox(f, &pending) < 0)
		_exit(0); /* the command is gone */
	if (!pending && f->answered >= f->sent)
		_exit(0); /* all answered: its stdin ends, and so does it */
}

static void wrapper_gone(struct loop *l, struct loop_pid *s, const siginfo_t *unused)
{
	(void)l;
	(void)s;
	(void)unused;
	_exit(0);
}

/* A turn now, then one each FEED_POLL_MS until the wrapper ends (or the
 * loop cannot wait for it). */
static noreturn void feeder_main(struct feed *f, int wrapper)
{
	struct loop_timer turn = { .data = f };
	struct loop_pid gone;
	struct loop *loop = NULL;

	signal(SIGPIPE, SIG_IGN);
	feed_turn(NULL, &turn);
	if (loop_new(&loop, NULL) < 0 ||
	    loop_pid_add(loop, &gone, wrapper, false, wrapper_gone, f, NULL) < 0)
		_exit(0);
	loop_timer_start(loop, &turn, FEED_POLL_MS, FEED_POLL_MS, feed_turn, f);
	loop_run(loop, NULL);
	_exit(0);
}

int host_feeder_start(const char *first, const char *inbox, const char *log, struct err **e)
{
	struct feed f = { .out = -1, .log = -1 };
	int pfd[2];
	pid_t self = getpid(), mid;
	int status;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the command's input");
	mid = fork();
	if (mid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return err_set(e, ERR_UNAVAILABLE, errno, "the command's input");
	}
	if (mid == 0) {
		/* a grandchild, so that the sandbox root (this process) waits
		 * for nothing but its sandbox */
		int wrapper = (int)syscall(SYS_pidfd_open, self, 0);

		if (wrapper < 0 || fork() != 0)
			_exit(0);
		close(pfd[0]);
		f.out = pfd[1];
		f.inbox = strdup(inbox);
		f.log = open(log, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
		/* what the log and the inbox held before is an earlier
		 * segment's */
		if (!f.inbox || f.log < 0 || lseek(f.log, 0, SEEK_END) < 0)
			_exit(0);
		f.seen = inbox_names(inbox);
		if (fs_write_exact(f.out, first, strlen(first)) < 0)
			_exit(0);
		f.sent = 1;
		feeder_main(&f, wrapper);
	}
	close(pfd[1]);
	while (waitpid(mid, &status, 0) < 0 && errno == EINTR)
		;
	if (dup2(pfd[0], 0) < 0) {
		close(pfd[0]);
		return err_set(e, ERR_UNAVAILABLE, errno, "the command's input");
	}
	close(pfd[0]);
	return 0;
}
