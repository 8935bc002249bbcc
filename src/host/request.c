/* request.c: the management API's request bodies (see request.h). */
#include "host/request.h"

#include "lib/cleanup.h"
#include "lib/json.h"
#include "lib/strv.h"

#include <errno.h>
#include <string.h>

static bool plain_string(json_t *v)
{
	return json_is_string(v) && strlen(json_string_value(v)) == json_string_length(v);
}

int host_job_request_parse(const char *buf, size_t len, char **binding, char ***args,
			   char **input, struct err **e)
{
	_cleanup_json_ json_t *req = NULL;
	json_t *v, *a;
	size_t i;

	*binding = NULL;
	*args = NULL;
	*input = NULL;
	if (!buf || len == 0)
		return err_set(e, ERR_CONFIG, 0, "the body must be a JSON object");
	if (len > HOST_REQUEST_MAX)
		return err_set(e, ERR_CONFIG, 0, "the body is larger than 64 KiB");
	req = json_parse_strict(buf, len, e);
	if (!req)
		return -1;
	if (!json_is_object(req))
		return err_set(e, ERR_CONFIG, 0, "the body must be a JSON object");
	static const char *const keys[] = { "binding", "args", "input", NULL };

	if (json_check_keys(req, "", keys, e) < 0)
		return -1;
	v = json_object_get(req, "binding");
	if (!plain_string(v) || json_string_length(v) == 0)
		return err_set(e, ERR_CONFIG, 0, "binding: must be a binding's name");
	v = json_object_get(req, "input");
	if (v && !plain_string(v))
		return err_set(e, ERR_CONFIG, 0, "input: must be a string");
	a = json_object_get(req, "args");
	if (a) {
		if (!json_is_array(a) || json_array_size(a) == 0)
			return err_set(e, ERR_CONFIG, 0, "args: must be a non-empty array of strings");
		json_array_foreach(a, i, v) {
			if (!plain_string(v)) {
				strv_free(*args);
				*args = NULL;
				return err_set(e, ERR_CONFIG, 0, "args[%zu]: must be a string", i);
			}
			if (strv_push(args, json_string_value(v)) < 0) {
				strv_free(*args);
				*args = NULL;
				return err_set(e, ERR_INTERNAL, ENOMEM, "request");
			}
		}
	}
	*binding = strdup(json_string_value(json_object_get(req, "binding")));
	v = json_object_get(req, "input");
	if (v)
		*input = strdup(json_string_value(v));
	if (!*binding || (v && !*input)) {
		strv_free(*args);
		free(*binding);
		*args = NULL;
		*binding = NULL;
		return err_set(e, ERR_INTERNAL, ENOMEM, "request");
	}
	return 0;
}

int host_inject_request_parse(const char *buf, size_t len, char **text, struct err **e)
{
	_cleanup_json_ json_t *req = NULL;
	json_t *v;

	*text = NULL;
	if (!buf || len == 0 || len > HOST_REQUEST_MAX)
		return err_set(e, ERR_CONFIG, 0, "the body must be a JSON object of at most 64 KiB");
	req = json_parse_strict(buf, len, e);
	if (!req)
		return -1;
	if (!json_is_object(req))
		return err_set(e, ERR_CONFIG, 0, "the body must be a JSON object");
	static const char *const keys[] = { "text", NULL };

	if (json_check_keys(req, "", keys, e) < 0)
		return -1;
	v = json_object_get(req, "text");
	if (!plain_string(v))
		return err_set(e, ERR_CONFIG, 0, "text: must be a string");
	*text = strdup(json_string_value(v));
	return *text ? 0 : err_set(e, ERR_INTERNAL, ENOMEM, "request");
}
