#!/bin/sh
# tests/cli/doctor.t: `cordon doctor` end to end on this machine: the table
# and its verdict, the --json form (parsed by python3, not grepped), the
# exit statuses (0 ready, 125 for a bad command line) and --help. As root
# the same checks are also run as nobody, where the probes must still pass.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
tmp=$(mktemp -d "${TMPDIR:-/tmp}/cordon-doctor.XXXXXX") || bail "mktemp -d failed"
chmod 755 "$tmp"
trap 'rm -rf "$tmp"' EXIT

"$CORDON" doctor >"$tmp/out" 2>"$tmp/err"; rc=$?
ok $rc "doctor exits 0 on this machine"
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/out" "$tmp/err"
ok $([ "$(tail -n 1 "$tmp/out")" = "native: ready" ]; echo $?) "the last line is 'native: ready'"
for id in kernel userns landlock seccomp mount_api; do
	ok $(grep -Eq "^PASS +$id +[^ ]" "$tmp/out"; echo $?) "a PASS line for $id, with a detail"
done
# How limits are enforced here: a warning (never a failure) where no
# cgroup can be had.
for id in pids cgroup; do
	ok $(grep -Eq "^(PASS|WARN) +$id +[^ ]" "$tmp/out"; echo $?) "a PASS or WARN line for $id, with a detail"
done
ok $([ ! -s "$tmp/err" ]; echo $?) "nothing on stderr"

"$CORDON" doctor --json >"$tmp/json" 2>"$tmp/err"; rc=$?
ok $rc "doctor --json exits 0"
python3 - "$tmp/json" >"$tmp/py" 2>&1 <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
assert d["provider"] == "native", d
assert d["ready"] is True, d
assert isinstance(d["landlock_abi"], int) and not isinstance(d["landlock_abi"], bool), d
assert d["landlock_abi"] >= 1, d
ids = [c["id"] for c in d["checks"]]
assert ids == ["kernel", "userns", "landlock", "seccomp", "mount_api", "pids", "cgroup"], ids
for c in d["checks"]:
    assert set(c) == {"id", "status", "detail", "fix"}, c
    assert c["status"] in ("pass", "warn", "fail"), c
    assert c["detail"], c
PY
rc=$?
ok $rc "--json parses: provider native, ready true, landlock_abi >= 1, every check shaped"
[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/py"

"$CORDON" doctor --bogus >"$tmp/out" 2>"$tmp/err"; rc=$?
ok $([ "$rc" = 125 ]; echo $?) "an unknown option exits 125 (got $rc)"
ok $(grep -q "unknown argument '--bogus'" "$tmp/err"; echo $?) "and names the option on stderr"
ok $([ ! -s "$tmp/out" ]; echo $?) "and prints nothing on stdout"
# Control: the known option in the same position is accepted.
"$CORDON" doctor --json >/dev/null 2>&1; rc=$?
ok $rc "control: --json in the same place exits 0"

"$CORDON" doctor --help >"$tmp/out" 2>&1; rc=$?
ok $rc "--help exits 0"
ok $(grep -q "usage: cordon doctor" "$tmp/out"; echo $?) "--help prints the usage"
"$CORDON" --help >"$tmp/out" 2>&1
ok $(grep -q "^  doctor " "$tmp/out"; echo $?) "cordon --help lists doctor"

if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
	setpriv --reuid=65534 --regid=65534 --clear-groups -- "$CORDON" doctor >"$tmp/out" 2>&1; rc=$?
	ok $rc "as nobody doctor exits 0"
	[ "$rc" = 0 ] || sed 's/^/# /' "$tmp/out"
	ok $(grep -q "uid 65534" "$tmp/out"; echo $?) "as nobody the userns probe ran as uid 65534"
	# without a cgroup of its own, nobody still gets the pids limit
	ok $(grep -Eq "^PASS +pids +pids by (cgroup|RLIMIT_NPROC)" "$tmp/out"; echo $?) "as nobody the pids limit is still enforced (a cgroup or RLIMIT_NPROC)"
else
	n=$((n + 1)); echo "ok $n # skip not root or no setpriv: the run above is the unprivileged one"
	n=$((n + 1)); echo "ok $n # skip not root or no setpriv"
	n=$((n + 1)); echo "ok $n # skip not root or no setpriv"
fi

# Negative control: inside a user namespace with no uid map the probe's
# unshare is refused (the caller's ids must be mapped), so doctor must say
# unavailable and exit 1, in both forms.
if unshare --user true 2>/dev/null; then
	unshare --user "$CORDON" doctor >"$tmp/out" 2>&1; rc=$?
	ok $([ "$rc" = 1 ]; echo $?) "unmapped user namespace: doctor exits 1 (got $rc)"
	ok $(grep -q "^FAIL  userns .*unshare.*not permitted" "$tmp/out"; echo $?) "the userns FAIL names unshare and the errno"
	ok $(grep -q "^      fix: " "$tmp/out"; echo $?) "with a fix line"
	ok $([ "$(tail -n 1 "$tmp/out")" = "native: unavailable: sandboxed launches run nothing until this is fixed" ]; echo $?) "the last line says unavailable"
	unshare --user "$CORDON" doctor --json >"$tmp/json" 2>&1; rc=$?
	python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); c={x["id"]: x for x in d["checks"]}; sys.exit(0 if d["ready"] is False and c["userns"]["status"] == "fail" and c["userns"]["fix"] else 1)' "$tmp/json"
	ok $([ "$?" = 0 ] && [ "$rc" = 1 ]; echo $?) "--json: ready false, userns fail with a fix, exit 1"
else
	for i in 1 2 3 4 5; do n=$((n + 1)); echo "ok $n # skip unshare --user unavailable"; done
fi

tap_done
