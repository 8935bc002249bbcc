/* context.c: where a Docker daemon is, from a Docker CLI context's name
 * (the part of engine.h that reads the CLI's context store). A binding
 * names a context so that the daemon it uses never changes with the CLI's
 * current one; the store is read strictly: one small file, no symbolic
 * link beneath the config directory, strict JSON, its own name inside.
 * A context that says TLS is refused (cordon has none). */
#include "container/docker/engine/engine.h"

#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/sha256.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CONTEXT_META_MAX ((size_t)64 * 1024)
#define CONTEXT_NAME_MAX 100
#define CONTEXT_HOST_MAX 4096

int engine_config_dir(char **out, struct err **e)
{
	const char *dc = getenv("DOCKER_CONFIG"), *home = getenv("HOME");

	*out = NULL;
	if (dc && dc[0]) {
		if (dc[0] != '/')
			return err_set(e, ERR_CONFIG, 0, "DOCKER_CONFIG is not an absolute path");
		*out = strdup(dc);
	} else {
		if (!home || home[0] != '/')
			return err_set(e, ERR_CONFIG, 0,
				       "no Docker config directory (set DOCKER_CONFIG or HOME)");
		*out = fs_path_join(home, ".docker");
	}
	return *out ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "docker config directory");
}

/* The CLI's rule for a context's name. */
static bool context_name_ok(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= CONTEXT_NAME_MAX && strspn(s, ENGINE_ALNUM) > 0 &&
	       strspn(s, ENGINE_ALNUM "_.+-") == n;
}

/* A context that says TLS (SkipTLSVerify: TLS without checking the
 * daemon; or TLS material of its own, contexts/tls/<digest>/) is
 * refused: cordon has no TLS, and speaking plain HTTP to a daemon the
 * operator set up for TLS would give its root to the network. */
static int context_tls(int dir, const char *hex, json_t *meta, const char *context,
		       struct err **e)
{
	json_t *skip = json_object_get(
		json_object_get(json_object_get(meta, "Endpoints"), "docker"), "SkipTLSVerify");
	_cleanup_close_ int tls = -1;
	char rel[128];

	if (skip && !json_is_boolean(skip))
		return err_set(e, ERR_CONFIG, 0, "docker context `%s`: SkipTLSVerify is not a boolean",
			       context);
	snprintf(rel, sizeof(rel), "contexts/tls/%s", hex);
	tls = fs_open_nofollow(dir, rel, O_PATH, 0);
	if (tls < 0 && errno != ENOENT)
		return err_set(e, ERR_UNAVAILABLE, errno, "docker context `%s`: open %s", context,
			       rel);
	if (json_is_true(skip) || tls >= 0)
		return err_set(e, ERR_UNAVAILABLE, 0,
			       "docker context `%s` says TLS (%s): TLS is not built into cordon",
			       context, tls >= 0 ? "it has TLS material" : "SkipTLSVerify");
	return 0;
}

int engine_context_endpoint(const char *config_dir, const char *context, char **endpoint,
			    struct err **e)
{
	char hex[SHA256_HEX_LEN + 1], rel[128];
	_cleanup_close_ int dir = -1, fd = -1;
	_cleanup_json_ json_t *meta = NULL;
	_cleanup_free_ char *buf = NULL;
	const char *name, *host;
	size_t len = 0;

	*endpoint = NULL;
	if (!context || !context_name_ok(context))
		return err_set(e, ERR_CONFIG, 0,
			       "a docker context's name is letters, digits, '_', '.', '+' and "
			       "'-', at most %d",
			       CONTEXT_NAME_MAX);
	if (strcmp(context, "default") == 0) {
		*endpoint = strdup(ENGINE_DEFAULT_ENDPOINT);
		return *endpoint ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "docker context");
	}
	if (!config_dir || config_dir[0] != '/')
		return err_set(e, ERR_CONFIG, 0, "docker context `%s`: no config directory",
			       context);
	/* the store keeps a context under the digest of its name */
	if (sha256_hex(context, strlen(context), hex) < 0)
		return err_set(e, ERR_INTERNAL, 0, "docker context `%s`: digest", context);
	snprintf(rel, sizeof(rel), "contexts/meta/%s/meta.json", hex);
	/* the config directory is the operator's (it may be reached through
	 * a link of theirs); nothing beneath it may be a link */
	dir = open(config_dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	fd = dir < 0 ? -1 : fs_open_nofollow(dir, rel, O_RDONLY, 0);
	if (fd < 0 && errno == ENOENT)
		return err_set(e, ERR_CONFIG, 0, "docker context `%s` not found (no %s/%s)",
			       context, config_dir, rel);
	if (fd < 0)
		return err_set(e, ERR_UNAVAILABLE, errno, "docker context `%s`: open %s/%s",
			       context, config_dir, rel);
	if (fs_read_fd(fd, rel, CONTEXT_META_MAX, &buf, &len, e) < 0)
		return err_wrap(e, "docker context `%s`", context);
	meta = json_parse_strict(buf, len, e);
	if (!meta)
		return err_wrap(e, "docker context `%s`: %s/%s", context, config_dir, rel);
	name = json_string_value(json_object_get(meta, "Name"));
	host = json_string_value(json_object_get(
		json_object_get(json_object_get(meta, "Endpoints"), "docker"), "Host"));
	if (!name || strcmp(name, context) != 0)
		return err_set(e, ERR_CONFIG, 0, "docker context `%s`: %s/%s names another context",
			       context, config_dir, rel);
	/* engine_open checks the endpoint itself */
	if (!host || !host[0] || strlen(host) > CONTEXT_HOST_MAX)
		return err_set(e, ERR_CONFIG, 0, "docker context `%s` has no docker endpoint",
			       context);
	if (context_tls(dir, hex, meta, context, e) < 0)
		return -1;
	*endpoint = strdup(host);
	return *endpoint ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "docker context");
}
