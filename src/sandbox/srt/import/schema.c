/* schema.c: srt's settings schema (SandboxRuntimeConfigSchema
 * of @anthropic-ai/sandbox-runtime 0.0.83), as a table, and the check of a
 * document against it. srt itself drops a key it does not know without a
 * word (but in `credentials`), so a misspelt "denyread" would deny
 * nothing; cordon refuses every key the table lacks, at every level.
 * Values are checked for their JSON type, integer ranges and enumerations;
 * srt's finer checks (a domain's grammar, a regular expression) are left
 * to the import, which reads each value as cordon reads a policy's. */
#include "sandbox/srt/import/import.h"
#include "lib/cleanup.h"
#include "lib/json.h"

#include <errno.h>
#include <string.h>

enum srt_type {
	T_BOOL,
	T_STRING,
	T_INT,		/* a whole number from min to max */
	T_ENUM,		/* one of values */
	T_STRINGS,	/* an array of strings */
	T_PATHS,	/* an array of paths: a string, or {"path": s, "literal": true} */
	T_OBJECT,	/* fields */
	T_OBJECTS,	/* an array of objects, each of fields */
	T_MAP_STRING,	/* an object whose every value is a string */
	T_MAP_STRINGS,	/* an object whose every value is an array of strings */
	T_PORT_RANGE,	/* [low, high], whole numbers */
	T_FUNCTION,	/* a library caller's callback: never in a file */
};

struct srt_field {
	const char *name;	/* NULL ends a table */
	enum srt_type type;
	bool required;
	const struct srt_field *fields;
	const char *const *values;
	long long min, max;
};

#define F(n, t, ...) { .name = (n), .type = (t), __VA_ARGS__ }
#define REQ .required = true
#define END { .name = NULL }

static const char *const cred_modes[] = { "deny", "mask", NULL };
static const char *const no_match[] = { "warn", "deny", "error", NULL };
static const char *const decodes[] = { "jwt", NULL };
static const char *const sigv4_policies[] = { "deny", "passthrough", NULL };
static const char *const request_targets[] = { "refuse", "asSpelled", "normalize", NULL };
static const char *const win_backends[] = { "mxc", "srt-win", NULL };

static const struct srt_field mitm_fields[] = {
	F("socketPath", T_STRING, REQ),
	F("domains", T_STRINGS, REQ),
	END,
};

static const struct srt_field tls_fields[] = {
	F("caCertPath", T_STRING),
	F("caKeyPath", T_STRING),
	F("excludeDomains", T_STRINGS),
	F("extraCaCertPaths", T_STRINGS),
	F("maxTunnels", T_INT, .min = 1, .max = 65536),
	F("handshakeTimeoutMs", T_INT, .min = 100, .max = 600000),
	END,
};

static const struct srt_field parent_proxy_fields[] = {
	F("http", T_STRING),
	F("https", T_STRING),
	F("noProxy", T_STRING),
	END,
};

static const struct srt_field network_fields[] = {
	F("allowedDomains", T_STRINGS, REQ),
	F("deniedDomains", T_STRINGS, REQ),
	F("deniedDomainReasons", T_MAP_STRING),
	F("strictAllowlist", T_BOOL),
	F("deniedResolvedAddresses", T_STRINGS),
	F("allowUnixSockets", T_STRINGS),
	F("allowAllUnixSockets", T_BOOL),
	F("allowLocalBinding", T_BOOL),
	F("allowMachLookup", T_STRINGS),
	F("httpProxyPort", T_INT, .min = 1, .max = 65535),
	F("socksProxyPort", T_INT, .min = 1, .max = 65535),
	F("mitmProxy", T_OBJECT, .fields = mitm_fields),
	F("filterRequest", T_FUNCTION),
	F("allowPlaintextHeaderSet", T_BOOL),
	F("stripResponseHeaders", T_STRINGS),
	F("refuseOpaqueTunnels", T_BOOL),
	F("requireHostMatch", T_BOOL),
	F("ambiguousRequestTarget", T_ENUM, .values = request_targets),
	F("tlsTerminate", T_OBJECT, .fields = tls_fields),
	F("parentProxy", T_OBJECT, .fields = parent_proxy_fields),
	END,
};

static const struct srt_field filesystem_fields[] = {
	F("disabled", T_BOOL),
	F("denyRead", T_PATHS, REQ),
	F("allowRead", T_PATHS),
	F("allowWrite", T_PATHS, REQ),
	F("denyWrite", T_PATHS, REQ),
	F("allowGitConfig", T_BOOL),
	END,
};

static const struct srt_field cred_file_fields[] = {
	F("path", T_STRING, REQ),
	F("mode", T_ENUM, REQ, .values = cred_modes),
	F("extract", T_STRING),
	F("onExtractNoMatch", T_ENUM, .values = no_match),
	F("decode", T_ENUM, .values = decodes),
	F("maskClaims", T_STRINGS),
	F("maskDuplicates", T_BOOL),
	F("injectHosts", T_STRINGS),
	END,
};

