/* engine.h: cordon's client of the Docker Engine API. It talks to dockerd
 * itself (libcurl over the daemon's unix socket, JSON through jansson),
 * never through the docker CLI. Every call has a timeout and reads at most
 * ENGINE_ANSWER_MAX bytes of answer; every failure is a typed error, and
 * ERR_UNAVAILABLE when the daemon could not be asked. "Not there" is a
 * result of its own, given only when the daemon says so (a 404 it
 * explains): an error never reads as "gone" or "empty", and the other way
 * round. The program calls curl_global_init before engine_open. One
 * struct engine serves one thread at a time. */
#ifndef CORDON_CONTAINER_ENGINE_H
#define CORDON_CONTAINER_ENGINE_H

#include "lib/err.h"

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

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
 * Name the one asked), Endpoints.docker.Host. Caller frees *endpoint. */
int engine_context_endpoint(const char *config_dir, const char *context,
			    char **endpoint, struct err **e);

/* Open a daemon at endpoint (unix:///absolute/path; tcp:// and others are
 * refused as ERR_UNAVAILABLE for now), ping it and agree on the API
 * version: a daemon below ENGINE_API_MAJOR.ENGINE_API_MINOR is refused. */
int engine_open(const char *endpoint, struct engine **out, struct err **e);
void engine_close(struct engine *g);
/* Per-call timeout in seconds (ENGINE_TIMEOUT_DEFAULT unless set). */
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

struct engine_image {
	char *id;	     /* "sha256:<64 hex>" */
	char **repo_digests; /* "name@sha256:...", NULL-terminated, maybe empty */
};
/* ref: an image ID or a name pinned by digest. ENGINE_FOUND with *out
 * filled, ENGINE_GONE when the daemon has no such image, or -1. */
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
	bool running;
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
/* Remove it and its anonymous volumes (force: a running one too): 0
 * removed, 1 the daemon holds no such container, -1 error. */
int engine_container_remove(struct engine *g, const char *id, bool force, struct err **e);

#endif
