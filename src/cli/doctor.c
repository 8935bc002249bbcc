/* doctor.c: `cordon doctor [--provider NAME] [--json]`: whether a
 * provider (native by default, or any of this program's with checks:
 * srt) can enforce a policy on this machine, check by check, with a fix
 * for each problem, from its own report. The exit status
 * says ready (0) or not (1), so scripts need not parse the output. */
#include "cli/cli.h"
#include "host/config.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "provider/provider.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static const char doctor_usage[] =
	"usage: cordon doctor [--provider NAME] [--json]\n"
	"       cordon doctor --config FILE [--json]\n\n"
	"Check what the native sandbox needs of this kernel and this user: kernel\n"
	"version, user namespaces, Landlock, seccomp, the new mount API; and how the\n"
	"policy's limits are enforced here (pids, cgroup: a warning where they cannot\n"
	"be). Each check runs for real, as the calling user. Prints PASS, WARN or\n"
	"FAIL per check and a fix for each problem; with --json, one JSON object\n"
	"instead.\n"
	"With --provider srt, srt's checks instead: srt and its helpers (bwrap,\n"
	"socat, rg) and its version (srt_unavailable, untested_version), user\n"
	"namespaces, seccomp, the limits (pids_unenforced, limits_unavailable:\n"
	"warnings), and /usr/bin/true under an empty policy (preflight_failed).\n"
	"With --config, a daemon's config: each binding, whether its provider is\n"
	"ready here.\n\n"
	"Exits 0 when the provider (every binding) is ready, 1 when it is not.\n";

/* A provider's report, from its own JSON: {"ready", "checks": [{"id",
 * "status", "code"?, "detail", "fix"}]}. */
static int doctor_provider(const struct provider *p, bool json)
{
	_cleanup_json_ json_t *j = p->doctor(NULL, NULL);
	_cleanup_free_ char *text = NULL;
	const json_t *c;
	bool ready;
	size_t i;

	if (!j) {
		fprintf(stderr, "cordon: error: cannot build %s's report\n", p->name);
		return EXIT_CORDON;
	}
	ready = json_is_true(json_object_get(j, "ready"));
	if (json) {
		text = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII | JSON_PRESERVE_ORDER);
		if (!text) {
			fprintf(stderr, "cordon: error: cannot encode the report as JSON\n");
			return EXIT_CORDON;
		}
		printf("%s\n", text);
		return ready ? 0 : 1;
	}
	json_array_foreach(json_object_get(j, "checks"), i, c) {
		const char *st = json_string_value(json_object_get(c, "status"));
		const char *code = json_string_value(json_object_get(c, "code"));
		const char *fix = json_string_value(json_object_get(c, "fix"));

		printf("%s  %-9s  %s%s%s\n",
		       st && strcmp(st, "pass") == 0 ? "PASS" : st && strcmp(st, "warn") == 0 ? "WARN" : "FAIL",
		       json_string_value(json_object_get(c, "id")), code && code[0] ? code : "",
		       code && code[0] ? ": " : "", json_string_value(json_object_get(c, "detail")));
		if (st && strcmp(st, "pass") != 0 && fix && fix[0])
			printf("      fix: %s\n", fix);
	}
	if (ready)
		printf("%s: ready\n", p->name);
	else
		printf("%s: unavailable: sandboxed launches run nothing until this is fixed\n",
		       p->name);
	return ready ? 0 : 1;
}

/* Each binding of a daemon's config: can it run here? Its provider's
 * checks, run once per provider. */
static int doctor_config(const char *path, bool json)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *provs = json_object(), *arr = json_array();
	struct host_config *cfg = NULL;
	int rc = 0;

	if (host_config_load(path, &cfg, &e) < 0) {
		err_print(stderr, e);
		return EXIT_CORDON;
	}
	for (size_t i = 0; provs && arr && i < cfg->n; i++) {
		const struct host_binding *b = &cfg->bindings[i];
		const struct provider *p = b->provider ? provider_find(b->provider) : NULL;
		json_t *r = p ? json_object_get(provs, p->name) : NULL;
		const char *why = NULL;
		bool ready;

		if (p && !r && p->doctor && (r = p->doctor(b->container, NULL)))
			json_object_set_new(provs, p->name, r);
		/* without a sandbox nothing needs to be ready: it runs as
		 * the operator, which is said */
		ready = !b->provider || (r && json_is_true(json_object_get(r, "ready")));
		if (!b->provider)
			why = "no sandbox: it runs as the operator";
		else if (!ready)
			why = "its provider is not ready here: see `cordon doctor --provider NAME`";
		json_array_append_new(arr, json_pack("{s:s, s:s?, s:b, s:s?}", "binding", b->name,
						     "provider", b->provider, "ready", ready, "why",
						     why));
		if (json)
			continue;
		printf("%s  %-24s %-7s %s\n", ready ? "PASS" : "FAIL", b->name,
		       b->provider ? b->provider : "-", why ? why : "ready");
	}
	for (size_t i = 0; i < cfg->n; i++)
		if (!json_is_true(json_object_get(json_array_get(arr, i), "ready")))
			rc = 1;
	host_config_free(cfg);
	if (json) {
		_cleanup_json_ json_t *out = json_pack("{s:O, s:O}", "bindings", arr, "providers", provs);
		_cleanup_free_ char *text = out ? json_dumps(out, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;

		if (!text)
			return EXIT_CORDON;
		printf("%s\n", text);
	}
	return rc;
}

int cli_doctor(int argc, char **argv)
{
	const struct provider *provider = provider_find(NULL), *p;
	const char *config = NULL;
	bool json = false;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			fputs(doctor_usage, stdout);
			return 0;
		}
		if (strcmp(argv[i], "--json") == 0) {
			json = true;
			continue;
		}
		if (strcmp(argv[i], "--config") == 0 && i + 1 < argc) {
			config = argv[++i];
			continue;
		}
		/* any of this program's providers that has checks */
		if (strcmp(argv[i], "--provider") == 0 && i + 1 < argc &&
		    (p = provider_find(argv[i + 1])) && p->doctor) {
			provider = p;
			i++;
			continue;
		}
		fprintf(stderr, "cordon: usage: doctor: unknown argument '%s'\n%s",
			argv[i], doctor_usage);
		return EXIT_CORDON;
	}
	if (config)
		return doctor_config(config, json);
	if (!provider || !provider->doctor) {
		fprintf(stderr, "cordon: error: no provider with checks in this program\n");
		return EXIT_CORDON;
	}
	return doctor_provider(provider, json);
}
