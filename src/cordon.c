/* cordon.c: main(): find the subcommand and hand over to it. */
#include "cli/cli.h"

int main(int argc, char **argv)
{
	return cli_main(argc, argv);
}
