/* mover.c: pid 1 and the sandbox's cgroups (mover.h). */
#include "sandbox/native/mover.h"
#include "sandbox/native/mounts.h"
#include "lib/cleanup.h"
#include "lib/fs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The word for the child (struct mounts_cgroups): the v1 cgroups it
 * joins itself, and where each cgroup shows, at its hierarchy's mount
 * point when that lies beneath /sys/fs/cgroup (and not beneath another's). */
int mover_word(const struct limits_plan *lp, char **out, size_t *len)
{
	struct mounts_cgroups w = { .nproc = lp->nproc };
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);

	if (!f || fwrite(&w, sizeof(w), 1, f) != 1) {
		if (f)
			fclose(f);
		free(buf);
		return -1;
	}
	for (size_t i = 0; i < lp->n; i++)
		if (!lp->dirs[i].v2) {
			fprintf(f, "%s%c", lp->dirs[i].dir, 0);
			w.n_enter++;
		}
	for (size_t i = 0; i < lp->n; i++) {
		const struct limits_dir *d = &lp->dirs[i];
		bool nested = false;

		for (size_t k = 0; k < lp->n; k++)
			nested |= k != i && fs_path_within(d->mount, lp->dirs[k].mount);
		if (nested || !fs_path_within(d->mount, "/sys/fs/cgroup"))
			continue;
		fprintf(f, "%s%c%s%c", d->dir, 0, d->mount, 0);
		w.n_view++;
	}
	if (fclose(f) != 0 || size - sizeof(w) > MOUNTS_CGROUPS_MAX) {
		free(buf);
		return -1;
	}
	w.len = (uint32_t)(size - sizeof(w));
	memcpy(buf, &w, sizeof(w));
	*out = buf;
	*len = size;
	return 0;
}

/* After the word, one byte with the `tasks` files of cordon's own v1
 * cgroups, when there are any: pid 1 moves itself back by writing "0"
 * there once the command holds the sandbox's cgroups (it has no way to
 * the host's cgroupfs by then). Always sent, so that pid 1 always reads
 * exactly one. */
int mover_tell(int sync_fd, const void *word, size_t len, const struct limits_plan *lp,
		      struct err **e)
{
	int fds[LIMITS_NCTRL];
	char byte = 'L', cbuf[CMSG_SPACE(sizeof(fds))] = { 0 };
	struct iovec iov = { .iov_base = &byte, .iov_len = 1 };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	int n, r = 0;

	if (fs_write_exact(sync_fd, word, len) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "tell the sandbox its cgroups are made");
	n = limits_leave_files(lp, fds, LIMITS_NCTRL, e);
	if (n < 0)
		return -1;
	if (n > 0) {
		struct cmsghdr *cm;

		msg.msg_control = cbuf;
		msg.msg_controllen = CMSG_SPACE((size_t)n * sizeof(int));
		cm = CMSG_FIRSTHDR(&msg);
		cm->cmsg_level = SOL_SOCKET;
		cm->cmsg_type = SCM_RIGHTS;
		cm->cmsg_len = CMSG_LEN((size_t)n * sizeof(int));
		memcpy(CMSG_DATA(cm), fds, (size_t)n * sizeof(int));
	}
	if (sendmsg(sync_fd, &msg, MSG_NOSIGNAL) != 1)
		r = err_set(e, ERR_UNAVAILABLE, errno, "limits: hand pid 1 its way out of the cgroups");
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return r;
}


static void *mover_main(void *arg)
{
	struct mover *m = arg;
	int r = m->leave ? limits_leave(m->lp, m->pid, true, &m->err)
			 : limits_join(m->lp, m->pid, true, &m->err);

	if (r == 0 && m->tell_fd >= 0)
		(void)mover_tell(m->tell_fd, m->word, m->word_len, m->lp, &m->err);
	return NULL;
}

int mover_start(struct mover *m, struct err **e)
{
	int err = m->started ? 0 : pthread_create(&m->thread, NULL, mover_main, m);

	if (err != 0)
		return err_set(e, ERR_UNAVAILABLE, err, "limits: move the sandbox's pid 1");
	m->started = true;
	return 0;
}

int mover_finish(struct mover *m, int r, struct err **e)
{
	if (!m->started)
		return r;
	pthread_join(m->thread, NULL);
	m->started = false;
	if (m->err && r == 0) {
		*e = steal_pointer(&m->err);
		return -1;
	}
	err_free(m->err);
	m->err = NULL;
	return r;
}
