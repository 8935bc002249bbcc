/* places.h: the places a tenant writes and the places the operator's own
 * claude takes its settings from, and the rule between them: a claude
 * that runs outside any sandbox (an unsandboxed claude-code binding's job,
 * or an attach) never starts in, nor reads its config from, a place a
 * sandboxed run wrote or a sandboxed binding may write. Claude runs the
 * hooks, MCP servers and plugins it finds there as the operator. Places
 * are compared by identity and containment (lib/place.h), never by their
 * spelling. */
#ifndef CORDON_HOST_PLACES_H
#define CORDON_HOST_PLACES_H

#include "host/config.h"
#include "lib/err.h"

/* The home a launch of b expands a policy's ~ with: the HOME its env
 * sets, else the daemon's (host_home_from). */
int host_binding_home(const struct host_binding *b, const char **out, struct err **e);

/* Where a binding with a sandbox or a container may write, as its config
 * names it: its workspace dir, its claude config directory, its policy's
 * write grants (~ as its launch expands it, host_binding_home, and
 * {workspace} put in). ({run}, {toolbelt} and a workspace made per job
 * lie in the state dir, each job's own: the database names those, per
 * job.) Appended to *out. */
int host_binding_writes(const struct host_binding *b, char ***out, struct err **e);

/* Where an unsandboxed claude-code binding's claude takes the operator's
 * settings from: the workspace ws when not NULL (its .claude/ and
 * .mcp.json), and its config directory (CLAUDE_CONFIG_DIR of its env, or
 * .claude and .claude.json in its HOME, else the daemon's). Appended to
 * *out. */
int host_claude_operator_places(const struct host_binding *b, const char *ws, char ***out,
				struct err **e);

/* The first of places that overlaps one of written: 1 with *place and
 * *wrote naming the two (pointers into the lists), 0 none, -1 *e (a place
 * that cannot be looked up is not taken as elsewhere). */
int host_places_meet(char *const *places, char *const *written, const char **place,
		     const char **wrote, struct err **e);

/* At load: no unsandboxed claude-code binding's workspace or config
 * directory is a place a binding with a sandbox or a container may write (ERR_CONFIG
 * naming both bindings). */
int host_config_check_places(const struct host_config *c, struct err **e);

#endif
