/* tests/unit/limits.c: the policy's newer keys: "limits" (pids, memory,
 * cpus), "env": {"pass"} and network.allow_ranges, each refusal beside
 * its control, the command-line forms (--limit, --pass-env,
 * --allow-range), range containment, and the keys in the normalised
 * policy and in the grant's JSON (round trip). */
#include "guard/guard.h"
#include "lib/err.h"
#include "lib/json.h"
#include "lib/strv.h"
#include "policy/policy.h"
#include "tap.h"

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

static struct policy *parse(const char *doc, char **msg)
{
	struct policy *p = NULL;
	struct err *e = NULL;

	*msg = NULL;
	if (policy_parse(doc, strlen(doc), &p, &e) < 0) {
		*msg = strdup(e && e->reason == ERR_CONFIG ? e->msg : "(not sandbox_config)");
		err_free(e);
		return NULL;
	}
	return p;
}

/* bad is refused with want; good parses. */
static void rule(const char *label, const char *bad, const char *want, const char *good)
{
	char *msg = NULL;
	struct policy *p = parse(bad, &msg);

	ok(!p, "%s: refused", label);
	is_str(msg, want, "%s: message", label);
	free(msg);
	policy_free(p);
	p = parse(good, &msg);
	if (!ok(p != NULL, "%s: control accepted", label))
		diag("refused: %s", msg);
	free(msg);
	policy_free(p);
}

static void test_limits(void)
{
	char *msg = NULL;
	struct policy *p;

	rule("pids 0", "{\"limits\":{\"pids\":0}}",
	     "limits.pids: must be a whole number from 1 to 4194304", "{\"limits\":{\"pids\":1}}");
	rule("pids too many", "{\"limits\":{\"pids\":4194305}}",
	     "limits.pids: must be a whole number from 1 to 4194304",
	     "{\"limits\":{\"pids\":4194304}}");
	rule("pids as a string", "{\"limits\":{\"pids\":\"50\"}}",
	     "limits.pids: must be a whole number from 1 to 4194304", "{\"limits\":{\"pids\":50}}");
	rule("memory unit", "{\"limits\":{\"memory\":\"64x\"}}",
	     "limits.memory: not a size such as 512m, 2g or a number of bytes",
	     "{\"limits\":{\"memory\":\"64M\"}}");
	rule("memory fraction", "{\"limits\":{\"memory\":\"0.5g\"}}",
	     "limits.memory: not a size such as 512m, 2g or a number of bytes",
	     "{\"limits\":{\"memory\":\"512m\"}}");
	rule("memory too small", "{\"limits\":{\"memory\":512}}",
	     "limits.memory: must be at least 1m", "{\"limits\":{\"memory\":1048576}}");
	rule("memory too large", "{\"limits\":{\"memory\":\"2048t\"}}",
	     "limits.memory: size is larger than 1 PiB", "{\"limits\":{\"memory\":\"1024t\"}}");
	rule("cpus 0", "{\"limits\":{\"cpus\":0}}",
	     "limits.cpus: must be a number from 0.01 to 1024, at most two decimals",
	     "{\"limits\":{\"cpus\":0.01}}");
	rule("cpus three decimals", "{\"limits\":{\"cpus\":1.234}}",
	     "limits.cpus: must be a number from 0.01 to 1024, at most two decimals",
	     "{\"limits\":{\"cpus\":1.23}}");
	rule("cpus too many", "{\"limits\":{\"cpus\":1025}}",
	     "limits.cpus: must be a number from 0.01 to 1024, at most two decimals",
	     "{\"limits\":{\"cpus\":1024}}");
	rule("cpus as a string", "{\"limits\":{\"cpus\":\"2\"}}",
	     "limits.cpus: must be a number from 0.01 to 1024, at most two decimals",
	     "{\"limits\":{\"cpus\":2}}");
	rule("workspace_entries 0", "{\"limits\":{\"workspace_entries\":0}}",
	     "limits.workspace_entries: must be a whole number from 1 to 1000000000",
	     "{\"limits\":{\"workspace_entries\":2000000}}");
	rule("unknown limit", "{\"limits\":{\"files\":10}}", "limits.files: unknown key",
	     "{\"limits\":{}}");
	rule("limits not an object", "{\"limits\":[]}", "limits: must be an object",
	     "{\"limits\":{}}");

	p = parse("{\"limits\":{\"pids\":50,\"memory\":\"64m\",\"cpus\":1.5}}", &msg);
	ok(p && p->limits.pids == 50 && p->limits.memory == 64ULL << 20 &&
		   p->limits.cpu_millis == 1500,
	   "pids 50, memory 64m, cpus 1.5 read as 50, 67108864 bytes, 1500 milli-CPUs");
	policy_free(p);
	free(msg);
}

