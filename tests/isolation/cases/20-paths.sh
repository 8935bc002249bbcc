# 20-paths.sh (sourced by native.t): denies and grants that must hold
# whatever the command did to the paths on the way to them, under other
# names a mount gives them, through links it controls, and through hard
# links between names that are all in the workspace.

# A deny two levels inside a write grant: every directory between the
# grant and the deny is pinned, so the command cannot move the deny's
# parent away (and leave the secret at a path the next run does not
# deny). A denied file, which both providers hold inside a write grant;
# srt refuses a denied directory there (its own case in srt's docs).
mkdir -p "$WS/config/secrets" "$WS/deep/a/b"
echo config-secret > "$WS/config/secrets/key"
echo deep-secret > "$WS/deep/a/b/key"
CHECK="absent '$WS/moved' && [ -e '$WS/config/secrets/key' ]" \
	UNDO="[ -e '$WS/moved' ] && mv '$WS/moved' '$WS/config'" \
	case_denied "rename the parent of a denied file two levels inside the workspace is refused" \
	--deny-read '{workspace}/config/secrets/key' -- rename "$WS/config" "$WS/moved"
CHECK="absent '$WS/config/moved' && [ -e '$WS/config/secrets/key' ]" \
	UNDO="[ -e '$WS/config/moved' ] && mv '$WS/config/moved' '$WS/config/secrets'" \
	case_denied "rename the denied file's own directory is refused" \
	--deny-read '{workspace}/config/secrets/key' -- rename "$WS/config/secrets" "$WS/config/moved"
CHECK="absent '$WS/deep/moved' && [ -e '$WS/deep/a/b/key' ]" \
	UNDO="[ -e '$WS/deep/moved' ] && mv '$WS/deep/moved' '$WS/deep/a'" \
	case_denied "rename a directory three levels above a denied file is refused" \
	--deny-read '{workspace}/deep/a/b/key' -- rename "$WS/deep/a" "$WS/deep/moved"
UNDO="[ -e '$WS/deep2' ] && mv '$WS/deep2' '$WS/deep'" \
	case_allowed "control: a directory beside the deny's path can still be renamed" \
	--deny-read '{workspace}/config/secrets/key' -- rename "$WS/deep" "$WS/deep2"
if [ "${CORDON_PROVIDER:-native}" = native ]; then
	CHECK="absent '$WS/moved' && [ -e '$WS/config/secrets/key' ]" \
		UNDO="[ -e '$WS/moved' ] && mv '$WS/moved' '$WS/config'" \
		case_denied "rename the parent of a denied directory inside the workspace is refused" \
		--deny-read '{workspace}/config/secrets' -- rename "$WS/config" "$WS/moved"
fi

# The same secret read after a run that tried to move it away: the next
# run under the same policy still finds it denied.
two_runs_case() {
	local desc="a second run under the same policy cannot read the denied file by a moved path" in
	run_in --deny-read '{workspace}/config/secrets/key' -- rename "$WS/config" "$WS/moved" >/dev/null
	in=$(first "$(run_in --deny-read '{workspace}/config/secrets/key' -- read "$WS/moved/secrets/key")")
	[ -e "$WS/moved" ] && mv "$WS/moved" "$WS/config"
	local out
	out=$(first "$(run_out read "$WS/config/secrets/key")")
	if [ "${out%% *}" != ok ]; then
		tap fail "$desc # broken: control failed" "outside: '$out'"
	elif is_errno "${in%% *}"; then
		tap ok "$desc (inside, second run: $in)"
	else
		tap fail "$desc" "the second run read it: '$in'" "$(inside_diag "'$in'")"
	fi
}
[ $MODE = full ] && two_runs_case
rm -rf "$WS/config" "$WS/deep"

# Every deny under the other names a mount gives it: the home bound at a
# second path (root only: making the mount needs it).
if need_root && [ $MODE = full ]; then
	ALIAS=$LAB/alias
	mkdir -p "$ALIAS"
	if mount --bind "$HOME" "$ALIAS" 2>/dev/null; then
		case_denied "read <alias of home>/.ssh/id_ed25519 (a default deny) is denied" \
			read "$ALIAS/.ssh/id_ed25519"
		case_denied "read <alias of home>/proj-other/secret (a policy deny) is denied" \
			-p "$POL/other.json" -- read "$ALIAS/proj-other/secret"
		case_allowed "control: <alias of home>/.profile is readable" read "$ALIAS/.profile"
		umount "$ALIAS"
	else
		skip "read <alias of home>/.ssh/id_ed25519 is denied" "mount --bind failed here"
	fi
	rmdir "$ALIAS" 2>/dev/null
else
	skip "read <alias of home>/.ssh/id_ed25519 (a default deny) is denied" "needs root to bind-mount"
	skip "read <alias of home>/proj-other/secret (a policy deny) is denied" "needs root to bind-mount"
	skip "control: <alias of home>/.profile is readable" "needs root to bind-mount"
fi

# A write grant through a link the workspace carries (a repository can):
# refused, and nothing runs.
mkdir -p "$LAB/elsewhere"
echo "# elsewhere" > "$LAB/elsewhere/.bashrc"
ln -s "$LAB/elsewhere" "$WS/.venv"
fail_closed "a write grant through a link in the workspace (.venv -> elsewhere) refuses the launch" \
	--write '{workspace}/.venv'
rm -f "$WS/.venv"
ln -s "$HOME/proj-other" "$WS/lnk"
echo '{"write":["{workspace}"],"read":{"deny":["~/proj-other"],"allow":["{workspace}/lnk/public"]}}' \
	>"$POL/via-link.json"
fail_closed "a read exception through a link in the workspace refuses the launch" \
	-p "$POL/via-link.json"
rm -f "$WS/lnk"

# A hard link whose names are all in the workspace, one beneath a deny:
# the other name would show the denied file.
mkdir -p "$WS/secrets"
echo hardlinked-secret > "$WS/secrets/key"
ln "$WS/secrets/key" "$WS/notes.txt"
fail_closed "a hard link between a denied file and a name beside it in the workspace refuses the launch" \
	--deny-read '{workspace}/secrets'
rm -rf "$WS/secrets" "$WS/notes.txt"
