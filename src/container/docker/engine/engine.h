/* engine.h: cordon's client of the Docker Engine API. It talks to dockerd
 * itself (libcurl over the daemon's unix socket or plain tcp, JSON through
 * jansson), never through the docker CLI. Every call has a timeout (but a
 * wait asked to have none) and reads at most ENGINE_ANSWER_MAX bytes of
 * answer; every failure is a typed error, and ERR_UNAVAILABLE when the
 * daemon could not be asked. "Not there" is a result of its own, given
 * only when the daemon says so (a 404 it explains): an error never reads
 * as "gone" or "empty", and the other way round. The program calls
 * curl_global_init before engine_open. One struct engine serves one
 * thread at a time. Also here: a tar of files made in memory (libarchive),
 * and the reader of the attach stream's frames (pure). */
#ifndef CORDON_CONTAINER_DOCKER_ENGINE_ENGINE_H
#define CORDON_CONTAINER_DOCKER_ENGINE_ENGINE_H

#include "lib/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The API version cordon speaks: Engine 20.10's, what Debian ships. A
 * daemon that offers less is refused. */
#define ENGINE_API_MAJOR 1
#define ENGINE_API_MINOR 41
#define ENGINE_ANSWER_MAX ((size_t)4 << 20)
#define ENGINE_TIMEOUT_DEFAULT 30L /* seconds, per call */
/* The letters and digits a name of Docker's begins with. */
#define ENGINE_ALNUM "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
/* The endpoint the context "default" names. */
#define ENGINE_DEFAULT_ENDPOINT "unix:///var/run/docker.sock"

/* What a lookup found: the thing, or the daemon's word that it holds no
 * such thing. Errors are -1. */
enum engine_found {
	ENGINE_GONE = 0,
	ENGINE_FOUND = 1,
};

struct engine;

/* The Docker CLI's config directory: $DOCKER_CONFIG, else $HOME/.docker
 * (each must be absolute). Caller frees *out. */
int engine_config_dir(char **out, struct err **e);

/* The endpoint of a Docker CLI context: "default" is
 * ENGINE_DEFAULT_ENDPOINT; any other name is read from the CLI's context
 * store beneath config_dir (contexts/meta/<sha256 of the name>/meta.json,
 * no symbolic link beneath config_dir, at most 64 KiB, strict JSON, its
 * Name the one asked), Endpoints.docker.Host. A context that says TLS
 * (SkipTLSVerify, or TLS material in contexts/tls/<sha256>/) is refused
 * as ERR_UNAVAILABLE: TLS is not built. Caller frees *endpoint. */
int engine_context_endpoint(const char *config_dir, const char *context,
			    char **endpoint, struct err **e);

/* Open a daemon at endpoint, ping it and agree on the API version: a
 * daemon below ENGINE_API_MAJOR.ENGINE_API_MINOR is refused. Endpoints:
 * unix:///absolute/path, or tcp://host[:port] (plain HTTP, the port 2375
 * when none is given; whoever reaches that port is root on the daemon's
 * host, so it is for a network the operator trusts). https:// and
 * others are refused as ERR_UNAVAILABLE (TLS is not built). */
int engine_open(const char *endpoint, struct engine **out, struct err **e);
void engine_close(struct engine *g);
/* Per-call timeout in seconds (ENGINE_TIMEOUT_DEFAULT unless set; 0 or
 * less sets it back). A wait's own timeout is its argument instead, an
 * attach's stream has none. */
void engine_set_timeout(struct engine *g, long seconds);
/* The newest API version the daemon offered at its ping ("1.41"). */
const char *engine_daemon_api(const struct engine *g);
static inline void cleanup_enginep(struct engine **g)
{
	engine_close(*g);
}
#define _cleanup_engine_ __attribute__((cleanup(cleanup_enginep)))

struct engine_info {
	char *id;      /* the daemon's ID */
	char *version; /* its server version ("20.10.24") */
};
int engine_info(struct engine *g, struct engine_info *out, struct err **e);
void engine_info_clear(struct engine_info *i);

/* An image ID: "sha256:" and 64 lower-case hex digits. */
bool engine_image_id_ok(const char *s);
/* An image ID or reference (registry/name:tag@sha256:...) cordon puts
 * into a request's path: no "..", no empty path element. */
bool engine_image_ref_ok(const char *s);

struct engine_image {
	char *id;	     /* "sha256:<64 hex>" */
	char **repo_digests; /* "name@sha256:...", NULL-terminated, maybe empty */
	/* What the image is, by content: its layers' diff IDs (the SHA-256
	 * of each layer's uncompressed tar, "sha256:<64 hex>"), bottom
	 * first, NULL-terminated; and its Config (the defaults a container
	 * made from it takes: entrypoint, environment, labels, volumes,
	 * healthcheck, ...), an object, empty when the daemon shows none. */
	char **layers;
	json_t *config;
};
/* ref: an image ID or a name pinned by digest. ENGINE_FOUND with *out
 * filled, ENGINE_GONE when the daemon has no such image, or -1 (also
 * when RootFS is not "layers" of diff IDs, or Config not an object). */
