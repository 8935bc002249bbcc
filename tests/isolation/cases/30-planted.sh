# 30-planted.sh (sourced by native.t): what the command leaves in its
# workspace for a host-side git or tool to run. Each plant is a script
# run once inside the sandbox and once on the host as its control, where
# it must work: a host `git status` then runs the plant's payload (a
# marker file). Inside, cordon must move the plant out of git's way
# (nothing runs) or name it on stderr (`cordon: planted: PATH: KEY`).

PL=$LAB/planted
mkdir -p "$PL"
GITID=(-c user.name=lab -c user.email=lab@cordon.invalid -c commit.gpgsign=false)

# A copy of the workspace's repository at .cache/$copy whose config runs
# `touch $mark`, for a commondir to point at.
cat >"$PL/common.sh" <<'EOF'
mkdir -p ".cache/$copy" &&
cp -R .git/objects .git/refs .git/HEAD ".cache/$copy/" &&
cp .git/config ".cache/$copy/config" &&
printf '[core]\n\tfsmonitor = "touch %s; false"\n' "$mark" >>".cache/$copy/config"
EOF
# The reproduction: .git/commondir sends git to that copy.
cat >"$PL/commondir.sh" <<EOF
set -e
mark=\$1 copy=c
. "$PL/common.sh"
printf '../.cache/c\n' >.git/commondir
EOF
# A nested repository whose config runs the payload, registered in the
# top index as a gitlink (so that git status goes into it), and an MCP
# server for Claude Code; the command's own exit status is 3.
cat >"$PL/nested.sh" <<EOF
set -e
git init -q sub
git -C sub ${GITID[*]} commit -q --allow-empty -m sub
git -C sub config core.fsmonitor "touch \$1; false"
git update-index --add --cacheinfo "160000,\$(git -C sub rev-parse HEAD),sub"
printf '{"mcpServers":{"x":{"command":"touch","args":["%s"]}}}\n' "\$1" >.mcp.json || true
exit 3
EOF
# A submodule's repository in .git/modules/y, with y/.git leading to it
# and y a gitlink in the top index.
cat >"$PL/module.sh" <<EOF
set -e
mark=\$1 copy=m
. "$PL/common.sh"
mkdir -p .git/modules
mv .cache/m .git/modules/y
rmdir .cache 2>/dev/null || true
mkdir y
printf 'gitdir: ../.git/modules/y\n' >y/.git
git update-index --add --cacheinfo "160000,\$(git rev-parse HEAD),y"
EOF
# A linked worktree whose git dir takes its config from a planted copy.
cat >"$PL/worktree.sh" <<EOF
set -e
git worktree add -q --detach wt
mark=\$1 copy=w
. "$PL/common.sh"
printf '../../../.cache/w\n' >.git/worktrees/wt/commondir
EOF

# A repository with the payload in its config, made on the host.
pl_repo() {
	git init -q "$1" && git -C "$1" "${GITID[@]}" commit -q --allow-empty -m r &&
		git -C "$1" config core.fsmonitor "touch $2; false"
}
pl_lines() { grep '^cordon: planted: ' "$LAB/in.err" 2>/dev/null | head -c 600 | tr '\n' '|'; }
# pl_has PATH KEY: cordon named it (a moved one: followed by where to).
pl_has() {
	grep -qxF "cordon: planted: $1: $2" "$LAB/in.err" 2>/dev/null ||
		grep -q "^cordon: planted: $(printf '%s' "$1: $2" | sed 's/[].[*^$\/]/\\&/g') (moved to " "$LAB/in.err" 2>/dev/null
}
# Where cordon says it moved PATH (KEY) to.
pl_moved_to() {
	sed -n "s|^cordon: planted: $1: $2 (moved to \\(.*\\))\$|\\1|p" "$LAB/in.err" | head -1
}
# pl_payload MARK [DIR]: does a host git status in DIR run the payload?
pl_payload() {
	rm -f "$1"
	(cd "${2:-$WS}" && git status --short >/dev/null 2>&1)
	[ -e "$1" ]
}

