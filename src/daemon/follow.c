/* follow.c: a job's log (see daemon.h), from ?offset, at most 1 MiB of
 * it; with ?follow=1 its stream: what the log holds, then what is added
 * until the job has ended, a connection with nothing to send suspended
 * and resumed by the loop to look again. */
#include "daemon/internal.h"
#include "host/db.h"
#include "lib/cleanup.h"
#include "lib/num.h"
#include "toolbelt/http.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The job's log from ?offset= on, at most 1 MiB of it. */
/* A streaming log (?follow=1): what the log holds from the offset on,
 * then what is added, until the job has ended and all of it is sent. A
 * connection with nothing to send is suspended, and resumed by the loop
 * a few times a second to look again. */
struct follower {
	struct follower *next;
	struct hostd *d;
	struct MHD_Connection *c;
	char job[HOST_JOB_ID_MAX];
	char *path;
	int fd;			/* -1 until the log exists */
	uint64_t from;
	bool suspended;
};

static ssize_t follow_read(void *cls, uint64_t pos, char *buf, size_t max)
{
	struct follower *f = cls;
	ssize_t n = 0;

	if (f->fd < 0)
		f->fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (f->fd >= 0 && (n = pread(f->fd, buf, max, (off_t)(f->from + pos))) > 0)
		return n;
	if (!hostd_job_live(f->d, f->job)) {
		/* ended: its wrapper is gone, so what it wrote is all there
		 * (read once more: it may have written since the read above) */
		if (f->fd >= 0 && (n = pread(f->fd, buf, max, (off_t)(f->from + pos))) > 0)
			return n;
		return MHD_CONTENT_READER_END_OF_STREAM;
	}
	MHD_suspend_connection(f->c);
	f->suspended = true;
	return 0;
}

static void follow_free(void *cls)
{
	struct follower *f = cls;

	for (struct follower **p = &f->d->followers; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	if (f->fd >= 0)
		close(f->fd);
	free(f->path);
	free(f);
}

/* Look again at every suspended stream. */
void hostd_follow_resume(struct hostd *d)
{
	for (struct follower *f = d->followers; f; f = f->next)
		if (f->suspended) {
			f->suspended = false;
			MHD_resume_connection(f->c);
		}
}

static enum MHD_Result follow_log(struct hostd *d, struct MHD_Connection *c, const char *job,
				  const char *path, unsigned long from)
{
	struct follower *f = calloc(1, sizeof(*f));
	struct MHD_Response *r;
	enum MHD_Result ret;

	if (!f || !(f->path = strdup(path))) {
		free(f);
		return MHD_NO;
	}
	f->d = d;
	f->c = c;
	f->fd = -1;
	f->from = from;
	snprintf(f->job, sizeof(f->job), "%s", job);
	r = MHD_create_response_from_callback(MHD_SIZE_UNKNOWN, (size_t)32 * 1024, follow_read, f,
					      follow_free);
	if (!r) {
		free(f->path);
		free(f);
		return MHD_NO;
	}
	f->next = d->followers;
	d->followers = f;
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}

/* GET a job's log, from ?offset; with ?follow=1, its stream. */
enum MHD_Result hostd_log_of(struct hostd *d, struct MHD_Connection *c, const char *job)
{
	const char *off = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "offset");
	_cleanup_free_ char *path = NULL, *buf = NULL;
	_cleanup_close_ int fd = -1;
	unsigned long from = 0;
	struct MHD_Response *r;
	struct stat st;
	char size[32];
	ssize_t n;
	enum MHD_Result ret;

	const char *fol = MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "follow");

	if (off && num_parse_ulong(off, ~0UL, &from) < 0)
		return hostd_fail(c, "bad_request", "offset: must be a number");
	if (fol && strcmp(fol, "1") != 0 && strcmp(fol, "0") != 0)
		return hostd_fail(c, "bad_request", "follow: must be 1 or 0");
	if (asprintf(&path, "%s/runs/%s/log", d->state, job) < 0)
		return MHD_NO;
	{
		_cleanup_err_ struct err *e = NULL;
		json_t *j = host_db_job_json(d->db, job, &e);

		if (!j)
			return hostd_fail(c, "not_found", "no such job");
		json_decref(j);
	}
	if (fol && strcmp(fol, "1") == 0)
		return follow_log(d, c, job, path, from);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	memset(&st, 0, sizeof(st));
	if (fd >= 0 && fstat(fd, &st) < 0)
		memset(&st, 0, sizeof(st));
	buf = malloc(1 << 20);
	if (!buf)
		return MHD_NO;
	n = fd >= 0 && from < (unsigned long)st.st_size ? pread(fd, buf, 1 << 20, (off_t)from) : 0;
	if (n < 0)
		n = 0;
	r = MHD_create_response_from_buffer((size_t)n, buf, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	snprintf(size, sizeof(size), "%lld", (long long)st.st_size);
	MHD_add_response_header(r, "Content-Type", "text/plain; charset=utf-8");
	MHD_add_response_header(r, "X-Cordon-Log-Size", size);
	ret = MHD_queue_response(c, 200, r);
	MHD_destroy_response(r);
	return ret;
}