int engine_image_inspect(struct engine *g, const char *ref, struct engine_image *out,
			 struct err **e);
void engine_image_clear(struct engine_image *i);

/* Create a container from config (the API's create body; not taken) and
 * never start it. name may be NULL (the daemon picks one). The daemon's
 * warnings mean something asked is not in force: the container is
 * removed again and the call fails. *id is the container's full ID. */
int engine_container_create(struct engine *g, const char *name, const json_t *config,
			    char **id, struct err **e);

struct engine_container {
	char *id;	  /* full ID */
	char *name;	  /* "/name" as the daemon keeps it */
	char *image;	  /* the image ID it was made from */
	char *status;	  /* created, running, exited, ... */
	char *started_at; /* RFC 3339, as the daemon wrote it */
	char *finished_at; /* likewise; "0001-01-01T00:00:00Z" before any end */
	bool running;
	bool oom_killed;  /* its last end was the kernel's OOM killer */
	long pid;	  /* 0 when not running */
	int exit_code;
	json_t *labels;	  /* object of strings */
};
/* ENGINE_FOUND with *out filled, ENGINE_GONE when the daemon holds no such
 * container (its 404 only), or -1 when it could not be asked or answered
 * something else. */
int engine_container_inspect(struct engine *g, const char *id, struct engine_container *out,
			     struct err **e);
void engine_container_clear(struct engine_container *c);

/* IDs of every container (running or not) carrying all of labels
 * ("key=value" or "key"; at least one: the daemon's other containers are
 * not cordon's). *ids is NULL-terminated and may be empty only when the
 * daemon answered an empty list; any failure is -1. */
int engine_container_list(struct engine *g, char *const *labels, char ***ids, struct err **e);

/* 0 started, 1 it was running already, -1 error. */
int engine_container_start(struct engine *g, const char *id, struct err **e);
/* Send signal sig (1-64): 0 sent, 1 the container is not running, -1. */
int engine_container_kill(struct engine *g, const char *id, int sig, struct err **e);
/* Size the terminal of a container made with a TTY: rows x cols (each
 * at least 1). 0 done, 1 the daemon holds no such container or says it
 * is not running (a container that has not started yet, or has ended,
 * has no terminal to size), -1. */
int engine_container_resize(struct engine *g, const char *id, unsigned short rows,
			    unsigned short cols, struct err **e);
/* Remove it and its anonymous volumes (force: a running one too): 0
 * removed, 1 the daemon holds no such container, -1 error. */
int engine_container_remove(struct engine *g, const char *id, bool force, struct err **e);

/* What a wait saw (or -1, an error). */
enum engine_wait {
	ENGINE_WAIT_EXITED = 0,	 /* it ended: *code is its status */
	ENGINE_WAIT_GONE = 1,	 /* the daemon holds no such container */
	ENGINE_WAIT_TIMEOUT = 2, /* timeout_s passed first; it may still run */
};
/* Wait until the container is not running (condition "not-running": at
 * once if it is not) or for its next exit ("next-exit"). timeout_s 0 is
 * no timeout at all (the wait lasts as long as the job), yet the call
 * still fails when the daemon goes away; other calls keep the engine's
 * timeout. An error the daemon reports with the status fails. */
int engine_container_wait(struct engine *g, const char *id, const char *condition,
			  long timeout_s, int *code, struct err **e);

/* Unpack tar[0..len) (uncompressed, as engine_tar_build makes it) into
 * the container at path (absolute; it must exist), as PUT
 * /containers/{id}/archive with noOverwriteDirNonDir: a directory there
 * is never replaced by a file, nor a file by a directory. 0 done, 1 the
 * daemon holds no such container, -1 error (a read-only root filesystem
 * is one). */
int engine_container_put_archive(struct engine *g, const char *id, const char *path,
				 const void *tar, size_t len, struct err **e);

/* Attach to the container's streams (stdout and stderr; stdin too with
 * with_stdin) as the CLI does: a request on a connection of its own that
 * the daemon then hands over as a raw byte stream (HTTP 101, or 200 from
 * a daemon that does not upgrade). *fd is that connection (blocking,
 * O_CLOEXEC; the caller closes it): every byte after the daemon's head
 * is still to be read from it. Write stdin to it; shutdown(SHUT_WR) is
 * the end of stdin. For a container without a TTY what is read is
 * framed (engine_demux_feed); with a TTY, raw. The head must come within
 * the engine's timeout; the stream itself has none. Attached to a
 * container that does not run, the stream waits for its start (attach,
 * then start: nothing it writes is missed). 0 attached, 1 the daemon
 * holds no such container, -1 error. */
int engine_container_attach(struct engine *g, const char *id, bool with_stdin, int *fd,
			    struct err **e);

/* The frames of an attach stream without a TTY: an 8-byte header (the
 * stream: 0 stdin, 1 stdout, 2 stderr; three zero bytes; the size, 32
 * bits big-endian), then that many bytes. Start from {0}. */
