/* probe.c: the isolation suite's probe. `probe ACTION [ARGS]` performs one
 * action and prints one line: "ok" (exit 0; some actions add a detail, as
 * in "ok empty") or the errno name of the step that failed (exit 1; a word
 * may follow that names the step, as in "EPERM socket"). A unix socket
 * path starting with '@' is an abstract name. A usage error
 * prints "usage: ..." and exits 2. A death by signal is seen by the parent.
 *
 * The same binary runs inside the sandbox and outside it (the control), so
 * every action uses arguments that are harmless on the host: where the
 * kernel would act (mount, umount2) the target does not exist, so the
 * host gets ENOENT while a sandbox that filters the call gets EPERM. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <netinet/in.h>
#include <sched.h>
#include <termios.h>
#include <unistd.h>

#ifndef AF_VSOCK
#define AF_VSOCK 40
#endif
#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef SYS_userfaultfd
#define SYS_userfaultfd 323
#endif
#ifndef SYS_bpf
#define SYS_bpf 321
#endif
#ifndef SYS_perf_event_open
#define SYS_perf_event_open 298
#endif
#ifndef SYS_pivot_root
#define SYS_pivot_root 155
#endif
#ifndef SYS_setns
#define SYS_setns 308
#endif
#ifndef SYS_keyctl
#define SYS_keyctl 250
#endif
#ifndef SYS_add_key
#define SYS_add_key 248
#endif
#ifndef SYS_request_key
#define SYS_request_key 249
#endif
#ifndef TIOCSTI
#define TIOCSTI 0x5412
#endif
#ifndef TIOCLINUX
#define TIOCLINUX 0x541C
#endif
#ifndef CLONE_NEWUSER
#define CLONE_NEWUSER 0x10000000
#endif
#define X32_SYSCALL_BIT 0x40000000
#define OPEN_TREE_CLOEXEC_FLAG O_CLOEXEC
#define KEYCTL_GET_KEYRING_ID_OP 0
#define KEY_SPEC_PROCESS_KEYRING_ID (-2)
#define KEY_SPEC_SESSION_KEYRING_ID (-3)
#define UFFD_USER_MODE_ONLY_FLAG 1
/* A path that exists nowhere: the host's kernel looks it up (ENOENT)
 * before it checks any privilege. */
#define NOWHERE "/cordon-probe-nonexistent/x"

static const char *errno_name(int e)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 32))
	const char *n = strerrorname_np(e);

	if (n)
		return n;
#else
	static const struct {
		int e;
		const char *n;
	} t[] = {
		{ EPERM, "EPERM" }, { ENOENT, "ENOENT" }, { ESRCH, "ESRCH" },
		{ EINTR, "EINTR" }, { EIO, "EIO" }, { EBADF, "EBADF" },
		{ ECHILD, "ECHILD" }, { EAGAIN, "EAGAIN" }, { ENOMEM, "ENOMEM" },
		{ EACCES, "EACCES" }, { EFAULT, "EFAULT" }, { EBUSY, "EBUSY" },
		{ EEXIST, "EEXIST" }, { EXDEV, "EXDEV" }, { ENODEV, "ENODEV" },
		{ ENOTDIR, "ENOTDIR" }, { EISDIR, "EISDIR" }, { EINVAL, "EINVAL" },
		{ ENOTTY, "ENOTTY" }, { ETXTBSY, "ETXTBSY" }, { ENOSPC, "ENOSPC" },
		{ EROFS, "EROFS" }, { EMLINK, "EMLINK" }, { ENOSYS, "ENOSYS" },
		{ ENOTEMPTY, "ENOTEMPTY" }, { ELOOP, "ELOOP" }, { ENOKEY, "ENOKEY" },
		{ ENOTSOCK, "ENOTSOCK" }, { EPROTOTYPE, "EPROTOTYPE" },
		{ EAFNOSUPPORT, "EAFNOSUPPORT" }, { EADDRINUSE, "EADDRINUSE" },
		{ ENETUNREACH, "ENETUNREACH" }, { ECONNREFUSED, "ECONNREFUSED" },
		{ ETIMEDOUT, "ETIMEDOUT" }, { EHOSTUNREACH, "EHOSTUNREACH" },
		{ EOPNOTSUPP, "EOPNOTSUPP" }, { EPROTONOSUPPORT, "EPROTONOSUPPORT" },
		{ ESOCKTNOSUPPORT, "ESOCKTNOSUPPORT" }, { ECONNRESET, "ECONNRESET" },
		{ ENOTCONN, "ENOTCONN" }, { EINPROGRESS, "EINPROGRESS" },
		{ ENAMETOOLONG, "ENAMETOOLONG" }, { EOVERFLOW, "EOVERFLOW" },
	};

	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		if (t[i].e == e)
			return t[i].n;
