/* internal.h: shared between the gateway's own files; not a contract. */
#ifndef CORDON_GATEWAY_INTERNAL_H
#define CORDON_GATEWAY_INTERNAL_H

#include "gateway/addrguard.h"
#include "gateway/framing.h"
#include "gateway/gateway.h"
#include "gateway/resolver.h"
#include "lib/loop.h"

#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#define GW_MAX_ADDRS 16
#define GW_REFUSED_MAX 64
#define GW_PIPE_POOL 64
/* Pipes stalled relays may keep (instead of moving their bytes to the
 * heap). With the pool that is at most (64 + 16) * 2 = 160 fds; with the
 * over-cap clients' slots (GW_WAITING_MAX) and the gateway's own few, it
 * stays inside the 256 fds the connection cap leaves. */
#define GW_PIPES_KEPT 16

enum conn_state {
	CS_HEAD,	/* reading the request */
	CS_RESOLVING,
	CS_CONNECTING,
	CS_RELAY,
	CS_REFUSING,	/* writing a refusal, then closing */
};

struct conn;

/* An address to dial: a quarter of a sockaddr_storage. */
union gw_addr {
	struct sockaddr sa;
	struct sockaddr_in in4;
	struct sockaddr_in6 in6;
};

/* What the loop watches: one side of a connection, or a listener. */
struct endpoint {
	struct loop_fd src;	/* its data: the gateway */
	int kind;	/* EP_CLIENT, EP_UPSTREAM, EP_LISTENER, EP_RESOLVER, EP_WAITING */
	int fd;
	struct conn *c;
	enum gw_proto proto;	/* listeners */
};

enum { EP_CLIENT, EP_UPSTREAM, EP_LISTENER, EP_RESOLVER, EP_WAITING };

/* A client over the connection cap, waiting (briefly) for its first
 * bytes so that its refusal can be in its own protocol: a fixed slot,
 * nothing allocated. */
#define GW_WAITING_MAX 32
struct waiting {
	struct endpoint ep;	/* first: the slot is its endpoint's; fd -1: free */
	int64_t deadline_ms;
	char client[64];
};

struct pipebuf {
	int r, w;	/* -1 while the direction holds no pipe */
	size_t n;	/* bytes in it */
	/* Bytes the other side would not take yet, moved out of the pipe so
	 * that a stalled reader holds no fds: a tunnel stays at two. */
	char *spill;
	size_t spill_len, spill_off;
};

struct conn {
	struct conn *prev, *next;
	struct gateway *gw;
	struct endpoint cli, up;
	enum conn_state st;
	enum gw_proto proto;		/* decided from the first byte */
	const char *proto_name;		/* "http", "http-connect", "socks5" */
	int socks_phase;		/* greeting, auth (with a token), request */
	char *in;			/* request head from the client */
	size_t in_len;
	char *out;			/* to the client: a reply or a refusal */
	size_t out_len, out_off;
	char *upout;			/* to the origin: forwarded head, early data */
	size_t upout_len, upout_off;
	struct pipebuf p[2];		/* 0: client to origin, 1: origin to client */
	bool eof[2], shut[2];
	uint64_t bytes[2];
	char host[256];
	uint16_t port;
	bool literal;
	union gw_addr addrs[GW_MAX_ADDRS];
	size_t n_addrs, next_addr;
	size_t ranges_used[GW_MAX_ADDRS];	/* indices of allow_ranges that let */
	size_t n_ranges_used;			/* an address through (audited) */
	/* Absolute-form http:// is served one request per connection: the
	 * origin gets the request's head and body and nothing after it, the
	 * client a response head saying Connection: close. */
	bool one_request;
	bool req_done;			/* head and body are all on their way */
	bool resp_started;		/* the final response head went out */
	int body;			/* HTTP_BODY_* */
	uint64_t body_left;		/* HTTP_BODY_LENGTH: bytes still to send */
	struct chunked chunked;		/* HTTP_BODY_CHUNKED: the decoder */
	bool head_method;		/* HEAD: the response has no body */
	int resp_body;			/* RESPONSE_BODY_* */
	uint64_t resp_left;		/* RESPONSE_BODY_LENGTH: bytes still to relay */
	struct chunked resp_chunked;
	char *resp;			/* the origin's response head, being read */
	size_t resp_len;
	char *extra;			/* what the client sent after its request: */
	size_t extra_len;		/* never forwarded, audited */
	int64_t linger_ms;		/* the response is out: the client's end awaited until then */
	char client[64];
	int64_t started_ms, deadline_ms;
	const char *verdict, *reason;
	char reason_buf[200];
	bool lookup_pending, dead, ready_queued;
	struct conn *ready_next;
	struct conn *grave_next;	/* closed, freed after the loop's turn */
};

