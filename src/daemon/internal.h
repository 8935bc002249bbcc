/* internal.h: the daemon's shared state, for the files src/daemon/ is
 * cut into along a segment's life (see daemon.h): the daemon itself
 * (struct hostd), the segments it supervises (struct seg), with their
 * sources on the daemon's one loop (lib/loop.h), and the functions one
 * piece calls of another. Nothing outside
 * src/daemon/ includes it. */
#ifndef CORDON_DAEMON_INTERNAL_H
#define CORDON_DAEMON_INTERNAL_H

#include "daemon/daemon.h"
#include "host/db.h"
#include "host/request.h"
#include "lib/loop.h"

#include <jansson.h>
#include <microhttpd.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

struct err;
struct host_binding;
struct host_config;
struct host_exec;
struct admit_conn;
struct hostd_body;
struct toolbelt;

#define BODY_MAX HOST_REQUEST_MAX
#define ANSWER_MAX ((size_t)64 * 1024)
/* A container's start helper, asked to KILL it once a stop's grace is
 * over, has this long to see it stopped before it is killed itself. */
#define HOSTD_CONTAINER_KILL_S 15
/* Container sweeps: at most this many daemons, every this many passes. */
#define HOSTD_SWEEPS_MAX 8
#define HOSTD_SWEEP_EVERY 12

/* The reconcile pass's period. */
#define RECONCILE_S 5
/* A followed log's suspended connections are resumed this often. */
#define FOLLOW_MS 200
/* The API's connections waiting for their request (admit.c): cut after
 * this long, beyond this many from one peer, and the oldest beyond this
 * many in all (of the 256 slots libmicrohttpd has). */
#define ADMIT_WAIT_MS 10000
#define ADMIT_PEER_MAX 8U
#define ADMIT_WAITING_MAX 64U

/* A segment this daemon started and still supervises. */
struct seg {
	struct seg *next;
	struct hostd *d;
	char job[HOST_JOB_ID_MAX];
	unsigned int attempt, n;
	pid_t pid;
	int pidfd, ctl;		/* ctl: until the pin is answered */
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
	json_t *exit;		/* its wrapper's exit file, once it ended */
	bool ending;		/* stopped and ended: its stop being confirmed
				 * (settle.c); no longer the job's running one */
	unsigned int looks;	/* the confirmation's looks so far */
	struct loop_timer confirm;	/* the confirmation's next look, or its bound */
	struct loop_pid root;	/* the sandbox's first process, to confirm it gone */
	struct loop_fd ctl_src;	/* the wrapper's answer */
	struct loop_pid pid_src;	/* the wrapper's (or settle child's) exit */
	struct loop_timer grace;	/* a stop's grace, then KILL */
};

/* An attach container being made (for a job that ran in a container):
 * the API connection that asked for it waits, suspended, for its
 * wrapper's answer; the entry goes once answered and reaped. */
struct attaching {
	struct attaching *next;
	struct hostd *d;
	struct MHD_Connection *c;	/* NULL once answered */
	char job[HOST_JOB_ID_MAX];
	unsigned int n;
	int ctl;			/* -1 once answered */
	pid_t pid;			/* 0 once reaped */
	struct loop_fd src;		/* its wrapper's answer */
	unsigned int status;		/* 0 until the wrapper answered */
	json_t *answer;
	int64_t answered_ms;
};

struct follower;

struct hostd {
	char *state, *config, *self;
	bool history;			/* runs/ holds runs of jobs: the database
					 * must hold a history */
	struct follower *followers;	/* streaming logs */
	struct attaching *attaches;	/* attach containers being made */
	struct toolbelt *tb;		/* the jobs' toolbelts */
	char token[HOSTD_TOKEN_HEX + 1];
	struct host_db *db;
	struct MHD_Daemon *mhd;
	int lfd;
	struct seg *segs;
	struct loop *loop;
	struct loop_fd api;		/* libmicrohttpd's epoll fd */
	struct loop_signal sig;		/* TERM, INT (stop), HUP (nothing) */
	struct loop_timer reconcile;	/* every RECONCILE_S */
	struct loop_hook serve;		/* the API's turn before each wait */
	struct loop_timer wake;		/* the serve hook's next deadline */
	int64_t last_follow;		/* when followers were last resumed */
	bool stop;			/* TERM or INT: after this round's turn */
	unsigned int passes;	/* reconcile passes so far */
	pid_t sweeps[HOSTD_SWEEPS_MAX];	/* container sweeps running (0: none) */
	int lockfd;		/* held for the daemon's life */
	struct admit_conn *admitted;	/* the API's connections (admit.c) */
};

/* admit.c: the API's connections, bounded (see there). */
/* MHD_OPTION_NOTIFY_CONNECTION: a connection counted, or let go. */
void hostd_admit_notify(void *cls, struct MHD_Connection *c, void **socket_context,
			enum MHD_ConnectionNotificationCode code);