#endif
	return NULL;
}

/* Print the outcome of a call: "ok" or the errno name (plus the step). */
static int report(int r, int e, const char *step)
{
	const char *n;

	if (r >= 0) {
		if (step)
			printf("ok %s\n", step);
		else
			puts("ok");
		return 0;
	}
	n = errno_name(e);
	if (n)
		printf("%s", n);
	else
		printf("E%d", e);
	if (step)
		printf(" %s", step);
	putchar('\n');
	return 1;
}

static int fail(const char *step)
{
	return report(-1, errno, step);
}

/* report() for a call already made: its result, then errno as it left it
 * (an argument list does not order the call before an errno read). */
static int rep(long r)
{
	return report(r < 0 ? -1 : 0, errno, NULL);
}

static int usage(void)
{
	puts("usage: probe ACTION [ARGS] (see tests/helpers/probe.c)");
	return 2;
}

/* ---- files ---- */

static int do_list_fd(int fd)
{
	DIR *d = fdopendir(fd);
	struct dirent *de;
	long n = 0;

	if (!d) {
		int e = errno;

		close(fd);
		return report(-1, e, "opendir");
	}
	errno = 0;
	while ((de = readdir(d))) {
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			n++;
		errno = 0;
	}
	if (errno) {
		int e = errno;

		closedir(d);
		return report(-1, e, "readdir");
	}
	closedir(d);
	if (n == 0)
		puts("ok empty");
	else
		printf("ok %ld entries\n", n);
	return 0;
}

static int act_read(const char *path)
{
	struct stat st;
	char c;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);

	if (fd < 0)
		return fail("open");
	if (fstat(fd, &st) < 0) {
		close(fd);
		return fail("fstat");
	}
	if (S_ISDIR(st.st_mode))
		return do_list_fd(fd);
	n = read(fd, &c, 1);
	if (n < 0) {
		int e = errno;

		close(fd);
		return report(-1, e, "read");
	}
	close(fd);
	puts(n == 0 ? "ok empty" : "ok");
	return 0;
}

static int act_list(const char *path)
{
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);

	if (fd < 0)
		return fail("open");
	return do_list_fd(fd);
}

static int act_write(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOCTTY, 0644);

	if (fd < 0)
		return fail("open");
	if (write(fd, "x", 1) != 1) {
		int e = errno;

		close(fd);
		return report(-1, e, "write");
	}
	if (close(fd) < 0)
		return fail("close");
	return report(0, 0, NULL);
}

/* The result of a call that may return an fd: close it. */
static int sys_result_fd(long r)
{
	int e = errno;

	if (r >= 0 && r < 1024 * 1024)
		close((int)r);
	return report(r < 0 ? -1 : 0, e, NULL);
}

/* ---- unix sockets ---- */

/* Fill a unix address; a path starting with '@' names an abstract socket
 * (a leading NUL, then the rest, not NUL-terminated). Returns the address
 * length, or -1. */