static const struct srt_field cred_env_fields[] = {
	F("name", T_STRING, REQ),
	F("mode", T_ENUM, REQ, .values = cred_modes),
	F("extract", T_STRING),
	F("onExtractNoMatch", T_ENUM, .values = no_match),
	F("decode", T_ENUM, .values = decodes),
	F("maskClaims", T_STRINGS),
	F("injectHosts", T_STRINGS),
	END,
};

static const struct srt_field aws_pair_fields[] = {
	F("accessKeyIdVar", T_STRING, REQ),
	F("secretAccessKeyVar", T_STRING, REQ),
	F("sessionTokenVar", T_STRING),
	END,
};

static const struct srt_field sigv4_fields[] = {
	F("streaming", T_ENUM, .values = sigv4_policies),
	F("presigned", T_ENUM, .values = sigv4_policies),
	F("sigv4a", T_ENUM, .values = sigv4_policies),
	END,
};

static const struct srt_field credentials_fields[] = {
	F("files", T_OBJECTS, .fields = cred_file_fields),
	F("envVars", T_OBJECTS, .fields = cred_env_fields),
	F("allowPlaintextInject", T_BOOL),
	F("awsPairs", T_OBJECTS, .fields = aws_pair_fields),
	F("sigv4", T_OBJECT, .fields = sigv4_fields),
	END,
};

static const struct srt_field ripgrep_fields[] = {
	F("command", T_STRING, REQ),
	F("args", T_STRINGS),
	F("argv0", T_STRING),
	END,
};

static const struct srt_field seccomp_fields[] = {
	F("applyPath", T_STRING),
	F("argv0", T_STRING),
	END,
};

static const struct srt_field srt_win_fields[] = {
	F("path", T_STRING, REQ),
	END,
};

static const struct srt_field windows_fields[] = {
	F("backend", T_ENUM, .values = win_backends),
	F("sandboxUser", T_STRING),
	F("sublayerGuid", T_STRING),
	F("wfpSublayerGuid", T_STRING),
	F("proxyPortRange", T_PORT_RANGE),
	F("srtWin", T_OBJECT, .fields = srt_win_fields),
	END,
};

static const struct srt_field git_fields[] = {
	F("safeDirectories", T_STRINGS),
	END,
};

static const struct srt_field root_fields[] = {
	F("network", T_OBJECT, REQ, .fields = network_fields),
	F("filesystem", T_OBJECT, REQ, .fields = filesystem_fields),
	F("credentials", T_OBJECT, .fields = credentials_fields),
	F("ignoreViolations", T_MAP_STRINGS),
	F("enableWeakerNestedSandbox", T_BOOL),
	F("allowNestedUserNamespaces", T_BOOL),
	F("enableWeakerNetworkIsolation", T_BOOL),
	F("allowAppleEvents", T_BOOL),
	F("ripgrep", T_OBJECT, .fields = ripgrep_fields),
	F("mandatoryDenySearchDepth", T_INT, .min = 1, .max = 10),
	F("allowPty", T_BOOL),
	F("seccomp", T_OBJECT, .fields = seccomp_fields),
	F("bwrapPath", T_STRING),
	F("socatPath", T_STRING),
	F("javaAgentJarPath", T_STRING),
	F("windows", T_OBJECT, .fields = windows_fields),
	F("git", T_OBJECT, .fields = git_fields),
	END,
};

/* The most fields a table has (network's), with room for the end. */
#define FIELDS_MAX 24

static int bad(struct err **e, const char *path, const char *why)
{
	return err_set(e, ERR_CONFIG, 0, "%s: %s", json_path_show(path), why);
}

static int check_object(const json_t *v, const char *path, const struct srt_field *fields,
			struct err **e);

static bool is_whole(const json_t *v, long long min, long long max)
{
	return json_is_integer(v) && json_integer_value(v) >= min && json_integer_value(v) <= max;
}

/* Each element of an array at path, by check(element, its path). */
static int each_element(const json_t *arr, const char *path, const char *not_array,
			int (*check)(const json_t *, const char *, const void *, struct err **),
			const void *arg, struct err **e)
{
	const json_t *v;
	size_t i;

	if (!json_is_array(arr))
		return bad(e, path, not_array);
	json_array_foreach(arr, i, v) {
		_cleanup_free_ char *ip = json_path_index(path, i);

		if (!ip)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (check(v, ip, arg, e) < 0)
			return -1;
	}
	return 0;
}

static int check_string(const json_t *v, const char *path, const void *arg, struct err **e)
{
	return json_is_string(v) ? 0 : bad(e, path, "must be a string");
}

/* A path entry: a string, or exactly {"path": string, "literal": true}. */
static int check_path_entry(const json_t *v, const char *path, const void *arg,
			    struct err **e)
{
	static const char *const keys[] = { "path", "literal", NULL };
	const json_t *p, *lit;

