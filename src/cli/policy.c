/* policy.c: `cordon policy check FILE`, `default` and `import-srt FILE`
 * (import_srt.c). */
#include "cli/cli.h"
#include "sandbox/srt/import/import.h"
#include "lib/cleanup.h"
#include "lib/json.h"
#include "policy/policy.h"

#include <stdio.h>
#include <string.h>

static const char policy_usage[] =
	"usage: cordon policy check FILE\n"
	"       cordon policy default\n"
	"       cordon policy import-srt FILE\n\n"
	"check: parse FILE strictly; print the normalised policy as JSON and exit 0,\n"
	"       or print `cordon: sandbox_config: <json path>: <reason>` and exit 2.\n"
	"default: print the embedded default policy.\n"
	"import-srt: read FILE as srt's settings (Anthropic's sandbox-runtime) and\n"
	"       print the cordon policy that holds them, no grant wider; what cordon\n"
	"       has no equivalent of, or holds more strictly, is one line each on stderr.\n"
	"       A key srt does not have or a value of the wrong type exits 125 with\n"
	"       `cordon: sandbox_config: <json path>: <reason>`.\n";

static int print_policy(const struct policy *p)
{
	_cleanup_json_ json_t *j = policy_to_json(p);
	_cleanup_free_ char *text = NULL;

	if (j)
		text = json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII);
	if (!text) {
		fprintf(stderr, "cordon: error: out of memory\n");
		return EXIT_CORDON;
	}
	printf("%s\n", text);
	return 0;
}

int cli_policy(int argc, char **argv)
{
	_cleanup_policy_ struct policy *p = NULL;
	_cleanup_err_ struct err *e = NULL;

	if (argc >= 2 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
		fputs(policy_usage, stdout);
		return 0;
	}
	if (argc == 2 && strcmp(argv[1], "default") == 0) {
		if (policy_default(&p, &e) < 0) {
			err_print(stderr, e);
			return EXIT_CORDON;
		}
		return print_policy(p);
	}
	if (argc == 3 && strcmp(argv[1], "import-srt") == 0) {
		if (strcmp(argv[2], "--help") == 0 || strcmp(argv[2], "-h") == 0) {
			fputs(policy_usage, stdout);
			return 0;
		}
		return cli_policy_import_srt(argv[2]);
	}
	if (argc != 3 || strcmp(argv[1], "check") != 0) {
		fprintf(stderr, "cordon: usage: policy needs `check FILE`, `default` or "
			"`import-srt FILE`\n%s", policy_usage);
		return EXIT_CORDON;
	}
	if (policy_load_file(argv[2], &p, &e) < 0) {
		err_print(stderr, e);
		return e->reason == ERR_CONFIG ? EXIT_POLICY_INVALID : EXIT_CORDON;
	}
	return print_policy(p);
}
