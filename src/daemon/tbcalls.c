/* tbcalls.c: the toolbelt's operations as the daemon answers them (see
 * toolbelt/toolbelt.h): job.status, job.output, notify (a line in the
 * job's log), git.credential (a binding's, for what git asked); what a
 * job's binding grants; and the toolbelts of jobs that ended revoked. */
#include "daemon/internal.h"
#include "host/config.h"
#include "host/db.h"
#include "host/logdrain.h"
#include "lib/cleanup.h"
#include "lib/fs.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "toolbelt/toolbelt.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The toolbelt's operations the job's binding grants now. */
unsigned int hostd_binding_ops(struct hostd *d, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	unsigned int ops;

	if (!j || host_config_load(d->config, &cfg, &e) < 0)
		return 0;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	ops = b ? b->ops : 0;
	host_config_free(cfg);
	return ops;
}

/* Toolbelt directories of jobs that no longer run: revoked. */
void hostd_sweep_toolbelts(struct hostd *d)
{
	_cleanup_free_ char *root = fs_path_join(d->state, TOOLBELT_DIR);
	DIR *dir = root ? opendir(root) : NULL;
	_cleanup_strv_ char **gone = NULL;
	struct dirent *de;

	if (!dir)
		return;
	while ((de = readdir(dir)))
		if (de->d_name[0] != '.' && !hostd_job_live(d, de->d_name))
			(void)strv_push(&gone, de->d_name);
	closedir(dir);
	for (size_t i = 0; gone && gone[i]; i++)
		toolbelt_close(d->tb, gone[i]);
}

/* Is the job's binding (as the config says now) claude-code's? */
bool hostd_job_is_claude(struct hostd *d, const char *job)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	struct host_config *cfg = NULL;
	const struct host_binding *b;
	bool r;

	if (!j || host_config_load(d->config, &cfg, &e) < 0)
		return false;
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	r = b && b->executor == HOST_EXEC_CLAUDE_CODE;
	host_config_free(cfg);
	return r;
}

/* A string argument: present, at most max bytes, no NUL. */
static const char *arg_string(json_t *args, const char *key, size_t max)
{
	json_t *v = json_object_get(args, key);

	return json_is_string(v) && json_string_length(v) <= max &&
		       strlen(json_string_value(v)) == json_string_length(v)
		       ? json_string_value(v)
		       : NULL;
}

/* One line in the job's log, as the daemon writes it: printable ASCII,
 * anything else shown as '?'. -2 when the log is at its bound
 * (HOST_LOG_MAX, which the wrapper holds the command's output to). */
int hostd_log_line(struct hostd *d, const char *job, const char *prefix, const char *text)
{
	_cleanup_free_ char *path = NULL, *line = NULL;
	_cleanup_close_ int fd = -1;
	size_t n;

	if (asprintf(&path, "%s/runs/%s/log", d->state, job) < 0 ||
	    asprintf(&line, "%s%s\n", prefix, text) < 0)
		return -1;
	n = strlen(line);
	for (size_t i = 0; i + 1 < n; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] >= 0x7f)
			line[i] = '?';
	fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC | O_NOFOLLOW);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0)
		return -1;
	if (st.st_size >= HOST_LOG_MAX)
		return -2;
	return fs_write_exact(fd, line, n) == 0 ? 0 : -1;
}

/* git's credential for what git asked (its protocol, host and path):
 * only https, only a host (and path) the job's binding names, as its
 * config says now. The value goes into this answer alone. */