static int fill_sun(struct sockaddr_un *sun, const char *path)
{
	size_t len = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (len >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if (path[0] == '@') {
		memcpy(sun->sun_path + 1, path + 1, len - 1);
		return (int)(offsetof(struct sockaddr_un, sun_path) + len);
	}
	memcpy(sun->sun_path, path, len + 1);
	return (int)sizeof(*sun);
}

static int act_connect_unix(const char *path)
{
	struct sockaddr_un sun;
	int fd, r, len = fill_sun(&sun, path);

	if (len < 0)
		return fail("path");
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket");
	r = connect(fd, (struct sockaddr *)&sun, (socklen_t)len);
	if (r < 0) {
		int e = errno;

		close(fd);
		return report(-1, e, "connect");
	}
	close(fd);
	return report(0, 0, NULL);
}

/* A socketpair of the given type (the kernel reads SOCK_RAW on a unix
 * socket as SOCK_DGRAM), then a datagram sent to a path through it. */
static int act_socketpair_send(int type, const char *path)
{
	struct sockaddr_un sun;
	int sv[2], len = fill_sun(&sun, path);
	ssize_t n;

	if (len < 0)
		return fail("path");
	if (socketpair(AF_UNIX, type | SOCK_CLOEXEC, 0, sv) < 0)
		return fail("socketpair");
	n = sendto(sv[0], "x", 1, MSG_DONTWAIT, (struct sockaddr *)&sun, (socklen_t)len);
	if (n < 0) {
		int e = errno;

		close(sv[0]);
		close(sv[1]);
		return report(-1, e, "sendto");
	}
	close(sv[0]);
	close(sv[1]);
	return report(0, 0, NULL);
}

/* socket(AF_UNIX) with bits set above the int the kernel reads: the
 * kernel sees AF_UNIX, a filter comparing the whole register would not. */
static int act_socket_hi(void)
{
	long fd = syscall(SYS_socket, (long)((1UL << 32) | AF_UNIX), (long)SOCK_STREAM, 0L);

	return sys_result_fd(fd);
}

/* ---- network ---- */

static int act_connect_tcp(const char *host, const char *port)
{
	struct sockaddr_in sin;
	struct pollfd p;
	int fd, r, soerr = 0;
	socklen_t len = sizeof(soerr);
	char *end;
	long pn = strtol(port, &end, 10);

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	if (*port == '\0' || *end != '\0' || pn < 1 || pn > 65535 ||
	    inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return usage();
	sin.sin_port = htons((uint16_t)pn);
	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return fail("socket");
	r = connect(fd, (struct sockaddr *)&sin, sizeof(sin));
	if (r < 0 && errno != EINPROGRESS) {
		int e = errno;

		close(fd);
		return report(-1, e, "connect");
	}
	if (r < 0) {
		p.fd = fd;
		p.events = POLLOUT;
		p.revents = 0;
		do
			r = poll(&p, 1, 2000);
		while (r < 0 && errno == EINTR);
		if (r == 0) {
			close(fd);
			return report(-1, ETIMEDOUT, "connect");
		}
		if (r < 0 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0) {
			int e = errno;

			close(fd);
			return report(-1, e, "poll");
		}
		if (soerr) {
			close(fd);
			return report(-1, soerr, "connect");
		}
	}
	close(fd);
	return report(0, 0, NULL);
}

static int act_socket(const char *family)
{
	int fd;

	if (!strcmp(family, "unix"))
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(family, "unix-dgram"))
		fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(family, "inet"))
		fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(family, "inet6"))
		fd = socket(AF_INET6, SOCK_STREAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(family, "vsock"))
		fd = socket(AF_VSOCK, SOCK_STREAM | SOCK_CLOEXEC, 0);
	else if (!strcmp(family, "netlink"))
		fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_ROUTE);
	else
		return usage();
	if (fd >= 0)
		close(fd);
	return report(fd, errno, NULL);
}

/* ---- syscalls ---- */

/* The results of a raw syscall that may return an fd: close it. */
static int sys_result(long r)
{
	return sys_result_fd(r);
}

