/* host.h: the subcommands cordon-host runs (`cordon daemon`, `cordon job`,
 * `cordon docker`; `cordon container` is container.h's), each taking the
 * arguments after its own name and returning the exit status. They are
 * cordon-host's alone: they need libcurl or libmicrohttpd, which cordon
 * itself does not load. */
#ifndef CORDON_CLI_HOST_H
#define CORDON_CLI_HOST_H

int cli_daemon(int argc, char **argv);
int cli_job(int argc, char **argv);
/* `cordon docker ...`: gateway-image, doctor, sweep. */
int docker_main(int argc, char **argv);

#endif
