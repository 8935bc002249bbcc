/* api.c: the daemon's management API (see daemon.h) as a table. Every
 * request is checked in the same order before anything answers it: the
 * peer (the daemon's user, with the operator's token), the body's bound,
 * then its row, {method, path, flags, handler}; a row's flags are checked
 * before its handler runs. No row, no answer but 404. Every refusal's
 * reason maps to its HTTP status here (hostd_refuse). */
#include "daemon/internal.h"
#include "executor/executor.h"
#include "host/config.h"
#include "host/db.h"
#include "lib/cleanup.h"
#include "lib/err.h"
#include "provider/provider.h"
#include "toolbelt/http.h"

#include <jansson.h>
#include <microhttpd.h>
#include <openssl/crypto.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The job's segment this daemon runs must be there (else the job's
 * state, hostd_not_running): the handler is given it. */
#define API_RUNNING 1u

struct api_call {
	struct hostd *d;
	struct MHD_Connection *c;
	const char *job;		/* the path's `*`, or NULL */
	struct seg *seg;		/* API_RUNNING's */
	const struct hostd_body *body;
};

struct api_row {
	const char *method;
	const char *path;	/* `*`: one path segment (no `/`), maybe empty */
	unsigned int flags;
	enum MHD_Result (*fn)(const struct api_call *a);
};

/* A refusal of cordon's, with its reason (lib/err.h's name of it) and
 * the HTTP status that reason maps to (hostd_status_of: ERR_INTERNAL's
 * "error" is none of its reasons, and answers 500). */
enum MHD_Result hostd_refuse(struct MHD_Connection *c, const struct err *e)
{
	return hostd_fail(c, e ? err_reason_name(e->reason) : "error",
			  e && e->msg ? e->msg : "error");
}

