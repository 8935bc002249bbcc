/* tests/unit/hostconfig.c: the daemon's bindings (src/host/config.c):
 * a full binding read back field by field, every refusal with its exact
 * message and class next to a control that parses, and a secret's value
 * read from a file and from the environment without reaching an error. */
#include "host/config.h"
#include "host/gitws.h"
#include "lib/cleanup.h"
#include "tap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Parse doc; on failure *msg (caller frees) and *reason. */
static int parse(const char *doc, struct host_config **c, char **msg, int *reason)
{
	struct err *e = NULL;
	int r = host_config_parse(doc, strlen(doc), c, &e);

	*msg = NULL;
	*reason = -1;
	if (r < 0 && e) {
		*msg = strdup(e->msg);
		*reason = (int)e->reason;
	}
	err_free(e);
	return r;
}

/* doc is refused as reason with exactly want; fixed (the same document
 * with that one thing put right) parses. */
static void refused(const char *doc, int reason, const char *want, const char *fixed)
{
	struct host_config *c = NULL;
	char *msg;
	int why;
	int r0 = parse(doc, &c, &msg, &why);

	ok(r0 < 0 && c == NULL, "refused: %s", want);
	is_str(msg ? msg : "(none)", want, "... with its message");
	is_int(why, reason, "... as %s", err_reason_name((enum err_reason)reason));
	free(msg);
	int r = parse(fixed, &c, &msg, &why);
	ok(r == 0, "... and the control parses%s%s", msg ? ": " : "", msg ? msg : "");
	free(msg);
	host_config_free(c);
}

#define B(x) "{\"bindings\": {\"b\": " x "}}"
#define OKX "\"executor\": {\"kind\": \"shell\"}"
#define OKW "\"workspace\": {\"dir\": \"/srv/p\"}"

static void full_binding(void)
{
	const char *doc =
		"{\"bindings\": {"
		" \"zeta\": {\"executor\": {\"kind\": \"shell\"}, \"workspace\": {\"scratch\": true}},"
		" \"build\": {\"executor\": {\"kind\": \"shell\", \"args\": [\"make\", \"test\"]},"
		"   \"workspace\": {\"dir\": \"/home/me/proj\"},"
		"   \"sandbox\": {\"provider\": \"native\", \"policy\": {\"write\": [\"{workspace}\"]}},"
		"   \"env\": {\"LANG\": \"C.UTF-8\"},"
		"   \"secrets\": {\"NPM_TOKEN\": {\"file\": \"/home/me/.config/npm-token\"},"
		"                 \"GH\": {\"env\": \"GH_FROM\"}},"
		"   \"retries\": 2, \"grace\": 2.5}}}";
	struct host_config *c = NULL;
	const struct host_binding *b;
	char *msg;
	int why;

	int r = parse(doc, &c, &msg, &why);
	ok(r == 0, "a full config parses%s%s", msg ? ": " : "", msg ? msg : "");
	free(msg);
	if (!c)
		return;
	is_int(c->n, 2, "two bindings");
	is_int(c->retention_ms, HOST_RETENTION_DEFAULT_DAYS * 86400000ULL, "retention: the default");
	is_str(c->bindings[0].name, "build", "sorted by name");
	b = host_config_find(c, "build");
	ok(b != NULL && host_config_find(c, "nope") == NULL, "found by name, an unknown one not");
	if (!b)
		goto out;
	is_str(host_executor_name(b->executor), "shell", "executor shell");
	ok(b->args && strcmp(b->args[0], "make") == 0 && strcmp(b->args[1], "test") == 0 &&
		   !b->args[2],
	   "its args");
	is_str(b->workspace, "/home/me/proj", "workspace dir");
	ok(!b->scratch, "not scratch");
	is_str(b->provider, "native", "provider");
	ok(b->policy && b->policy->write[0] && strcmp(b->policy->write[0], "{workspace}") == 0,
	   "the policy parsed as a policy");
	ok(b->env[0] && strcmp(b->env[0], "LANG=C.UTF-8") == 0 && !b->env[1], "env");
	is_int(b->n_secrets, 2, "two secrets");
	ok(b->secrets[0].file || b->secrets[1].file, "one from a file");
	is_int(b->retries, 2, "retries");
	is_int(b->grace_ms, 2500, "grace in ms");
	b = host_config_find(c, "zeta");
	ok(b && b->scratch && !b->workspace && !b->provider && !b->args && b->env && !b->env[0] &&
		   b->grace_ms == HOST_GRACE_DEFAULT_MS && b->retries == 0,
	   "a bare binding: scratch, no sandbox, no args, the default grace");
out:
	host_config_free(c);
}