/* Report how a child ended: "ok" if it exited 0, else its signal or code. */
static int child_result(pid_t pid)
{
	int st;

	while (waitpid(pid, &st, __WALL) < 0) {
		if (errno != EINTR)
			return fail("waitpid");
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return report(0, 0, NULL);
	if (WIFSIGNALED(st))
		printf("child killed by signal %d\n", WTERMSIG(st));
	else
		printf("child exited %d\n", WEXITSTATUS(st));
	return 1;
}

static int sys_clone_newuser(void)
{
	long r = syscall(SYS_clone, (unsigned long)(CLONE_NEWUSER | SIGCHLD),
			 NULL, NULL, NULL, NULL);

	if (r == 0)
		syscall(SYS_exit, 0);
	if (r < 0)
		return fail(NULL);
	return child_result((pid_t)r);
}

static int sys_clone3(void)
{
	uint64_t args[11];	/* struct clone_args, 88 bytes, zeroed */
	long r;

	memset(args, 0, sizeof(args));
	r = syscall(SYS_clone3, args, sizeof(args));
	if (r == 0)
		syscall(SYS_exit, 0);
	if (r < 0)
		return fail(NULL);
	return child_result((pid_t)r);
}

static int sys_process_vm(int write_side)
{
	char local[4] = "abc", remote[4] = "xyz";
	struct iovec l = { .iov_base = local, .iov_len = 1 };
	struct iovec rv = { .iov_base = remote, .iov_len = 1 };
	ssize_t n;

	/* Our own address space: the host gives "ok" to anyone. */
	if (write_side)
		n = process_vm_writev(getpid(), &l, 1, &rv, 1, 0);
	else
		n = process_vm_readv(getpid(), &l, 1, &rv, 1, 0);
	return report(n < 0 ? -1 : 0, errno, NULL);
}

static int sys_setns(void)
{
	/* Joining one's own user namespace is EINVAL before any privilege
	 * check, for root and for anyone else; a filter says EPERM. */
	int fd = open("/proc/self/ns/user", O_RDONLY | O_CLOEXEC);
	long r;
	int e;

	if (fd < 0)
		return fail("open");
	r = syscall(SYS_setns, fd, CLONE_NEWUSER);
	e = errno;
	close(fd);
	return report(r < 0 ? -1 : 0, e, NULL);
}

static int sys_ptrace(void)
{
	/* TRACEME makes the parent our tracer; we exit at once, so it never
	 * has to act. */
	long r = ptrace(PTRACE_TRACEME, 0, NULL, NULL);

	return report(r < 0 ? -1 : 0, errno, NULL);
}

static int sys_bpf(void)
{
	/* BPF_PROG_LOAD/MAP_CREATE are privileged on most hosts; a command
	 * number the kernel does not know is EINVAL for everyone, while a
	 * filter on bpf(2) refuses every command. */
	unsigned char attr[128];

	memset(attr, 0, sizeof(attr));
	return rep(syscall(SYS_bpf, 0x7fff, attr, sizeof(attr)));
}

static int sys_perf_event_open(void)
{
	/* A zeroed attr with a size the kernel rejects: EINVAL/E2BIG on the
	 * host for everyone, before perf_event_paranoid is consulted. */
	unsigned char attr[256];
	long r;

	memset(attr, 0, sizeof(attr));
	attr[4] = 1;	/* attr.size = 1: smaller than PERF_ATTR_SIZE_VER0 */
	r = syscall(SYS_perf_event_open, attr, 0, -1, -1, 0UL);
	return sys_result(r);
}

static int sys_tty(unsigned long req)
{
	/* A fresh pty made our controlling terminal, in a child that is a
	 * session leader: TIOCSTI is then allowed on the host (where the
	 * legacy sysctl allows it at all) without any privilege. */
	int pfd[2];
	pid_t pid;
	int st, res = 0, fd0 = 0;

	if (pipe2(pfd, O_CLOEXEC) < 0)
		return fail("pipe");
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		int m, s, e = 0, nopty = 0;
		char c = 'x';
		char arg[2] = { 12, 0 };	/* TIOCLINUX 12: get shift state */
		char *name;

		close(pfd[0]);
		if (setsid() < 0) {
			e = errno;
			goto out;
		}
		m = posix_openpt(O_RDWR | O_NOCTTY);
		if (m < 0 || grantpt(m) < 0 || unlockpt(m) < 0 || !(name = ptsname(m)) ||
		    (s = open(name, O_RDWR)) < 0) {
			/* No pty here (a minimal /dev may lack one): a filter
			 * on the request refuses it on any fd, so ask on fd 0,
			 * and say so. */
			nopty = 1;
			s = 0;
		} else {
			(void)ioctl(s, TIOCSCTTY, 0);
		}
		if (ioctl(s, req, req == TIOCSTI ? &c : arg) < 0)
			e = errno;
out:
		if (write(pfd[1], &e, sizeof(e)) != (ssize_t)sizeof(e) ||
		    write(pfd[1], &nopty, sizeof(nopty)) != (ssize_t)sizeof(nopty))
			_exit(3);
		_exit(0);
	}
	close(pfd[1]);
	if (read(pfd[0], &res, sizeof(res)) != (ssize_t)sizeof(res) ||
	    read(pfd[0], &fd0, sizeof(fd0)) != (ssize_t)sizeof(fd0)) {
		close(pfd[0]);
		return child_result(pid);
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	return report(res ? -1 : 0, res, fd0 ? "fd0" : NULL);
}

/* A syscall through the i386 entry (int $0x80) of a 64-bit process: the
 * seccomp filter sees AUDIT_ARCH_I386. Returns the kernel's value (-errno
 * on failure), or -ENOSYS where there is no such entry. */
static long int80(long nr, long a, long b, long c)
{
#if defined(__x86_64__)
	long ret;

	__asm__ volatile("int $0x80"
			 : "=a"(ret)
			 : "a"(nr), "b"(a), "c"(b), "d"(c)
			 : "r8", "r9", "r10", "r11", "memory");
	return (int)ret;
#else
	(void)nr;
	(void)a;
	(void)b;
	(void)c;
	return -ENOSYS;
#endif
}

static int sys_i386(long nr, long a, long b, long c)
{
	long r;

	fflush(stdout);
	r = int80(nr, a, b, c);
	if (r < 0 && r > -4096)
		return report(-1, (int)-r, NULL);
	if (nr == 359 && r >= 0)
		close((int)r);
	return report(0, 0, NULL);
}

/* Whether this host has the i386 entry at all: int $0x80 getpid in a
 * child, compared with the child's pid. Some kernels are built without
 * IA32 emulation or boot with it off, and some hypervisors fault the
 * instruction (SIGSEGV): the i386 cases cannot be shown there. Prints
 * "ok" or "absent" and how the call ended. */
static int act_i386_entry(void)
{
	pid_t pid;
	int st;

	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		/* the kernel's signal, not a sanitizer's report of it */
		signal(SIGSEGV, SIG_DFL);
		signal(SIGBUS, SIG_DFL);
		_exit(int80(20, 0, 0, 0) == (long)getpid() ? 0 : 1);
	}
	while (waitpid(pid, &st, 0) < 0) {
		if (errno != EINTR)
			return fail("waitpid");
	}
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return report(0, 0, NULL);
	if (WIFSIGNALED(st))
		printf("absent: int $0x80 killed the process with signal %d\n", WTERMSIG(st));
	else
		printf("absent: int $0x80 getpid did not return the pid\n");
	return 1;
}