static void test_env(void)
{
	rule("env name with '='", "{\"env\":{\"pass\":[\"A=B\"]}}",
	     "env.pass[0]: not a variable name (letters, digits and '_', not starting with a digit)",
	     "{\"env\":{\"pass\":[\"A_B\"]}}");
	rule("env name starting with a digit", "{\"env\":{\"pass\":[\"1X\"]}}",
	     "env.pass[0]: not a variable name (letters, digits and '_', not starting with a digit)",
	     "{\"env\":{\"pass\":[\"X1\"]}}");
	rule("env name twice", "{\"env\":{\"pass\":[\"X\",\"X\"]}}", "env.pass[1]: listed twice",
	     "{\"env\":{\"pass\":[\"X\",\"Y\"]}}");
	rule("env unknown key", "{\"env\":{\"set\":[]}}", "env.set: unknown key",
	     "{\"env\":{\"pass\":[]}}");
}

static void test_ranges(void)
{
	struct net_range r;
	const char *why = NULL;
	unsigned char a[16];

	rule("range without a prefix", "{\"network\":{\"allow_ranges\":[\"10.20.0.0\"]}}",
	     "network.allow_ranges[0]: a range needs a prefix length, as in 10.20.0.0/16",
	     "{\"network\":{\"allow_ranges\":[\"10.20.0.0/16\"]}}");
	rule("range with host bits", "{\"network\":{\"allow_ranges\":[\"10.20.0.1/16\"]}}",
	     "network.allow_ranges[0]: the address has bits set beyond the prefix length",
	     "{\"network\":{\"allow_ranges\":[\"10.20.0.1/32\"]}}");
	rule("range /0", "{\"network\":{\"allow_ranges\":[\"0.0.0.0/0\"]}}",
	     "network.allow_ranges[0]: a /0 range would allow every address",
	     "{\"network\":{\"allow_ranges\":[\"0.0.0.0/8\"]}}");
	rule("range longer than the address", "{\"network\":{\"allow_ranges\":[\"10.0.0.0/33\"]}}",
	     "network.allow_ranges[0]: the prefix length is longer than the address",
	     "{\"network\":{\"allow_ranges\":[\"fd00::/33\"]}}");
	rule("range with a zone", "{\"network\":{\"allow_ranges\":[\"fe80::%eth0/64\"]}}",
	     "network.allow_ranges[0]: IPv6 zone ids are not allowed",
	     "{\"network\":{\"allow_ranges\":[\"fe80::/64\"]}}");
	rule("range prefix with a leading zero", "{\"network\":{\"allow_ranges\":[\"10.0.0.0/08\"]}}",
	     "network.allow_ranges[0]: the prefix length is not a decimal number from 1 to 128",
	     "{\"network\":{\"allow_ranges\":[\"10.0.0.0/8\"]}}");
	rule("range twice", "{\"network\":{\"allow_ranges\":[\"10.0.0.0/8\",\"10.0.0.0/8\"]}}",
	     "network.allow_ranges[1]: listed twice",
	     "{\"network\":{\"allow_ranges\":[\"10.0.0.0/8\",\"10.0.0.0/9\"]}}");

	ok(range_parse("10.16.0.0/12", 12, &r, &why) == 0, "10.16.0.0/12 parses");
	inet_pton(AF_INET, "10.31.255.255", a);
	ok(range_contains(&r, AF_INET, a), "10.16.0.0/12 holds 10.31.255.255");
	inet_pton(AF_INET, "10.32.0.0", a);
	ok(!range_contains(&r, AF_INET, a), "... and not 10.32.0.0 (control)");
	ok(range_parse("fd00:1::/32", 11, &r, &why) == 0, "fd00:1::/32 parses");
	inet_pton(AF_INET6, "fd00:1:ffff::1", a);
	ok(range_contains(&r, AF_INET6, a), "fd00:1::/32 holds fd00:1:ffff::1");
	inet_pton(AF_INET6, "fd00:2::1", a);
	ok(!range_contains(&r, AF_INET6, a), "... and not fd00:2::1 (control)");
	ok(!range_contains(&r, AF_INET, a), "an IPv4 address is never in an IPv6 range");
	struct net_range wide, narrow;
	range_parse("127.0.0.0/8", 11, &wide, &why);
	range_parse("127.0.0.2/32", 12, &narrow, &why);
	ok(range_covers(&wide, &narrow) && !range_covers(&narrow, &wide),
	   "127.0.0.0/8 covers 127.0.0.2/32, not the other way");
}

