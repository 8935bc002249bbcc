/* sshcfg.c (test): an SSH remote's user@host:port and pinned host key,
 * as a binding names them: what reaches ssh's command line is narrow,
 * the key's fingerprint is the one ssh-keygen prints for it, and the
 * alias its known_hosts line goes under is derived from the key alone.
 * An account a binding with isolation none runs on is shared with no
 * other binding: the same user with the same key, or the same host as
 * spelled, is one account (controls: another user, or another host and
 * key, and native bindings among themselves). */
#include "container/ssh/target.h"
#include "tap.h"

#include <stdlib.h>
#include <string.h>

#define KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK"
#define KEY2 "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHNSMTNATXbT0MW5beYxS0VRBdQ3uKW6uaHTC0G4A3g2"

/* Two bindings' containers: a (isolation iso_a) and b (iso_b), each
 * remote and key; 0 when the config may hold both. */
static int two(const char *iso_a, const char *ra, const char *ka, const char *iso_b,
	       const char *rb, const char *kb)
{
	json_t *a = json_pack("{s:s, s:s, s:s}", "remote", ra, "host_key", ka, "isolation", iso_a);
	json_t *b = json_pack("{s:s, s:s, s:s}", "remote", rb, "host_key", kb, "isolation", iso_b);
	json_t *cs = json_pack("[OO]", a, b);
	const char *names[] = { "a", "b" };
	struct err *e = NULL;
	int r = sshcfg_accounts_check(cs, names, &e);

	if (r < 0 && (!e || e->reason != ERR_CONFIG || !strstr(e->msg, "binding `")))
		r = -2;
	err_free(e);
	json_decref(cs);
	json_decref(a);
	json_decref(b);
	return r;
}

static int remote(const char *s, struct ssh_target *t)
{
	struct err *e = NULL;
	int r = ssh_target_remote(t, s, "remote", &e);

	err_free(e);
	return r;
}

static int key(const char *s, struct ssh_target *t)
{
	struct err *e = NULL;
	int r = ssh_target_key(t, s, "host_key", &e);

	err_free(e);
	return r;
}

int main(void)
{
	struct ssh_target t = { 0 };

	ok(remote("agent@runner.example:2222", &t) == 0, "user@host:port");
	is_str(t.user, "agent", "... the user");
	is_str(t.host, "runner.example", "... the host");
	is_int((int)t.port, 2222, "... the port");
	ok(remote("a.b_c-d@10.0.0.1", &t) == 0 && t.port == 22 && strcmp(t.host, "10.0.0.1") == 0,
	   "no port: 22");
	ok(remote("u@[fe80::1]:22", &t) == 0 && strcmp(t.host, "fe80::1") == 0, "an IPv6 address");
	/* what ssh would take as an option, or a shell as more than a word */
	static const char *const bad[] = {
		"runner",	  "@h",		   "u@",	  "u@-oProxyCommand=x", "-u@h",
		"u@h:0",	  "u@h:65536",	   "u@h:22x",	  "u@h:",		"u@h p",
		"u@h;id",	  "u'x@h",	   "u@h$(id)",	  "u@[::1",		"u@[::1]x",
		"u@h:+22",	  "u@h/x",	   "u v@h",	  "u@h\n",		NULL,
	};
	for (size_t i = 0; bad[i]; i++)
		ok(remote(bad[i], &t) < 0, "refused: remote %zu", i);

	ok(key(KEY, &t) == 0, "an ed25519 key");
	is_str(t.fingerprint, "SHA256:sSq5jBbrbYKvCtiYRr1kMR46m31zkExi0wcUj67TjH4",
	       "... its fingerprint, as ssh-keygen -l prints it");
	ok(strncmp(t.alias, "cordon-", 7) == 0 && strlen(t.alias) == 23 &&
		   strspn(t.alias + 7, "0123456789abcdef") == 16,
	   "... its alias: cordon- and 16 hex");
	char alias[24];
	memcpy(alias, t.alias, sizeof(alias));
	ok(key(KEY " root@vm", &t) == 0 && strcmp(t.alias, alias) == 0,
	   "a comment changes nothing");
	static const char *const badk[] = {
		"AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK",
		"ssh-dss AAAAB3NzaC1kc3MAAACBAP",
		"ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK",
		"ssh-ed25519 AAAA",
		"ssh-ed25519 !!!!",
		"ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RG",
		NULL, /* a comment with a line break: below */
		NULL,
	};
	for (size_t i = 0; badk[i]; i++)
		ok(key(badk[i], &t) < 0, "refused: key %zu", i);
	ok(key(KEY " x\ny", &t) < 0, "refused: a comment with a line break");

	ok(two("none", "u@h", KEY, "native", "u@h", KEY) == -1,
	   "a none binding's account and a native binding on it: refused (sandbox_config, naming it)");
	ok(two("native", "u@h", KEY, "none", "u@h:22", KEY) == -1,
	   "... either way round, the port spelled or not");
	ok(two("none", "u@h", KEY, "none", "u@h", KEY) == -1, "... another none binding on it too");
	ok(two("none", "u@h", KEY, "native", "u@other", KEY) == -1,
	   "... the same key under another host name: the same account");
	ok(two("none", "u@H", KEY, "native", "u@h", KEY2) == -1,
	   "... the same host (case aside) with another of its keys: the same account");
	ok(two("none", "u@h", KEY, "native", "v@h", KEY) == 0,
	   "control: another user on the same host and key: another account");
	ok(two("none", "u@h", KEY, "native", "u@other", KEY2) == 0,
	   "control: another host and key: another account");
	ok(two("native", "u@h", KEY, "native", "u@h", KEY) == 0,
	   "control: native bindings may share an account");
	ssh_target_clear(&t);
	return done_testing();
}