/* Another process's descriptor: pidfd_getfd on a child of ours (allowed
 * to its parent on the host, even under Yama's ptrace scope 1). */
static int sys_pidfd_getfd(void)
{
	pid_t pid;
	long pfd, r;
	int e, st;

	pid = fork();
	if (pid < 0)
		return fail("fork");
	if (pid == 0) {
		pause();
		_exit(0);
	}
	pfd = syscall(SYS_pidfd_open, pid, 0);
	if (pfd < 0) {
		e = errno;
		kill(pid, SIGKILL);
		waitpid(pid, &st, 0);
		return report(-1, e, "pidfd_open");
	}
	r = syscall(SYS_pidfd_getfd, (int)pfd, 1, 0);
	e = errno;
	if (r >= 0)
		close((int)r);
	close((int)pfd);
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	return report(r < 0 ? -1 : 0, e, NULL);
}

static int act_syscall(const char *name)
{
	long r;

	if (!strcmp(name, "pidfd_getfd"))
		return sys_pidfd_getfd();
	if (!strcmp(name, "kcmp")) {
		/* our own fd 1 against itself: 0 (equal) on the host */
		r = syscall(SYS_kcmp, getpid(), getpid(), 0 /* KCMP_FILE */, 1, 1);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}

	if (!strcmp(name, "io_uring_setup")) {
		unsigned char params[120];	/* struct io_uring_params */

		memset(params, 0, sizeof(params));
		return sys_result(syscall(SYS_io_uring_setup, 1, params));
	}
	if (!strcmp(name, "ptrace"))
		return sys_ptrace();
	if (!strcmp(name, "process_vm_readv"))
		return sys_process_vm(0);
	if (!strcmp(name, "process_vm_writev"))
		return sys_process_vm(1);
	if (!strcmp(name, "bpf"))
		return sys_bpf();
	if (!strcmp(name, "perf_event_open"))
		return sys_perf_event_open();
	if (!strcmp(name, "userfaultfd"))
		return sys_result(syscall(SYS_userfaultfd, O_CLOEXEC | UFFD_USER_MODE_ONLY_FLAG));
	if (!strcmp(name, "keyctl")) {
		r = syscall(SYS_keyctl, KEYCTL_GET_KEYRING_ID_OP, KEY_SPEC_SESSION_KEYRING_ID, 0);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "add_key")) {
		r = syscall(SYS_add_key, "user", "cordon-probe", "y", 1, KEY_SPEC_PROCESS_KEYRING_ID);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "request_key")) {
		r = syscall(SYS_request_key, "user", "cordon-probe-none", NULL, 0);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "mount")) {
		r = mount("none", NOWHERE, "tmpfs", 0, NULL);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "umount2")) {
		r = umount2(NOWHERE, 0);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "pivot_root")) {
		r = syscall(SYS_pivot_root, NOWHERE, NOWHERE);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "open_tree")) {
		/* Without OPEN_TREE_CLONE this is an O_PATH open: allowed to
		 * anyone on the host. */
		return sys_result(syscall(SYS_open_tree, AT_FDCWD, "/", OPEN_TREE_CLOEXEC_FLAG));
	}
	if (!strcmp(name, "move_mount")) {
		r = syscall(SYS_move_mount, AT_FDCWD, NOWHERE, AT_FDCWD, NOWHERE, 0);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "fsopen"))
		return sys_result(syscall(SYS_fsopen, "cordon-probe-nofs", 0));
	if (!strcmp(name, "fsmount"))
		return sys_result(syscall(SYS_fsmount, -1, 0, 0));
	if (!strcmp(name, "fspick"))
		return sys_result(syscall(SYS_fspick, AT_FDCWD, NOWHERE, 0));
	if (!strcmp(name, "mount_setattr")) {
		/* size 0 is EINVAL before any lookup or privilege check */
		r = syscall(SYS_mount_setattr, AT_FDCWD, NOWHERE, 0, NULL, 0);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "unshare")) {
		r = unshare(CLONE_NEWUSER);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	if (!strcmp(name, "setns"))
		return sys_setns();
	if (!strcmp(name, "clone-newuser"))
		return sys_clone_newuser();
	if (!strcmp(name, "clone3"))
		return sys_clone3();
	if (!strcmp(name, "i386-getpid"))
		return sys_i386(20, 0, 0, 0);		/* i386 __NR_getpid */
	if (!strcmp(name, "i386-socket-unix"))
		return sys_i386(359, AF_UNIX, SOCK_STREAM, 0);	/* i386 __NR_socket */
	if (!strcmp(name, "x32-getpid")) {
		fflush(stdout);
		r = syscall(X32_SYSCALL_BIT | SYS_getpid);
		return report(r < 0 ? -1 : 0, errno, NULL);
	}
	return usage();
}

