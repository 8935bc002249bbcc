/* tests/unit/hostrequest.c: the management API's job request body
 * (src/host/request.c): a request read back, and every refusal with its
 * message beside a control that parses. */
#include "host/request.h"
#include "lib/strv.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

static void refused(const char *doc, size_t len, const char *want, const char *fixed)
{
	char *b = NULL, **a = NULL, *in = NULL;
	struct err *e = NULL;
	int r = host_job_request_parse(doc, len, &b, &a, &in, &e);

	ok(r < 0 && !b && !a && !in && e && e->reason == ERR_CONFIG && strcmp(e->msg, want) == 0,
	   "refused: %s%s%s", want, e && strcmp(e->msg, want) ? " -- got: " : "",
	   e && strcmp(e->msg, want) ? e->msg : "");
	err_free(e);
	e = NULL;
	r = host_job_request_parse(fixed, strlen(fixed), &b, &a, &in, &e);
	ok(r == 0 && b, "... and the control parses%s%s", e ? ": " : "", e ? e->msg : "");
	err_free(e);
	free(b);
	free(in);
	strv_free(a);
}

int main(void)
{
	const char *good = "{\"binding\": \"build\", \"args\": [\"make\", \"-j2\"]}";
	char *b = NULL, **a = NULL, *big, *in = NULL;
	struct err *e = NULL;

	ok(host_job_request_parse(good, strlen(good), &b, &a, &in, &e) == 0 && b &&
		   strcmp(b, "build") == 0 && a && strcmp(a[0], "make") == 0 &&
		   strcmp(a[1], "-j2") == 0 && !a[2],
	   "a request: its binding and args");
	free(b);
	strv_free(a);
	ok(host_job_request_parse("{\"binding\": \"b\"}", 16, &b, &a, &in, &e) == 0 && !a && !in,
	   "args and input may be left out");
	free(b);
	const char *withinput = "{\"binding\": \"b\", \"input\": \"line 1\\nline 2\"}";
	ok(host_job_request_parse(withinput, strlen(withinput), &b, &a, &in, &e) == 0 && in &&
		   strcmp(in, "line 1\nline 2") == 0,
	   "an input, as given");
	free(b);
	free(in);
	in = NULL;
	refused("{\"binding\": \"b\", \"input\": 3}", strlen("{\"binding\": \"b\", \"input\": 3}"),
		"input: must be a string", "{\"binding\": \"b\", \"input\": \"3\"}");
	char *t = NULL;
	ok(host_inject_request_parse("{\"text\": \"hello\"}", 17, &t, &e) == 0 && t &&
		   strcmp(t, "hello") == 0,
	   "an inject request: its text");
	free(t);
	ok(host_inject_request_parse("{\"text\": 1}", 11, &t, &e) < 0 && !t && e &&
		   strcmp(e->msg, "text: must be a string") == 0,
	   "an inject request without a text string is refused");
	err_free(e);
	e = NULL;
	ok(host_inject_request_parse("{\"text\": \"a\", \"x\": 1}", 21, &t, &e) < 0 && e &&
		   strcmp(e->msg, "x: unknown key") == 0,
	   "... and one with another key");
	err_free(e);
	e = NULL;
	refused("", strlen(""), "the body must be a JSON object", "{\"binding\": \"b\"}");
	refused("[1]", strlen("[1]"), "the body must be a JSON object", "{\"binding\": \"b\"}");
	refused("{\"binding\": \"b\", \"x\": 1}", strlen("{\"binding\": \"b\", \"x\": 1}"), "x: unknown key", "{\"binding\": \"b\"}");
	refused("{\"binding\": 1}", strlen("{\"binding\": 1}"), "binding: must be a binding's name", "{\"binding\": \"b\"}");
	refused("{\"binding\": \"\"}", strlen("{\"binding\": \"\"}"), "binding: must be a binding's name", "{\"binding\": \"b\"}");
	refused("{\"binding\": \"b\", \"args\": []}", strlen("{\"binding\": \"b\", \"args\": []}"),
		"args: must be a non-empty array of strings", "{\"binding\": \"b\", \"args\": [\"x\"]}");
	refused("{\"binding\": \"b\", \"args\": [\"a\", 2]}", strlen("{\"binding\": \"b\", \"args\": [\"a\", 2]}"), "args[1]: must be a string",
		"{\"binding\": \"b\", \"args\": [\"a\", \"2\"]}");
	big = malloc(HOST_REQUEST_MAX + 2);
	if (big) {
		memset(big, ' ', HOST_REQUEST_MAX + 1);
		big[0] = '{';
		big[HOST_REQUEST_MAX] = '}';
		refused(big, HOST_REQUEST_MAX + 1, "the body is larger than 64 KiB", "{\"binding\": \"b\"}");
		free(big);
	}
	return done_testing();
}
