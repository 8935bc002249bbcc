/* plan.c: the plan's digest (deterministic, sensitive to every byte, and
 * matching the documented encoding), its record (0444 in 0700 dirs,
 * atomic) and the refusal of a changed record or a wrong pin. */
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "plan/plan.h"
#include "tap.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static struct plan *mk(const char *a0, const char *a1, const char *data)
{
	struct plan *p = calloc(1, sizeof(*p));
	json_error_t je;

	strv_push(&p->argv, a0);
	if (a1)
		strv_push(&p->argv, a1);
	p->env = calloc(1, sizeof(char *));
	p->summary = strdup("test");
	p->data = json_loads(data, 0, &je);
	return p;
}

static const char *digest(struct plan *p)
{
	static char d[SHA256_HEX_LEN + 1];
	struct err *e = NULL;

	if (plan_digest(p, d, &e) < 0) {
		err_free(e);
		return "error";
	}
	return d;
}

static void test_digest(void)
{
	struct plan *a = mk("echo", "hi there", "{\"b\":[1,\"x\"],\"a\":\"y\"}");
	struct plan *b = mk("echo", "hi there", "{\"a\":\"y\",\"b\":[1,\"x\"]}");
	char da[SHA256_HEX_LEN + 1];

	/* The documented encoding, computed independently (sha256 of the
	 * length-prefixed fields) when this test was written. */
	is_str(digest(a), "c6e7a27171c8a5c72fb831c4d8c4d3649134799f2b0b9b56e90431986d34f868",
	       "digest matches the documented encoding");
	strcpy(da, digest(a));
	is_str(digest(b), da, "key order in data does not change the digest");
	is_str(digest(a), da, "the same plan hashes the same twice");
	plan_free(b);

	b = mk("echo", "hi therf", "{\"b\":[1,\"x\"],\"a\":\"y\"}");
	ok(strcmp(digest(b), da) != 0, "one byte of argv changes it");
	plan_free(b);
	b = mk("echo", "hi there", "{\"b\":[1,\"y\"],\"a\":\"y\"}");
	ok(strcmp(digest(b), da) != 0, "one byte of data changes it");
	plan_free(b);
	b = mk("ech", "ohi there", "{\"b\":[1,\"x\"],\"a\":\"y\"}");
	ok(strcmp(digest(b), da) != 0, "moving a byte between arguments changes it");
	plan_free(b);
	b = mk("echo hi there", NULL, "{\"b\":[1,\"x\"],\"a\":\"y\"}");
	ok(strcmp(digest(b), da) != 0, "joining arguments changes it");
	plan_free(b);
	plan_free(a);
}

static int mode_of(const char *p)
{
	struct stat st;
	return stat(p, &st) < 0 ? -1 : (int)(st.st_mode & 07777);
}

static void test_record(void)
{
	char tmpl[] = "/tmp/cordon-plan-XXXXXX", p[512];
	char *state = mkdtemp(tmpl), *id = NULL, *pin = NULL;
	struct plan_paths paths;
	struct plan *a = mk("echo", "hi", "{\"k\":\"v\"}"), *back = NULL;
	struct err *e = NULL;

	if (!state || plan_new_execution_id(&id, &e) < 0 ||
	    plan_make_paths(state, id, 1, &paths, &e) < 0) {
		ok(0, "make paths: %s", e ? e->msg : "mkdtemp");
		return;
	}
	strcpy(a->digest, digest(a));
	ok(plan_record(a, &paths, NULL, true, &e) == 0, "plan recorded");
	snprintf(p, sizeof(p), "%s/plan.json", paths.record_dir);
	is_int(mode_of(p), 0444, "plan.json is 0444");
	is_int(mode_of(paths.record_dir), 0700, "record dir is 0700");
	is_int(mode_of(paths.exec_dir), 0700, "execution dir is 0700");
	is_int(mode_of(paths.run_dir), 0700, "run dir is 0700");
	ok(plan_read_pin(paths.exec_dir, 1, &pin, &e) == 0 && strcmp(pin, a->digest) == 0,
	   "the pin holds the digest");
	ok(plan_read_record(paths.record_dir, pin, &back, &e) == 0, "record reads back under its pin");
	if (back)
		is_str(back->digest, a->digest, "with the same digest");
	plan_free(back);
	back = NULL;
	ok(plan_read_record(paths.record_dir, "0000", &back, &e) < 0 && e &&
		   strstr(e->msg, "does not match its pin"),
	   "a wrong pin is refused");
	err_free(e);
	e = NULL;
	ok(plan_record(a, &paths, NULL, true, &e) < 0 && e && strstr(e->msg, "pinned already"),
	   "a segment is pinned once");
	err_free(e);
	e = NULL;

	/* Change one byte of the record, as an attacker with write access would. */
	char *buf = NULL;
	size_t len = 0;
	if (fs_read_file(AT_FDCWD, p, 1 << 20, &buf, &len, &e) == 0) {
		char *hit = strstr(buf, "\"hi\"");
		if (hit)
			hit[1] = 'H';
		chmod(p, 0644);
		FILE *f = fopen(p, "w");
		if (f) {
			fwrite(buf, 1, len, f);
			fclose(f);
		}
	}
	free(buf);
	ok(plan_read_record(paths.record_dir, pin, &back, &e) < 0 && e &&
		   strstr(e->msg, "does not match its digest"),
	   "a changed record is refused");
	err_free(e);
	e = NULL;

	/* A state dir whose runs/ is a symbolic link is not followed. */
	char tmpl2[] = "/tmp/cordon-plan2-XXXXXX", link[512], tgt[512];
	char *st2 = mkdtemp(tmpl2);
	struct plan_paths p2;
	snprintf(tgt, sizeof(tgt), "%s/elsewhere", st2);
	snprintf(link, sizeof(link), "%s/runs", st2);
	mkdir(tgt, 0700);
	if (symlink(tgt, link) < 0)
		diag("symlink: %s", strerror(errno));
	ok(plan_make_paths(st2, id, 1, &p2, &e) < 0, "runs/ through a symbolic link is refused");
	err_free(e);
	e = NULL;
	unlink(link);
	ok(plan_make_paths(st2, id, 1, &p2, &e) == 0, "control: a real runs/ works");
	plan_paths_clear(&p2);
	ok(plan_make_paths(st2, "../x", 1, &p2, &e) < 0, "an execution id with a path in it is refused");
	err_free(e);

	free(pin);
	free(id);
	plan_free(a);
	plan_paths_clear(&paths);
}

int main(void)
{
	test_digest();
	test_record();
	return done_testing();
}