/* ---- System V and POSIX IPC, namespaces ---- */

#include <mqueue.h>
#include <sys/ipc.h>
#include <sys/msg.h>
#include <sys/shm.h>

#define IPC_TEXT "HOST-IPC-SECRET"

struct ipc_msg {
	long type;
	char text[32];
};

/* ipc-make KIND KEY: a shared-memory segment holding IPC_TEXT, a message
 * queue holding it, or a POSIX queue (/KEY) holding it; they outlive the
 * probe. ipc-read reads it back (attaching, receiving without waiting);
 * ipc-remove removes it. */
static int act_ipc(const char *what, const char *kind, const char *keytext)
{
	key_t key = (key_t)strtol(keytext, NULL, 0);
	char name[64];
	bool make = !strcmp(what, "make"), rm = !strcmp(what, "remove");

	snprintf(name, sizeof(name), "/%s", keytext);
	if (!strcmp(kind, "shm")) {
		int id = shmget(key, 4096, make ? IPC_CREAT | IPC_EXCL | 0600 : 0);
		char *p;
		if (id < 0)
			return fail("shmget");
		if (rm)
			return report(shmctl(id, IPC_RMID, NULL), errno, NULL);
		p = shmat(id, NULL, 0);
		if (p == (void *)-1)
			return fail("shmat");
		if (make)
			strcpy(p, IPC_TEXT);
		else if (strcmp(p, IPC_TEXT) != 0)
			return shmdt(p), report(-1, ENOMSG, "content");
		shmdt(p);
		return report(0, 0, NULL);
	}
	if (!strcmp(kind, "msg")) {
		int id = msgget(key, make ? IPC_CREAT | IPC_EXCL | 0600 : 0);
		struct ipc_msg m = { 1, IPC_TEXT };
		if (id < 0)
			return fail("msgget");
		if (rm)
			return report(msgctl(id, IPC_RMID, NULL), errno, NULL);
		if (make)
			return report(msgsnd(id, &m, sizeof(m.text), IPC_NOWAIT), errno, "msgsnd");
		/* read without taking it: the control reads it after */
		if (msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT | MSG_COPY) < 0 &&
		    msgrcv(id, &m, sizeof(m.text), 0, IPC_NOWAIT) < 0)
			return fail("msgrcv");
		return report(0, 0, NULL);
	}
	if (!strcmp(kind, "mq")) {
		struct mq_attr at = { .mq_maxmsg = 4, .mq_msgsize = 32 };
		mqd_t q;
		if (rm)
			return report(mq_unlink(name), errno, NULL);
		q = mq_open(name, make ? O_CREAT | O_EXCL | O_RDWR : O_RDONLY, 0600, &at);
		if (q == (mqd_t)-1)
			return fail("mq_open");
		if (make && mq_send(q, IPC_TEXT, sizeof(IPC_TEXT), 0) < 0) {
			mq_close(q);
			return fail("mq_send");
		}
		mq_close(q);
		return report(0, 0, NULL);
	}
	return usage();
}