	if (json_is_string(v))
		return 0;
	if (!json_is_object(v))
		return bad(e, path, "must be a path, or {\"path\": <path>, \"literal\": true}");
	if (json_check_keys(v, path, keys, e) < 0)
		return -1;
	p = json_object_get(v, "path");
	lit = json_object_get(v, "literal");
	if (!p || !json_is_string(p)) {
		_cleanup_free_ char *kp = json_path_key(path, "path");
		return bad(e, kp, p ? "must be a string" : "missing (srt requires it)");
	}
	if (!lit || !json_is_true(lit)) {
		_cleanup_free_ char *kp = json_path_key(path, "literal");
		return bad(e, kp, lit ? "must be true" : "missing (srt requires it)");
	}
	return 0;
}

static int check_fields_object(const json_t *v, const char *path, const void *arg,
			       struct err **e)
{
	return check_object(v, path, arg, e);
}

static int check_string_array(const json_t *v, const char *path, const void *arg,
			      struct err **e)
{
	return each_element(v, path, "must be an array of strings", check_string, NULL, e);
}

/* Every value of a map (an object with keys of the writer's choosing). */
static int each_value(const json_t *obj, const char *path, const char *not_map,
		      int (*check)(const json_t *, const char *, const void *, struct err **),
		      struct err **e)
{
	const char *key;
	json_t *v;

	if (!json_is_object(obj))
		return bad(e, path, not_map);
	json_object_foreach((json_t *)obj, key, v) {
		_cleanup_free_ char *kp = json_path_key(path, key);

		if (!kp)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (check(v, kp, NULL, e) < 0)
			return -1;
	}
	return 0;
}

static int check_enum(const json_t *v, const char *path, const char *const *values,
		      struct err **e)
{
	char why[160] = "must be one of";
	size_t n = strlen(why);

	for (size_t i = 0; json_is_string(v) && values[i]; i++)
		if (strcmp(json_string_value(v), values[i]) == 0)
			return 0;
	for (size_t i = 0; values[i] && n < sizeof(why); i++)
		n += (size_t)snprintf(why + n, sizeof(why) - n, "%s \"%s\"", i ? "," : "",
				      values[i]);
	return bad(e, path, why);
}

static int check_value(const json_t *v, const char *path, const struct srt_field *f,
		       struct err **e)
{
	char why[96];

	switch (f->type) {
	case T_BOOL:
		return json_is_boolean(v) ? 0 : bad(e, path, "must be true or false");
	case T_STRING:
		return check_string(v, path, NULL, e);
	case T_INT:
		if (is_whole(v, f->min, f->max))
			return 0;
		snprintf(why, sizeof(why), "must be a whole number from %lld to %lld", f->min,
			 f->max);
		return bad(e, path, why);
	case T_ENUM:
		return check_enum(v, path, f->values, e);
	case T_STRINGS:
		return check_string_array(v, path, NULL, e);
	case T_PATHS:
		return each_element(v, path, "must be an array of paths", check_path_entry, NULL,
				    e);
	case T_OBJECT:
		return check_object(v, path, f->fields, e);
	case T_OBJECTS:
		return each_element(v, path, "must be an array of objects", check_fields_object,
				    f->fields, e);
	case T_MAP_STRING:
		return each_value(v, path, "must be an object of strings", check_string, e);
	case T_MAP_STRINGS:
		return each_value(v, path, "must be an object of arrays of strings",
				  check_string_array, e);
	case T_PORT_RANGE:
		if (json_is_array(v) && json_array_size(v) == 2 &&
		    is_whole(json_array_get(v, 0), 1, 65535) &&
		    is_whole(json_array_get(v, 1), 1, 65535))
			return 0;
		return bad(e, path, "must be [low, high], two whole numbers from 1 to 65535");
	case T_FUNCTION:
		return bad(e, path, "is a library caller's function, which a settings file "
			   "cannot hold (srt refuses it)");
	}
	return bad(e, path, "has no known type");
}

static int check_object(const json_t *v, const char *path, const struct srt_field *fields,
			struct err **e)
{
	const char *names[FIELDS_MAX + 1];
	size_t n = 0;

	if (!json_is_object(v))
		return bad(e, path, "must be an object");
	for (; fields[n].name; n++) {
		if (n == FIELDS_MAX)
			return err_set(e, ERR_INTERNAL, 0, "srt settings: a schema table is too long");
		names[n] = fields[n].name;
	}
	names[n] = NULL;
	if (json_check_keys(v, path, names, e) < 0)
		return -1;
	for (const struct srt_field *f = fields; f->name; f++) {
		const json_t *fv = json_object_get(v, f->name);
		_cleanup_free_ char *kp = json_path_key(path, f->name);

		if (!kp)
			return err_set(e, ERR_INTERNAL, ENOMEM, "srt settings");
		if (!fv && f->required)
			return bad(e, kp, "missing (srt requires it)");
		if (fv && check_value(fv, kp, f, e) < 0)
			return -1;
	}
	return 0;
}

int srt_schema_check(const json_t *root, struct err **e)
{
	return check_object(root, "", root_fields, e);
}
