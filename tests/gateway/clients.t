#!/bin/bash
# Real clients through the gateway, inside `cordon run`, native and srt
# (where srt runs here):
# - npm: `npm install` of a small package with no dependencies (ms) from
#   the public registry with the registry allowed (the package lands in
#   the workspace, seen from the host afterwards); without it refused:
#   with no host allowed npm fails (no way out), and with another host
#   allowed the gateway refuses the registry (the refusal in the run's
#   network.jsonl). The control: the same install outside any sandbox;
#   when it fails (no registry from here) the npm cases are skipped with
#   that reason. npm's cache and the home are the lab's: the caller's
#   ~/.npmrc is a default deny, and the workspace is where the command
#   may write.
# - pip: `pip download` of a wheel from a local index (plain http://, one
#   request per proxy connection) with the index allowed, and refused
#   without it; skipped where the system python has no pip.
. "$(dirname "$0")/gwlab.sh"
gw_lab clients
export HOME=$LAB/home
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK GIT_DIR CORDON_GATEWAY_DNS
unset $(env | sed -n 's/^\(npm_config_[A-Za-z_]*\)=.*/\1/p')
REGISTRY=registry.npmjs.org PKG=ms
STATE=$LAB/state
mkdir -p "$HOME" "$STATE"

# npm's own retries and notices would only make a refusal slow.
NPM=(npm install --no-audit --no-fund --no-update-notifier --no-package-lock --fetch-retries=0
	--fetch-timeout=20000 --registry "https://$REGISTRY/")

# fresh_ws NAME: an empty workspace (a git repository) with npm's cache in it.
fresh_ws() {
	WS=$LAB/$1
	mkdir -p "$WS" && git init -q "$WS" && echo '{"name":"lab","version":"1.0.0"}' > "$WS/package.json"
}

# run_in PROVIDER [CORDON OPTS...] -- CMD...: in $WS; cordon's stderr in
# $LAB/in.err, the run's record dir in $LAB/last.rec.
run_in() {
	local before rc provider=$1
	shift
	before=$(ls "$STATE/runs" 2>/dev/null)
	(cd "$WS" && timeout -k 5 90 "$CORDON" run --provider "$provider" --state-dir "$STATE" -w "$WS" "$@" \
		</dev/null >"$LAB/in.out" 2>"$LAB/in.err")
	rc=$?
	comm -13 <(printf '%s\n' "$before" | sort) <(ls "$STATE/runs" 2>/dev/null | sort) | head -n1 |
		sed "s|^|$STATE/runs/|; s|\$|/sandbox/1|" > "$LAB/last.rec"
	return $rc
}
audit() { cat "$(cat "$LAB/last.rec")/network.jsonl" 2>/dev/null; }
installed() { [ -f "$WS/node_modules/$PKG/package.json" ] && grep -q "\"name\": *\"$PKG\"" "$WS/node_modules/$PKG/package.json"; }

# --- pip download from a local index on 127.0.0.2, through the gateway
providers=(native)
command -v srt >/dev/null && providers+=(srt)
if /usr/bin/python3 -m pip --version >/dev/null 2>&1; then
	mkdir -p "$LAB/index/simple/tinypkg"
	"$PY" - "$LAB/index/simple" <<'PYEOF' || bail "cannot make the lab's wheel"