# pl_control SCRIPT MARK DIR: the plant on the host, then a host git
# status in DIR: "ran" when the payload ran. UNDO puts the workspace back.
pl_control() {
	(cd "$WS" && /bin/sh "$PL/$1" "$2") >"$LAB/out.err" 2>&1
	if pl_payload "$2" "$3"; then echo ran; else echo "did not run"; fi
	eval "$UNDO"
	rm -f "$2"
}
# pl_verdict DESC CONTROL PASSED [DIAG...]
pl_verdict() {
	local desc=$1 ctl=$2 passed=$3
	shift 3
	if [ "$ctl" != ran ]; then
		tap fail "$desc # broken: control failed" \
			"on the host the plant's payload $ctl: $(head -c 300 "$LAB/out.err")"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only)"
	elif [ "$passed" = yes ]; then
		tap ok "$desc"
	else
		tap fail "$desc" "$@" "planted lines: $(pl_lines)" "$(inside_diag "")"
	fi
}

# planted_moved DESC SCRIPT PATH KEY CONTENT [GIT_DIR]: SCRIPT's plant,
# run inside, leaves nothing that runs: a host git status (in GIT_DIR)
# runs no payload, PATH is gone from the workspace and cordon says where
# it went, a record holding CONTENT (a file's first line, or "/" for a
# directory). The control: the same plant on the host runs the payload.
planted_moved() {
	local desc=$1 script=$2 path=$3 key=$4 content=$5 gdir=${6:-$WS}
	local mark=$LAB/pwned.${script%.sh} rc=- ran_in=- gone=- dest= held=no passed=no
	if [ $MODE = full ]; then
		run_in_cmd -- /bin/sh "$PL/$script" "$mark" >/dev/null; rc=$?
		if pl_payload "$mark" "$gdir"; then ran_in=yes; else ran_in=no; fi
		if absent "$WS/$path"; then gone=yes; else gone=no; fi
		dest=$(pl_moved_to "$path" "$key")
		if [ "$content" = / ]; then
			[ -n "$dest" ] && [ -d "$dest" ] && held=yes
		else
			[ -n "$dest" ] && [ "$(head -1 "$dest" 2>/dev/null)" = "$content" ] && held=yes
		fi
		[ "$rc" = 0 ] && [ $ran_in = no ] && [ $gone = yes ] && [ $held = yes ] && passed=yes
		eval "$UNDO"
	fi
	pl_verdict "$desc" "$(pl_control "$script" "$mark" "$gdir")" $passed \
		"exit $rc; host git ran the payload: $ran_in; $path gone: $gone; the record holds it: $held ($dest)"
}

# planted_named DESC WANT_RC SCRIPT CTL_DIR LINE...: SCRIPT's plant, run
# inside, exits WANT_RC through cordon and is named by each LINE ("PATH:
# KEY"). The control: on the host the same plant runs its payload in a
# git status in CTL_DIR. OPT (an array) adds cordon options.
OPT=()
planted_named() {
	local desc=$1 want=$2 script=$3 cdir=$4 rc=- missing= passed=no l
	local mark=$LAB/pwned.${script%.sh}
	shift 4
	if [ $MODE = full ]; then
		run_in_cmd "${OPT[@]}" -- /bin/sh "$PL/$script" "$mark" >/dev/null; rc=$?
		for l; do pl_has "${l%%: *}" "${l#*: }" || missing="$missing [$l]"; done
		[ "$rc" = "$want" ] && [ -z "$missing" ] && passed=yes
		eval "$UNDO"
	fi
	pl_verdict "$desc" "$(pl_control "$script" "$mark" "$WS/$cdir")" $passed \
		"exit $rc (want $want); not named:$missing"
}

if ! command -v git >/dev/null; then
	for d in "commondir" "nested repository" "plain clone" "modules" "worktrees"; do
		skip "planted: $d" "git is not installed on this host"
	done
	return 0
fi

###########################################################################
# What changes git by existing is moved out into the run's record.

UNDO="rm -rf '$WS/.cache' '$WS/.git/commondir'" \
	planted_moved "a .git/commondir planted inside is moved to the record: host git status runs nothing" \
	commondir.sh .git/commondir commondir ../.cache/c

UNDO="git -C '$WS' update-index --force-remove y; rm -rf '$WS/.git/modules' '$WS/y' '$WS/.cache'" \
	planted_moved "a new .git/modules planted inside is moved to the record: host git status runs nothing" \
	module.sh .git/modules modules /

UNDO="git -C '$WS' worktree prune; rm -rf '$WS/wt' '$WS/.git/worktrees' '$WS/.cache'" \
	planted_moved "a new .git/worktrees planted inside is moved to the record: git status in the worktree runs nothing" \
	worktree.sh .git/worktrees worktrees / "$WS/wt"

###########################################################################
# A submodule's repository and a linked worktree present at launch.

