/* internal.h: shared between the Docker Engine client's own files
 * (engine.c: names, transport, open; container.c, image.c,
 * net.c: the calls; attach.c: the hijacked stream; wire.c: the
 * wire formats that need no I/O). Not a contract: other modules include
 * engine.h only. */
#ifndef CORDON_CONTAINER_DOCKER_ENGINE_INTERNAL_H
#define CORDON_CONTAINER_DOCKER_ENGINE_INTERNAL_H

#include "container/docker/engine/engine.h"
#include "lib/bbuf.h"

#include <curl/curl.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/un.h>

#define REF_MAX 255
#define LABEL_MAX 1024
#define PATH_MAX_IN 4096 /* a path inside a container, as cordon asks for it */
#define MESSAGE_MAX 200	 /* of the daemon's own words, in an error */
#define CONNECT_TIMEOUT 10L
/* The longest response head cordon reads itself (the attach's). */
#define ENGINE_HEAD_MAX 8192
/* A request with no timeout at all (a wait for a job's end). */
#define ENGINE_NO_TIMEOUT (-1L)

struct engine {
	CURL *curl;
	char *endpoint; /* as given: errors name it */
	bool tcp;
	char sock[sizeof(((struct sockaddr_un *)0)->sun_path)]; /* unix only */
	/* "http://docker" on a unix socket, "http://host:port" over tcp */
	char base[300];
	char host[280];	 /* the Host header: "docker" or "host:port" */
	char api[16];	 /* the daemon's newest version, from its ping */
	char prefix[16]; /* "/v1.41", on every call but the ping */
	long timeout;
};

struct answer {
	long status;
	struct bbuf body;
	/* the request's own timeout passed after the daemon answered its
	 * head (asked for with engine_req.timeout_answers) */
	bool timed_out;
};

/* One request. */
struct engine_req {
	const char *method;
	const char *path;
	const void *body; /* NULL: none */
	size_t len;
	const char *type; /* its Content-Type (NULL: application/json) */
	long timeout;	  /* seconds; 0: the engine's; ENGINE_NO_TIMEOUT */
	/* a timeout after a 200 head is an answer (a->timed_out), not a
	 * failure: the daemon took the request and is still at it */
	bool timeout_answers;
};

/* --- names (engine.c) --- */
/* A container's, network's or volume's name or ID as the daemon allows
 * names: it then goes into a URL path as it is, nothing to escape. */
bool engine_ref_ok(const char *s);
bool engine_is_hex64(const char *s);
/* Printable ASCII, 1 to max bytes. */
bool engine_text_ok(const char *s, size_t max);
/* An object whose values are all strings (NULL counts as empty). */
bool engine_strings_ok(const json_t *obj);

/* --- transport (engine.c) --- */
/* The options every connection of g takes: its socket, no proxy, no
 * redirect, http only, close-on-exec sockets, keepalive over tcp. */
void engine_curl_common(struct engine *g, CURL *k);
/* 0 with a->status and a->body (the caller clears it), or -1 when the
 * daemon could not be asked or its answer was too large. */
int engine_send(struct engine *g, const struct engine_req *r, struct answer *a, struct err **e);
/* A request with a JSON body (or none). */
int engine_call(struct engine *g, const char *method, const char *path, const char *body,
		struct answer *a, struct err **e);
void engine_answer_clear(struct answer *a);
/* The daemon's own words ({"message": ...}), printable, cut at
 * MESSAGE_MAX; NULL when there are none. */
char *engine_answer_message(const struct answer *a);
/* Did the daemon itself answer status with a message holding words? */
bool engine_answer_says(const struct answer *a, long status, const char *words);
/* An error for an answer the call did not expect; with_message adds the
 * daemon's words (left out where they could echo what cordon sent). */
int engine_answer_fail(struct engine *g, const char *what, const struct answer *a,
		       bool with_message, struct err **e);
/* The answer as JSON of type (JSON_OBJECT or JSON_ARRAY). */
json_t *engine_answer_json(struct engine *g, const char *what, const struct answer *a,
			   json_type type, struct err **e);
int engine_shape_fail(struct engine *g, const char *what, const char *field, struct err **e);
/* A copy of a string field that must be there and printable. */
int engine_take_text(struct engine *g, const char *what, json_t *obj, const char *field,
		     size_t max, char **out, struct err **e);
/* GET path, wanting 200 and JSON of type. With no_such, the daemon's 404
 * of that message sets *gone instead of failing. */
json_t *engine_get_json(struct engine *g, const char *what, const char *path, json_type type,
			const char *no_such, bool *gone, struct err **e);
/* A versioned request path (NULL on allocation failure). */
char *engine_api_path(const struct engine *g, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* s escaped for a URL's query (NULL on allocation failure). */
char *engine_escape(struct engine *g, const char *s);
/* A list's filters={"label": [...]}, escaped; at least one label. */
int engine_list_filters(struct engine *g, const char *what, char *const *labels, char **out,
			struct err **e);
/* A call answered by its status alone: 0 on ok, 1 on alt when the
 * daemon says alt_says (NULL: anything), else -1. */
int engine_act(struct engine *g, const char *what, const char *method, const char *path,
	       long ok, long alt, const char *alt_says, struct err **e);
/* The IDs of a list's answer (an array of objects with "Id"), each
 * checked by ok. */
int engine_list_ids(struct engine *g, const char *what, const char *path,
		    bool (*ok)(const char *), char ***ids, struct err **e);

/* --- wire formats (wire.c): pure, fuzzed --- */
/* A response head buf[0..n), whole: a status line "HTTP/1.x NNN ...",
 * header lines, each ending in CRLF, and the empty line. *status its
 * code, *length its Content-Length (-1 when it has none or the body is
 * chunked). 0, or -1 when it is not that. */
int engine_head_parse(const char *buf, size_t n, long *status, long long *length);
/* What a stream of JSON messages (one a line: an image import's
 * progress) said: the first error in it, the last image ID a status
 * named, how many messages. */
struct engine_stream_said {
	char *error; /* printable, cut at MESSAGE_MAX; NULL: none */
	char *id;    /* "sha256:..." or NULL */
	size_t messages;
};
/* 0, or -1 when a line is not a JSON object (or on allocation failure;
 * *out is cleared either way on -1). */
int engine_stream_read(const char *buf, size_t n, struct engine_stream_said *out);
void engine_stream_said_clear(struct engine_stream_said *s);

#endif
