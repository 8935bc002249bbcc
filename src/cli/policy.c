/* policy.c: `cordon policy check FILE`, `default` and `import-srt FILE`
 * (the importer is srt's: sandbox/srt/import/). */
#include "cli/cli.h"
#include "sandbox/srt/import/import.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "policy/policy.h"

#include <errno.h>
#include <fcntl.h>
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

/* As a policy file's bound: a settings file is a few kilobytes. */
#define SETTINGS_MAX (1u << 20)

/* `cordon policy import-srt FILE`: 0 with the policy on stdout and the
 * notes on stderr; 125 (EXIT_CORDON) with one refusal line. */
static int import_srt(const char *file)
{
	_cleanup_free_ char *buf = NULL, *notes = NULL, *text = NULL;
	_cleanup_policy_ struct policy *p = NULL, *again = NULL;
	_cleanup_err_ struct err *e = NULL;
	_cleanup_close_ int fd = -1;
	_cleanup_json_ json_t *j = NULL;
	size_t len = 0, nlen = 0;
	FILE *nf = NULL;
	int r;

	/* The operator names the file; a symbolic link to it is fine here. */
	fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	if (fd < 0) {
		err_set(&e, ERR_CONFIG, errno, "srt settings `%s`", file);
		goto refused;
	}
	if (fs_read_fd(fd, file, SETTINGS_MAX, &buf, &len, &e) < 0) {
		err_reclass(&e, ERR_CONFIG);
		goto refused;
	}
	/* Notes are held until the import succeeds: a refusal is one line. */
	nf = open_memstream(&notes, &nlen);
	if (!nf) {
		err_set(&e, ERR_INTERNAL, errno, "notes");
		goto refused;
	}
	r = srt_import(buf, len, nf, &p, &e);
	if (fclose(nf) != 0 && r == 0)
		r = err_set(&e, ERR_INTERNAL, errno, "notes");
	if (r < 0)
		goto refused;
	j = policy_to_json(p);
	text = j ? json_dumps(j, JSON_INDENT(2) | JSON_ENSURE_ASCII) : NULL;
	if (!text) {
		err_set(&e, ERR_INTERNAL, ENOMEM, "policy");
		goto refused;
	}
	/* What is printed is a policy cordon reads back as it is; anything
	 * else is this import's fault, and nothing is printed. */
	if (policy_parse(text, strlen(text), &again, &e) < 0) {
		err_reclass(&e, ERR_INTERNAL);
		err_wrap(&e, "import-srt made a policy cordon refuses");
		goto refused;
	}
	fwrite(notes, 1, nlen, stderr);
	printf("%s\n", text);
	return 0;
refused:
	err_print(stderr, e);
	return EXIT_CORDON;
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
		return import_srt(argv[2]);
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
