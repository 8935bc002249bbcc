/* cordon.c: main(): find the subcommand and hand over to it; and the
 * providers this program has (its registry: the process sandboxes and
 * none; the container providers are cordon-host's). */
#include "cli/cli.h"
#include "sandbox/providers.h"

/* The first is the default (a launch that names none). */
const struct provider *const providers[] = { SANDBOX_PROVIDERS, NULL };

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