/* c's request is whole: it is served, no longer waiting. */
void hostd_admit_served(struct hostd *d, struct MHD_Connection *c);
/* c's response ended: it waits for its next request. */
void hostd_admit_idle(struct hostd *d, struct MHD_Connection *c);
/* Cut what waited too long (each turn of the API). */
void hostd_admit_sweep(struct hostd *d);
/* Forget every connection (the server has stopped). */
void hostd_admit_clear(struct hostd *d);

/* state.c: the daemon's start on its state dir. */
/* The state dir (made when missing), its private/, runs/ and workspaces/
 * the user's own, the lock taken, the token made or read, the config
 * checked; d's state, config, self and history set, *db_path (the caller
 * frees) the database's. */
int hostd_state_open(struct hostd *d, const char *state_dir, const char *config_path,
		     char **db_path, struct err **e);
/* Make path a directory of this user's, 0700. */
int hostd_own_dir(const char *path, struct err **e);
/* One daemon per state dir, for its whole life: a second would recover
 * (and stop) the first one's jobs and take its socket. */
int hostd_lock_state(struct hostd *d, struct err **e);
/* The operator's token: made once (0600), then read. */
int hostd_token(struct hostd *d, struct err **e);
/* The management socket (0600), listening. */
int hostd_listen_socket(struct hostd *d, struct err **e);
/* The wrappers are `cordon wrap`: cordon is beside this binary. */
char *hostd_cordon_beside(void);

/* request.c: what a wrapper is handed. */
/* The wrapper's environment: the daemon's (under a sandbox, whose policy
 * says what passes; without one, only its base variables) less every
 * variable a binding of the config, as it is now, names as a secret, the
 * binding's env, and the values of its secrets. */
char **hostd_wrapper_env(struct hostd *d, const struct host_binding *b,
			 const struct host_exec *x, struct err **e);
/* A wrapper's environment, its secrets' values wiped before it goes. */
void hostd_env_scrub_free(char **env);
/* The wrapper's request: the binding's policy, its env and secrets passed
 * by name (their values are in the wrapper's environment only). */
json_t *hostd_wrap_request(struct hostd *d, const struct host_binding *b, const char *job,
			   unsigned int n, const char *workspace, const struct host_exec *x);
/* The job's run dir, with its input when it has one. */
int hostd_job_run_dir(struct hostd *d, const char *job, const char *input, struct err **e);
/* git's credential helper (the toolbelt's), through GIT_CONFIG_*. */
int hostd_git_helper_env(struct hostd *d, struct host_exec *x);
/* What the wrapper clones: {"url", "branch", "mode", "helper"?, "setup"?}. */
json_t *hostd_clone_request(struct hostd *d, const struct host_binding *b, bool toolbelt);

/* places.c: where a launch may run. */
/* May this launch run beside the live segments of other jobs? 0, or -1
 * with *e (ERR_UNAVAILABLE for a container's workspace in use,
 * ERR_DENIED for a live operator's claude, naming the other job). */
int hostd_live_places_check(struct hostd *d, const struct host_binding *b, const char *job,
			    const char *workspace, struct err **e);
/* A claude that runs as the operator never starts in, nor takes its
 * config from, a place a sandboxed run wrote or a sandboxed binding of
 * cfg may write. 0, or -1 with *e (ERR_DENIED naming both places). */
int hostd_operator_claude_check(struct hostd *d, const struct host_config *cfg,
				const struct host_binding *b, const char *ws, struct err **e);

/* daemon.c: the loop and the segments. */
/* CLOCK_REALTIME in ms. */
int64_t hostd_wall_ms(void);
/* Watch s's wrapper's control socket (s->ctl) for its answer
 * (hostd_on_answer), and its pidfd (s->pidfd) for its exit
 * (hostd_on_exit_of), on d's loop; s belongs to d from then on. -1 with
 * errno when the loop cannot. */
int hostd_watch_ctl(struct hostd *d, struct seg *s);
int hostd_watch_pid(struct hostd *d, struct seg *s);
/* Unlink s from the daemon's segments, close its fds, free it. */
void hostd_seg_free(struct hostd *d, struct seg *s);
/* Has the job a segment this daemon runs or is starting (a retry's is
 * started before the last one is let go)? */
bool hostd_job_live(struct hostd *d, const char *job);
/* The pinned segment of job this daemon runs (not one whose stop is
 * being confirmed), or NULL. */
struct seg *hostd_running_seg(struct hostd *d, const char *job);

/* spawn.c: a segment started and pinned. */
/* Start a wrapper (`cordon wrap`, or `cordon container wrap`): fd 3 the
 * control socket ctl, 1 and 2 the log. 0, or an errno with *pid -1. */
