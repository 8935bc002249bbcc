/* seccomp.c: which system calls the sandbox refuses. Default allow, with
 * EPERM for everything that reaches around the other layers: kernel
 * attack surface that needs no privilege (io_uring, bpf, userfaultfd,
 * perf), cross-process access (ptrace, process_vm_*, pidfd_getfd, kcmp),
 * kernel keyrings, every mount call old and new, namespaces, terminal
 * input injection, unix sockets unless the policy opens them, socketpairs
 * but the stream kinds, vsock. clone3 answers ENOSYS so libc falls back
 * to clone, whose flags the filter can see. Calls of another ABI (x32,
 * i386) kill the process. */
#include "sandbox/confine/seccomp.h"
#include "lib/cleanup.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <seccomp.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif

#define CLONE_NS_FLAGS                                                         \
	(CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWNET |           \
	 CLONE_NEWIPC | CLONE_NEWUTS | CLONE_NEWCGROUP | 0x00000080 /* NEWTIME */)

static const char *const denied[] = {
	"io_uring_setup", "io_uring_enter", "io_uring_register",
	"ptrace", "process_vm_readv", "process_vm_writev",
	"bpf", "perf_event_open", "userfaultfd",
	"keyctl", "add_key", "request_key",
	"mount", "umount", "umount2", "pivot_root", "chroot",
	"open_tree", "move_mount", "fsopen", "fsconfig", "fsmount", "fspick",
	"mount_setattr",
	"unshare", "setns",
	"kexec_load", "kexec_file_load", "init_module", "finit_module",
	"delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl",
	"quotactl_fd", "name_to_handle_at", "open_by_handle_at",
	"lookup_dcookie", "syslog", "vhangup", "personality",
	"fanotify_init", "nfsservctl", "uselib", "_sysctl",
	/* another process's descriptors (pid 1's status channel) */
	"pidfd_getfd", "kcmp",
};

static struct scmp_arg_cmp arg(unsigned int n, enum scmp_compare op,
			       scmp_datum_t a, scmp_datum_t b)
{
	return (struct scmp_arg_cmp){ .arg = n, .op = op, .datum_a = a, .datum_b = b };
}

static int rule(scmp_filter_ctx ctx, uint32_t action, const char *name,
		unsigned int n, const struct scmp_arg_cmp *args)
{
	int nr = seccomp_syscall_resolve_name(name);

	if (nr == __NR_SCMP_ERROR)
		return 0; /* not a call on this architecture */
	return seccomp_rule_add_array(ctx, action, nr, n, args);
}

static int add_rules(scmp_filter_ctx ctx, bool unix_all)
{
	const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
	int r = 0;

	for (size_t i = 0; r == 0 && i < sizeof(denied) / sizeof(*denied); i++)
		r = rule(ctx, eperm, denied[i], 0, NULL);
	if (r == 0)
		r = rule(ctx, SCMP_ACT_ERRNO(ENOSYS), "clone3", 0, NULL);
	/* clone: any namespace flag */
	struct scmp_arg_cmp ns;
	for (unsigned long bit = 1; r == 0 && bit <= CLONE_NS_FLAGS; bit <<= 1) {
		if (!(bit & CLONE_NS_FLAGS))
			continue;
		ns = arg(0, SCMP_CMP_MASKED_EQ, bit, bit);
		r = rule(ctx, eperm, "clone", 1, &ns);
	}
	/* terminal input injection, compared on the low 32 bits only */
	struct scmp_arg_cmp sti = arg(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCSTI);
	struct scmp_arg_cmp lnx = arg(1, SCMP_CMP_MASKED_EQ, 0xffffffffu, TIOCLINUX);
	if (r == 0)
		r = rule(ctx, eperm, "ioctl", 1, &sti);
	if (r == 0)
		r = rule(ctx, eperm, "ioctl", 1, &lnx);
	/* The family and type are ints: the kernel reads the low 32 bits of
	 * the register, so the filter compares those and nothing more (a
	 * family of 1 | 1 << 32 is AF_UNIX to the kernel). */
	struct scmp_arg_cmp vsock = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_VSOCK);
	if (r == 0)
		r = rule(ctx, eperm, "socket", 1, &vsock);
	/* socketpair: unix pairs of the stream kinds only. A datagram pair
	 * can sendto() any socket path, and the kernel takes SOCK_RAW (and
	 * other types) for SOCK_DGRAM on unix sockets: every type but
	 * SOCK_STREAM and SOCK_SEQPACKET is refused, whatever flags are
	 * or-ed in, and so is every other family. */
	/* (compared whole: AF_UNIX with bits above the int is refused too) */
	struct scmp_arg_cmp other = arg(0, SCMP_CMP_NE, AF_UNIX, 0);
	if (r == 0)
		r = rule(ctx, eperm, "socketpair", 1, &other);
	for (unsigned int type = 0; r == 0 && type <= 0xf; type++) {
		struct scmp_arg_cmp t[2] = {
			arg(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX),
			arg(1, SCMP_CMP_MASKED_EQ, 0xf, type),
		};
		if (type != SOCK_STREAM && type != SOCK_SEQPACKET)
			r = rule(ctx, eperm, "socketpair", 2, t);
	}
	if (!unix_all) {
		struct scmp_arg_cmp unx = arg(0, SCMP_CMP_MASKED_EQ, 0xffffffffu, AF_UNIX);
		if (r == 0)
			r = rule(ctx, eperm, "socket", 1, &unx);
	}
	return r;
}

int confine_seccomp_compile(bool unix_all, struct confine_filter *out,
			   struct err **e)
{
	scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
	_cleanup_close_ int fd = -1;
	off_t size;
	int r;

	memset(out, 0, sizeof(*out));
	if (!ctx)
		return err_set(e, ERR_UNAVAILABLE, ENOMEM, "seccomp: init");
	r = seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, SCMP_ACT_KILL_PROCESS);
	if (r == 0)
		r = add_rules(ctx, unix_all);
	if (r < 0) {
		seccomp_release(ctx);
		return err_set(e, ERR_UNAVAILABLE, -r, "seccomp: build the filter");
	}
	/* libseccomp writes BPF to an fd: a memfd keeps it in memory. */
	fd = memfd_create("cordon-seccomp", MFD_CLOEXEC);
	if (fd < 0 || (r = seccomp_export_bpf(ctx, fd)) < 0) {
		seccomp_release(ctx);
		return err_set(e, ERR_UNAVAILABLE, fd < 0 ? errno : -r, "seccomp: export");
	}
	seccomp_release(ctx);
	size = lseek(fd, 0, SEEK_END);
	if (size <= 0 || size % (off_t)sizeof(struct sock_filter) != 0 ||
	    size / (off_t)sizeof(struct sock_filter) > 0xffff)
		return err_set(e, ERR_UNAVAILABLE, 0, "seccomp: exported filter is malformed");
	out->insns = malloc((size_t)size);
	if (!out->insns)
		return err_set(e, ERR_INTERNAL, ENOMEM, "seccomp");
	if (pread(fd, out->insns, (size_t)size, 0) != size) {
		confine_filter_free(out);
		return err_set(e, ERR_UNAVAILABLE, errno, "seccomp: read back");
	}
	out->len = (unsigned short)(size / (off_t)sizeof(struct sock_filter));
	return 0;
}

void confine_filter_free(struct confine_filter *f)
{
	free(f->insns);
	f->insns = NULL;
	f->len = 0;
}
