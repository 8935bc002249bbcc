/* plan.c: building, hashing, recording and reading back launch plans. */
#include "plan/plan.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#define DIGEST_TAG "cordon-plan-v1"

int plan_new_execution_id(char **out, struct err **e)
{
	unsigned char rnd[8];
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;

	if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
		return err_set(e, ERR_INTERNAL, errno, "getrandom");
	if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof(stamp), "%Y%m%dT%H%M%SZ", &tm))
		return err_set(e, ERR_INTERNAL, 0, "clock");
	if (asprintf(out, "%s-%02x%02x%02x%02x%02x%02x%02x%02x", stamp, rnd[0], rnd[1],
		     rnd[2], rnd[3], rnd[4], rnd[5], rnd[6], rnd[7]) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "execution id");
	return 0;
}

static bool id_is_safe(const char *id)
{
	if (!*id || strlen(id) > 64)
		return false;
	for (const char *p = id; *p; p++)
		if (!((*p >= '0' && *p <= '9') || (*p >= 'a' && *p <= 'z') ||
		      (*p >= 'A' && *p <= 'Z') || *p == '-' || *p == '_'))
			return false;
	return true;
}

int plan_make_paths(const char *state_dir, const char *execution,
		    unsigned int segment, struct plan_paths *out,
		    struct err **e)
{
	_cleanup_close_ int root = -1, fd = -1;
	_cleanup_free_ char *rel_run = NULL, *rel_rec = NULL;

	/* The record dir is made by plan_record(), when the record is written. */
	memset(out, 0, sizeof(*out));
	if (!id_is_safe(execution) || segment == 0)
		return err_set(e, ERR_INTERNAL, EINVAL, "execution id");
	if (asprintf(&rel_run, "runs/%s/run", execution) < 0 ||
	    asprintf(&rel_rec, "runs/%s/sandbox/%u", execution, segment) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "run dirs");
	/* The state dir is canonical, so reaching it refuses any link. */
	root = fs_open_nofollow(AT_FDCWD, state_dir, O_PATH | O_DIRECTORY, 0);
	if (root < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "state dir `%s`", state_dir);
	fd = fs_mkdirs_beneath(root, rel_run, 0700, e);
	if (fd < 0)
		return err_wrap(e, "state dir `%s`", state_dir);
	close(fd);
	out->execution = strdup(execution);
	out->segment = segment;
	out->run_dir = fs_path_join(state_dir, rel_run);
	out->record_dir = fs_path_join(state_dir, rel_rec);
	if (asprintf(&out->exec_dir, "%s/runs/%s", state_dir, execution) < 0)
		out->exec_dir = NULL;
	if (!out->execution || !out->run_dir || !out->record_dir || !out->exec_dir) {
		plan_paths_clear(out);
		return err_set(e, ERR_INTERNAL, ENOMEM, "run dirs");
	}
	return 0;
}

void plan_paths_remove(const struct plan_paths *p)
{
	_cleanup_free_ char *sandbox = NULL;

	if (!p->exec_dir)
		return;
	sandbox = fs_path_join(p->exec_dir, "sandbox");
	rmdir(p->record_dir);
	if (sandbox)
		rmdir(sandbox);
	rmdir(p->run_dir);
	rmdir(p->exec_dir);
}

void plan_paths_clear(struct plan_paths *p)
{
	free(p->execution);
	free(p->exec_dir);
	free(p->run_dir);
	free(p->record_dir);
	memset(p, 0, sizeof(*p));
}

int plan_digest(const struct plan *p, char out[SHA256_HEX_LEN + 1],
		struct err **e)
{
	_cleanup_free_ char *data = json_dump_canonical(p->data);
	struct sha256 *h = sha256_new();
	char argc[32];
	size_t n = strv_len(p->argv);
	int r = 0;

	if (!h || !data) {
		sha256_free(h);
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan digest");
	}
	snprintf(argc, sizeof(argc), "%zu", n);
	r |= sha256_update_field(h, DIGEST_TAG, strlen(DIGEST_TAG));
	r |= sha256_update_field(h, argc, strlen(argc));
	for (size_t i = 0; i < n; i++)
		r |= sha256_update_field(h, p->argv[i], strlen(p->argv[i]));
	r |= sha256_update_field(h, data, strlen(data));
	if (r < 0) {
		sha256_free(h);
		return err_set(e, ERR_INTERNAL, 0, "plan digest");
	}
	if (sha256_final_hex(h, out) < 0)
		return err_set(e, ERR_INTERNAL, 0, "plan digest");
	return 0;
}

static char *summarise(const struct grant *g)
{
	size_t k[4] = { 0 };
	char mem[32] = "", cpu[32] = "";
	char *s = NULL;

	for (size_t i = 0; i < g->n_rules; i++)
		k[g->rules[i].kind]++;
	if (g->limits.memory)
		snprintf(mem, sizeof(mem), ", memory %llum", g->limits.memory >> 20);
	if (g->limits.cpu_millis)
		snprintf(cpu, sizeof(cpu), ", cpus %u.%02u", g->limits.cpu_millis / 1000,
			 g->limits.cpu_millis % 1000 / 10);
	if (asprintf(&s, "write %zu, deny %zu, exceptions %zu, read-only %zu, "
			 "hosts %zu, unix sockets %s, pids %lu%s%s",
		     k[GRANT_WRITE], k[GRANT_DENY], k[GRANT_READ], k[GRANT_READ_ONLY],
		     g->n_hosts, g->unix_sockets_all ? "all" : "none", g->limits.pids, mem,
		     cpu) < 0)
		return NULL;
	return s;
}

int plan_build(const struct grant *g, char *const *argv, struct plan **out,
	       struct err **e)
{
	struct plan *p = calloc(1, sizeof(*p));

	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan");
	for (size_t i = 0; argv[i]; i++) {
		json_t *probe = json_string(argv[i]);
		if (!probe) {
			free(p);
			return err_set(e, ERR_CONFIG, 0,
				       "argv[%zu] is not valid UTF-8; a plan records it as text", i);
		}
		json_decref(probe);
	}
	p->argv = strv_dup(argv);
	p->env = calloc(1, sizeof(char *));
	p->summary = summarise(g);
	p->data = grant_to_json(g);
	p->signals = PLAN_SIGNALS_TERM;
	if (!p->data) {
		plan_free(p);
		return err_set(e, ERR_CONFIG, 0,
			       "the grant cannot be recorded: a path in it is not valid UTF-8");
	}
	if (!p->argv || !p->env || !p->summary) {
		plan_free(p);
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan");
	}
	if (plan_digest(p, p->digest, e) < 0) {
		plan_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

json_t *plan_to_json(const struct plan *p)
{
	return json_pack("{s:i, s:o, s:o, s:s, s:s, s:O, s:s}", "version", 1,
			 "argv", json_strv(p->argv), "env", json_strv(p->env),
			 "signals", p->signals == PLAN_SIGNALS_TERM ? "term" : "kill",
			 "summary", p->summary, "data", p->data, "digest", p->digest);
}

void plan_free(struct plan *p)
{
	if (!p)
		return;
	strv_free(p->argv);
	strv_free(p->env);
	free(p->summary);
	json_decref(p->data);
	free(p);
}
