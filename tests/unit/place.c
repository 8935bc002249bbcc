/* place.c (test): places compared by identity and containment: every
 * spelling of a directory (a trailing '/', "/.", a link, a bind mount, a
 * path inside it, one that does not exist yet) is that place; a sibling
 * whose name starts the same, and an unrelated directory, are not (the
 * controls). */
#include "lib/cleanup.h"
#include "lib/place.h"
#include "tap.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

static char lab[64];

static const char *at(const char *rel)
{
	static char bufs[8][512];
	static int i;
	char *b = bufs[i++ % 8];

	snprintf(b, sizeof(bufs[0]), "%s/%s", lab, rel);
	return b;
}

static int ask(int (*f)(const char *, const char *, struct err **), const char *a, const char *b)
{
	struct err *e = NULL;
	int r = f(a, b, &e);

	if (r < 0)
		diag("%s", e && e->msg ? e->msg : "?");
	err_free(e);
	return r;
}

static int over(const char *a, const char *b)
{
	return ask(place_overlap, a, b);
}

static int in(const char *a, const char *b)
{
	return ask(place_within, a, b);
}

int main(void)
{
	snprintf(lab, sizeof(lab), "/tmp/cordon-place.XXXXXX");
	if (!mkdtemp(lab))
		tap_skip_all("no temporary directory");
	if (mkdir(at("ws"), 0700) < 0 || mkdir(at("ws/sub"), 0700) < 0 ||
	    mkdir(at("ws2"), 0700) < 0 || mkdir(at("other"), 0700) < 0 ||
	    mkdir(at("bind"), 0700) < 0 || symlink(at("ws"), at("link")) < 0 ||
	    symlink("ws/sub", at("rel")) < 0)
		tap_skip_all("cannot make the lab");

	is_int(over(at("ws"), at("ws")), 1, "a directory is its own place");
	is_int(over(at("ws/"), at("ws")), 1, "... spelled with a trailing '/'");
	is_int(over(at("ws/."), at("ws")), 1, "... with \"/.\"");
	is_int(over(at("other/../ws"), at("ws")), 1, "... through \"..\"");
	is_int(over(at("link"), at("ws")), 1, "... through a link to it");
	is_int(over(at("link/"), at("ws/")), 1, "... a link and a '/', both sides");
	is_int(over(at("ws/sub"), at("ws")), 1, "a subdirectory overlaps its parent");
	is_int(over(at("ws"), at("rel")), 1, "a parent overlaps a link to its subdirectory");
	is_int(in(at("ws/sub"), at("link")), 1, "a subdirectory is within its parent's link");
	is_int(in(at("ws"), at("ws/sub")), 0, "a parent is not within its subdirectory");
	is_int(over(at("ws/new/deeper"), at("ws")), 1, "a path not made yet inside it overlaps");
	is_int(over(at("link/new"), at("ws/new/x")), 1, "two paths not made yet, one inside the other");
	is_int(over(at("ws/new"), at("ws/newer")), 0,
	       "two paths not made yet, side by side, do not (the control)");
	is_int(over(at("ws2"), at("ws")), 0, "a sibling whose name starts the same does not (the control)");
	is_int(over(at("other"), at("ws")), 0, "an unrelated directory does not (the control)");
	is_int(over(at("other"), at("link")), 0, "... nor one beside the link");
	{
		struct err *e = NULL;

		is_int(place_overlap("relative", at("ws"), &e), -1, "a relative path is refused");
		err_free(e);
	}

	/* A second path to the same tree: a bind mount, in a mount namespace
	 * of the test's own (no spelling shows it, only the inode). */
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS) == 0 &&
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) == 0 &&
	    mount(at("ws"), at("bind"), NULL, MS_BIND, NULL) == 0) {
		is_int(over(at("bind"), at("ws")), 1, "a bind mount of it is the same place");
		is_int(over(at("bind/sub"), at("ws")), 1, "... a directory inside the bind mount is inside it");
		is_int(in(at("bind/sub/x"), at("ws/sub")), 1, "... to any depth, made or not");
		is_int(over(at("bind"), at("other")), 0, "... and still not an unrelated one (the control)");
		umount(at("bind"));
	} else {
		for (int i = 0; i < 4; i++) {
			tap_count++;
			printf("ok %d # skip no mount namespace of our own here (%s)\n", tap_count,
			       strerror(errno));
		}
	}
	rmdir(at("ws/sub"));
	rmdir(at("ws"));
	rmdir(at("ws2"));
	rmdir(at("other"));
	rmdir(at("bind"));
	unlink(at("link"));
	unlink(at("rel"));
	rmdir(lab);
	return done_testing();
}