static void ssh_remotes(void)
{
#define KEY "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK"
#define SSH(x) B("{" OKX ", " OKW ", \"container\": {\"provider\": \"ssh\", " x "}}")
#define SSHOK SSH("\"remote\": \"agent@runner.example:2222\", \"host_key\": \"" KEY "\", " \
		  "\"isolation\": \"none\", \"network\": \"host\"")
	refused(SSH("\"remote\": \"runner.example\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\""),
		    ERR_CONFIG,
		    "bindings.b.container.remote: must be user@host or user@host:port (a user name of letters, "
		    "digits, '.', '_' and '-')",
		    SSHOK);
	refused(SSH("\"remote\": \"agent@-oProxyCommand=x\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\""),
		    ERR_CONFIG,
		    "bindings.b.container.remote: the host must be a name or address (letters, digits, '.' and "
		    "'-')",
		    SSHOK);
	refused(SSH("\"remote\": \"agent@h:0\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\""),
		    ERR_CONFIG, "bindings.b.container.remote: the port must be 1-65535", SSHOK);
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"ssh-dss AAAA\", "
			"\"isolation\": \"none\", \"network\": \"host\""),
		    ERR_CONFIG,
		    "bindings.b.container.host_key: the key type must be ssh-ed25519, "
		    "ecdsa-sha2-nistp256/384/521 or ssh-rsa",
		    SSHOK);
	/* an ed25519 blob named as an RSA key */
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"ssh-rsa "
			"AAAAC3NzaC1lZDI1NTE5AAAAIAk9G1kHvHGUPjL+1vqXeL3Bq+oRP2OFgoS1FaN39RGK\", "
			"\"isolation\": \"none\", \"network\": \"host\""),
		    ERR_CONFIG, "bindings.b.container.host_key: the key's blob is not a ssh-rsa key", SSHOK);
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\""),
		    ERR_CONFIG,
		    "bindings.b.container.network: must be \"host\" with isolation none: the run "
		    "reaches whatever the remote's own firewall allows, and nothing there holds "
		    "network.allow",
		    SSHOK);
	/* native (the default): the network is the host's gateway's, and
	 * the remote's cgroups are not built */
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"network\": \"host\""),
		    ERR_CONFIG,
		    "bindings.b.container.network: only with isolation none (a native run reaches "
		    "the network through the host's gateway, under network.allow)",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\""));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"native\", \"network\": \"host\""),
		    ERR_CONFIG,
		    "bindings.b.container.network: only with isolation none (a native run reaches "
		    "the network through the host's gateway, under network.allow)",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"native\""));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"sandboxed\""),
		    ERR_CONFIG, "bindings.b.container.isolation: must be \"native\" or \"none\"",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"native\""));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"policy\": {\"limits\": {\"memory\": \"1g\"}}"),
		    ERR_UNAVAILABLE,
		    "bindings.b.container.policy: limits: a remote's cgroups are not built (the "
		    "remote's account may not own any)",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", \"policy\": {}"));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"identity\": \"k\""),
		    ERR_CONFIG, "bindings.b.container.identity: must be an absolute path",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"identity\": \"/k\""));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"identity\": \"/a %d\""),
		    ERR_CONFIG,
		    "bindings.b.container.identity: no space, quote, '%' or backslash (ssh reads it "
		    "as an option's value)",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"identity\": \"/k\""));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", "
			"\"policy\": {\"limits\": {\"pids\": 10}}"),
		    ERR_CONFIG,
		    "bindings.b.container.policy: limits: nothing on the remote holds them with "
		    "isolation none",
		    SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"policy\": {}"));
	refused(SSH("\"remote\": \"agent@h\", \"host_key\": \"" KEY "\", "
			"\"isolation\": \"none\", \"network\": \"host\", \"image\": \"x\""),
		    ERR_CONFIG, "bindings.b.container.image: unknown key", SSHOK);
	refused(B("{\"executor\": {\"kind\": \"claude-code\"}, " OKW ", \"container\": {\"provider\": "
		  "\"ssh\", \"remote\": \"agent@h\", \"host_key\": \"" KEY "\", \"isolation\": "
		  "\"none\", \"network\": \"host\"}}"),
		ERR_UNAVAILABLE,
		"bindings.b.executor: claude-code on an ssh remote is not built (the shell executor is)",
		SSHOK);
}

