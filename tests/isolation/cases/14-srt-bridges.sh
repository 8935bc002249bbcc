# 14-srt-bridges.sh (sourced by native.t): an srt launch's bridge sockets
# (its HTTP and SOCKS proxy bridges, in a directory of its own under
# cordon's srt socket dir) are reachable by that launch alone. While an
# srt launch runs, a sandbox of the provider under test, with every unix
# socket allowed and no host, tries to connect to the running launch's
# HTTP bridge. The control connects to it from the host.

bridge_case() {
	local desc="a sandbox cannot reach a concurrent srt launch's bridge socket" w sock in out
	# the launch whose bridges are probed is always a real one (selftest.t
	# runs the suite against a stand-in that isolates nothing)
	local launcher=${CORDON_ISO_REAL:-$CORDON}
	if ! command -v srt >/dev/null; then
		skip "$desc" "srt is not installed"
		return
	fi
	if [ "${CORDON_ISO_SELFTEST:-0}" = 1 ] && [ -z "${CORDON_ISO_REAL:-}" ]; then
		skip "$desc" "no real cordon to start the srt launch (CORDON_ISO_REAL)"
		return
	fi
	if [ $MODE != full ]; then
		skip "$desc" "cordon run is not available"
		return
	fi
	rm -f "$WS/.bridge-up" "$WS/.bridge-done"
	# the launches this suite's state dir already holds: the new one is
	# this case's (other suites running at the same time have srt
	# launches of their own under the same socket dir)
	local before exe
	before=$(ls "$STATE/runs" 2>/dev/null | sort)
	# the srt launch, with a host allowed so its bridges carry something
	timeout -k 5 "$LAB_TIMEOUT" "$launcher" run -q --provider srt --state-dir "$STATE" -w "$WS" \
		--allow-host example.invalid -- sh -c \
		'touch .bridge-up; i=0; while [ ! -e .bridge-done ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done' \
		</dev/null >/dev/null 2>"$LAB/bridge.err" &
	w=$!
	for _ in $(seq 600); do [ -e "$WS/.bridge-up" ] && break; sleep 0.05; done
	exe=$(ls "$STATE/runs" 2>/dev/null | sort | comm -13 <(printf '%s\n' "$before") - | head -n 1)
	sock=
	# srt's socket dir: under the runtime dir, or the state dir's (docs/srt.md)
	[ -n "$exe" ] && sock=$(find "${XDG_RUNTIME_DIR:-/nonexistent}/cordon-srt/$exe" \
		"/run/user/$(id -u)/cordon-srt/$exe" "/run/cordon-srt/$exe" "$STATE/srt/$exe" \
		-mindepth 1 -maxdepth 1 -name '*http*.sock' 2>/dev/null | head -n 1)
	if [ -z "$sock" ]; then
		touch "$WS/.bridge-done"; wait "$w"
		tap fail "$desc # broken: control failed" "no bridge socket of the srt launch found (launch: ${exe:-none})" "$(head -c 300 "$LAB/bridge.err")"
		return
	fi
	out=$(first "$(run_out connect-unix "$sock")")
	in=$(first "$(run_in -p "$POL/all.json" -- connect-unix "$sock")")
	touch "$WS/.bridge-done"
	wait "$w"
	rm -f "$WS/.bridge-up" "$WS/.bridge-done"
	if [ "${out%% *}" != ok ]; then
		tap fail "$desc # broken: control failed" "outside: '$out' ($sock)"
	elif is_errno "${in%% *}"; then
		tap ok "$desc (inside: $in; outside: $out)"
	else
		tap fail "$desc" "expected a refusal ($sock)" "$(inside_diag "'$in'")"
	fi
}
bridge_case
