/* tests/unit/provider.c: finding a provider among a program's registry
 * (src/provider/provider.c; the registry is tests/lib/providers.c,
 * cordon's): the default when a launch names none, an
 * unknown name refused, a name of another kind refused where one kind is
 * asked for, the names of a kind for messages, and a pin that names no
 * provider, an unknown one or one of another kind failing closed, named;
 * and the provider a root is pinned with read back from the pin
 * (src/plan/record.c), a pin of old naming none. */
#include "lib/cleanup.h"
#include "lib/json.h"
#include "plan/plan.h"
#include "provider/provider.h"
#include "sandbox/native/native.h"
#include "sandbox/none/none.h"
#include "sandbox/srt/srt.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* provider_of on a document; the refusal's message in *msg. */
static const struct provider *of(const char *doc, enum provider_kind kind, char **msg)
{
	_cleanup_json_ json_t *j = json_loads(doc, 0, NULL);
	struct err *e = NULL;
	const struct provider *p = provider_of(j, kind, &e);

	*msg = e && e->msg ? strdup(e->msg) : NULL;
	if (e && e->reason != ERR_UNAVAILABLE)
		diag("reason %d", (int)e->reason);
	err_free(e);
	return p;
}

static void finding(void)
{
	char buf[64];

	ok(provider_find(NULL) == &native_provider, "no name is the default: native");
	ok(provider_find("srt") == &srt_provider, "srt by name");
	ok(provider_find("none") == &none_provider, "none by name");
	ok(provider_find("bogus") == NULL, "an unknown name is refused");
	ok(provider_find("") == NULL, "an empty name is refused");
	ok(provider_find("Native") == NULL, "a name is exact (no case folding)");
	ok(provider_find("docker") == NULL, "a provider of another program is not this one's");
	ok(provider_find_kind(NULL, PROVIDER_PROCESS) == &native_provider,
	   "the default is a process provider");
	ok(provider_find_kind("none", PROVIDER_PROCESS) == NULL,
	   "none is not a process provider (never `cordon run`'s)");
	ok(provider_find_kind("none", PROVIDER_NONE) == &none_provider, "none is of its own kind");
	ok(provider_find_kind("srt", PROVIDER_CONTAINER) == NULL,
	   "a process provider is not a container one");
	is_str(provider_names(PROVIDER_PROCESS, buf, sizeof(buf)), "native, srt",
	       "the process providers' names, for messages");
	is_str(provider_names(PROVIDER_CONTAINER, buf, sizeof(buf)), "",
	       "no container provider in this program");
	is_str(provider_names(PROVIDER_PROCESS, buf, 9), "native",
	       "the names truncated to the buffer, never past it");
}

static void pins(void)
{
	static const struct {
		const char *doc;
		enum provider_kind kind;
		const char *said;	/* NULL: found */
		const char *what;
	} cases[] = {
		{ "{\"provider\": \"srt\"}", PROVIDER_PROCESS, NULL, "a pin naming srt is srt's" },
		{ "{}", PROVIDER_PROCESS, "the provider `(none)` is not in this program",
		  "a pin naming no provider fails closed" },
		{ "{\"provider\": \"bogus\"}", PROVIDER_PROCESS,
		  "the provider `bogus` is not in this program",
		  "a pin naming an unknown provider fails closed, named" },
		{ "{\"provider\": 7}", PROVIDER_PROCESS, "the provider `(none)` is not in this program",
		  "a provider that is not a string fails closed" },
		{ "{\"provider\": \"none\"}", PROVIDER_PROCESS,
		  "the provider `none` is not in this program",
		  "a pin naming a provider of another kind fails closed" },
		{ "{\"provider\": \"native\"}", PROVIDER_CONTAINER,
		  "the container provider `native` is not in this program",
		  "a container pin naming a process provider fails closed, said as a container's" },
		{ "null", PROVIDER_PROCESS, "the provider `(none)` is not in this program",
		  "no pin at all fails closed" },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(*cases); i++) {
		char *msg = NULL;
		const struct provider *p = of(cases[i].doc, cases[i].kind, &msg);

		if (cases[i].said)
			ok(!p && msg && strcmp(msg, cases[i].said) == 0, "%s (%s)", cases[i].what,
			   msg ? msg : "no message");
		else
			ok(p && strcmp(p->name, "srt") == 0 && !msg, "%s", cases[i].what);
		free(msg);
	}
}

/* The provider pinned with the root, read back; "" for a pin without. */
static void pinned_root(void)
{
	char tmpl[] = "/tmp/cordon-provider-unit.XXXXXX";
	char *dir = mkdtemp(tmpl), *path = NULL, *digest = NULL;
	struct plan_root r = { 0 };
	struct err *e = NULL;
	FILE *f;

	if (!dir || asprintf(&path, "%s/pins.json", dir) < 0) {
		ok(0, "a scratch dir");
		return;
	}
	f = fopen(path, "w");
	fputs("{\"1\": {\"digest\": \"d1\", \"summary\": \"s\", \"root\": {\"pid\": 7, "
	      "\"start_ticks\": 9, \"provider\": \"srt\"}}, \"2\": {\"digest\": \"d2\", "
	      "\"summary\": \"s\", \"root\": {\"pid\": 7, \"start_ticks\": 9}}}",
	      f);
	fclose(f);
	ok(plan_read_pin_root(dir, 1, &digest, &r, &e) == 0 && strcmp(r.provider, "srt") == 0,
	   "the provider pinned with the root is read back");
	free(digest);
	digest = NULL;
	memset(&r, 0, sizeof(r));
	ok(plan_read_pin_root(dir, 2, &digest, &r, &e) == 0 && r.provider[0] == '\0' &&
		   provider_find(r.provider) == NULL,
	   "a pin of old names no provider, and none is found for it");
	free(digest);
	err_free(e);
	unlink(path);
	rmdir(dir);
	free(path);
}

int main(void)
{
	finding();
	pins();
	pinned_root();
	return done_testing();
}