import base64, hashlib, sys, zipfile
root, name = sys.argv[1], "tinypkg-1.0-py3-none-any.whl"
files = {"tinypkg/__init__.py": b"VALUE = 42\n",
         "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
         "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: lab\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
record = "".join("%s,sha256=%s,%d\n" % (k, base64.urlsafe_b64encode(hashlib.sha256(v).digest()).rstrip(b"=").decode(), len(v))
                 for k, v in files.items()) + "tinypkg-1.0.dist-info/RECORD,,\n"
files["tinypkg-1.0.dist-info/RECORD"] = record.encode()
with zipfile.ZipFile("%s/tinypkg/%s" % (root, name), "w") as z:
    for k, v in files.items():
        z.writestr(k, v)
open("%s/tinypkg/index.html" % root, "w").write('<a href="%s">%s</a>\n' % (name, name))
open("%s/index.html" % root, "w").write('<a href="tinypkg/">tinypkg</a>\n')
PYEOF
	start_server IDX http --dir "$LAB/index" || exit 1
	PIP=(/usr/bin/python3 -m pip download --no-cache-dir --disable-pip-version-check --retries 0
		--timeout 20 --index-url "http://127.0.0.2:$IDX/simple" --trusted-host 127.0.0.2 tinypkg)
	for p in "${providers[@]}"; do
		fresh_ws "pip-$p"
		run_in "$p" -q --allow-host "127.0.0.2:$IDX" -- "${PIP[@]}" -d "$WS/dl"
		rc=$?
		ok $([ $rc = 0 ] && [ -s "$WS/dl/tinypkg-1.0-py3-none-any.whl" ] &&
			[ "$(audit | grep -c '"protocol":"http",.*"verdict":"allow"')" -ge 2 ]; echo $?) \
			"$p: pip download from the allowed local index: the wheel on the host, each request allowed ($rc)"
		[ $rc = 0 ] || sed 's/^/# /' "$LAB/in.err" "$LAB/in.out" | tail -10
		fresh_ws "pip-$p-refused"
		run_in "$p" -q --allow-host example.invalid -- "${PIP[@]}" -d "$WS/dl"
		rc=$?
		ok $([ $rc != 0 ] && [ ! -e "$WS/dl/tinypkg-1.0-py3-none-any.whl" ] &&
			audit | grep -q "\"port\":$IDX,.*\"verdict\":\"deny\""; echo $?) \
			"$p: ... the index not allowed: pip fails, the refusal audited ($rc)"
	done
else
	skip "the system python (/usr/bin/python3) has no pip: the pip cases do not run"
fi

if ! command -v npm >/dev/null; then
	skip "npm is not installed (scripts/deps installs it)"
	tap_done
	exit
fi

# --- the control, outside any sandbox
fresh_ws control
(cd "$WS" && timeout -k 5 90 "${NPM[@]}" --cache "$WS/.npm-cache" "$PKG" </dev/null >"$LAB/control.out" 2>&1)
rc=$?
if [ $rc != 0 ] || ! installed; then
	skip "the registry is not reachable from this host: npm install outside a sandbox failed ($rc: $(grep -m1 -i 'err' "$LAB/control.out" | cut -c1-100))"
	tap_done
	exit
fi
ok 0 "control: npm install $PKG outside any sandbox works"

command -v srt >/dev/null || skip "srt is not installed: the srt cases do not run"
for p in "${providers[@]}"; do
	fresh_ws "ws-$p-allowed"
	run_in "$p" -q --allow-host "$REGISTRY" -- "${NPM[@]}" --cache "$WS/.npm-cache" "$PKG"
	rc=$?
	if [ "$p" = srt ] && [ $rc = 125 ] && grep -q 'sandbox_unavailable' "$LAB/in.err"; then
		skip "srt cannot run here: $(head -c 150 "$LAB/in.err")"
		continue
	fi
	ok $([ $rc = 0 ] && installed; echo $?) \
		"$p: npm install $PKG with --allow-host $REGISTRY: exit 0, node_modules/$PKG on the host ($rc)"
	[ $rc = 0 ] || sed 's/^/# /' "$LAB/in.err" "$LAB/in.out" | tail -15
	ok $(audit | grep -q "\"protocol\":\"http-connect\",\"host\":\"$REGISTRY\",\"port\":443,.*\"verdict\":\"allow\""; echo $?) \
		"$p: ... the run's network.jsonl has the registry allowed"

	# No host allowed: no way out at all (native runs no gateway then).
	fresh_ws "ws-$p-none"
	run_in "$p" -q -- "${NPM[@]}" --cache "$WS/.npm-cache" "$PKG"
	rc=$?
	ok $([ $rc != 0 ] && ! installed; echo $?) "$p: the same without --allow-host fails, nothing installed ($rc)"
	# Another host allowed, not the registry: the gateway refuses it.
	fresh_ws "ws-$p-refused"
	run_in "$p" -q --allow-host example.invalid -- "${NPM[@]}" --cache "$WS/.npm-cache" "$PKG"
	rc=$?
	ok $([ $rc != 0 ] && ! installed; echo $?) \
		"$p: with only --allow-host example.invalid it fails too, nothing installed ($rc)"
	ok $(audit | grep -q "\"host\":\"$REGISTRY\",\"port\":443,.*\"verdict\":\"deny\",\"reason\":\"host not in network.allow\""; echo $?) \
		"$p: ... the refusal of $REGISTRY:443 is in the run's network.jsonl"
	audit | grep -q '"verdict":"deny"' || { audit; cat "$LAB/in.out" "$LAB/in.err"; } | tail -15 | sed 's/^/# /'
done
tap_done
