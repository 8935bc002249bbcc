/* scripts.c: what the SSH provider runs on a remote, one POSIX sh
 * script per call (sh -c, with plain words as $1...). Nothing of cordon
 * is installed there: a remote needs sh, setsid, ps, tar (GNU's, for the
 * copy back), find and env. A run's records are $HOME/.cordon/runs/<id>,
 * owner-only: labels (host, job, segment, digest), the entry stub, the
 * upload's stamp, pid ("<pid> <host ms>", once started), status (once
 * ended) and term (the stub got a TERM). No secret: the run's
 * environment comes on the start call's stdin (stub.c).
 *
 * A run is alive only while its pid leads its own process group and its
 * arguments carry the run's nonce: a pid reused by another process is
 * never taken for it. Exit status 3 is a refusal (its reason on stdout),
 * 4 a failure on the remote. */
#include "container/ssh/internal.h"

#define PRELUDE                                                                          \
	"set -u\n"                                                                       \
	"umask 077\n"                                                                    \
	"runs=\"$HOME/" SSH_RECORDS "\"\n"                                               \
	/* alive ID NONCE: $pid set when the run's stub runs */                          \
	"alive() {\n"                                                                    \
	"  pid=; started=\n"                                                             \
	"  [ -f \"$runs/$1/pid\" ] || return 1\n"                                        \
	"  read -r pid started < \"$runs/$1/pid\" || return 1\n"                         \
	"  case $pid in ''|*[!0-9]*) return 1;; esac\n"                                  \
	"  pg=$(ps -o pgid= -p \"$pid\" 2>/dev/null | tr -d ' ')\n"                      \
	"  [ \"$pg\" = \"$pid\" ] || return 1\n"                                         \
	"  args=$(ps -ww -o args= -p \"$pid\" 2>/dev/null || ps -o args= -p \"$pid\")\n" \
	"  case $args in *\" " SSH_NONCE_PREFIX "$2\"*) return 0;; esac\n"               \
	"  return 1\n"                                                                   \
	"}\n"                                                                            \
	/* a root the provider may replace: not /, not holding the remote's     \
	 * home, not someone else's */                                                   \
	"root_ok() {\n"                                                                  \
	"  case $1 in /*) ;; *) echo \"refused: not an absolute path\"; return 1;; esac\n" \
	"  [ \"$1\" != / ] || { echo \"refused: / is never replaced\"; return 1; }\n"    \
	"  h=$(cd \"$HOME\" 2>/dev/null && pwd -P) || h=$HOME\n"                         \
	"  case \"$h/\" in \"$1\"/*) echo \"refused: $1 holds the remote's home\"; return 1;; esac\n" \
	"  if [ -e \"$1\" ] || [ -L \"$1\" ]; then\n"                                    \
	"    [ -O \"$1\" ] || [ -L \"$1\" ] || { echo \"refused: $1 is not the remote account's\"; return 1; }\n" \
	"  fi\n"                                                                         \
	"  return 0\n"                                                                   \
	"}\n"

/* $1: a path under the host's state dir the provider must be able to
 * write on the remote (mirrored paths live there). */
const char ssh_script_probe[] = PRELUDE
	/* (resolved: a native run denies it by the path the kernel sees) */
	"printf 'home=%s\\n' \"$(cd \"$HOME\" 2>/dev/null && pwd -P || printf '%s' \"$HOME\")\"\n"
	"printf 'user=%s\\n' \"$(id -un 2>/dev/null)\"\n"
	"printf 'system=%s\\n' \"$(uname -srm 2>/dev/null)\"\n"
	"for t in sh setsid ps tar find env; do\n"
	"  command -v \"$t\" >/dev/null 2>&1 || printf 'missing=%s\\n' \"$t\"\n"
	"done\n"
	"tar --version 2>/dev/null | head -n 1 | grep -q GNU || echo 'missing=GNU tar'\n"
	"find / -maxdepth 0 -printf '%y' >/dev/null 2>&1 || echo 'missing=GNU find'\n"
	"if mkdir -p \"$runs\" 2>/dev/null && [ -w \"$runs\" ]; then echo records=ok;"
	" else echo records=fail; fi\n"
	"if mkdir -p \"$1\" 2>/dev/null && [ -w \"$1\" ]; then echo state=ok; else echo state=fail; fi\n"
	"if unshare -U -r true >/dev/null 2>&1; then echo userns=ok; else echo userns=no; fi\n"
	"echo done=1\n";