struct gateway {
	struct gw_config cfg;
	struct net_range *ranges;	/* cfg.allow_ranges: the gateway's copy */
	char *toolbelt;			/* cfg.toolbelt_socket: the gateway's copy */
	struct loop *loop;		/* the caller's: every fd and deadline is in it */
	struct loop_hook after;		/* each round's end: fairness, sweeps, reaping */
	struct loop_timer wake;		/* the next deadline the hook must see */
	struct resolver *res;
	struct addr_set own;
	struct conn *conns;		/* every live connection */
	struct conn *ready;		/* relays that stopped for fairness */
	struct conn *graveyard;		/* closed: other events may still name them */
	unsigned int n_conns;
	struct endpoint *listeners[8];
	int n_listeners;
	bool accept_starved;		/* accept failed for want of fds: retry */
	struct endpoint resolver_eps[16];
	int pool[GW_PIPE_POOL][2];
	int n_pool;
	int pipes_held;			/* pipes connections hold now */
	int64_t last_sweep_ms;
	char refused[GW_REFUSED_MAX][320];
	size_t n_refused;
	/* The proxy token: only its SHA-256 is kept, compared in constant
	 * time, so neither the token nor its length is held or leaked. */
	bool has_token;
	unsigned char token_digest[32];
	/* Over the connection cap: the fixed HTTP answer, and the audit's
	 * rate limit (a line each for the first few a second, then one line
	 * that counts the rest). */
	char cap_reply[256];
	size_t cap_reply_len;
	int64_t cap_window_ms;
	unsigned int cap_logged, cap_unlogged;
	struct waiting waiting[GW_WAITING_MAX];
	unsigned int n_waiting;
};

int64_t gw_now_ms(void);
/* Watch one of the gateway's fds in its loop (ep->fd is the caller's to
 * set): a connection's side, a listener, a waiting client. -1 (errno)
 * when the loop cannot. */
int gw_watch(struct gateway *gw, struct endpoint *ep, int fd, uint32_t events);
void gw_conn_event(struct conn *c, struct endpoint *ep, uint32_t events);
void gw_conn_close(struct conn *c);
void gw_conn_timeout(struct conn *c);
int gw_relay(struct conn *c, int dir);
void gw_pipe_release(struct gateway *gw, struct pipebuf *p);
void gw_audit(struct conn *c);
void gw_audit_extra(struct conn *c);
void gw_refuse_http(struct conn *c, int http_status, const char *verdict, const char *reason);

/* served.c: absolute-form http://, one request per connection. */
struct http_request;
/* Queue the rebuilt head and the body bytes that came with it; 0, -1 on
 * allocation failure, 1 when the chunked body is malformed already. */
int gw_served_keep(struct conn *c, const struct http_request *req);
/* In the relay's loop, before a splice: 1 go on, 0 wait, -1 closed or
 * refusing, 2 nothing to do here (splice, at most gw_served_limit). */
int gw_served_read(struct conn *c, int dir, size_t *moved);
size_t gw_served_limit(const struct conn *c, int dir, size_t chunk);
void gw_served_moved(struct conn *c, int dir, size_t n);
/* cap.c: clients over the connection cap. */
void gw_over_cap(struct gateway *gw, int fd, enum gw_proto proto, const char *client);
void gw_cap_event(struct gateway *gw, struct endpoint *ep);
void gw_cap_sweep(struct gateway *gw, int64_t now);
void gw_cap_free(struct gateway *gw);

bool gw_token_ok(const struct gateway *gw, const void *password, size_t len);
void gw_note_refused(struct gateway *gw, const char *host, uint16_t port,
		     const char *reason);

#endif