static json_t *git_credential(struct hostd *d, const char *job, json_t *args, int *status,
			      const char **why)
{
	_cleanup_err_ struct err *e = NULL;
	_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);
	const char *protocol = arg_string(args, "protocol", 64), *host = arg_string(args, "host", 512);
	const char *path = arg_string(args, "path", 4096);
	const struct host_git_cred *cred;
	const struct host_binding *b;
	struct host_config *cfg = NULL;
	char *value = NULL;
	json_t *ans;

	if (!protocol || !host || (json_object_get(args, "path") && !path)) {
		*status = 400;
		*why = "git.credential takes {\"protocol\", \"host\", \"path\"?} as git sends them";
		return NULL;
	}
	if (!j || host_config_load(d->config, &cfg, &e) < 0) {
		*status = 503;
		*why = "the job or the config cannot be read";
		return NULL;
	}
	b = host_config_find(cfg, json_string_value(json_object_get(j, "binding")));
	cred = b ? host_git_cred_find(b, protocol, host, path) : NULL;
	if (!cred) {
		host_config_free(cfg);
		*status = 403;
		*why = "no git credential of this binding's is for that protocol, host and path";
		return NULL;
	}
	if (host_secret_value(cred->secret, &value, &e) < 0) {
		host_config_free(cfg);
		*status = 503;
		*why = "the credential's secret cannot be read";
		return NULL;
	}
	ans = json_pack("{s:s, s:s}", "username", cred->username, "password", value);
	explicit_bzero(value, strlen(value));
	free(value);
	host_config_free(cfg);
	if (!ans) {
		*status = 503;
		*why = "the credential is not valid UTF-8";
	}
	return ans;
}

_Static_assert(HOST_OUTPUTS_MAX == 256 && HOST_OUTPUTS_BYTES_MAX == 1048576 &&
		       HOST_LOG_MAX == 268435456,
	       "tb_call's refusals name the bounds");

json_t *hostd_tb_call(void *ctx, const char *job, const char *op, json_t *args, int *status,
		       const char **why)
{
	struct hostd *d = ctx;
	_cleanup_err_ struct err *e = NULL;

	*status = 400;
	if (strcmp(op, "job.status") == 0) {
		_cleanup_json_ json_t *j = host_db_job_json(d->db, job, &e);

		if (!j) {
			*status = 503;
			*why = "the job cannot be read";
			return NULL;
		}
		return json_pack("{s:O, s:O, s:O, s:O, s:O}", "id", json_object_get(j, "id"),
				 "binding", json_object_get(j, "binding"), "result",
				 json_object_get(j, "result"), "segments",
				 json_integer((json_int_t)json_array_size(json_object_get(j, "segments"))),
				 "outputs", json_object_get(j, "outputs"));
	}
	if (strcmp(op, "job.output") == 0) {
		const char *name = arg_string(args, "name", 64), *value = arg_string(args, "value", 16384);

		if (!name || !name[0] ||
		    strspn(name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-") !=
			    strlen(name) ||
		    !value) {
			*why = "job.output takes {\"name\": 1 to 64 letters, digits, '.', '_' or '-', "
			       "\"value\": a string of at most 16 KiB}";
			return NULL;
		}
		if (host_db_job_output(d->db, job, name, value, &e) < 0) {
			bool denied = e && e->reason == ERR_DENIED;

			*status = denied ? 403 : 503;
			*why = denied ? "job.output: the job has saved all it may (256 outputs, "
					"1 MiB of them in all); this one is not saved"
				      : "the output cannot be saved";
			return NULL;
		}
		return json_pack("{s:s}", "saved", name);
	}
	if (strcmp(op, "notify") == 0) {
		const char *text = arg_string(args, "text", 1024);

		if (!text) {
			*why = "notify takes {\"text\": a string of at most 1 KiB}";
			return NULL;
		}
		int r = hostd_log_line(d, job, "cordon: notify: ", text);

		if (r < 0) {
			*status = r == -2 ? 403 : 503;
			*why = r == -2 ? "notify: the job's log is at its bound (256 MiB); the line "
					 "is not written"
				       : "the job's log cannot be written";
			return NULL;
		}
		return json_pack("{s:b}", "logged", 1);
	}
	if (strcmp(op, "git.credential") == 0)
		return git_credential(d, job, args, status, why);
	*status = 404;
	*why = "no such operation";
	return NULL;
}