/* ns NAME: the inode of this process's namespace of that kind. */
static int act_ns(const char *name)
{
	char path[64];
	struct stat st;

	snprintf(path, sizeof(path), "/proc/self/ns/%s", name);
	if (stat(path, &st) < 0)
		return fail("stat");
	printf("ok %lu\n", (unsigned long)st.st_ino);
	return 0;
}

/* ---- processes and identity ---- */

static int act_caps(void)
{
	static const char *const keys[] = { "CapEff", "CapPrm", "CapBnd",
					     "NoNewPrivs", "Seccomp" };
	char vals[5][64];
	char line[512];
	FILE *f = fopen("/proc/self/status", "re");

	if (!f)
		return fail("open");
	for (int i = 0; i < 5; i++)
		strcpy(vals[i], "?");
	while (fgets(line, sizeof(line), f)) {
		for (int i = 0; i < 5; i++) {
			size_t kl = strlen(keys[i]);

			if (!strncmp(line, keys[i], kl) && line[kl] == ':') {
				char *v = line + kl + 1;

				v += strspn(v, " \t");
				v[strcspn(v, "\n")] = '\0';
				snprintf(vals[i], sizeof(vals[i]), "%s", v);
			}
		}
	}
	fclose(f);
	printf("CapEff=%s CapPrm=%s CapBnd=%s NoNewPrivs=%s Seccomp=%s\n",
	       vals[0], vals[1], vals[2], vals[3], vals[4]);
	return 0;
}

static int act_kill(const char *pid, const char *sig)
{
	char *e1, *e2;
	long p = strtol(pid, &e1, 10), s = strtol(sig, &e2, 10);

	if (*pid == '\0' || *e1 || *sig == '\0' || *e2 || s < 0 || s > 64)
		return usage();
	return rep(kill((pid_t)p, (int)s));
}

static int act_pids(void)
{
	DIR *d = opendir("/proc");
	struct dirent *de;
	char buf[4096];
	size_t used = 0;
	long n = 0;

	if (!d)
		return fail("opendir");
	buf[0] = '\0';
	while ((de = readdir(d))) {
		if (de->d_name[0] < '0' || de->d_name[0] > '9' ||
		    de->d_name[strspn(de->d_name, "0123456789")] != '\0')
			continue;
		n++;
		if (used + strlen(de->d_name) + 2 < sizeof(buf)) {
			int w = snprintf(buf + used, sizeof(buf) - used, " %s", de->d_name);

			if (w > 0)
				used += (size_t)w;
		}
	}
	closedir(d);
	printf("ok %ld:%s\n", n, buf);
	return 0;
}

static int act_hostname(void)
{
	struct utsname u;

	if (uname(&u) < 0)
		return fail("uname");
	printf("ok %s\n", u.nodename);
	return 0;
}

/* Fork up to n children that wait (holding their pids) until the probe
 * is done, and print how many there were: "ok <made>" and, when a fork
 * failed, the errno after it. */
static int act_forks(const char *count)
{
	long n = strtol(count, NULL, 10), made = 0;
	pid_t *kids = n > 0 && n <= 100000 ? calloc((size_t)n, sizeof(*kids)) : NULL;
	int hold[2], err = 0;

	if (!kids || pipe(hold) < 0)
		return fail("forks");
	for (; made < n; made++) {
		pid_t c = fork();

		if (c == 0) {
			char b;

			close(hold[1]);
			(void)!read(hold[0], &b, 1);
			_exit(0);
		}
		if (c < 0) {
			err = errno;
			break;
		}
		kids[made] = c;
	}
	close(hold[1]); /* every child reads EOF and leaves */
	for (long i = 0; i < made; i++)
		waitpid(kids[i], NULL, 0);
	free(kids);
	if (err && errno_name(err))
		printf("ok %ld %s\n", made, errno_name(err));
	else if (err)
		printf("ok %ld E%d\n", made, err);
	else
		printf("ok %ld\n", made);
	return 0;
}