/* $1 id; stdin: a tar of the run's records (labels, stub, copies; a
 * native run's plan and binary). First what cordon can see of the
 * account's sign-in: no forced command or environment on a key of
 * authorized_keys, no ~/.ssh/rc or ~/.ssh/environment (what would run
 * or be set before or instead of cordon's calls). */
const char ssh_script_create[] = PRELUDE
	"for f in \"$HOME/.ssh/rc\" \"$HOME/.ssh/environment\"; do\n"
	"  [ ! -e \"$f\" ] || { echo \"refused: the account has ~/.ssh/${f##*/}\"; exit 3; }\n"
	"done\n"
	"for f in \"$HOME/.ssh/authorized_keys\" \"$HOME/.ssh/authorized_keys2\"; do\n"
	"  [ -f \"$f\" ] || continue\n"
	"  if grep -Eiq '(^|[ ,])(command|environment)=' \"$f\"; then\n"
	"    echo \"refused: ~/.ssh/${f##*/} holds a forced command or an environment\"; exit 3\n"
	"  fi\n"
	"done\n"
	"rec=\"$runs/$1\"\n"
	"mkdir -p \"$runs\" || exit 4\n"
	"mkdir \"$rec\" || { echo \"refused: a run of that id is there\"; exit 3; }\n"
	"tar -xf - -C \"$rec\" --no-same-owner || exit 4\n"
	"chmod 700 \"$rec\" && echo ok\n";

/* $1 id, then the roots: each replaced by the copy on stdin (one tar,
 * names relative to /), then the upload's stamp. */
const char ssh_script_upload[] = PRELUDE
	"rec=\"$runs/$1\"; shift\n"
	"[ -f \"$rec/labels\" ] || { echo \"refused: no such run\"; exit 3; }\n"
	"for r in \"$@\"; do root_ok \"$r\" || exit 3; done\n"
	"for r in \"$@\"; do\n"
	"  rm -rf -- \"$r\" || exit 4\n"
	"  mkdir -p -- \"$(dirname -- \"$r\")\" || exit 4\n"
	"done\n"
	"tar -xpf - -C / --no-same-owner --warning=no-unknown-keyword || exit 4\n"
	": > \"$rec/stamp\" && echo ok\n";

/* $1 id, $2 nonce, $3 the host's clock (ms) as the helper starts it:
 * the stub in a session of its own, with an empty environment but the
 * run's, on this connection's stdin, stdout and stderr. */
const char ssh_script_start[] = PRELUDE
	"rec=\"$runs/$1\"\n"
	"[ -f \"$rec/stub\" ] || { echo \"refused: no such run\" >&2; exit 3; }\n"
	"[ ! -e \"$rec/pid\" ] || { echo \"refused: started already\" >&2; exit 3; }\n"
	"exec 3<&0\n"
	"setsid env -i /bin/sh \"$rec/stub\" \"" SSH_NONCE_PREFIX "$2\" <&3 3<&- &\n"
	"pid=$!\n"
	"exec 3<&-\n"
	"printf '%s %s\\n' \"$pid\" \"$3\" > \"$rec/pid.new\" && mv -f \"$rec/pid.new\" \"$rec/pid\"\n"
	/* (the stub ends by a KILL to its group, once its status is
	 * recorded: the shell's word on it is not the run's output) */
	"wait \"$pid\" 2>/dev/null\n"
	"exit 0\n";

/* $1 id, $2 nonce: term=1, started=, code=, state=gone|created|running|
 * exited, each once, then the run's labels, each line prefixed "label.":
 * a labels file (which a run on the account could have written) never
 * says a status key. */
const char ssh_script_status[] = PRELUDE
	"rec=\"$runs/$1\"\n"
	/* (read first: the records may go while this runs) */
	"labels=$(cat \"$rec/labels\" 2>/dev/null) || { echo state=gone; exit 0; }\n"
	"[ ! -e \"$rec/term\" ] || echo term=1\n"
	"if [ ! -f \"$rec/pid\" ]; then echo state=created\n"
	"elif alive \"$1\" \"$2\"; then echo \"started=$started\"; echo state=running\n"
	"else\n"
	"  read -r pid started < \"$rec/pid\" || started=\n"
	"  echo \"started=$started\"\n"
	"  code=137\n"
	"  [ ! -f \"$rec/status\" ] || read -r code < \"$rec/status\" || code=137\n"
	"  echo \"code=$code\"\n"
	"  echo state=exited\n"
	"fi\n"
	"printf '%s\\n' \"$labels\" | sed 's/^/label./'\n";

