# 15-live-denies.sh (sourced by native.t): a deny holds for the whole run,
# whatever the host does to the path meanwhile. The command waits (a marker
# in the workspace) until the host has acted, then reads: a credential file
# created where nothing was at launch, one written to a temporary file and
# renamed over the denied one (how login tools write), and a denied
# directory moved aside and made anew. The control reads the same paths on
# the host after the same change.

# live_case DESC HOST_ACTION READ_PATH UNDO [CORDON_OPTS...]
live_case() {
	local desc=$1 act=$2 path=$3 undo=$4 in out w i
	shift 4
	rm -f "$WS/.ready" "$WS/.go"
	if [ $MODE = full ]; then
		run_in_cmd "$@" -- "${PENV[@]}" sh -c \
			'touch .ready; i=0; while [ ! -e .go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; exec "$0" read "$1"' \
			"$PROBE" "$path" >"$LAB/live.out" &
		w=$!
		for i in $(seq 600); do [ -e "$WS/.ready" ] && break; sleep 0.05; done
	fi
	eval "$act"
	touch "$WS/.go"
	if [ $MODE = full ]; then
		wait "$w"
		in=$(first "$(cat "$LAB/live.out")")
	fi
	out=$(first "$(run_out read "$path")")
	eval "$undo"
	rm -f "$WS/.ready" "$WS/.go"
	if [ "${out%% *}" != ok ]; then
		tap fail "$desc # broken: control failed" "outside: '$out'"
	elif [ $MODE != full ]; then
		tap ok "$desc (control only; outside: $out)"
	elif [ ! -e "$WS/.ready" ] && [ -z "$in" ]; then
		tap fail "$desc" "the command never started" "$(inside_diag "'$in'")"
	elif is_errno "${in%% *}"; then
		tap ok "$desc (inside: $in)"
	else
		tap fail "$desc" "expected a refusal" "$(inside_diag "'$in'")"
	fi
}

# Created during the run where nothing was at launch.
mv "$HOME/.config/gh" "$LAB/gh.saved"
live_case "a credential file the host creates during the run (~/.config/gh/hosts.yml) is unreadable" \
	"mkdir -p '$HOME/.config/gh' && echo 'oauth_token: new' > '$HOME/.config/gh/hosts.yml'" \
	"$HOME/.config/gh/hosts.yml" \
	"rm -rf '$HOME/.config/gh'"
mv "$LAB/gh.saved" "$HOME/.config/gh"

# Replaced by a rename over it.
cp -p "$HOME/.docker/config.json" "$LAB/docker.saved"
live_case "a credential file the host replaces by rename during the run (~/.docker/config.json) is unreadable" \
	"echo '{\"auths\":{\"new\":{}}}' > '$HOME/.docker/config.json.tmp' && mv '$HOME/.docker/config.json.tmp' '$HOME/.docker/config.json'" \
	"$HOME/.docker/config.json" \
	"cp -p '$LAB/docker.saved' '$HOME/.docker/config.json'"

# A denied directory moved aside and made anew: neither the new one nor
# the old one under its new name is readable.
live_case "a denied directory the host makes anew during the run (~/.aws) is unreadable" \
	"mv '$HOME/.aws' '$HOME/.aws.old' && mkdir '$HOME/.aws' && echo new > '$HOME/.aws/credentials'" \
	"$HOME/.aws/credentials" \
	"rm -rf '$HOME/.aws' && mv '$HOME/.aws.old' '$HOME/.aws'"
live_case "... and the old one under the name it was moved to (~/.aws.old) is unreadable" \
	"mv '$HOME/.aws' '$HOME/.aws.old' && mkdir '$HOME/.aws'" \
	"$HOME/.aws.old/credentials" \
	"rm -rf '$HOME/.aws' && mv '$HOME/.aws.old' '$HOME/.aws'"
# A policy's own deny, absent at launch, made by the host during the run.
live_case "a policy deny absent at launch and made during the run (~/proj-other/late) is unreadable" \
	"mkdir -p '$HOME/proj-other/late' && echo late > '$HOME/proj-other/late/secret'" \
	"$HOME/proj-other/late/secret" \
	"rm -rf '$HOME/proj-other/late'" \
	--deny-read '~/proj-other/late'
# The positive control: what the host makes elsewhere during the run, in
# a write grant, stays readable.
live_pos() {
	local in w KIND=positive
	rm -f "$WS/.ready" "$WS/.go"
	[ $MODE = full ] || { skip "a file the host writes into the workspace during the run is readable" "cordon run is not available"; return; }
	run_in_cmd -- "${PENV[@]}" sh -c \
		'touch .ready; i=0; while [ ! -e .go ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done; exec "$0" read "$1"' \
		"$PROBE" "$WS/from-host" >"$LAB/live.out" &
	w=$!
	for _ in $(seq 600); do [ -e "$WS/.ready" ] && break; sleep 0.05; done
	echo from-host > "$WS/from-host"
	touch "$WS/.go"
	wait "$w"
	in=$(first "$(cat "$LAB/live.out")")
	rm -f "$WS/.ready" "$WS/.go" "$WS/from-host"
	if [ "${in%% *}" = ok ]; then
		tap ok "a file the host writes into the workspace during the run is readable"
	else
		tap fail "a file the host writes into the workspace during the run is readable" "$(inside_diag "'$in'")"
	fi
}
live_pos