/* Allocate n MiB and touch every page: "ok <n>", or ENOMEM; a memory
 * limit may kill the probe instead (the parent sees the signal). */
static int act_alloc(const char *mib)
{
	long n = strtol(mib, NULL, 10);
	size_t len = n > 0 && n <= 65536 ? (size_t)n << 20 : 0;
	volatile char *p = len ? malloc(len) : NULL;

	if (!p)
		return report(-1, ENOMEM, NULL);
	for (size_t i = 0; i < len; i += 4096)
		p[i] = 1;
	printf("ok %ld\n", n);
	free((void *)p);
	return 0;
}

int main(int argc, char **argv)
{
	const char *a;

	if (argc < 2)
		return usage();
	a = argv[1];
	setvbuf(stdout, NULL, _IOLBF, 0);
#define NEED(k) do { if (argc != 2 + (k)) return usage(); } while (0)
	if (!strcmp(a, "read")) {
		NEED(1);
		return act_read(argv[2]);
	}
	if (!strcmp(a, "list")) {
		NEED(1);
		return act_list(argv[2]);
	}
	if (!strcmp(a, "write")) {
		NEED(1);
		return act_write(argv[2]);
	}
	if (!strcmp(a, "stat")) {
		struct stat st;

		NEED(1);
		return rep(lstat(argv[2], &st));
	}
	if (!strcmp(a, "mkdir")) {
		NEED(1);
		return rep(mkdir(argv[2], 0755));
	}
	if (!strcmp(a, "rename")) {
		NEED(2);
		return rep(rename(argv[2], argv[3]));
	}
	if (!strcmp(a, "unlink")) {
		NEED(1);
		return rep(unlink(argv[2]));
	}
	if (!strcmp(a, "link")) {
		NEED(2);
		return rep(link(argv[2], argv[3]));
	}
	if (!strcmp(a, "symlink")) {
		NEED(2);
		return rep(symlink(argv[2], argv[3]));
	}
	if (!strcmp(a, "connect-unix")) {
		NEED(1);
		return act_connect_unix(argv[2]);
	}
	if (!strcmp(a, "dgram-socketpair-send")) {
		NEED(1);
		return act_socketpair_send(SOCK_DGRAM, argv[2]);
	}
	if (!strcmp(a, "raw-socketpair-send")) {
		NEED(1);
		return act_socketpair_send(SOCK_RAW, argv[2]);
	}
	if (!strcmp(a, "socket-hi")) {
		NEED(0);
		return act_socket_hi();
	}
	if (!strcmp(a, "connect-tcp")) {
		NEED(2);
		return act_connect_tcp(argv[2], argv[3]);
	}
	if (!strcmp(a, "socket")) {
		NEED(1);
		return act_socket(argv[2]);
	}
	if (!strcmp(a, "syscall")) {
		NEED(1);
		return act_syscall(argv[2]);
	}
	if (!strcmp(a, "tiocsti")) {
		NEED(0);
		return sys_tty(TIOCSTI);
	}
	if (!strcmp(a, "tioclinux")) {
		NEED(0);
		return sys_tty(TIOCLINUX);
	}
	if (!strcmp(a, "i386-entry")) {
		NEED(0);
		return act_i386_entry();
	}
	if (!strcmp(a, "ipc-make") || !strcmp(a, "ipc-read") || !strcmp(a, "ipc-remove")) {
		NEED(2);
		return act_ipc(a + 4, argv[2], argv[3]);
	}
	if (!strcmp(a, "ns")) {
		NEED(1);
		return act_ns(argv[2]);
	}
	if (!strcmp(a, "caps")) {
		NEED(0);
		return act_caps();
	}
	if (!strcmp(a, "kill")) {
		NEED(2);
		return act_kill(argv[2], argv[3]);
	}
	if (!strcmp(a, "pids")) {
		NEED(0);
		return act_pids();
	}
	if (!strcmp(a, "hostname")) {
		NEED(0);
		return act_hostname();
	}
	if (!strcmp(a, "forks")) {
		NEED(1);
		return act_forks(argv[2]);
	}
	if (!strcmp(a, "alloc")) {
		NEED(1);
		return act_alloc(argv[2]);
	}
#undef NEED
	return usage();
}
