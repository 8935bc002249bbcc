/* landlock.c: the native sandbox's Landlock rules (see landlock.h), made
 * with sandbox/confine/'s ruleset pieces from the mount plan. */
#include "sandbox/native/landlock.h"
#include "sandbox/confine/landlock.h"

#include <errno.h>
#include <unistd.h>

int native_landlock_build(const struct mount_plan *mp, int abi, int *out, const char **step)
{
	struct confine_ruleset rs;
	int r = 0, saved;

	*step = NULL;
	if (confine_ruleset_open(&rs, abi, true, step) < 0)
		return -1;
	/* the write grants (and the pins inside them): bound from the host
	 * paths, so the host's inodes are the sandbox's */
	for (size_t i = 0; r == 0 && i < mp->n; i++)
		if (mp->ops[i].kind == MOP_WRITE || mp->ops[i].kind == MOP_PIN)
			r = confine_landlock_allow(rs.fd, mp->ops[i].path,
						   mp->ops[i].source_dir ? rs.all : rs.file);
	if (r == 0)
		r = confine_landlock_read_side(&rs, mp->read_denies, mp->read_exceptions, step);
	if (r == 0)
		r = confine_landlock_std_streams(rs.fd, rs.file);
	if (r == 0) {
		*out = rs.fd;
		return 0;
	}
	if (!*step)
		*step = "landlock: add a rule";
	saved = errno;
	close(rs.fd);
	errno = saved;
	return -1;
}

int native_landlock_enforce(int fd, const struct mount_plan *mp, int abi, const char **step)
{
	struct confine_ruleset rs = { .fd = fd };
	int r;

	*step = NULL;
	confine_ruleset_rights(&rs, abi);
	/* what only the sandbox has: its /dev, /proc, /sys (a read-only
	 * tmpfs holding the few host parts it keeps) and private /tmp */
	r = confine_landlock_dev_rules(&rs);
	if (r == 0)
		r = confine_landlock_allow(rs.fd, "/proc", CONFINE_LANDLOCK_FS_READ);
	if (r == 0)
		r = confine_landlock_allow(rs.fd, "/sys", CONFINE_LANDLOCK_FS_READ);
	if (r == 0 && mp->tmp_private)
		r = confine_landlock_allow(rs.fd, "/tmp", rs.all);
	return confine_ruleset_restrict(&rs, r, step);
}
