/* reconcile.c: every few seconds and at start (see daemon.h): strays of
 * finished jobs killed, run dirs, scratch workspaces and homes past
 * retention removed, the container daemons swept by children, the
 * toolbelts of ended jobs revoked. */
#include "daemon/internal.h"
#include "host/config.h"
#include "host/db.h"
#include "host/home.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "sandbox/adopt.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;


#define STRAY_WINDOW_MS 600000LL

/* A sandbox still running after its job ended (its wrapper gone, its
 * first process not): killed through a pidfd of that process, opened
 * before it is dated against its record (sandbox_root_open), so the
 * signal reaches the sandbox the record names or nothing. Never found by
 * a working directory, a path or a namespace's number: the operator's own
 * processes, another live job's (on the same directory by any spelling)
 * and a sandbox that took a number since are none of these. */
static int sweep_segment(void *ctx, const struct host_segment *s)
{
	int rfd = -1;

	(void)ctx;
	if (!s->provider || s->container || !s->record_dir ||
	    sandbox_root_open(s->record_dir, &rfd, NULL) <= 0)
		return 0;
	if (syscall(SYS_pidfd_send_signal, rfd, SIGKILL, NULL, 0) == 0)
		fprintf(stderr,
			"cordon: daemon: reconcile: killed the sandbox of segment %u of %s, still "
			"running after its job ended\n",
			s->n, s->job);
	close(rfd);
	return 0;
}

static void sweep_strays(struct hostd *d, char *const *finished)
{
	for (size_t i = 0; finished && finished[i]; i++) {
		struct err *e = NULL;

		if (host_db_segments(d->db, finished[i], sweep_segment, d, &e) < 0)
			err_print(stderr, e);
		err_free(e);
	}
}

/* Every few seconds and at start: sweep strays of finished jobs, and
 * remove the run dirs and scratch workspaces of jobs past retention (the
 * database keeps their history). Segments whose wrapper died are settled
 * by their pidfds, adopted ones too. */
/* Reconcile's part on the container daemons the bindings use: a child
 * (`cordon container sweep`) per place removes what carries this host's
 * label for a job that is not live; the loop never waits on a daemon. */
static void sweep_containers(struct hostd *d, const struct host_config *cfg, char *const *live)
{
	_cleanup_strv_ char **seen = NULL;
	size_t k = 0;

	for (size_t i = 0; i < HOSTD_SWEEPS_MAX; i++)
		if (d->sweeps[i] > 0 && waitpid(d->sweeps[i], NULL, WNOHANG) != 0)
			d->sweeps[i] = 0;
	for (size_t i = 0; i < HOSTD_SWEEPS_MAX; i++)
		if (d->sweeps[i] > 0)
			return; /* the last pass's still run */
	for (size_t i = 0; cfg && i < cfg->n && k < HOSTD_SWEEPS_MAX; i++) {
		const json_t *c = cfg->bindings[i].container;
		_cleanup_strv_ char **argv = NULL;
		_cleanup_free_ char *where = NULL;
		pid_t pid;

		_cleanup_free_ char *key = NULL;
		const char *ep = json_string_value(json_object_get(c, "endpoint"));
		const char *ctx = json_string_value(json_object_get(c, "context"));
		const char *rem = json_string_value(json_object_get(c, "remote"));
		const char *hk = json_string_value(json_object_get(c, "host_key"));

		/* one pass per place (a daemon; a remote's account as its key
		 * pins it: another key is another place, and fails alone) */
		if (!c || !(where = json_dumps(c, JSON_COMPACT | JSON_SORT_KEYS)) ||
		    asprintf(&key, "%s|%s|%s|%s|%s",
			     json_string_value(json_object_get(c, "provider")), ep ? ep : "",
			     ctx ? ctx : (ep || rem ? "" : "default"), rem ? rem : "",
			     hk ? hk : "") < 0)
			continue;
		bool dup = false;
		for (size_t s2 = 0; seen && seen[s2]; s2++)
			dup = dup || strcmp(seen[s2], key) == 0;
		if (dup || strv_push(&seen, key) < 0)
			continue;
		if (strv_push(&argv, d->self) < 0 || strv_push(&argv, "container") < 0 ||
		    strv_push(&argv, "sweep") < 0 || strv_push(&argv, "--state-dir") < 0 ||
		    strv_push(&argv, d->state) < 0 || strv_push(&argv, "--config-json") < 0 ||
		    strv_push(&argv, where) < 0)
			continue;
		for (size_t j = 0; live && live[j]; j++)
			if (strv_push(&argv, "--live") < 0 || strv_push(&argv, live[j]) < 0)
				break;
		if (posix_spawn(&pid, d->self, NULL, NULL, argv, environ) == 0)
			d->sweeps[k++] = pid;
	}
}

void hostd_reconcile(struct hostd *d)
{
	_cleanup_err_ struct err *e = NULL, *ce = NULL;
	_cleanup_json_ json_t *jobs = host_db_jobs_json(d->db, &e);
	_cleanup_strv_ char **finished = NULL;
	unsigned long long keep = HOST_RETENTION_DEFAULT_DAYS * 86400000ULL;
	struct host_config *cfg = NULL;
	int64_t now = hostd_wall_ms();
	json_t *j;
	size_t i;

	if (!jobs)
		return;
	_cleanup_strv_ char **live = NULL;
	if (host_config_load(d->config, &cfg, &ce) == 0)
		keep = cfg->retention_ms;
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "id"));
		if (json_integer_value(json_object_get(j, "ended_ms")) != 0)
			continue;
		if (id)
			(void)strv_push(&live, id);
	}
	hostd_attaches_reap(d);
	for (struct attaching *a = d->attaches; a; a = a->next)
		(void)strv_push(&live, a->job);
	if (d->passes++ % HOSTD_SWEEP_EVERY == 0)
		sweep_containers(d, cfg, live);
	host_config_free(cfg);
	json_array_foreach(jobs, i, j) {
		const char *id = json_string_value(json_object_get(j, "id"));
		int64_t ended = json_integer_value(json_object_get(j, "ended_ms"));
		_cleanup_free_ char *runs = NULL;
		_cleanup_close_ int rfd = -1;
		char name[HOST_JOB_ID_MAX];

		if (!id || ended == 0)
			continue;
		if ((unsigned long long)(now - ended) > keep) {
			snprintf(name, sizeof(name), "%s", id);
			if (asprintf(&runs, "%s/runs", d->state) >= 0 &&
			    (rfd = open(runs, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0 &&
			    faccessat(rfd, name, F_OK, AT_SYMLINK_NOFOLLOW) == 0 &&
			    fs_remove_tree(rfd, name, 256) < 0)
				fprintf(stderr, "cordon: daemon: reconcile: cannot remove runs/%s\n", name);
			hostd_remove_own_workspace(d, name);
			host_job_home_remove(d->state, name);
			continue;
		}
		if (now - ended < STRAY_WINDOW_MS)
			(void)strv_push(&finished, id);
	}
	sweep_strays(d, finished);
	hostd_sweep_toolbelts(d);
}