SM_SRC=$LAB/sm-src
pl_repo "$SM_SRC" /nonexistent >/dev/null 2>&1 && git -C "$SM_SRC" config --unset core.fsmonitor
git clone -q --bare --no-hardlinks "$SM_SRC" "$WS/.git/modules/x" 2>"$LAB/out.err" &&
	mkdir -p "$WS/.git/modules/x/hooks" "$WS/.git/modules/x/info" &&
	git -C "$WS" worktree add -q --detach "$LAB/wt-out" 2>>"$LAB/out.err"
G=$WS/.git
PRE="snap '$G/modules/x/config'" CHECK="unchanged '$G/modules/x/config'" \
	UNDO="restore '$G/modules/x/config'" \
	case_denied "write .git/modules/x/config (a submodule's repository) is refused" write "$G/modules/x/config"
CHECK="absent '$G/modules/x/hooks/post-checkout'" UNDO="rm -f '$G/modules/x/hooks/post-checkout'" \
	case_denied "write .git/modules/x/hooks/post-checkout is refused" write "$G/modules/x/hooks/post-checkout"
CHECK="absent '$G/modules/y' && [ -d '$G/modules/x' ]" \
	UNDO="[ -e '$G/modules/y' ] && mv '$G/modules/y' '$G/modules/x'" \
	case_denied "rename .git/modules/x away is refused" rename "$G/modules/x" "$G/modules/y"
CHECK="absent '$G/modules.moved' && [ -d '$G/modules/x' ]" \
	UNDO="[ -e '$G/modules.moved' ] && mv '$G/modules.moved' '$G/modules'" \
	case_denied "rename .git/modules away is refused" rename "$G/modules" "$G/modules.moved"
