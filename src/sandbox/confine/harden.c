/* harden.c: see harden.h. */
#include "sandbox/confine/harden.h"

#include <errno.h>
#include <linux/capability.h>
#include <linux/securebits.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

/* Capabilities every kernel cordon runs on has (CAP_CHECKPOINT_RESTORE, 5.9). */
#define CAP_LAST_CAP_FLOOR 40

/* No capability survives, none can come back through exec or setuid. */
int harden_drop_caps(const char **step)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };
	unsigned long bits = SECBIT_NOROOT | SECBIT_NOROOT_LOCKED | SECBIT_NO_SETUID_FIXUP |
			     SECBIT_NO_SETUID_FIXUP_LOCKED | SECBIT_KEEP_CAPS_LOCKED |
			     SECBIT_NO_CAP_AMBIENT_RAISE | SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;

	if (prctl(PR_SET_SECUREBITS, bits, 0, 0, 0) < 0)
		return *step = "set securebits", -1;
	/* every capability the kernel knows: the first EINVAL is past the last */
	for (int cap = 0; cap <= 63; cap++) {
		if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0)
			continue;
		if (errno == EINVAL && cap > CAP_LAST_CAP_FLOOR)
			break;
		return *step = "drop the bounding set", -1;
	}
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return *step = "clear ambient capabilities", -1;
	if (syscall(SYS_capset, &h, d) < 0)
		return *step = "drop capabilities", -1;
	return 0;
}

int harden_drop_caps_any(const char **step)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = { { 0 } };

	if (syscall(SYS_capget, &h, d) < 0)
		return *step = "read capabilities", -1;
	if (d[CAP_TO_INDEX(CAP_SETPCAP)].permitted & CAP_TO_MASK(CAP_SETPCAP)) {
		/* securebits and the bounding set need it effective */
		d[0].effective = d[0].permitted;
		d[1].effective = d[1].permitted;
		if (syscall(SYS_capset, &h, d) < 0)
			return *step = "raise CAP_SETPCAP", -1;
		return harden_drop_caps(step);
	}
	memset(d, 0, sizeof(d));
	if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) < 0)
		return *step = "clear ambient capabilities", -1;
	if (syscall(SYS_capset, &h, d) < 0)
		return *step = "drop capabilities", -1;
	return 0;
}

/* Close every fd from 3 up but the two kept. */
int harden_close_others(int a, int b)
{
	int lo = a < b ? a : b, hi = a < b ? b : a;

	if (lo > 3 && syscall(SYS_close_range, 3, lo - 1, 0) < 0)
		return -1;
	if (hi > lo + 1 && syscall(SYS_close_range, lo + 1, hi - 1, 0) < 0)
		return -1;
	return (int)syscall(SYS_close_range, hi + 1, ~0U, 0);
}

int harden_close_all(void)
{
	return (int)syscall(SYS_close_range, 3, ~0U, 0);
}

int harden_exec_status(int err)
{
	return err == ENOENT ? 127 : 126;
}
