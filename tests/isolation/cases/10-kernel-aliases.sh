# 10-kernel-aliases.sh (sourced by native.t): what the kernel takes for
# something the filter refuses, and the calls that reach another
# process's descriptors.

# The kernel makes SOCK_RAW on a unix socket a datagram socket: a pair of
# them sends to any socket path as SOCK_DGRAM does.
case_denied "raw socketpair sendto a host socket is refused (default policy)" \
	raw-socketpair-send "$HOST_DGRAM"
case_denied "raw socketpair sendto a host socket is refused (unix_sockets: all)" \
	-p "$POL/all.json" -- raw-socketpair-send "$HOST_DGRAM"
case_sys "socketpair(AF_UNIX, SOCK_RAW) is refused with EPERM (unix_sockets: all)" EPERM \
	-p "$POL/all.json" -- raw-socketpair-send "$HOST_DGRAM"
# The kernel reads the family as an int: bits above it are ignored there,
# and must not let the call past a filter comparing the whole register.
case_sys "socket(AF_UNIX | 1 << 32) is refused with EPERM by default" EPERM socket-hi

# pid 1 holds cordon's status channel for the sandbox's life: no call may
# take a descriptor of another process, or compare them.
case_sys "pidfd_getfd is refused with EPERM" EPERM syscall pidfd_getfd
case_sys "kcmp is refused with EPERM" EPERM syscall kcmp
