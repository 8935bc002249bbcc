/* tap.c: TAP output for the C tests (see tap.h). */
#include "tap.h"

#include <stdlib.h>

int tap_count;
int tap_failed;

static bool tap_vok(bool cond, const char *file, int line, const char *fmt,
		    va_list ap) __attribute__((format(printf, 4, 0)));

static bool tap_vok(bool cond, const char *file, int line, const char *fmt,
		    va_list ap)
{
	tap_count++;
	printf("%sok %d - ", cond ? "" : "not ", tap_count);
	vprintf(fmt, ap);
	printf("\n");
	if (!cond) {
		tap_failed++;
		printf("#   Failed test at %s line %d.\n", file, line);
	}
	fflush(stdout);
	return cond;
}

bool tap_ok(bool cond, const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	bool r;

	va_start(ap, fmt);
	r = tap_vok(cond, file, line, fmt, ap);
	va_end(ap);
	return r;
}

bool tap_is_str(const char *got, const char *want, const char *file, int line,
		const char *fmt, ...)
{
	bool cond = (got == NULL && want == NULL) ||
		    (got && want && strcmp(got, want) == 0);
	va_list ap;

	va_start(ap, fmt);
	tap_vok(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#          got: '%s'\n#     expected: '%s'\n",
		       got ? got : "(null)", want ? want : "(null)");
	return cond;
}

bool tap_is_int(long long got, long long want, const char *file, int line,
		const char *fmt, ...)
{
	bool cond = got == want;
	va_list ap;

	va_start(ap, fmt);
	tap_vok(cond, file, line, fmt, ap);
	va_end(ap);
	if (!cond)
		printf("#          got: %lld\n#     expected: %lld\n", got, want);
	return cond;
}

void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

int tap_done(void)
{
	printf("1..%d\n", tap_count);
	if (tap_count == 0)
		return 1; /* a test that ran nothing has failed */
	return tap_failed ? 1 : 0;
}
