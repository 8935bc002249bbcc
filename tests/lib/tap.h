/* tap.h: a small TAP producer for cordon's C tests, read by prove.
 * ok() records one test; done_testing() prints the plan and returns the
 * exit status (non-zero when any test failed). */
#ifndef CORDON_TESTS_TAP_H
#define CORDON_TESTS_TAP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

extern int tap_count;
extern int tap_failed;

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void tap_diag(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void tap_skip_all(const char *why);
int tap_done(void);

#define ok(cond, ...) tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)
#define is_str(got, want, ...)                                                 \
	tap_is_str((got), (want), __FILE__, __LINE__, __VA_ARGS__)
#define is_int(got, want, ...)                                                 \
	tap_is_int((long long)(got), (long long)(want), __FILE__, __LINE__,  \
		   __VA_ARGS__)
#define diag(...) tap_diag(__VA_ARGS__)
#define done_testing() tap_done()

bool tap_is_str(const char *got, const char *want, const char *file, int line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));
bool tap_is_int(long long got, long long want, const char *file, int line,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

#endif
