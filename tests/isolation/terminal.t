#!/bin/bash
# terminal.t: the operator's terminal after a sandboxed command. Bytes the
# terminal answered the command with (an answer-back it provoked), left
# unread in the terminal's input queue, are discarded when the command
# ends, so the operator's shell never reads them; settings the command
# changed (raw mode, no echo) are put back. Each case runs once under
# cordon and once without it (the control, which must show the bytes still
# queued and the settings still changed), for native and srt.
set -u
. "$(dirname "$0")/../lib/lib.sh"
need_exec "$CORDON" CORDON
py=$(command -v python3) || skip_all "no python3"
lab=$(mktemp -d /var/tmp/cordon-term.XXXXXX)
trap 'rm -rf "$lab"' EXIT
mkdir -p "$lab/ws" "$lab/home" "$lab/state"
export HOME=$lab/home
unset XDG_STATE_HOME XDG_CONFIG_HOME XDG_RUNTIME_DIR SSH_AUTH_SOCK

cat >"$lab/term.py" <<'PY'
# term.py MODE -- ARGV...: run ARGV on a new pty as its controlling
# terminal, type "ANSWERBACK" into the terminal while the command sleeps
# (as a terminal answering a query would), wait for the command, then
# report how many bytes are left unread in the input queue and whether
# echo is still on.
import fcntl, os, sys, termios, time, struct
argv = sys.argv[sys.argv.index("--") + 1:]
master, slave = os.openpty()
pid = os.fork()
if pid == 0:
    os.setsid()
    fcntl.ioctl(slave, termios.TIOCSCTTY, 0)
    for fd in (0, 1, 2):
        os.dup2(slave, fd)
    os.close(master)
    os.execvp(argv[0], argv)
time.sleep(0.8)
os.write(master, b"ANSWERBACK")
# keep the master drained so the command's output never blocks
os.set_blocking(master, False)
while True:
    r, st = os.waitpid(pid, os.WNOHANG)
    if r:
        break
    try:
        os.read(master, 4096)
    except BlockingIOError:
        pass
    time.sleep(0.02)
left = struct.unpack("i", fcntl.ioctl(slave, termios.FIONREAD, b"\0\0\0\0"))[0]
echo = bool(termios.tcgetattr(slave)[3] & termios.ECHO)
print(f"left={left} echo={int(echo)} status={os.waitstatus_to_exitcode(st)}")
PY

cmd='stty -echo raw; sleep 1.5'
tap() { n=$((n + 1)); if [ "$1" = ok ]; then echo "ok $n - $2"; else echo "not ok $n - $2"; fails=$((fails + 1)); fi; shift 2; for l; do echo "#   $l"; done; }

ctl=$(cd "$lab/ws" && "$py" "$lab/term.py" x -- sh -c "$cmd")
providers=(native)
command -v srt >/dev/null && providers+=(srt)
for p in "${providers[@]}"; do
	in=$(cd "$lab/ws" && "$py" "$lab/term.py" x -- "$CORDON" run -q --provider "$p" \
		--state-dir "$lab/state" -w "$lab/ws" -- sh -c "$cmd")
	if [[ $ctl != left=10\ echo=0* ]]; then
		tap fail "$p: an answer-back left in the terminal is discarded # broken: control failed" "control: $ctl"
		tap fail "$p: the terminal's settings are put back # broken: control failed" "control: $ctl"
		continue
	fi
	if [[ $in == left=0\ * ]]; then
		tap ok "$p: an answer-back left in the terminal is discarded (control: $ctl; cordon: $in)"
	else
		tap fail "$p: an answer-back left in the terminal is discarded" "control: $ctl" "cordon: $in"
	fi
	if [[ $in == *echo=1* ]]; then
		tap ok "$p: the terminal's settings are put back (cordon: $in)"
	else
		tap fail "$p: the terminal's settings are put back" "cordon: $in"
	fi
done
[ ${#providers[@]} = 1 ] && echo "# srt is not installed: native only"
tap_done