static void test_cli(void)
{
	struct policy_limits l = { 0 };
	struct err *e = NULL;
	char **pass = calloc(1, sizeof(char *));
	struct net_range *rs = NULL;
	size_t n = 0;

	ok(policy_set_limit(&l, "pids=50", "--limit", &e) == 0 && l.pids == 50, "--limit pids=50");
	ok(policy_set_limit(&l, "memory=64m", "--limit", &e) == 0 && l.memory == 64ULL << 20,
	   "--limit memory=64m");
	ok(policy_set_limit(&l, "cpus=0.5", "--limit", &e) == 0 && l.cpu_millis == 500,
	   "--limit cpus=0.5");
	ok(policy_set_limit(&l, "cpus=0.001", "--limit", &e) < 0, "--limit cpus=0.001 refused");
	is_str(e ? e->msg : NULL, "--limit: cpus: not a number such as 2 or 0.5 (at most two decimals)",
	       "  its message");
	err_free(e);
	e = NULL;
	ok(policy_set_limit(&l, "pids=0", "--limit", &e) < 0 && l.pids == 50,
	   "--limit pids=0 refused, the limit unchanged");
	err_free(e);
	e = NULL;
	ok(policy_set_limit(&l, "files=9", "--limit", &e) < 0, "--limit files=9 refused");
	is_str(e ? e->msg : NULL, "--limit: unknown limit (known: pids, memory, cpus, workspace_entries)",
	       "  its message");
	err_free(e);
	e = NULL;
	ok(policy_set_limit(&l, "workspace_entries=3000000", "--limit", &e) == 0 &&
		   l.workspace_entries == 3000000,
	   "--limit workspace_entries=3000000");
	err_free(e);
	e = NULL;
	ok(policy_set_limit(&l, "pids", "--limit", &e) < 0, "--limit without '=' refused");
	err_free(e);
	e = NULL;
	ok(policy_add_env_pass(&pass, "GH_TOKEN", "--pass-env", &e) == 0 &&
		   policy_add_env_pass(&pass, "GH_TOKEN", "--pass-env", &e) == 0 &&
		   strv_len(pass) == 1,
	   "--pass-env GH_TOKEN, twice: once");
	ok(policy_add_env_pass(&pass, "GH-TOKEN", "--pass-env", &e) < 0, "--pass-env GH-TOKEN refused");
	err_free(e);
	e = NULL;
	ok(policy_add_range(&rs, &n, "10.0.0.0/8", "--allow-range", &e) == 0 && n == 1,
	   "--allow-range 10.0.0.0/8");
	ok(policy_add_range(&rs, &n, "11.0.0.0/7", "--allow-range", &e) < 0 && n == 1,
	   "--allow-range 11.0.0.0/7 refused (bits beyond the prefix)");
	err_free(e);
	strv_free(pass);
	free(rs);
}

static void test_json(void)
{
	char *msg = NULL, *text = NULL;
	struct policy *p = parse("{\"network\":{\"allow_ranges\":[\"fd00::/8\"]},"
				 "\"limits\":{\"memory\":\"64m\",\"cpus\":2},"
				 "\"env\":{\"pass\":[\"NPM_TOKEN\"]}}", &msg);
	json_t *j = p ? policy_to_json(p) : NULL;

	text = j ? json_dump_canonical(j) : NULL;
	is_str(text,
	       "{\"env\":{\"pass\":[\"NPM_TOKEN\"]},\"limits\":{\"cpus\":2.0,\"memory\":67108864},"
	       "\"network\":{\"allow\":[],\"allow_ranges\":[\"fd00::/8\"],\"deny\":[]},"
	       "\"read\":{\"allow\":[],\"deny\":[]},\"sockets\":[],\"unix_sockets\":\"none\","
	       "\"write\":[]}",
	       "the normalised policy holds limits, env.pass and allow_ranges");
	free(text);
	json_decref(j);
	policy_free(p);
	free(msg);

	/* A grant's limits, names and ranges survive the record. */
	struct grant g = { 0 }, *back = NULL;
	struct net_range r;
	const char *why;
	struct err *e = NULL;
	char *names[] = { "NPM_TOKEN", NULL };
	char *none[] = { NULL };

	range_parse("10.20.0.0/16", 12, &r, &why);
	g.allow_ranges = &r;
	g.n_allow_ranges = 1;
	g.env_pass = names;
	g.sockets = none;
	g.limits = (struct policy_limits){ 50, 64ULL << 20, 1500, 1000 };
	g.workspace = "/w";
	g.run_dir = "/r";
	j = grant_to_json(&g);
	ok(j && grant_from_json(j, &back, &e) == 0 && back->limits.pids == 50 &&
		   back->limits.memory == 64ULL << 20 && back->limits.cpu_millis == 1500 &&
		   back->limits.workspace_entries == 1000 &&
		   !back->pids_default && back->n_allow_ranges == 1 &&
		   back->allow_ranges[0].bits == 16 && strv_len(back->env_pass) == 1 &&
		   strcmp(back->env_pass[0], "NPM_TOKEN") == 0,
	   "the grant's limits, env names and ranges round-trip through its JSON");
	grant_free(back);
	back = NULL;
	json_object_set_new(json_object_get(j, "limits"), "pids", json_integer(0));
	ok(grant_from_json(j, &back, &e) < 0, "a recorded grant with pids 0 is refused");
	err_free(e);
	json_decref(j);
}

int main(void)
{
	test_limits();
	test_env();
	test_ranges();
	test_cli();
	test_json();
	return done_testing();
}
