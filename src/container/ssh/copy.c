/* copy.c: the SSH provider's copies. Up: the plan's roots as one
 * tar streamed into the remote's tar (each root replacing the remote's
 * earlier copy), the manifest of what went kept in the segment's record
 * dir. Back: the remote lists its write grants (type, mtime, ctime,
 * path) and the time of the upload's stamp; the host chooses what to
 * fetch (mirror_fetch_choice), the remote sends it as one tar, and
 * mirror_apply writes it under every rule of mirror.h. The remote's
 * bytes are never trusted: the choice, the names and the apply are the
 * host's. */
#include "container/ssh/internal.h"

#include "container/ssh/mirror.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#define MANIFEST "ssh-manifest.json"
#define LISTING_MAX ((size_t)256 << 20)

static int strv_of(const json_t *arr, char ***out)
{
	size_t i;
	json_t *v;

	*out = calloc(1, sizeof(**out));
	if (!*out)
		return -1;
	json_array_foreach(arr, i, v)
		if (json_is_string(v) && strv_push(out, json_string_value(v)) < 0)
			return -1;
	return 0;
}

static int wait_status(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, 0) < 0)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

int ssh_upload(const struct ssh_conn *c, const json_t *pc, const json_t *pin,
	       const struct plan_paths *paths, struct err **e)
{
	_cleanup_strv_ char **roots = NULL, **skip = NULL, **args = NULL;
	_cleanup_close_ int ofd = memfd_create("ssh-out", MFD_CLOEXEC);
	_cleanup_close_ int efd = memfd_create("ssh-err", MFD_CLOEXEC);
	_cleanup_close_ int rdir = -1;
	_cleanup_json_ json_t *manifest = NULL;
	_cleanup_free_ char *records = NULL, *text = NULL, *out = NULL;
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	int pfd[2] = { -1, -1 }, status, pr;
	pid_t pid = -1;

	if (ofd < 0 || efd < 0 || strv_of(json_object_get(pc, "roots"), &roots) < 0 ||
	    strv_of(json_object_get(pc, "skip"), &skip) < 0 ||
	    asprintf(&records, "%s/%s", paths->exec_dir, CONTAINER_RECORDS_DIR) < 0 ||
	    strv_push(&skip, records) < 0 || strv_push(&skip, paths->record_dir) < 0 ||
	    strv_push(&args, json_string_value(json_object_get(pin, "container"))) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "ssh upload");
	for (size_t i = 0; roots[i]; i++)
		if (strv_push(&args, roots[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "ssh upload");
	if (pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "ssh upload: pipe");
	struct ssh_io io = { pfd[0], ofd, efd };
	if (ssh_spawn(c, ssh_script_upload, args, NULL, &io, false, &pid, e) < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	close(pfd[0]);
	sigaction(SIGPIPE, &ign, &old);
	pr = mirror_pack(roots, skip, pfd[1], &manifest, e);
	close(pfd[1]);
	status = wait_status(pid);
	sigaction(SIGPIPE, &old, NULL);
	if (status == SSH_EXIT_CONNECT) {
		err_free(*e);
		*e = NULL;
		return ssh_failed(c, efd, e);
	}
	/* the remote's refusal is the reason (the pack then only saw the
	 * pipe close) */
	if (status != 0) {
		struct err *re = NULL;

		if (lseek(ofd, 0, SEEK_SET) < 0 ||
		    fs_read_fd(ofd, "the remote's answer", 4096, &out, NULL, &re) < 0)
			out = NULL;
		err_free(re);
		err_free(*e);
		*e = NULL;
		/* (the remote's words: printable only) */
		for (char *ch = out; ch && *ch; ch++)
			if ((unsigned char)*ch < ' ' || *ch == 0x7f)
				*ch = ' ';
		return err_set(e, status == 3 ? ERR_DENIED : ERR_UNAVAILABLE, 0,
			       "the remote did not take the copy (exit %d)%s%.300s", status,
			       out && out[0] ? ": " : "", out ? out : "");
	}
	if (pr < 0)
		return err_wrap(e, "the copy to the remote");
	/* the manifest: the copy back applies against it */
	if (!(text = json_dumps(manifest, JSON_COMPACT)))
		return err_set(e, ERR_INTERNAL, ENOMEM, "the copy's manifest");
	if ((rdir = fs_open_nofollow(AT_FDCWD, paths->record_dir, O_PATH | O_DIRECTORY, 0)) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "the record dir");
	return fs_write_atomic(rdir, MANIFEST, text, strlen(text), 0600, true, e);
}

/* find's %T@ ("<seconds>.<fraction>") in nanoseconds, or -1. */
static long long ns_of(const char *s, const char **end)
{
	long long sec = 0, frac = 0;
	int digits = 0;

	if (*s < '0' || *s > '9')
		return -1;
	for (; *s >= '0' && *s <= '9'; s++) {
		if (sec > 9000000000LL)
			return -1;
		sec = sec * 10 + (*s - '0');
	}
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			if (digits < 9) {
				frac = frac * 10 + (*s - '0');
				digits++;
			}
	for (; digits < 9; digits++)
		frac *= 10;
	*end = s;
	return sec * 1000000000LL + frac;
}

/* The listing: "<stamp %T@>\0" then "<%y> <%T@> <%C@> <path>\0"... */
static int parse_listing(char *buf, size_t len, long long *stamp, struct mirror_remote_entry **ents,
			 size_t *n, char ***paths, struct err **e)
{
	const char *end;
	size_t cap = 0;

	*ents = NULL;
	*n = 0;
	*paths = calloc(1, sizeof(**paths));
	if (!*paths || len == 0 || buf[len - 1] != '\0')
		return err_set(e, ERR_DENIED, 0, "the remote's listing of its write grants is cut short");
	*stamp = ns_of(buf, &end);
	if (*stamp < 0 || *end)
		return err_set(e, ERR_DENIED, 0, "the remote's listing has no upload stamp");
	for (char *p = buf + strlen(buf) + 1; p < buf + len; p += strlen(p) + 1) {
		struct mirror_remote_entry en = { 0 };

		if (!p[0] || !p[1] || p[1] != ' ')
			return err_set(e, ERR_DENIED, 0, "the remote's listing is not one cordon asked for");
		en.type = p[0];
		if ((en.mtime_ns = ns_of(p + 2, &end)) < 0 || *end != ' ' ||
		    (en.ctime_ns = ns_of(end + 1, &end)) < 0 || *end != ' ' || end[1] != '/')
			return err_set(e, ERR_DENIED, 0, "the remote's listing is not one cordon asked for");
		en.path = end + 1;
		if (*n == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct mirror_remote_entry *m = realloc(*ents, nc * sizeof(*m));

			if (!m)
				return err_set(e, ERR_INTERNAL, ENOMEM, "the remote's listing");
			*ents = m;
			cap = nc;
		}
		(*ents)[(*n)++] = en;
		if (strv_push(paths, en.path) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "the remote's listing");
	}
	return 0;
}

/* What the apply said, on stderr: counts, and the first refusals. */
static void say_report(const json_t *report)
{
	const json_t *refused = json_object_get(report, "refused");
	size_t i;
	json_t *r;

	fprintf(stderr,
		"cordon: copied back from the remote: %lld written, %lld directories, %lld removed, "
		"%zu refused\n",
		(long long)json_integer_value(json_object_get(report, "written")),
		(long long)json_integer_value(json_object_get(report, "dirs")),
		(long long)json_integer_value(json_object_get(report, "removed")),
		json_array_size(refused) +
			(size_t)json_integer_value(json_object_get(report, "refused_more")));
	json_array_foreach(refused, i, r) {
		if (i >= 20)
			break;
		fprintf(stderr, "cordon: copy back refused %s: %s\n",
			json_string_value(json_object_get(r, "path")),
			json_string_value(json_object_get(r, "why")));
	}
}

int ssh_copy_back(const struct ssh_conn *c, const json_t *pc, const json_t *pin,
		  const struct plan_paths *paths, struct err **e)
{
	_cleanup_strv_ char **grants = NULL, **kept = NULL, **args = NULL, **remote = NULL,
			    **fetch = NULL, **dropped = NULL;
	_cleanup_free_ char *mbuf = NULL, *listing = NULL;
	_cleanup_free_ struct mirror_remote_entry *ents = NULL;
	_cleanup_json_ json_t *manifest = NULL, *report = NULL;
	_cleanup_close_ int rdir = fs_open_nofollow(AT_FDCWD, paths->record_dir,
						     O_PATH | O_DIRECTORY, 0);
	_cleanup_close_ int ifd = memfd_create("ssh-in", MFD_CLOEXEC);
	_cleanup_close_ int efd = memfd_create("ssh-err", MFD_CLOEXEC);
	size_t llen = 0, n = 0, mlen = 0;
	long long stamp = 0;
	int status = 0, pfd[2] = { -1, -1 }, ar;
	pid_t pid = -1;

	if (rdir < 0 || ifd < 0 || efd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "copy back");
	if (fs_read_file(rdir, MANIFEST, (size_t)1 << 30, &mbuf, &mlen, e) < 0)
		return err_wrap(e, "copy back: the copy's manifest");
	if (!(manifest = json_parse_strict(mbuf, mlen, e)))
		return err_wrap(e, "copy back: the copy's manifest");
	if (strv_of(json_object_get(pc, "grants"), &grants) < 0 ||
	    strv_of(json_object_get(pc, "kept"), &kept) < 0 ||
	    strv_push(&args, json_string_value(json_object_get(pin, "container"))) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "copy back");
	for (size_t i = 0; grants[i]; i++)
		if (strv_push(&args, grants[i]) < 0)
			return err_set(e, ERR_INTERNAL, ENOMEM, "copy back");
	if (ssh_call(c, ssh_script_paths, args, NULL, 0, &listing, &llen, LISTING_MAX, &status, e) < 0)
		return err_wrap(e, "copy back: list the remote's write grants");
	if (status != 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "copy back: the remote could not list its write grants (exit %d)",
			       status);
	struct mirror_rules rules = { .grants = grants, .kept = kept };
	if (parse_listing(listing, llen, &stamp, &ents, &n, &remote, e) < 0 ||
	    mirror_fetch_choice(&rules, manifest, ents, n, stamp, &fetch, &dropped, e) < 0)
		return err_wrap(e, "copy back");
	/* what to fetch, NUL-separated, relative to / */
	for (size_t i = 0; fetch[i]; i++)
		if (fs_write_exact(ifd, fetch[i] + 1, strlen(fetch[i])) < 0)
			return err_set(e, ERR_UNAVAILABLE, errno, "copy back");
	if (lseek(ifd, 0, SEEK_SET) < 0 || pipe2(pfd, O_CLOEXEC) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "copy back");
	if (!fetch[0]) {
		/* nothing to fetch: an empty tar (its end blocks) */
		static const char zeros[1024];
		(void)fs_write_exact(pfd[1], zeros, sizeof(zeros));
		close(pfd[1]);
		ar = mirror_apply(&rules, manifest, remote, pfd[0], &report, e);
		close(pfd[0]);
	} else {
		struct ssh_io io = { ifd, pfd[1], efd };

		if (ssh_spawn(c, ssh_script_fetch, args, NULL, &io, false, &pid, e) < 0) {
			close(pfd[0]);
			close(pfd[1]);
			return -1;
		}
		close(pfd[1]);
		ar = mirror_apply(&rules, manifest, remote, pfd[0], &report, e);
		/* (a failed apply: ssh ends on the closed pipe) */
		close(pfd[0]);
		status = wait_status(pid);
		if (status == SSH_EXIT_CONNECT && ar == 0)
			return ssh_failed(c, efd, e);
		if (status != 0 && ar == 0)
			return err_set(e, ERR_UNAVAILABLE, 0,
				       "copy back: the remote's tar of the changes failed (exit %d)",
				       status);
	}
	if (ar < 0)
		return err_wrap(e, "copy back");
	/* what the run changed of a read-only need was never fetched: it is
	 * said with the refusals */
	json_t *refused = json_object_get(report, "refused");
	for (size_t i = 0; dropped[i] && json_is_array(refused); i++)
		json_array_insert_new(refused, i,
				      json_pack("{s:s, s:s}", "path", dropped[i], "why",
						"a read-only path (kept): the run's change is not "
						"copied back"));
	say_report(report);
	return 0;
}