struct engine_demux {
	unsigned char head[8];
	unsigned have;	 /* bytes of head read */
	uint32_t left;	 /* of the frame being read */
	int stream;
	bool bad;
};
/* Feed buf[0..n), in pieces of any size: out gets each frame's bytes as
 * they come (a frame may come in several calls; never a call of 0
 * bytes). 0, or -1 on a malformed header (a stream above 2, padding not
 * zero), and -1 for ever after. Pure: no I/O, no allocation. */
int engine_demux_feed(struct engine_demux *d, const void *buf, size_t n,
		      void (*out)(void *ctx, int stream, const void *p, size_t n), void *ctx);
/* At a frame's end (a stream that ends elsewhere was cut short). */
bool engine_demux_idle(const struct engine_demux *d);

/* --- images --- */

/* Make an image of tar[0..len) (its root filesystem) as POST
 * /images/create?fromSrc=-, tagged repo_tag ("name:tag", "name" is
 * name:latest; NULL: no tag), with changes applied: Dockerfile lines
 * ("ENTRYPOINT [\"/cordon\"]", "LABEL k=v", "ENV ...", "USER ...",
 * "WORKDIR ...", "CMD ..."; NULL-terminated, may be NULL). An error in
 * the daemon's progress stream fails the call. *id is the image's ID
 * ("sha256:..."). */
int engine_image_import(struct engine *g, const void *tar, size_t len, const char *repo_tag,
			char *const *changes, char **id, struct err **e);
/* IDs of the images carrying every label, as engine_container_list. */
int engine_image_list(struct engine *g, char *const *labels, char ***ids, struct err **e);
/* Remove an image (by ID or name; force: its tags and those of
 * containers too): 0 removed, 1 the daemon holds no such image, -1. */
int engine_image_remove(struct engine *g, const char *ref, bool force, struct err **e);

/* --- networks (ref: a network's full ID, or its name) --- */

/* Create a bridge network (CheckDuplicate: a network of that name is an
 * error), internal (no way out of the host) or not, with labels and
 * driver options (objects of strings; NULL: none). A warning of the
 * daemon fails the call and the network is removed again. *id is its
 * full ID. */
int engine_network_create(struct engine *g, const char *name, const json_t *labels,
			  bool internal, const json_t *options, bool ipv6, char **id,
			  struct err **e);
/* 0 removed, 1 the daemon holds no such network, -1 (one in use too). */
int engine_network_remove(struct engine *g, const char *ref, struct err **e);
int engine_network_list(struct engine *g, char *const *labels, char ***ids, struct err **e);

struct engine_network {
	char *id;
	char *name;
	bool internal;
	bool ipv6;
	char *subnet;	/* its first IPAM pool's ("172.18.0.0/16"); NULL: none */
	char *gateway;	/* likewise ("172.18.0.1"); NULL: none */
	json_t *labels;	/* object of strings */
	json_t *options; /* its driver options, object of strings */
};
/* ENGINE_FOUND with *out filled (asked by ID, about that ID; by name,
 * about that name), ENGINE_GONE on the daemon's own "not found", -1. */
int engine_network_inspect(struct engine *g, const char *ref, struct engine_network *out,
			   struct err **e);
void engine_network_clear(struct engine_network *n);

/* --- volumes --- */

/* Create a volume of the local driver with labels and driver_opts
 * (objects of strings; NULL: none; {"type": "tmpfs", "device": "tmpfs",
 * "o": "size=16m,uid=0,gid=0,mode=0700"} is a tmpfs). A volume of that
 * name that exists already is an error: the daemon's create would hand
 * it back as it is (its contents, its options). */
int engine_volume_create(struct engine *g, const char *name, const json_t *labels,
			 const json_t *driver_opts, struct err **e);
/* 0 removed, 1 the daemon holds no such volume, -1 (one in use too).
 * With force the daemon says nothing of a volume it lacks: 0. */
int engine_volume_remove(struct engine *g, const char *name, bool force, struct err **e);
/* Names of the volumes carrying every label, as engine_container_list. */
int engine_volume_list(struct engine *g, char *const *labels, char ***names, struct err **e);

/* --- a tar made in memory --- */

/* One regular file of a tar. */
struct engine_tar_file {
	const char *name; /* relative ("bin/sh"): no "", ".", ".." element, printable */
	unsigned mode;	  /* permission bits, at most 07777 */
	unsigned uid, gid;
	const void *data;
	size_t len;
};
#define ENGINE_TAR_MAX ((size_t)1 << 30)
/* An uncompressed tar (POSIX pax, ustar where it fits) of files[0..n),
 * each with mtime (seconds since the epoch), nothing of the host's in it
 * (no names of users, no other times): the same files give the same
 * bytes. Directories on the way are not entries (the daemon makes them).
 * A name twice is refused. Caller frees *tar. */
int engine_tar_build(const struct engine_tar_file *files, size_t n, long long mtime, void **tar,
		     size_t *len, struct err **e);

#endif
