# 40-credentials.sh (sourced by native.t): credentials the command must
# not reach by default: the caller's credential-like variables, and every
# default credential of the home, each with a file the lab planted
# (lab.sh, LAB_HOME_CREDS). Lifting one by name is the control.

###########################################################################
# The environment.

# A value that appears nowhere but in the variables set below.
CRED_NEEDLE=cordon-lab-token-${LAB##*.}-$$
CRED_SHOW='printf "token=%s aws=%s lower=%s plain=%s\n" "${GITHUB_TOKEN-unset}" \
	"${AWS_SECRET_ACCESS_KEY-unset}" "${github_token-unset}" "${CORDON_LAB_PLAIN-unset}"'
# How many processes show GITHUB_TOKEN in /proc/<pid>/environ (their
# environment as the kernel keeps it), of those that can be read. Not the
# value itself: it would be in the command's argv, which the plan records.
CRED_SCAN='n=0; for e in /proc/[0-9]*/environ; do
	tr "\0" "\n" 2>/dev/null < "$e" | grep -q "^GITHUB_TOKEN=" && n=$((n + 1)); done
	echo "environ=$n"'

# The caller's variables around one command: the control's and cordon's.
cred_env() {
	GITHUB_TOKEN=$CRED_NEEDLE AWS_SECRET_ACCESS_KEY=$CRED_NEEDLE-aws \
		github_token=$CRED_NEEDLE-lower CORDON_LAB_PLAIN=plain-value "$@"
}

# A word of "k=v k=v" output: the value of k.
word() { local w; for w in $2; do [ "${w%%=*}" = "$1" ] && { printf '%s' "${w#*=}"; return; }; done; }

env_cases() {
	local out in pass err rec
	out=$(cred_env sh -c "$CRED_SHOW; $CRED_SCAN" | tr '\n' ' ')
	if [ $MODE != full ]; then
		skip "credential-like variables are not passed to the command" "cordon run is not available"
		return
	fi
	# Without -q: the note is part of what is checked.
	in=$(cred_env timeout -k 5 "$LAB_TIMEOUT" "$CORDON" run --state-dir "$STATE" -w "$WS" \
		${CORDON_PROVIDER:+--provider "$CORDON_PROVIDER"} -- \
		sh -c "$CRED_SHOW; $CRED_SCAN" </dev/null 2>"$LAB/in.err" | tr '\n' ' ')
	err=$(head -c 2000 "$LAB/in.err")
	pass=$(cred_env run_in_cmd --pass-env GITHUB_TOKEN -- sh -c "$CRED_SHOW; $CRED_SCAN" | tr '\n' ' ')

	local v
	for v in token aws lower; do
		local want=$CRED_NEEDLE name=GITHUB_TOKEN
		[ $v = aws ] && want=$CRED_NEEDLE-aws name=AWS_SECRET_ACCESS_KEY
		[ $v = lower ] && want=$CRED_NEEDLE-lower name=github_token
		if [ "$(word $v "$out")" != "$want" ]; then
			tap fail "$name set for cordon is absent inside # broken: control failed" \
				"outside: '$out'"
		elif [ "$(word $v "$in")" = unset ]; then
			tap ok "$name set for cordon is absent inside (outside it is set)"
		else
			tap fail "$name set for cordon is absent inside" "inside: '$in' | cordon stderr: $err"
		fi
	done

	KIND=positive
	if [ "$(word plain "$out")" != plain-value ]; then
		tap fail "a plain variable (CORDON_LAB_PLAIN) still reaches the command # broken: control failed" "outside: '$out'"
	elif [ "$(word plain "$in")" = plain-value ] && [ "$(word plain "$pass")" = plain-value ]; then
		tap ok "a plain variable (CORDON_LAB_PLAIN) still reaches the command"
	else
		tap fail "a plain variable (CORDON_LAB_PLAIN) still reaches the command" "inside: '$in'; with --pass-env: '$pass'"
	fi
	if [ "$(word token "$pass")" = "$CRED_NEEDLE" ]; then
		tap ok "--pass-env GITHUB_TOKEN makes it present inside"
	else
		tap fail "--pass-env GITHUB_TOKEN makes it present inside" "inside: '$pass' | cordon stderr: $(in_err)"
	fi
	KIND=isolation
	if [ "$(word aws "$pass")" = unset ]; then
		tap ok "... while AWS_SECRET_ACCESS_KEY, not passed, stays out"
	else
		tap fail "... while AWS_SECRET_ACCESS_KEY, not passed, stays out" "inside: '$pass'"
	fi

	# No process inside shows the variable in /proc/<pid>/environ (native:
	# cordon's pid 1 began as a copy of cordon, the caller's environment
	# and all). The scan's control: outside it finds the value, and
	# inside it finds a value the policy passes.
	if [ "$(word environ "$out")" = 0 ]; then
		tap fail "no process inside shows GITHUB_TOKEN in /proc/*/environ # broken: control failed" "outside: '$out'"
	elif [ "$(word environ "$in")" = 0 ] && [ "$(word environ "$pass")" -ge 1 ] 2>/dev/null; then
		tap ok "no process inside shows GITHUB_TOKEN in /proc/*/environ (outside: $(word environ "$out"); passed, inside: $(word environ "$pass"))"
	else
		tap fail "no process inside shows GITHUB_TOKEN in /proc/*/environ" "inside: '$in'; with --pass-env: '$pass'"
	fi

	# The note: the names left out, never a value.
	local note
	note=$(grep '^cordon: env: left out' <<<"$err" | tr '\n' ' ')
	if [[ " $note " == *" AWS_SECRET_ACCESS_KEY "* ]] && [[ " $note " == *" GITHUB_TOKEN "* ]] &&
		[[ " $note " == *" github_token "* ]] && [[ $err != *"$CRED_NEEDLE"* ]] &&
		[[ $note != *CORDON_LAB_PLAIN* ]]; then
		tap ok "cordon notes the names it left out on stderr, without a value"
	else
		tap fail "cordon notes the names it left out on stderr, without a value" "cordon stderr: $err"
	fi

	# The record: the name passed, never the value. The control: the
	# value was there to leak (the command printed it).
	rec=$(ls -td "$STATE"/runs/*/sandbox/1 2>/dev/null | head -n 1)
	if [[ $pass != *"$CRED_NEEDLE"* ]]; then
		tap fail "the plan records the name passed and no value # broken: control failed" "the passed value did not reach the command: '$pass'"
	elif [ -n "$rec" ] && grep -q '"GITHUB_TOKEN"' "$rec/plan.json" &&
		! grep -rqF "$CRED_NEEDLE" "$STATE" 2>/dev/null; then
		tap ok "the plan records the name passed and no value (no file under the state dir holds it)"
	else
		tap fail "the plan records the name passed and no value" \
			"record: ${rec:-none}; files holding the value: $(grep -rlF "$CRED_NEEDLE" "$STATE" 2>/dev/null | head -3 | tr '\n' ' ')"
	fi
}
env_cases

###########################################################################
# The default credentials of the home: one run reads a planted file under
# each inside, one outside.

# The planted file under a credential: itself, or lab-secret inside it.
cred_file() { if [ -d "$HOME/$1" ]; then printf '%s' "$HOME/$1/lab-secret"; else printf '%s' "$HOME/$1"; fi; }

# The lab's list is the plan's: every default credential it denies in the
# home, and nothing else, has a planted file.
cred_list_case() {
	local desc="the lab plants a file under every default credential of the home" KIND=positive
	local plan lab py
	if ! "$CORDON" plan --help >/dev/null 2>&1; then
		skip "$desc" "cordon plan is not available"
		return
	fi
	py=$(lab_python)
	plan=$("$CORDON" plan --state-dir "$STATE" -w "$WS" -- true 2>"$LAB/in.err" | "$py" -c '
import json, os, sys
h = os.environ["HOME"] + "/"
for p in json.load(sys.stdin)["plan"]["data"]["read_deny"]:
    if p.startswith(h) and not p.endswith("/docker.sock") and p != h + ".config/cordon":
        print(p[len(h):])' | LC_ALL=C sort | tr '\n' '|')
	lab=$(for i in "${LAB_HOME_CREDS[@]}"; do printf '%s\n' "${i%/}"; done | LC_ALL=C sort | tr '\n' '|')
	if [ -z "$plan" ]; then
		tap fail "$desc" "cordon plan gave no list: $(in_err)"
	elif [ "$plan" = "$lab" ]; then
		tap ok "$desc (${#LAB_HOME_CREDS[@]})"
	else
		tap fail "$desc" "only in the plan: $(comm -23 <(tr '|' '\n' <<<"$plan") <(tr '|' '\n' <<<"$lab") | tr '\n' ' ')" \
			"only in the lab: $(comm -13 <(tr '|' '\n' <<<"$plan") <(tr '|' '\n' <<<"$lab") | tr '\n' ' ')"
	fi
}
cred_list_case

cred_read_cases() {
	local files=() i f line
	local -A in_r out_r
	local read_all='p=$1; shift; for f; do printf "%s\t%s\n" "$f" "$("$p" read "$f" 2>&1 | head -n 1)"; done'
	for i in "${LAB_HOME_CREDS[@]}"; do files+=("$(cred_file "${i%/}")"); done
	while IFS=$'\t' read -r f line; do out_r[$f]=$line; done < <(cd "$WS" &&
		"${PENV[@]}" sh -c "$read_all" sh "$PROBE" "${files[@]}" </dev/null 2>/dev/null)
	if [ $MODE = full ]; then
		while IFS=$'\t' read -r f line; do in_r[$f]=$line; done < <(run_in_cmd -- \
			"${PENV[@]}" sh -c "$read_all" sh "$PROBE" "${files[@]}")
	fi
	for i in "${LAB_HOME_CREDS[@]}"; do
		local desc="read a planted file under default credential ~/${i%/} is denied"
		local o in
		f=$(cred_file "${i%/}")
		o=${out_r[$f]:-none} in=${in_r[$f]:-none}
		if [ "${o%% *}" != ok ]; then
			tap fail "$desc # broken: control failed" "outside, $(short "$f"): '$o'"
		elif [ $MODE != full ]; then
			tap ok "$desc (control only; outside: $o)"
		elif is_errno "${in%% *}"; then
			tap ok "$desc (inside: $in)"
		else
			tap fail "$desc" "inside, $(short "$f"): '$in'" "$(inside_diag "")"
		fi
	done
}
cred_read_cases

# A user lifts one by naming it in read.allow, and only that one.
printf '%s\n' '{"write":["{workspace}"],"read":{"allow":["~/.config/glab-cli"]}}' \
	> "$POL/lift-glab.json"
case_allowed "read.allow [~/.config/glab-cli] lifts that default credential" \
	-p "$POL/lift-glab.json" -- read "$(cred_file .config/glab-cli)"
case_denied "... while ~/.config/tea beside it stays denied" \
	-p "$POL/lift-glab.json" -- read "$(cred_file .config/tea)"
