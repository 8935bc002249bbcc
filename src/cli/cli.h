/* cli.h: the subcommands. Each takes the arguments after its own name
 * (argv[0] is the subcommand) and returns the process exit status. */
#ifndef CORDON_CLI_H
#define CORDON_CLI_H

/* Exit statuses, after env(1) and docker: */
#define EXIT_CORDON 125		/* cordon failed or refused */
#define EXIT_NOEXEC 126		/* the command is not executable */
#define EXIT_NOTFOUND 127	/* the command was not found */
#define EXIT_POLICY_INVALID 2	/* `policy check` on a malformed policy */

int cli_main(int argc, char **argv);
int cli_policy(int argc, char **argv);
int cli_plan(int argc, char **argv);
int cli_run(int argc, char **argv);
int cli_adopt(int argc, char **argv);
int cli_gateway(int argc, char **argv);
int cli_doctor(int argc, char **argv);
int cli_confine(int argc, char **argv);
int cli_netprobe(int argc, char **argv);
/* `wrap`, with the providers of the program that runs it (its
 * registry: cordon-host's has the container providers). */
int cli_wrap(int argc, char **argv);
int cli_cinit(int argc, char **argv);
int cli_remote_run(int argc, char **argv);

#endif