/* The peer runs as the daemon's user, and says the operator's token. */
static bool authorized(struct hostd *d, struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	const char *h = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Authorization");
	struct ucred cred;
	socklen_t len = sizeof(cred);

	if (!ci || getsockopt(ci->connect_fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0 ||
	    cred.uid != geteuid())
		return false;
	if (!h || strncmp(h, "Bearer ", 7) != 0 || strlen(h + 7) != HOSTD_TOKEN_HEX)
		return false;
	return CRYPTO_memcmp(h + 7, d->token, HOSTD_TOKEN_HEX) == 0;
}

static enum MHD_Result health(const struct api_call *a)
{
	return hostd_answer(a->c, 200, json_pack("{s:b, s:s}", "ok", 1, "version", CORDON_VERSION));
}

static enum MHD_Result bindings(const struct api_call *a)
{
	_cleanup_err_ struct err *e = NULL;
	struct hostd *d = a->d;
	struct MHD_Connection *c = a->c;
	struct host_config *cfg = NULL;
	json_t *arr;

	if (host_config_load(d->config, &cfg, &e) < 0)
		return hostd_refuse(c, e);
	arr = json_array();
	for (size_t i = 0; arr && i < cfg->n; i++)
		json_array_append_new(
			arr, json_pack("{s:s, s:s, s:s?}", "name", cfg->bindings[i].name,
				       "executor", host_executor_name(cfg->bindings[i].executor),
				       "provider", cfg->bindings[i].provider));
	host_config_free(cfg);
	return hostd_answer(c, 200, json_pack("{s:o}", "bindings", arr ? arr : json_array()));
}

/* Each binding's readiness, and each provider's checks it rests on. */
static enum MHD_Result doctor(const struct api_call *a)
{
	_cleanup_err_ struct err *e = NULL;
	struct hostd *d = a->d;
	struct MHD_Connection *c = a->c;
	struct host_config *cfg = NULL;
	json_t *arr, *provs = json_object();

	if (host_config_load(d->config, &cfg, &e) < 0) {
		json_decref(provs);
		return hostd_refuse(c, e);
	}
	arr = json_array();
	/* each provider a binding names, checked once; each binding
	 * ready when its provider is */
	for (size_t i = 0; arr && provs && i < cfg->n; i++) {
		const struct host_binding *hb = &cfg->bindings[i];
		const struct provider *p = hb->provider ? provider_find(hb->provider) : NULL;
		/* each binding's provider asked once per what its report
		 * covers (ssh's: a remote and its key); a container's is the
		 * last pass of the checks a launch ran (the loop never waits
		 * on a Docker daemon or a remote) */
		_cleanup_free_ char *key = !p			? NULL
					   : p->doctor_key ? p->doctor_key(hb->container)
							   : strdup(p->name);
		json_t *r = key ? json_object_get(provs, key) : NULL;
		bool ready;

		if (key && !r && p->doctor && (r = p->doctor(hb->container, d->state)))
			json_object_set_new(provs, key, r);
		/* without a sandbox there is nothing to be ready: it runs
		 * as the operator, which doctor says */
		ready = !hb->provider || (r && json_is_true(json_object_get(r, "ready")));
		_cleanup_free_ char *git = NULL;
		bool no_git = hb->git_url && host_find_program("git", &git) < 0;
		json_array_append_new(
			arr, json_pack("{s:s, s:s?, s:b, s:s?}", "binding", hb->name, "provider",
				       hb->provider, "ready", ready && !no_git, "why",
				       no_git ? "git is not on the daemon's PATH (its clone workspace needs it)"
				       : !hb->provider ? "no sandbox: it runs as the operator"
				       : ready	       ? NULL
						       : "its provider is not ready here (see providers)"));
	}
	host_config_free(cfg);
	return hostd_answer(c, 200, json_pack("{s:o, s:o}", "bindings", arr ? arr : json_array(),
					"providers", provs ? provs : json_object()));
}

static enum MHD_Result jobs_list(const struct api_call *a)
{
	_cleanup_err_ struct err *e = NULL;
	json_t *jobs = host_db_jobs_json(a->d->db, &e);

	return jobs ? hostd_answer(a->c, 200, json_pack("{s:o}", "jobs", jobs)) : hostd_refuse(a->c, e);
}

static enum MHD_Result job_new(const struct api_call *a)
{
	return hostd_post_job(a->d, a->c, a->body);
}

static enum MHD_Result job_get(const struct api_call *a)
{
	_cleanup_err_ struct err *e = NULL;
	json_t *job = host_db_job_json(a->d->db, a->job, &e);

	if (!job && e && e->reason == ERR_CONFIG)
		return hostd_fail(a->c, "not_found", "no such job");
	return job ? hostd_answer(a->c, 200, job) : hostd_refuse(a->c, e);
}

static enum MHD_Result job_log(const struct api_call *a)
{
	return hostd_log_of(a->d, a->c, a->job);
}

static enum MHD_Result job_attach(const struct api_call *a)
{
	return hostd_attach(a->d, a->c, a->job);
}

static enum MHD_Result job_stop(const struct api_call *a)
{
	return hostd_stop(a->d, a->c, a->job);
}

static enum MHD_Result job_interrupt(const struct api_call *a)
{
	return hostd_interrupt(a->d, a->c, a->seg);
}

static enum MHD_Result job_inject(const struct api_call *a)
{
	return hostd_inject(a->d, a->c, a->seg, a->body);
}

static const struct api_row api[] = {
	{ "GET", "/v1/health", 0, health },
	{ "GET", "/v1/bindings", 0, bindings },
	{ "GET", "/v1/doctor", 0, doctor },
	{ "POST", "/v1/jobs", 0, job_new },
	{ "GET", "/v1/jobs", 0, jobs_list },
	{ "GET", "/v1/jobs/*", 0, job_get },
	{ "GET", "/v1/jobs/*/log", 0, job_log },
	{ "POST", "/v1/jobs/*/attach", 0, job_attach },
	{ "POST", "/v1/jobs/*/stop", 0, job_stop },
	{ "POST", "/v1/jobs/*/interrupt", API_RUNNING, job_interrupt },
	{ "POST", "/v1/jobs/*/inject", API_RUNNING, job_inject },
};

/* Does url match pattern? Its `*` (at most one) in *star, *star_len. */
static bool path_match(const char *pattern, const char *url, const char **star, size_t *star_len)
{
	while (*pattern) {
		if (*pattern == '*') {
			*star = url;
			*star_len = strcspn(url, "/");
			url += *star_len;
			pattern++;
		} else if (*pattern++ != *url++) {
			return false;
		}
	}
	return *url == '\0';
}

/* The first row whose method and path match answers, once its flags hold. */
static enum MHD_Result dispatch(struct hostd *d, struct MHD_Connection *c, const char *url,
				const char *method, const struct hostd_body *b)
{
	for (size_t i = 0; i < sizeof(api) / sizeof(*api); i++) {
		const struct api_row *row = &api[i];
		const char *star = NULL;
		size_t star_len = 0;

		if (strcmp(method, row->method) != 0 || !path_match(row->path, url, &star, &star_len))
			continue;
		_cleanup_free_ char *job = star ? strndup(star, star_len) : NULL;
		struct api_call a = { .d = d, .c = c, .job = job, .body = b };

		if (star && !job)
			return MHD_NO;
		if ((row->flags & API_RUNNING) && !(a.seg = hostd_running_seg(d, job)))
			return hostd_not_running(d, c, job);
		return row->fn(&a);
	}
	return hostd_fail(c, "not_found", "no such endpoint");
}

enum MHD_Result hostd_api_request(void *cls, struct MHD_Connection *c, const char *url,
				  const char *method, const char *version, const char *upload,
				  size_t *upload_size, void **con_cls)
{
	struct hostd *d = cls;
	struct hostd_body *b;
	enum MHD_Result ret;

	if (!hostd_body_step(con_cls, upload, upload_size, BODY_MAX, &ret))
		return ret;
	b = *con_cls;
	/* the request is whole: no longer a waiting connection (admit.c) */
	hostd_admit_served(d, c);
	if (!authorized(d, c))
		return hostd_fail(c, "unauthorized",
			    "the operator's token, from the daemon's own user, is required");
	if (b->too_big)
		/* (413, not bad_request's 400: a client tells a body too large
		 * from a malformed one by it) */
		return hostd_fail_status(c, 413, "bad_request", "the body is larger than 64 KiB");
	return dispatch(d, c, url, method, b);
}
