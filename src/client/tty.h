/* tty.h: the client's side of `cordon job attach` for a job that ran in
 * a container: its attach container on this terminal. */
#ifndef CORDON_CLIENT_TTY_H
#define CORDON_CLIENT_TTY_H

#include "lib/err.h"

#include <jansson.h>

/* `cordon job attach`: run the pinned attach container (made by the
 * daemon, not started; a TTY, stdin open once, labelled
 * dev.cordon.role=attach) on this process's terminal: attached, then
 * started; fd 0 raw while it runs when it is a terminal (restored on
 * every way out), the container's terminal sized as this one and again
 * at each SIGWINCH, stdin in (its end sent as a terminal's ^D: with a
 * TTY the daemon would cut the output at the end of the input), the
 * output to fd 1. HUP and TERM kill the container, an INT signal is
 * passed on to it. Then what the pin names is removed (a failure said
 * on stderr). The container's status (0-255), or -1 with *e when it is
 * not known (it never ran, or the daemon could not say). A pinned
 * container that is not an attach container, or that runs already
 * (another terminal's), is refused and left alone. */
int docker_terminal(const json_t *pin, struct err **e);

#endif