int hostd_spawn_wrap(struct hostd *d, bool container, char **env, int logfd, int ctl, pid_t *pid);
/* A segment of the job under b: its wrapper started with the request,
 * watched until it answers with the pin. */
int hostd_spawn_wrapper(struct hostd *d, const struct host_binding *b, const char *job,
			unsigned int attempt, unsigned int n, const char *workspace,
			char *const *args, const char *input, const char *session,
			struct err **e);
/* A wrapper's answer on its control socket ctl (src, its source, no
 * longer watched): NULL when it ended without one or sent something that
 * is not JSON. */
json_t *hostd_read_answer(struct hostd *d, struct loop_fd *src, int ctl);
/* The wrapper answered (or ended): the pin into the database, then the
 * word; a refusal ends the job. */
void hostd_on_answer(struct hostd *d, struct seg *s);
/* Another attempt of a job, as segment n. */
int hostd_retry(struct hostd *d, const char *job, unsigned int n, struct err **e);

/* settle.c: a segment's end. */
/* The wrapper (or the settle child) ended: the segment's result recorded,
 * a failed attempt tried again; s is freed (or settling, a child's). */
void hostd_on_exit_of(struct hostd *d, struct seg *s);
/* A stop's grace is over: KILL (a container's helper asked first). */
void hostd_on_grace(struct hostd *d, struct seg *s);
/* Stop: TERM to the wrapper's group, KILL once the grace is over. */
int hostd_stop_segment(struct hostd *d, struct seg *s);
/* The job's own workspace (a clone, a scratch) removed. */
void hostd_remove_own_workspace(struct hostd *d, const char *job);

/* tbcalls.c: the toolbelt's operations. */
/* toolbelt_new's callback (ctx: the daemon): one operation of a job's. */
json_t *hostd_tb_call(void *ctx, const char *job, const char *op, json_t *args, int *status,
		      const char **why);
/* One line in the job's log, printable ASCII; -2 at the log's bound. */
int hostd_log_line(struct hostd *d, const char *job, const char *prefix, const char *text);
/* Toolbelt directories of jobs that no longer run: revoked. */
void hostd_sweep_toolbelts(struct hostd *d);
/* The toolbelt's operations the job's binding grants now. */
unsigned int hostd_binding_ops(struct hostd *d, const char *job);
/* Is the job's binding (as the config says now) claude-code's? */
bool hostd_job_is_claude(struct hostd *d, const char *job);

/* jobs.c: the job endpoints (api.c's table calls them). */
/* POST /v1/jobs: a new job through a binding; 201 with its id. */
enum MHD_Result hostd_post_job(struct hostd *d, struct MHD_Connection *c, const struct hostd_body *b);
/* The job is not running here: its state, or why not (404, 409). */
enum MHD_Result hostd_not_running(struct hostd *d, struct MHD_Connection *c, const char *job);
enum MHD_Result hostd_inject(struct hostd *d, struct MHD_Connection *c, struct seg *s,
			     const struct hostd_body *b);
enum MHD_Result hostd_interrupt(struct hostd *d, struct MHD_Connection *c, struct seg *s);
enum MHD_Result hostd_stop(struct hostd *d, struct MHD_Connection *c, const char *job);

/* follow.c: a job's log. */
/* The job's log, from ?offset; with ?follow=1, its stream. */
enum MHD_Result hostd_log_of(struct hostd *d, struct MHD_Connection *c, const char *job);
/* Look again at every suspended stream. */
void hostd_follow_resume(struct hostd *d);

/* attach.c: attach. */
enum MHD_Result hostd_attach(struct hostd *d, struct MHD_Connection *c, const char *job);
/* The attach's wrapper answered (or ended): the waiting connection resumed. */
void hostd_on_attach_answer(struct hostd *d, struct attaching *a);
/* Reap the attaches' wrappers; an entry goes once answered, delivered
 * and reaped. */
void hostd_attaches_reap(struct hostd *d);
/* libmicrohttpd's completion callback (cls: the daemon): an attach
 * waiting on the connection no longer answers it. */
void hostd_on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			enum MHD_RequestTerminationCode why);

/* reconcile.c: the periodic pass. */
void hostd_reconcile(struct hostd *d);

/* api.c: the management API. */
/* libmicrohttpd's access handler (cls: the daemon). */
enum MHD_Result hostd_api_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls);
/* Refuse with e's reason and the HTTP status that reason maps to. */
enum MHD_Result hostd_refuse(struct MHD_Connection *c, const struct err *e);

/* recovery.c: what a previous daemon left. */
/* host_db_running's callback (ctx: the daemon): adopt, resume, settle
 * or end one segment the database says is running. */
int hostd_recover_one(void *ctx, const struct host_segment *s);
/* Settle the segments opened but never launched. */
void hostd_settle_unlaunched(struct hostd *d);

#endif