WT_ADMIN=$(ls -d "$G"/worktrees/* 2>/dev/null | head -1)
PRE="snap '$WT_ADMIN/commondir'" CHECK="unchanged '$WT_ADMIN/commondir'" \
	UNDO="restore '$WT_ADMIN/commondir'" \
	case_denied "write .git/worktrees/<id>/commondir (a linked worktree's) is refused" write "$WT_ADMIN/commondir"
CHECK="absent '$G/worktrees/new'" UNDO="rm -rf '$G/worktrees/new'" \
	case_denied "mkdir .git/worktrees/new is refused" mkdir "$G/worktrees/new"
UNDO="git -C '$WS' update-index --force-remove y; rm -rf '$WS/.git/modules/y' '$WS/y' '$WS/.cache'" \
	planted_moved "a new .git/modules/y beside a submodule's is moved to the record: host git status runs nothing" \
	module.sh .git/modules/y "submodule repository" /
git -C "$WS" worktree remove --force "$LAB/wt-out" 2>/dev/null
rm -rf "$WS/.git/modules" "$WS/.git/worktrees" "$LAB/wt-out"

###########################################################################
# What cannot be moved is named: every repository the run left or
# changed whose config runs something, and the agents' files.

UNDO="git -C '$WS' update-index --force-remove sub; rm -rf '$WS/sub' '$WS/.mcp.json'" \
	planted_named "a nested repository with core.fsmonitor, and .mcp.json, are named; the exit status stays 3" \
	3 nested.sh . "sub/.git/config: core.fsmonitor" ".mcp.json: MCP servers"

# Made before the launch, the repository's config is old; moved in during
# the run, the directory holding it is not.
pl_repo "$WS/old" "$LAB/pwned.rename" >/dev/null 2>&1
cat >"$PL/rename.sh" <<'EOF'
mv old renamed
EOF
UNDO="[ -d '$WS/renamed' ] && mv '$WS/renamed' '$WS/old'" \
	planted_named "a repository with core.fsmonitor renamed inside the workspace is named" \
	0 rename.sh renamed "renamed/.git/config: core.fsmonitor"
mkdir -p "$LAB/other"
pl_repo "$LAB/other/repo" "$LAB/pwned.movein" >/dev/null 2>&1
cat >"$PL/movein.sh" <<EOF
mv "$LAB/other/repo" moved
EOF
OPT=(--write "$LAB/other")
UNDO="[ -d '$WS/moved' ] && mv '$WS/moved' '$LAB/other/repo'" \
	planted_named "a repository with core.fsmonitor moved in from another write grant is named" \
	0 movein.sh moved "moved/.git/config: core.fsmonitor"
OPT=()

# Nothing is named for a plain clone of a repository, nor for what was
# there before the launch and the command left alone: a repository whose
# config runs something, an agent's settings.
clone_case() {
	local desc="a plain clone of the lab's repository inside is named nothing (nor what was there before)"
	local KIND=positive rc=- lines=- ctl
	mkdir -p "$WS/.claude"
	echo '{"hooks":{}}' >"$WS/.claude/settings.json"
	sleep 0.1 # the files above older than the launch
	if [ $MODE = full ]; then
		run_in_cmd -- /usr/bin/git clone -q "$WS" clone >/dev/null; rc=$?
		lines=$(pl_lines)
		[ -f "$WS/clone/README" ] || rc="$rc (no clone/README)"
		rm -rf "$WS/clone"
	fi
	(cd "$WS" && git clone -q "$WS" clone) >"$LAB/out.err" 2>&1; ctl=$?
	rm -rf "$WS/clone"
	if [ $ctl != 0 ]; then
		tap fail "$desc # broken: control failed" "git clone on the host: $(head -c 300 "$LAB/out.err")"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only)"
	elif [ "$rc" = 0 ] && [ -z "$lines" ]; then
		tap ok "$desc"
	else
		tap fail "$desc" "exit $rc; planted lines: $lines" "$(inside_diag "exit $rc")"
	fi
}
clone_case

# The agents' files, written inside: named (or, where srt keeps one
# read-only, refused with the host's copy unchanged).
agent_case() {
	local desc="$1" path=$2 key=$3 rc=- ok_in=no ctl
	local KIND=isolation
	PRE_CONTENT=$( [ -f "$WS/$path" ] && cat "$WS/$path")
	if [ $MODE = full ]; then
		run_in_cmd -- /bin/sh -c 'mkdir -p "$(dirname "$1")" && echo "{\"x\":1}" >>"$1"' sh "$path" \
			>/dev/null; rc=$?
		if pl_has "$path" "$key"; then
			ok_in=named
		elif [ "$rc" != 0 ] && [ "$( [ -f "$WS/$path" ] && cat "$WS/$path")" = "$PRE_CONTENT" ]; then
			ok_in=refused
		fi
	fi
	(cd "$WS" && echo '{"y":1}' >>"$path") 2>"$LAB/out.err"; ctl=$?
	if [ -n "$PRE_CONTENT" ]; then printf '%s\n' "$PRE_CONTENT" >"$WS/$path"; else rm -f "$WS/$path"; fi
	if [ $ctl != 0 ]; then
		tap fail "$desc # broken: control failed" "the host could not write $path: $(cat "$LAB/out.err")"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only)"
	elif [ $ok_in != no ]; then
		tap ok "$desc ($ok_in)"
	else
		tap fail "$desc" "exit $rc; not named, not refused" "planted lines: $(pl_lines)" "$(inside_diag "exit $rc")"
	fi
}
agent_case "a .claude/settings.json there before and changed inside is named" \
	.claude/settings.json "Claude Code settings (hooks, helpers)"
agent_case "an .envrc written inside is named" .envrc direnv
rm -rf "$WS/.claude" "$WS/old" "$LAB/other"

# How to look at a workspace safely (docs/workspace.md): git run through
# cordon in a scratch workspace of its own, the real one only readable. A
# plant left in place (made on the host here) then runs inside, where it
# can write nothing, and git still answers.
look_case() {
	local desc="git status of a planted workspace through cordon, the workspace read-only: it answers, the plant writes nothing"
	local mark=$LAB/pwned.look rc=- out= ran=- ctl
	mkdir -p "$LAB/look"
	(cd "$WS" && mark=$mark copy=c && . "$PL/common.sh" && printf '../.cache/c\n' >.git/commondir)
	if [ $MODE = full ]; then
		out=$(run_in_cmd -w "$LAB/look" -- /usr/bin/env GIT_OPTIONAL_LOCKS=0 \
			/usr/bin/git -C "$WS" status --short); rc=$?
		if [ -e "$mark" ]; then ran=yes; else ran=no; fi
	fi
	if pl_payload "$mark"; then ctl=ran; else ctl="did not run"; fi
	rm -rf "$WS/.cache" "$WS/.git/commondir" "$mark" "$LAB/look"
	if [ "$ctl" != ran ]; then
		tap fail "$desc # broken: control failed" "a host git status did not run the plant's payload"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only)"
	elif [ "$rc" = 0 ] && [ $ran = no ] && [[ $out == *"?? .cache/"* ]]; then
		tap ok "$desc"
	else
		tap fail "$desc" "exit $rc; the payload wrote its marker: $ran; git said: $(printf '%s' "$out" | head -c 200)" \
			"$(inside_diag "exit $rc")"
	fi
}
look_case