static void refusals(void)
{
	refused("[]", ERR_CONFIG, "(root): must be an object", "{\"bindings\": {}}");
	refused("{\"bindings\": {}, \"x\": 1}", ERR_CONFIG, "x: unknown key", "{\"bindings\": {}}");
	refused("{}", ERR_CONFIG, "bindings: missing", "{\"bindings\": {}}");
	refused("{\"bindings\": {}, \"retention_days\": 0}", ERR_CONFIG,
		"retention_days: must be a number of days above 0, at most 3650",
		"{\"bindings\": {}, \"retention_days\": 0.5}");
	refused("{\"bindings\": {\"-b\": {" OKX ", " OKW "}}}", ERR_CONFIG,
		"bindings.-b: a binding's name is 1 to 64 letters, digits, '.', '_' or '-', "
		"a letter or digit first",
		"{\"bindings\": {\"b-\": {" OKX ", " OKW "}}}");
	refused(B("{" OKX ", " OKW ", \"x\": 1}"), ERR_CONFIG, "bindings.b.x: unknown key",
		B("{" OKX ", " OKW "}"));
	refused(B("{\"executer\": {\"kind\": \"shell\"}, " OKW "}"), ERR_CONFIG,
		"bindings.b.executer: unknown key (did you mean \"executor\"?)", B("{" OKX ", " OKW "}"));
	refused(B("{" OKW "}"), ERR_CONFIG, "bindings.b.executor: missing", B("{" OKX ", " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"bash\"}, " OKW "}"), ERR_CONFIG,
		"bindings.b.executor.kind: must be \"shell\" or \"claude-code\"",
		B("{" OKX ", " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"shell\", \"args\": []}, " OKW "}"), ERR_CONFIG,
		"bindings.b.executor.args: must be a non-empty array of strings",
		B("{\"executor\": {\"kind\": \"shell\", \"args\": [\"true\"]}, " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"shell\", \"args\": [\"a\", 2]}, " OKW "}"),
		ERR_CONFIG, "bindings.b.executor.args[1]: must be a string",
		B("{\"executor\": {\"kind\": \"shell\", \"args\": [\"a\", \"2\"]}, " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"shell\", \"args\": [\"a\\u0000b\"]}, " OKW "}"),
		ERR_CONFIG, "bindings.b.executor.args[0]: embedded NUL character (line 1, column 69)",
		B("{\"executor\": {\"kind\": \"shell\", \"args\": [\"ab\"]}, " OKW "}"));
	refused(B("{" OKX "}"), ERR_CONFIG, "bindings.b.workspace: missing", B("{" OKX ", " OKW "}"));
	refused(B("{" OKX ", \"workspace\": {\"dir\": \"rel/p\"}}"), ERR_CONFIG,
		"bindings.b.workspace.dir: must be an absolute path", B("{" OKX ", " OKW "}"));
	refused(B("{" OKX ", \"workspace\": {\"dir\": \"/p\", \"scratch\": true}}"), ERR_CONFIG,
		"bindings.b.workspace: names more than one of dir, scratch and git: one of them",
		B("{" OKX ", \"workspace\": {\"scratch\": true}}"));
	refused(B("{" OKX ", \"workspace\": {\"scratch\": false}}"), ERR_CONFIG,
		"bindings.b.workspace.scratch: must be true (or name a dir)",
		B("{" OKX ", \"workspace\": {\"scratch\": true}}"));
	refused(B("{" OKX ", \"workspace\": {}}"), ERR_CONFIG,
		"bindings.b.workspace: needs a dir, \"scratch\": true or a git clone", B("{" OKX ", " OKW "}"));
	refused(B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"docker\"}}"), ERR_CONFIG,
		"bindings.b.sandbox.provider: must be \"native\" or \"srt\"",
		B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"srt\"}}"));
	/* none is no sandbox section's: a binding without a sandbox names none */
	refused(B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"none\"}}"), ERR_CONFIG,
		"bindings.b.sandbox.provider: must be \"native\" or \"srt\"",
		B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"native\"}}"));
	refused(B("{" OKX ", " OKW ", \"sandbox\": {}}"), ERR_CONFIG,
		"bindings.b.sandbox.provider: missing",
		B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"native\"}}"));
	refused(B("{" OKX ", " OKW
		  ", \"sandbox\": {\"provider\": \"native\", \"policy\": {\"write\": [\"/x/*\"]}}}"),
		ERR_CONFIG,
		"bindings.b.sandbox.policy: write[0]: patterns are not supported: name a path",
		B("{" OKX ", " OKW
		  ", \"sandbox\": {\"provider\": \"native\", \"policy\": {\"write\": [\"/x\"]}}}"));
	refused(B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"native\"}, \"container\": {}}"),
		ERR_CONFIG, "bindings.b: declares both a sandbox and a container: one of them",
		B("{" OKX ", " OKW ", \"sandbox\": {\"provider\": \"native\"}}"));
	/* a container binding: its provider, its image pinned, one way to
	 * its daemon; what is not built says so */
