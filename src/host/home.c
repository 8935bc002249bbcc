/* home.c: a container job's own home (home.h). Seeding is a copy made
 * beside the home and renamed into place, so a home is either the whole
 * seed or was never seeded: a copy cut short is not taken for the
 * agent's own home. */
#include "host/home.h"

#include "lib/cleanup.h"
#include "lib/fs.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define HOME_DEPTH_MAX 32
/* claude's state file: what a new home gets unless the seed has one */
#define HOME_CLAUDE_JSON ".claude.json"
static const char home_claude_json[] = "{\"hasCompletedOnboarding\": true}\n";

static int copy_file(int sfd, int dfd, const char *name, mode_t mode, struct err **e)
{
	_cleanup_close_ int in = openat(sfd, name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	_cleanup_close_ int out = -1;
	char buf[65536];
	ssize_t n;

	if (in < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "home_seed: `%s`", name);
	out = openat(dfd, name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		     (mode & 0700) | 0600);
	if (out < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "home: `%s`", name);
	while ((n = read(in, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || fs_write_exact(out, buf, (size_t)n) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "home: copying `%s`", name);
	}
	return 0;
}

/* Copy the tree under sfd into dfd: directories, regular files (their
 * owner's mode bits) and links (as links); nothing else, and never a
 * .credentials.json. */
static int copy_tree(int sfd, int dfd, int depth, struct err **e)
{
	int dup_fd = fcntl(sfd, F_DUPFD_CLOEXEC, 0);
	DIR *dir = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	struct dirent *de;
	int r = 0;

	if (!dir) {
		if (dup_fd >= 0)
			close(dup_fd);
		return err_set(e, ERR_UNAVAILABLE, errno, "home_seed");
	}
	while (r == 0 && (errno = 0, de = readdir(dir))) {
		const char *name = de->d_name;
		struct stat st;

		if (strcmp(name, ".") == 0 || strcmp(name, "..") == 0 ||
		    strcmp(name, ".credentials.json") == 0)
			continue;
		if (fstatat(sfd, name, &st, AT_SYMLINK_NOFOLLOW) < 0) {
			r = err_set(e, ERR_UNAVAILABLE, errno, "home_seed: `%s`", name);
		} else if (S_ISDIR(st.st_mode)) {
			_cleanup_close_ int s2 = -1, d2 = -1;

			if (depth >= HOME_DEPTH_MAX)
				r = err_set(e, ERR_CONFIG, 0, "home_seed: deeper than %d levels",
					    HOME_DEPTH_MAX);
			else if (mkdirat(dfd, name, 0700) < 0 ||
				 (s2 = openat(sfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC)) < 0 ||
				 (d2 = openat(dfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW |
								 O_CLOEXEC)) < 0)
				r = err_set(e, ERR_UNAVAILABLE, errno, "home: `%s`", name);
			else
				r = copy_tree(s2, d2, depth + 1, e);
		} else if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(sfd, name, target, sizeof(target) - 1);

			if (n < 0)
				r = err_set(e, ERR_UNAVAILABLE, errno, "home_seed: `%s`", name);
			else if ((target[n] = '\0', symlinkat(target, dfd, name)) < 0)
				r = err_set(e, ERR_UNAVAILABLE, errno, "home: `%s`", name);
		} else if (S_ISREG(st.st_mode)) {
			r = copy_file(sfd, dfd, name, st.st_mode, e);
		}
	}
	if (r == 0 && errno != 0)
		r = err_set(e, ERR_UNAVAILABLE, errno, "home_seed");
	closedir(dir);
	return r;
}

/* Make the seeded home as homes/.new-<job>, then rename it into place. */
static int seed_home(int hfd, const char *job, const char *seed, struct err **e)
{
	_cleanup_free_ char *tmp = NULL;
	_cleanup_close_ int sfd = -1, tfd = -1;
	int r = 0;

	if (asprintf(&tmp, ".new-%s", job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "home");
	/* (what a copy cut short left) */
	if (faccessat(hfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fs_remove_tree(hfd, tmp, HOME_DEPTH_MAX + 2) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "home: homes/%s", tmp);
	if (mkdirat(hfd, tmp, 0700) < 0 ||
	    (tfd = openat(hfd, tmp, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "home: homes/%s", tmp);
	if (seed) {
		sfd = open(seed, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		r = sfd < 0 ? err_set(e, ERR_CONFIG, errno, "home_seed `%s`: not a directory", seed)
			    : copy_tree(sfd, tfd, 0, e);
	}
	if (r == 0 && faccessat(tfd, HOME_CLAUDE_JSON, F_OK, AT_SYMLINK_NOFOLLOW) < 0)
		r = fs_write_atomic(tfd, HOME_CLAUDE_JSON, home_claude_json,
				    sizeof(home_claude_json) - 1, 0600, false, e);
	if (r == 0 && renameat(hfd, tmp, hfd, job) < 0 && errno != EEXIST && errno != ENOTEMPTY)
		r = err_set(e, ERR_UNAVAILABLE, errno, "home: homes/%s", job);
	/* (another made it first: that one is the home) */
	if (faccessat(hfd, tmp, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
		(void)fs_remove_tree(hfd, tmp, HOME_DEPTH_MAX + 2);
	return r;
}

int host_job_home(const char *state_dir, const char *job, const char *seed, char **out,
		  struct err **e)
{
	_cleanup_close_ int sfd = fs_open_nofollow(AT_FDCWD, state_dir, O_PATH | O_DIRECTORY, 0);
	_cleanup_close_ int hfd = -1;
	struct stat st;

	if (sfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", state_dir);
	if (strchr(job, '/') || job[0] == '.' || !job[0])
		return err_set(e, ERR_INTERNAL, 0, "home: a job id");
	hfd = fs_mkdirs_beneath(sfd, "homes", 0700, e);
	if (hfd < 0)
		return -1;
	if (fstatat(hfd, job, &st, AT_SYMLINK_NOFOLLOW) < 0) {
		if (errno != ENOENT)
			return err_set(e, ERR_UNAVAILABLE, errno, "home: homes/%s", job);
		if (seed_home(hfd, job, seed, e) < 0)
			return -1;
		if (fstatat(hfd, job, &st, AT_SYMLINK_NOFOLLOW) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "home: homes/%s", job);
	}
	/* a directory of the operator's, never a link */
	if (!S_ISDIR(st.st_mode) || st.st_uid != geteuid())
		return err_set(e, ERR_DENIED, 0, "home: homes/%s is not a directory of the operator's",
			       job);
	if (asprintf(out, "%s/homes/%s", state_dir, job) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "home");
	return 0;
}

void host_job_home_remove(const char *state_dir, const char *job)
{
	_cleanup_free_ char *homes = fs_path_join(state_dir, "homes");
	_cleanup_close_ int hfd = homes ? fs_open_nofollow(AT_FDCWD, homes, O_RDONLY | O_DIRECTORY, 0)
					: -1;

	if (hfd >= 0 && !strchr(job, '/') && job[0] != '.' &&
	    faccessat(hfd, job, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
	    fs_remove_tree(hfd, job, HOME_DEPTH_MAX + 2) < 0)
		fprintf(stderr, "cordon: daemon: cannot remove homes/%s\n", job);
}
