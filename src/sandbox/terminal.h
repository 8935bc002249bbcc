/* terminal.h: the operator's terminal around a sandboxed command. The
 * command writes to the terminal directly, so it can leave the terminal in
 * raw mode or provoke an answer-back (a cursor report, a status string)
 * whose bytes would sit in the terminal's input queue for the operator's
 * shell to read once cordon exits. The root saves the terminal's settings
 * before the command starts and, when the command has ended, waits for
 * the command's output to be sent, discards any input nobody read and
 * puts the settings back. */
#ifndef CORDON_SANDBOX_TERMINAL_H
#define CORDON_SANDBOX_TERMINAL_H

#include <stdbool.h>
#include <termios.h>

struct terminal {
	int fd;			/* the terminal (stdin), or -1 */
	struct termios saved;
};

/* Note stdin's terminal and its settings, when stdin is one. */
void terminal_save(struct terminal *t);
/* The command has ended: drain its output, discard pending input,
 * restore the settings. Only when this process group holds the terminal
 * (a background cordon must not take it). */
void terminal_restore(const struct terminal *t);

#endif