#define IMG "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define CT(x) B("{" OKX ", " OKW ", \"container\": {" x "}}")
#define CTOK CT("\"provider\": \"docker\", \"image\": \"" IMG "\"")
	refused(B("{" OKX ", " OKW ", \"container\": {}}"), ERR_CONFIG,
		"bindings.b.container.provider: missing", CTOK);
	refused(CT("\"provider\": \"docker\", \"image\": \"busybox:latest\""), ERR_CONFIG,
		"bindings.b.container.image: must be pinned: an image ID (sha256:<64 hex>) or "
		"name@sha256:<64 hex>",
		CTOK);
	refused(CT("\"provider\": \"docker\", \"image\": \"sha256:0123\""), ERR_CONFIG,
		"bindings.b.container.image: must be pinned: an image ID (sha256:<64 hex>) or "
		"name@sha256:<64 hex>",
		CT("\"provider\": \"docker\", \"image\": \"debian@" IMG "\""));
	refused(CT("\"provider\": \"docker\", \"image\": \"a b@" IMG "\""), ERR_CONFIG,
		"bindings.b.container.image: must be pinned: an image ID (sha256:<64 hex>) or "
		"name@sha256:<64 hex>",
		CTOK);
	refused(CT("\"provider\": \"podman\", \"image\": \"" IMG "\""), ERR_CONFIG,
		"bindings.b.container.provider: must be \"docker\" or \"ssh\"", CTOK);
	refused(CT("\"provider\": \"docker\", \"image\": \"" IMG "\", \"context\": \"a\", "
		   "\"endpoint\": \"unix:///x\""),
		ERR_CONFIG, "bindings.b.container: names both a context and an endpoint: one of them",
		CT("\"provider\": \"docker\", \"image\": \"" IMG "\", \"endpoint\": \"unix:///x\""));
	refused(CT("\"provider\": \"docker\", \"image\": \"" IMG "\", \"endpoint\": \"http://x\""),
		ERR_CONFIG, "bindings.b.container.endpoint: must be unix:///<path> or tcp://<host>:<port>",
		CT("\"provider\": \"docker\", \"image\": \"" IMG "\", \"context\": \"c\""));
	refused(CT("\"provider\": \"docker\", \"image\": \"" IMG "\", \"nets\": 1"), ERR_CONFIG,
		"bindings.b.container.nets: unknown key", CTOK);
	/* claude-code in a container: the job's home seeded from home_seed,
	 * which only a container binding takes; no CLAUDE_CONFIG_DIR needed */
	refused(B("{\"executor\": {\"kind\": \"claude-code\", \"home_seed\": \"/s\"}, " OKW
		  ", \"sandbox\": {\"provider\": \"native\"}, \"env\": {\"CLAUDE_CONFIG_DIR\": \"/c\"}}"),
		ERR_CONFIG, "bindings.b.executor.home_seed: only for a container binding (its job's "
			    "home is seeded from it)",
		B("{\"executor\": {\"kind\": \"claude-code\", \"home_seed\": \"/s\"}, " OKW
		  ", \"container\": {\"provider\": \"docker\", \"image\": \"" IMG "\"}}"));
	refused(B("{\"executor\": {\"kind\": \"claude-code\", \"home_seed\": \"s\"}, " OKW
		  ", \"container\": {\"provider\": \"docker\", \"image\": \"" IMG "\"}}"),
		ERR_CONFIG, "bindings.b.executor.home_seed: must be an absolute path",
		B("{\"executor\": {\"kind\": \"claude-code\"}, " OKW
		  ", \"container\": {\"provider\": \"docker\", \"image\": \"" IMG "\"}}"));
	refused(B("{" OKX ", " OKW ", \"env\": {\"1X\": \"v\"}}"), ERR_CONFIG,
		"bindings.b.env.1X: not a variable name (letters, digits, _; not a digit first)",
		B("{" OKX ", " OKW ", \"env\": {\"X1\": \"v\"}}"));
	refused(B("{" OKX ", " OKW ", \"env\": {\"X\": 1}}"), ERR_CONFIG,
		"bindings.b.env.X: must be a string", B("{" OKX ", " OKW ", \"env\": {\"X\": \"1\"}}"));
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"file\": \"t\"}}}"), ERR_CONFIG,
		"bindings.b.secrets.T.file: must be an absolute path",
		B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"file\": \"/t\"}}}"));
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"file\": \"/t\", \"env\": \"E\"}}}"),
		ERR_CONFIG, "bindings.b.secrets.T: needs one of file and env",
		B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"env\": \"E\"}}}"));
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"T\": {}}}"), ERR_CONFIG,
		"bindings.b.secrets.T: needs one of file and env",
		B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"env\": \"E\"}}}"));
	refused(B("{" OKX ", " OKW ", \"env\": {\"T\": \"x\"}, \"secrets\": {\"T\": {\"env\": \"E\"}}}"),
		ERR_CONFIG, "bindings.b.secrets.T: also set in env: one of them",
		B("{" OKX ", " OKW ", \"env\": {\"U\": \"x\"}, \"secrets\": {\"T\": {\"env\": \"E\"}}}"));
	/* a place the host compares is the binding's env, never a secret's
	 * (the control: the same value in env loads) */
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"HOME\": {\"file\": \"/h\"}}}"), ERR_CONFIG,
		"bindings.b.secrets.HOME: a place the host checks, not a secret: set it in env",
		B("{" OKX ", " OKW ", \"env\": {\"HOME\": \"/h\"}}"));
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"CLAUDE_CONFIG_DIR\": {\"env\": \"C\"}}}"),
		ERR_CONFIG,
		"bindings.b.secrets.CLAUDE_CONFIG_DIR: a place the host checks, not a secret: set it in env",
		B("{" OKX ", " OKW ", \"secrets\": {\"CLAUDE_TOKEN\": {\"env\": \"C\"}}}"));
	refused(B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"env\": \"E-1\"}}}"), ERR_CONFIG,
		"bindings.b.secrets.T.env: not a variable name",
		B("{" OKX ", " OKW ", \"secrets\": {\"T\": {\"env\": \"E_1\"}}}"));
	refused(B("{" OKX ", " OKW ", \"retries\": -1}"), ERR_CONFIG,
		"bindings.b.retries: must be an integer from 0 to 100",
		B("{" OKX ", " OKW ", \"retries\": 100}"));
	refused(B("{" OKX ", " OKW ", \"grace\": \"10s\"}"), ERR_CONFIG,
		"bindings.b.grace: must be seconds from 0 to 3600", B("{" OKX ", " OKW ", \"grace\": 0}"));
	refused("{\"bindings\": {\"b\": {" OKX ", " OKW "}, \"b\": {" OKX ", " OKW "}}}", ERR_CONFIG,
		"bindings.b: duplicate key (line 1, column 87)",
		"{\"bindings\": {\"b\": {" OKX ", " OKW "}, \"c\": {" OKX ", " OKW "}}}");
}

