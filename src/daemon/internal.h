/* internal.h: the daemon's shared state, for the files src/daemon/ is
 * cut into along a segment's life (see daemon.h): the daemon itself
 * (struct hostd), the segments it supervises (struct seg), the loop's
 * watches, and the functions one piece calls of another. Nothing outside
 * src/daemon/ includes it. */
#ifndef CORDON_DAEMON_INTERNAL_H
#define CORDON_DAEMON_INTERNAL_H

#include "daemon/daemon.h"
#include "host/db.h"
#include "host/request.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct MHD_Daemon;
struct toolbelt;

#define BODY_MAX HOST_REQUEST_MAX
#define ANSWER_MAX ((size_t)64 * 1024)
/* A container's start helper, asked to KILL it once a stop's grace is
 * over, has this long to see it stopped before it is killed itself. */
#define HOSTD_CONTAINER_KILL_S 15
/* Container sweeps: at most this many daemons, every this many passes. */
#define HOSTD_SWEEPS_MAX 8
#define HOSTD_SWEEP_EVERY 12

enum watch_kind { W_API, W_SIGNAL, W_CTL, W_PIDFD, W_GRACE, W_RECONCILE, W_TOOLBELT, W_ATTACH };

struct attaching;

struct watch {
	enum watch_kind kind;
	struct seg *seg;
	struct attaching *att;	/* W_ATTACH's */
};

/* A segment this daemon started and still supervises. */
struct seg {
	struct seg *next;
	char job[HOST_JOB_ID_MAX];
	unsigned int attempt, n;
	pid_t pid;
	int pidfd, ctl;		/* ctl: until the pin is answered */
	int grace_fd;		/* a stop's grace, then KILL; -1 */
	unsigned int grace_ms;
	int stop_sig;		/* the last signal a stop sent, 0 if none */
	const char *interrupted;	/* "term" or "kill" once interrupted */
	unsigned int injected;	/* messages left in its inbox */
	unsigned int retries;	/* the binding's, when it was launched */
	char *record;
	bool pinned;
	bool sandboxed;		/* launched under a provider */
	bool claude;		/* the claude-code executor's: its session is kept */
	bool container;		/* in a container: its wrapper is the start helper */
	bool quit_sent;		/* a container's: KILL asked of its start helper */
	bool settling;		/* its helper ended without an exit file: pid and
				 * pidfd are now the settle child's */
	off_t log_start;	/* the job's log's size when it was launched */
	struct watch wctl, wpid, wgrace;
};

struct follower;

struct hostd {
	char *state, *config, *self;
	struct follower *followers;	/* streaming logs */
	struct attaching *attaches;	/* attach containers being made */
	struct toolbelt *tb;		/* the jobs' toolbelts */
	char token[HOSTD_TOKEN_HEX + 1];
	struct host_db *db;
	struct MHD_Daemon *mhd;
	int epfd, sfd, lfd;
	struct seg *segs;
	int rfd;		/* the reconcile timer */
	unsigned int passes;	/* reconcile passes so far */
	pid_t sweeps[HOSTD_SWEEPS_MAX];	/* container sweeps running (0: none) */
	int lockfd;		/* held for the daemon's life */
	struct watch wapi, wsig, wrec, wtb;
};

#endif
