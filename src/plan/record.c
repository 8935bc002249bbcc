/* record.c: a plan's record on disk (plan.json, read-only, outside every
 * grant) and the pin of its digest with the segment. Reading a record
 * back recomputes its digest: a record that was changed is refused. */
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
#include <unistd.h>

#define RECORD_MAX ((size_t)4 << 20)
#define PINS_FILE "pins.json"

static int write_json(const char *dir, const char *name, json_t *j, mode_t mode,
		      bool durable, struct err **e)
{
	_cleanup_free_ char *text = NULL;
	_cleanup_close_ int fd = -1;

	if (!j)
		return err_set(e, ERR_INTERNAL, ENOMEM, "`%s`", name);
	text = json_dumps(j, JSON_INDENT(2) | JSON_SORT_KEYS | JSON_ENSURE_ASCII);
	if (!text)
		return err_set(e, ERR_INTERNAL, ENOMEM, "`%s`", name);
	fd = fs_open_nofollow(AT_FDCWD, dir, O_PATH | O_DIRECTORY, 0);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", dir);
	return fs_write_atomic(fd, name, text, strlen(text), mode, durable, e);
}

static int pin(const struct plan *p, const struct plan_paths *paths,
	       const struct plan_root *root, struct err **e)
{
	_cleanup_json_ json_t *pins = NULL;
	_cleanup_free_ char *buf = NULL, *key = NULL;
	_cleanup_close_ int dfd = -1;
	struct err *rerr = NULL;

	dfd = fs_open_nofollow(AT_FDCWD, paths->exec_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "open `%s`", paths->exec_dir);
	if (fs_read_file(dfd, PINS_FILE, RECORD_MAX, &buf, NULL, &rerr) == 0) {
		pins = json_parse_strict(buf, strlen(buf), e);
		if (!pins || !json_is_object(pins))
			return err_set(e, ERR_UNAVAILABLE, 0, "`%s/%s` is damaged",
				       paths->exec_dir, PINS_FILE);
	} else {
		err_free(rerr);
		pins = json_object();
	}
	if (asprintf(&key, "%u", paths->segment) < 0 || !pins)
		return err_set(e, ERR_INTERNAL, ENOMEM, "pin");
	if (json_object_get(pins, key))
		return err_set(e, ERR_UNAVAILABLE, EEXIST, "segment %u of `%s` is pinned already",
			       paths->segment, paths->execution);
	json_t *entry = json_pack("{s:s, s:s}", "digest", p->digest, "summary", p->summary);
	if (entry && root)
		json_object_set_new(entry, "root",
				    json_pack("{s:i, s:I, s:s}", "pid", root->pid, "start_ticks",
					      (json_int_t)root->start_ticks, "provider",
					      root->provider));
	if (!entry || json_object_set_new(pins, key, entry) < 0)
		return err_set(e, ERR_INTERNAL, ENOMEM, "pin");
	/* A pin lost to a crash leaves a record nothing adopts: fail closed,
	 * so it needs no fsync of its own. */
	return write_json(paths->exec_dir, PINS_FILE, pins, 0600, false, e);
}

int plan_record(const struct plan *p, const struct plan_paths *paths,
		const struct plan_root *root, bool durable, struct err **e)
{
	_cleanup_json_ json_t *j = plan_to_json(p);
	_cleanup_close_ int xfd = -1, rfd = -1;
	char rel[32];

	/* <exec_dir>/sandbox/<segment>, no symbolic link on the way */
	snprintf(rel, sizeof(rel), "sandbox/%u", paths->segment);
	xfd = fs_open_nofollow(AT_FDCWD, paths->exec_dir, O_PATH | O_DIRECTORY, 0);
	if (xfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "execution `%s`", paths->exec_dir);
	rfd = fs_mkdirs_beneath(xfd, rel, 0700, e);
	if (rfd < 0)
		return err_wrap(e, "record the plan");
	if (write_json(paths->record_dir, "plan.json", j, 0444, durable, e) < 0)
		return err_wrap(e, "record the plan");
	if (pin(p, paths, root, e) < 0)
		return err_wrap(e, "pin the plan");
	return 0;
}

int plan_sync_record(const char *record_dir, struct err **e)
{
	_cleanup_close_ int dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_RDONLY | O_DIRECTORY, 0);
	_cleanup_close_ int fd = -1;

	if (dfd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "record `%s`", record_dir);
	fd = fs_open_nofollow(dfd, "plan.json", O_RDONLY, 0);
	if (fd < 0 || fsync(fd) < 0 || fsync(dfd) < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "sync the record `%s`", record_dir);
	return 0;
}