#define CX "\"executor\": {\"kind\": \"claude-code\"}"
#define SB "\"sandbox\": {\"provider\": \"native\"}"
#define CC(dir) "\"env\": {\"CLAUDE_CONFIG_DIR\": \"" dir "\"}"
#define CCWHY "must not be, hold or lie inside ~/.claude or ~/.claude.json"

/* claude-code: a sandboxed binding's own config directory, never the
 * operator's ~/.claude or ~/.claude.json, under the daemon's HOME or the
 * binding's; the executor's own keys. */
static void claude_code(void)
{
	const char *ok_doc = B("{" CX ", " OKW ", " SB ", " CC("/srv/cc") "}");
	struct host_config *c = NULL;
	char *msg;
	int why;

	setenv("HOME", "/home/op", 1);
	ok(parse(ok_doc, &c, &msg, &why) == 0 && c->bindings[0].executor == HOST_EXEC_CLAUDE_CODE &&
		   strcmp(c->bindings[0].claude_config_dir, "/srv/cc") == 0,
	   "a sandboxed claude-code binding with a config directory of its own parses");
	host_config_free(c);
	c = NULL;
	free(msg);
	refused(B("{" CX ", " OKW ", " SB "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: a sandboxed claude-code binding needs a config "
		"directory of its own (the operator's ~/.claude runs hooks and servers as the operator)",
		ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", " CC("/home/op/.claude") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: " CCWHY, ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", " CC("/home/op/.claude/x") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: " CCWHY, ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", " CC("/home/op/") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: " CCWHY, ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", " CC("/home/op/.claude.json") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: " CCWHY, ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", \"env\": {\"HOME\": \"/home/alt\", "
		  "\"CLAUDE_CONFIG_DIR\": \"/home/alt/.claude\"}}"),
		ERR_CONFIG, "bindings.b.env.CLAUDE_CONFIG_DIR: " CCWHY,
		B("{" CX ", " OKW ", " SB ", \"env\": {\"HOME\": \"/home/alt\", "
		  "\"CLAUDE_CONFIG_DIR\": \"/home/alt/cc\"}}"));
	refused(B("{" CX ", " OKW ", " SB ", " CC("cc") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: must be an absolute path", ok_doc);
	refused(B("{" CX ", " OKW ", " SB ", " CC("/srv/../home/op/.claude") "}"), ERR_CONFIG,
		"bindings.b.env.CLAUDE_CONFIG_DIR: must be an absolute path: `..` components are not allowed",
		ok_doc);
	refused(B("{\"executor\": {\"kind\": \"claude-code\", \"args\": [\"x\"]}, " OKW "}"),
		ERR_CONFIG, "bindings.b.executor.args: unknown key", B("{" CX ", " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"claude-code\", \"extra_args\": [1]}, " OKW "}"),
		ERR_CONFIG, "bindings.b.executor.extra_args[0]: must be a string",
		B("{\"executor\": {\"kind\": \"claude-code\", \"extra_args\": [\"--model\", "
		  "\"x\"], \"prompt\": \"hi\"}, " OKW "}"));
	refused(B("{\"executor\": {\"kind\": \"shell\", \"prompt\": \"x\"}, " OKW "}"),
		ERR_CONFIG, "bindings.b.executor.prompt: unknown key", B("{" OKX ", " OKW "}"));
}

static void secrets(void)
{
	char dir[] = "/tmp/cordon-hostconfig-XXXXXX", path[64];
	struct host_secret fs = { .name = "T" }, es = { .name = "E", .env = "CORDON_TEST_SECRET" };
	struct err *e = NULL;
	char *v = NULL;
	FILE *f;

	if (!mkdtemp(dir)) {
		ok(0, "mkdtemp");
		return;
	}
	snprintf(path, sizeof(path), "%s/t", dir);
	fs.file = path;
	f = fopen(path, "w");
	if (f) {
		fputs("s3cret-value\n", f);
		fclose(f);
	}
	ok(host_secret_value(&fs, &v, &e) == 0 && v && strcmp(v, "s3cret-value") == 0,
	   "a file's secret, its one trailing newline dropped");
	free(v);
	v = NULL;
	setenv("CORDON_TEST_SECRET", "from-env", 1);
	ok(host_secret_value(&es, &v, &e) == 0 && v && strcmp(v, "from-env") == 0,
	   "a secret from the daemon's environment");
	free(v);
	v = NULL;
	unsetenv("CORDON_TEST_SECRET");
	ok(host_secret_value(&es, &v, &e) < 0 && e &&
		   strcmp(e->msg, "secret `E`: the daemon's environment has no CORDON_TEST_SECRET") ==
			   0,
	   "an unset variable is refused, naming the secret");
	err_free(e);
	e = NULL;
	unlink(path);
	ok(host_secret_value(&fs, &v, &e) < 0 && e && strstr(e->msg, "secret `T`: its file") &&
		   !strstr(e->msg, "s3cret"),
	   "a missing file is refused, naming the secret, never its value");
	err_free(e);
	rmdir(dir);
}

/* Clone workspaces and git credentials. */
#define GIT(x) "\"workspace\": {\"git\": {\"url\": \"https://example.com/r.git\", " \
	       "\"branch\": \"main\"" x "}}"
#define SBX ", \"sandbox\": {\"provider\": \"native\", \"policy\": {}}"
#define SEC ", \"secrets\": {\"T\": {\"file\": \"/t\"}}"
static void git_workspaces(void)
{
	struct host_config *c = NULL;
	char *msg = NULL;
	int why;

	ok(parse(B("{" OKX ", " GIT("") SBX SEC ", \"git\": {\"credentials\": [{\"host\": "
		   "\"example.com\", \"secret\": \"T\", \"path\": \"/r.git\"}]}}"),
		 &c, &msg, &why) == 0,
	   "a sandboxed clone binding with a credential parses%s%s", msg ? ": " : "", msg ? msg : "");
	free(msg);
	const struct host_binding *b = c ? host_config_find(c, "b") : NULL;
	ok(b && strcmp(b->git_url, "https://example.com/r.git") == 0 &&
		   strcmp(b->git_branch, "main") == 0 && b->git_mode == HOST_GIT_CLONE &&
		   !b->workspace && !b->scratch,
	   "... its URL, branch and mode read back");
	ok(b && b->n_git_creds == 1 && b->secrets[0].git_only && (b->ops & HOST_OP_GIT_CREDENTIAL) &&
		   strcmp(b->git_creds[0].username, "x-access-token") == 0 &&
		   strcmp(b->git_creds[0].path, "r.git") == 0,
	   "... its credential: the secret git's only, the operation granted, the default "
	   "username, the path without its '/'");
	ok(b && host_git_cred_find(b, "https", "EXAMPLE.com", "r.git") != NULL &&
		   !host_git_cred_find(b, "http", "example.com", "r.git") &&
		   !host_git_cred_find(b, "https", "example.org", "r.git") &&
		   !host_git_cred_find(b, "https", "example.com", "other.git") &&
		   !host_git_cred_find(b, "https", "example.com", NULL),
	   "host_git_cred_find: https on the host (any case) and the path; nothing else");
	host_config_free(c);

	refused(B("{" OKX ", " GIT(", \"mode\": \"worktree\"") SBX "}"), ERR_CONFIG,
		"bindings.b.workspace.git.mode: a sandboxed binding takes a git workspace in clone "
		"mode only (a worktree commits through a checkout's .git outside the sandbox)",
		B("{" OKX ", " GIT(", \"mode\": \"clone\"") SBX "}"));
	refused(B("{" OKX ", " GIT(", \"mode\": \"shared\"") SBX "}"), ERR_CONFIG,
		"bindings.b.workspace.git.mode: a sandboxed binding takes a git workspace in clone "
		"mode only (a shared clone commits through a checkout's .git outside the sandbox)",
		B("{" OKX ", " GIT("") SBX "}"));
	refused(B("{" OKX ", " GIT(", \"setup\": [\"make\"]") SBX "}"), ERR_CONFIG,
		"bindings.b.workspace.git.setup: a sandboxed binding takes no setup command (it "
		"would run on the host, in files the agent writes)",
		B("{" OKX ", " GIT(", \"setup\": [\"make\"]") "}"));
	refused(B("{" OKX ", " GIT(", \"mode\": \"worktree\"") "}"), ERR_UNAVAILABLE,
		"bindings.b.workspace.git.mode: the worktree mode is not built (clone is)",
		B("{" OKX ", " GIT("") "}"));
	refused(B("{" OKX ", \"workspace\": {\"git\": {\"url\": \"https://u:pw@example.com/r\", "
		  "\"branch\": \"main\"}}}"),
		ERR_CONFIG,
		"bindings.b.workspace.git.url: must be an https, http, ssh, git or file URL, an "
		"scp-like host:path or an absolute path, without a password (put it in "
		"git.credentials)",
		B("{" OKX ", \"workspace\": {\"git\": {\"url\": \"https://u@example.com/r\", "
		  "\"branch\": \"main\"}}}"));
	refused(B("{" OKX ", \"workspace\": {\"git\": {\"url\": \"/srv/r\", \"branch\": "
		  "\"-x\"}}}"),
		ERR_CONFIG,
		"bindings.b.workspace.git.branch: not a branch name (letters, digits, '.', '_', '/', "
		"'-'; at most 200)",
		B("{" OKX ", \"workspace\": {\"git\": {\"url\": \"/srv/r\", \"branch\": "
		  "\"x\"}}}"));
	refused(B("{" OKX ", " GIT("") SEC ", \"git\": {\"credentials\": [{\"host\": "
		  "\"example.com\", \"secret\": \"U\"}]}}"),
		ERR_CONFIG, "bindings.b.git.credentials[0].secret: names no secret of this binding",
		B("{" OKX ", " GIT("") SEC ", \"git\": {\"credentials\": [{\"host\": "
		  "\"example.com\", \"secret\": \"T\"}]}}"));
	refused(B("{" OKX ", " GIT("") SEC ", \"git\": {\"credentials\": [{\"host\": "
		  "\"Example.com\", \"secret\": \"T\"}]}}"),
		ERR_CONFIG,
		"bindings.b.git.credentials[0].host: a host as git names it: lower-case name or "
		"address, \":port\" when not 443",
		B("{" OKX ", " GIT("") SEC ", \"git\": {\"credentials\": [{\"host\": "
		  "\"example.com:8443\", \"secret\": \"T\"}]}}"));
	refused(B("{" OKX ", " GIT("") SEC ", \"env\": {\"GIT_CONFIG_COUNT\": \"1\"}, \"git\": "
		  "{\"credentials\": [{\"host\": \"example.com\", \"secret\": \"T\"}]}}"),
		ERR_CONFIG,
		"bindings.b.env: sets git's GIT_CONFIG_* settings, which cordon sets for "
		"git.credentials (git's credential helper): use the GIT_* variables git reads "
		"(GIT_SSL_CAINFO, ...) instead",
		B("{" OKX ", " GIT("") SEC ", \"env\": {\"GIT_SSL_CAINFO\": \"/c\"}, \"git\": "
		  "{\"credentials\": [{\"host\": \"example.com\", \"secret\": \"T\"}]}}"));

	/* the URLs and branches cordon passes to git */
	static const char *const urls[][2] = {
		{ "https://github.com/a/b.git", "https" }, { "http://h/r", "http" },
		{ "ssh://git@h/r", "ssh" }, { "git@github.com:a/b.git", "ssh" },
		{ "git://h/r", "git" }, { "file:///srv/r", "file" }, { "/srv/r", "file" },
		{ "ext::sh -c x", NULL }, { "fd::3", NULL }, { "-u", NULL }, { "r", NULL },
		{ "./r", NULL }, { "https://a:b@h/r", NULL }, { "file://h/r", NULL },
		{ "https://h/ r", NULL }, { "hg://h/r", NULL },
	};
	for (size_t i = 0; i < sizeof(urls) / sizeof(*urls); i++) {
		const char *p = host_git_url_protocol(urls[i][0]);

		ok(urls[i][1] ? p && strcmp(p, urls[i][1]) == 0 : !p, "url `%s`: %s", urls[i][0],
		   urls[i][1] ? urls[i][1] : "refused");
	}
	static const char *const bad[] = { "", "-b", ".b", "/b", "b/", "b.", "b.lock", "a..b",
					   "a//b", "a/.b", "a.lock/b", "HEAD", "a b", "a@{1}",
					   "a~1", "a^", "a:b", NULL };
	for (size_t i = 0; bad[i]; i++)
		ok(!host_git_branch_ok(bad[i]), "branch `%s` refused", bad[i]);
	ok(host_git_branch_ok("main") && host_git_branch_ok("release/1.2") &&
		   host_git_branch_ok("20261202T054757Z-ca79420c7ca0e538"),
	   "branches main, release/1.2 and a job id taken");
}

int main(void)
{
	ssh_remotes();
	full_binding();
	refusals();
	claude_code();
	secrets();
	git_workspaces();
	return done_testing();
}