/* $1 id, $2 nonce: a run whose helper died watched in its place (a new
 * connection, the run's own stdio gone with the old one): the stale
 * gateway socket of that connection removed first (a call of its own:
 * ssh binds the forward before the script runs), then, in a second
 * call, waits while the run is alive. */
const char ssh_script_unbind[] = PRELUDE
	"rec=\"$runs/$1\"\n"
	"[ -f \"$rec/pid\" ] || { echo \"refused: not started\"; exit 3; }\n"
	"rm -f -- \"$rec/" SSH_CHANNEL "\" && echo ok\n";
const char ssh_script_watch[] = PRELUDE
	"[ -f \"$runs/$1/pid\" ] || { echo \"refused: not started\" >&2; exit 3; }\n"
	"while alive \"$1\" \"$2\"; do sleep 1; done\n"
	"exit 0\n";

/* $1 id, $2 nonce, $3 signal name, $4 "group" for its whole group:
 * "sent", "created" (not started yet: status 3) or "ended". */
const char ssh_script_signal[] = PRELUDE
	"rec=\"$runs/$1\"\n"
	"[ -f \"$rec/labels\" ] || { echo ended; exit 0; }\n"
	"[ -f \"$rec/pid\" ] || { echo created; exit 3; }\n"
	"alive \"$1\" \"$2\" || { echo ended; exit 0; }\n"
	"if [ \"$4\" = group ]; then kill -s \"$3\" -- \"-$pid\"; else kill -s \"$3\" \"$pid\"; fi\n"
	"echo sent\n";

/* $1 host label ('' for every host's), $2 job ('' for all): "<id> <job>"
 * of each of its runs. */
const char ssh_script_list[] = PRELUDE
	"[ -d \"$runs\" ] || exit 0\n"
	"for d in \"$runs\"/*; do\n"
	"  [ -f \"$d/labels\" ] || continue\n"
	"  [ -z \"$1\" ] || grep -qx \"host=$1\" \"$d/labels\" || continue\n"
	"  if [ -n \"$2\" ]; then grep -qx \"job=$2\" \"$d/labels\" || continue; fi\n"
	"  j=$(sed -n 's/^job=//p' \"$d/labels\" | head -n 1)\n"
	"  printf '%s %s\\n' \"${d##*/}\" \"$j\"\n"
	"done\n";

/* $1 id, $2 nonce, then the copies to remove: a live run's group
 * killed (confirmed), the copies and the records removed. */
const char ssh_script_remove[] = PRELUDE
	"id=$1; nonce=$2; shift 2\n"
	"rec=\"$runs/$id\"\n"
	"if [ -f \"$rec/labels\" ] && alive \"$id\" \"$nonce\"; then\n"
	"  kill -s KILL -- \"-$pid\" 2>/dev/null\n"
	"  n=0\n"
	"  while alive \"$id\" \"$nonce\"; do\n"
	"    n=$((n + 1)); [ $n -le 100 ] || { echo \"still running\"; exit 4; }\n"
	"    sleep 0.1 2>/dev/null || sleep 1\n"
	"  done\n"
	"fi\n"
	"for r in \"$@\"; do root_ok \"$r\" >/dev/null && rm -rf -- \"$r\"; done\n"
	/* (a sweep knows the copies from the records only) */
	"if [ -f \"$rec/copies\" ]; then\n"
	"  while IFS= read -r r; do root_ok \"$r\" >/dev/null && rm -rf -- \"$r\"; done < \"$rec/copies\"\n"
	"fi\n"
	"rm -rf -- \"$rec\" || exit 4\n"
	"echo ok\n";

/* $1 id, then the write grants: NUL-separated records, the upload
 * stamp's mtime first, then "<type> <mtime> <ctime> <path>" of every
 * path under them (GNU find's %y, %T@, %C@). */
const char ssh_script_paths[] = PRELUDE
	"rec=\"$runs/$1\"; shift\n"
	"[ -f \"$rec/stamp\" ] || { echo \"refused: no upload stamp\" >&2; exit 3; }\n"
	"find \"$rec/stamp\" -printf '%T@\\0' || exit 4\n"
	"for g in \"$@\"; do\n"
	"  [ -e \"$g\" ] || [ -L \"$g\" ] || continue\n"
	"  find \"$g\" -printf '%y %T@ %C@ %p\\0' || exit 4\n"
	"done\n";

/* stdin: NUL-separated paths relative to /: a tar of them (no
 * recursion, hard links as files, no name taken as an option) on
 * stdout. */
const char ssh_script_fetch[] = PRELUDE
	"exec tar -cf - -C / --format=posix --numeric-owner --hard-dereference"
	" --no-recursion --null --verbatim-files-from -T -\n";
