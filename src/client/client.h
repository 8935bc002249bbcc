/* client.h: the management API's client: libcurl over the daemon's unix
 * socket, with the operator's token read from the state dir. It decides
 * nothing; what the daemon answers is the caller's to print. */
#ifndef CORDON_CLIENT_CLIENT_H
#define CORDON_CLIENT_CLIENT_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

struct client {
	char *state;
	char sock[4096];
	char auth[128];
};

/* The daemon of state_dir (NULL: the default state dir): its socket and
 * the operator's token. 0, or -1 once the reason is on stderr. */
int client_open(struct client *c, const char *state_dir);
void client_close(struct client *c);

/* libcurl's global state, once a process, around its requests. */
void client_global_init(void);
void client_global_cleanup(void);

/* One request: the HTTP status (0 when the daemon cannot be reached) and
 * the answer's JSON (NULL when it is not JSON). */
long client_call(struct client *c, const char *method, const char *path, const char *body,
		 json_t **out);

/* One request for job id's log from offset (with follow, a stream of what
 * it adds until it has ended): each piece of a 200 answer goes to sink as
 * it comes, *got counting them; an error answer's JSON is *err (NULL
 * when it is not JSON). The HTTP status (0: no answer; -1: no request
 * could be made), *whole when the transfer ended as the daemon ended it. */
long client_log(struct client *c, const char *id, unsigned long long offset, bool follow,
		void (*sink)(const char *p, size_t n, void *arg), void *arg, size_t *got,
		bool *whole, json_t **err);

#endif
