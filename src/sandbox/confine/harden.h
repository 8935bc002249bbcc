/* harden.h: the privilege-dropping steps every cordon sandbox layer takes
 * before it runs a command, shared by the native child and by
 * `cordon confine` (cordon's layer inside another provider's sandbox).
 * Each is async-signal-safe enough for a child after clone or fork: no
 * allocation, errno set on failure. */
#ifndef CORDON_SANDBOX_CONFINE_HARDEN_H
#define CORDON_SANDBOX_CONFINE_HARDEN_H

/* Drop every capability (effective, permitted, inheritable, ambient and
 * the bounding set) and lock the securebits so none comes back through
 * exec or setuid. Returns 0, or -1 with errno set and *step naming what
 * failed. */
int harden_drop_caps(const char **step);

/* The same for a process that may not hold CAP_SETPCAP (an unprivileged
 * layer inside another sandbox): with it, harden_drop_caps; without it
 * the bounding set and securebits cannot be changed, so every capability
 * set is emptied and the caller's no_new_privs is what keeps an exec from
 * granting any back (the kernel then caps what an exec permits at what
 * the process already had: nothing). */
int harden_drop_caps_any(const char **step);

/* Close every fd from 3 up except a and b (pass the same fd twice to keep
 * one; both must be 3 or more). Returns 0 or -1 with errno set. */
int harden_close_others(int a, int b);

/* Close every fd from 3 up. Returns 0 or -1 with errno set. */
int harden_close_all(void);

/* The exit status for a command that could not be executed: 127 when it
 * was not found, 126 otherwise (as env(1) and the shells give). */
int harden_exec_status(int err);

#endif