int plan_read_record(const char *record_dir, const char *pin_digest,
		     struct plan **out, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *j = NULL;
	_cleanup_close_ int dfd = -1;
	json_t *argv, *env, *data;
	const char *digest = NULL, *summary = NULL, *signals = NULL;
	char again[SHA256_HEX_LEN + 1];
	struct plan *p;
	int version = 0;

	dfd = fs_open_nofollow(AT_FDCWD, record_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_DENIED, errno, "record `%s`", record_dir);
	if (fs_read_file(dfd, "plan.json", RECORD_MAX, &buf, NULL, e) < 0)
		return err_reclass(e, ERR_DENIED);
	j = json_parse_strict(buf, strlen(buf), e);
	if (!j)
		return err_reclass(e, ERR_DENIED);
	if (json_unpack(j, "{s:i, s:o, s:o, s:s, s:s, s:o, s:s !}", "version", &version,
			"argv", &argv, "env", &env, "signals", &signals,
			"summary", &summary, "data", &data, "digest", &digest) < 0 ||
	    version != 1 || (strcmp(signals, "term") != 0 && strcmp(signals, "kill") != 0))
		return err_set(e, ERR_DENIED, 0, "record `%s/plan.json` is malformed", record_dir);
	p = calloc(1, sizeof(*p));
	if (!p)
		return err_set(e, ERR_INTERNAL, ENOMEM, "plan");
	p->data = json_incref(data);
	p->summary = strdup(summary);
	p->signals = strcmp(signals, "kill") == 0 ? PLAN_SIGNALS_KILL : PLAN_SIGNALS_TERM;
	if (json_to_strv(argv, &p->argv) < 0 || json_to_strv(env, &p->env) < 0 ||
	    !p->summary || plan_digest(p, again, e) < 0) {
		plan_free(p);
		return err_set(e, ERR_DENIED, 0, "record `%s/plan.json` is malformed", record_dir);
	}
	if (strcmp(again, digest) != 0 || (pin_digest && strcmp(again, pin_digest) != 0)) {
		plan_free(p);
		return err_set(e, ERR_DENIED, 0,
			       "record `%s/plan.json` does not match its %s", record_dir,
			       strcmp(again, digest) != 0 ? "digest" : "pin");
	}
	memcpy(p->digest, again, sizeof(again));
	*out = p;
	return 0;
}

int plan_read_pin(const char *exec_dir, unsigned int segment, char **digest,
		  struct err **e)
{
	return plan_read_pin_root(exec_dir, segment, digest, NULL, e);
}

int plan_read_pin_root(const char *exec_dir, unsigned int segment, char **digest,
		       struct plan_root *root, struct err **e)
{
	_cleanup_free_ char *buf = NULL;
	_cleanup_json_ json_t *pins = NULL;
	_cleanup_close_ int dfd = -1;
	const char *d = NULL;
	char key[16];

	dfd = fs_open_nofollow(AT_FDCWD, exec_dir, O_PATH | O_DIRECTORY, 0);
	if (dfd < 0)
		return err_set(e, ERR_DENIED, errno, "execution `%s`", exec_dir);
	if (fs_read_file(dfd, PINS_FILE, RECORD_MAX, &buf, NULL, e) < 0)
		return err_reclass(e, ERR_DENIED);
	pins = json_parse_strict(buf, strlen(buf), e);
	if (!pins)
		return err_reclass(e, ERR_DENIED);
	snprintf(key, sizeof(key), "%u", segment);
	json_t *entry = json_object_get(pins, key);
	if (json_unpack(entry, "{s:s}", "digest", &d) < 0)
		return err_set(e, ERR_DENIED, 0, "segment %u of `%s` has no pin", segment,
			       exec_dir);
	if (root) {
		json_int_t pid = 0, ticks = 0;
		if (json_unpack(entry, "{s:{s:I, s:I}}", "root", "pid", &pid, "start_ticks",
				&ticks) < 0 || pid <= 0 || ticks < 0)
			return err_set(e, ERR_DENIED, 0, "segment %u of `%s` has no root pinned",
				       segment, exec_dir);
		root->pid = (int)pid;
		root->start_ticks = (unsigned long long)ticks;
		/* (a pin made before the root named its provider names none) */
		const char *prov = json_string_value(
			json_object_get(json_object_get(entry, "root"), "provider"));
		snprintf(root->provider, sizeof(root->provider), "%s", prov ? prov : "");
	}
	*digest = strdup(d);
	return *digest ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "pin");
}
