#!/bin/bash
# top_tmux.sh SYNCPROF BANK - 'syncprof top' on a terminal: tmux (its own
# server, a detached session of fixed size) runs it on bank, profiled by
# 'syncprof run --hold', and the test reads the screen with capture-pane
# and types with send-keys:
#   - the header (pid, command, profiling, threads, rows), the column
#     titles and bank's rows appear;
#   - the rows of locks first under "-- Lock contention ...", the waits for
#     an event after them under "-- Waits for an event ...";
#   - space pauses: "PAUSED", and the screen stays the same across several
#     refresh intervals; each sort key (t w c n a m o) then re-sorts the
#     paused screen by its column within each part (checked by
#     tests/top_screen.py), l makes one list and back, s goes
#     to the next key, h shows the keys, any key goes back; space again
#     goes on (the profiled time moves);
#   - a narrower window, while paused, is redrawn at once (SIGWINCH)
#     without the OBJECT column but with SITE, and fewer rows;
#   - r, still paused, resets the process and refreshes once: the rates
#     start again "since ... reset", the profiled time went down;
#   - q ends top with status 0 and gives the terminal back: the same stty
#     settings as before, the normal screen (not the alternate one), the
#     cursor visible;
#   - SIGTERM: the same, top dies of SIGTERM (status 143); Ctrl-C: 130;
#   - bank exiting: "process N (...) exited", status 0, terminal back.
# Skipped (77) without tmux.  No timing is asserted: waits poll the screen
# with a generous limit.
set -u
sp=$1 bank=$2
here=$(cd "$(dirname "$0")" && pwd)
command -v tmux >/dev/null 2>&1 || { echo "SKIP: tmux is not installed (.ci/packages)"; exit 77; }
tmp=$(mktemp -d)
export SYNCPROF_CONTROL_DIR=$tmp/ctl
runpid= bpid=
T() { tmux -S "$tmp/tmux.sock" "$@"; }
cleanup() {
	T kill-server 2>/dev/null
	[ -n "$bpid" ] && kill "$bpid" 2>/dev/null
	[ -n "$runpid" ] && wait "$runpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	echo "---- screen:" >&2
	T capture-pane -p -t top >&2 2>/dev/null
	exit 1
}
cap() { T capture-pane -p -t top >"$tmp/screen.txt" && cat "$tmp/screen.txt"; }
# wait_for PATTERN [WHAT]: until the screen has a line matching PATTERN.
wait_for() {
	for _ in $(seq 300); do
		cap | grep -qE -- "$1" && return 0
		sleep 0.1
	done
	fail "${2:-$1}: not on the screen"
}
# A still screen: two captures the same (a key redraws at once; paused,
# nothing else does).
settle() {
	local prev=
	for _ in $(seq 100); do
		sleep 0.2
		cap >"$tmp/settle.txt"
		[ -n "$prev" ] && [ "$prev" = "$(cat "$tmp/settle.txt")" ] && return 0
		prev=$(cat "$tmp/settle.txt")
	done
	fail "the screen does not settle"
}
# wait_gone PATTERN WHAT: until no line of the screen matches PATTERN.
wait_gone() {
	for _ in $(seq 300); do
		cap | grep -qE -- "$1" || return 0
		sleep 0.1
	done
	fail "$2: still on the screen"
}
key() { T send-keys -t top "$@"; }
profiled() { sed -n 's/.*profiled: \([0-9.]*\) s.*/\1/p' "$tmp/screen.txt"; }

# ---- bank under syncprof run ---------------------------------------------------------
# niced: two busy tellers for the whole test must not slow the tests beside it
nice -n 19 "$sp" run --hold -- "$bank" 2 2000000000 >/dev/null 2>"$tmp/run.err" &
runpid=$!
for _ in $(seq 200); do
	bpid=$(ls "$SYNCPROF_CONTROL_DIR" 2>/dev/null | sed -n 's/^\([0-9]*\)\.sock$/\1/p' | head -1)
	[ -n "$bpid" ] && break
	sleep 0.05
done
[ -n "$bpid" ] || fail "bank's control socket did not appear: $(cat "$tmp/run.err")"

# The pane: a shell that notes the terminal's settings before and after top,
# top's pid and status, and stays (so that the screen can be read after).
cat >"$tmp/pane.sh" <<EOF
trap ':' INT
stty -g >"$tmp/stty.before"
echo "before-top"
sh -c 'echo \$\$ >"$tmp/top.pid"; exec "\$0" "\$@"' "$sp" top "$bpid" -d 0.3
echo "top-status=\$?"
stty -g >"$tmp/stty.after"
exec sleep 1000
EOF
start_top() {
	rm -f "$tmp/stty.before" "$tmp/stty.after" "$tmp/top.pid"
	if T has-session -t top 2>/dev/null; then
		T respawn-pane -k -t top "bash $tmp/pane.sh"
	else
		T new-session -d -s top -x 160 -y 40 "bash $tmp/pane.sh"
	fi
	wait_for "^syncprof top - pid $bpid: .*bank" "top's header"
}
# terminal_back STATUS: top ended with STATUS and left the terminal as it was.
terminal_back() {
	wait_for "^top-status=" "top's end"
	grep -q "^top-status=$1\$" "$tmp/screen.txt" || fail "top's status: $(grep top-status "$tmp/screen.txt"), want $1"
	for _ in $(seq 100); do [ -s "$tmp/stty.after" ] && break; sleep 0.1; done
	cmp -s "$tmp/stty.before" "$tmp/stty.after" ||
		fail "stty before top: $(cat "$tmp/stty.before"), after: $(cat "$tmp/stty.after")"
	test "$(T display -p -t top '#{alternate_on}')" = 0 || fail "still on the alternate screen"
	test "$(T display -p -t top '#{cursor_flag}')" = 1 || fail "the cursor is still hidden"
	grep -q '^before-top$' "$tmp/screen.txt" || fail "the screen before top is not back"
}

start_top
wait_for '^profiling: on  threads: [0-9]+  rows: [0-9]+' "profiling, threads, rows"
wait_for '^TYPE +ACQ/s +WAITS/s +WAIT% +ACQS +WAITS +WAIT +AVG +MAX +HOLD +OBJECT +SITE' "column titles"
wait_for '^mutex .* journal_append bank\.c:56' "the journal_append row"
wait_for 'rates: over the last [0-9.]+ s of profiling' "rates since the previous refresh"
cat "$tmp/screen.txt"

# ---- pause: the screen stays -------------------------------------------------------
# (3 s of profiling first, for the reset below to go down from)
wait_for 'profiled: ([3-9]|[1-9][0-9]+)\.[0-9] s' "3 s of profiled time"
key Space
wait_for '^PAUSED' "PAUSED"
settle
cp "$tmp/settle.txt" "$tmp/paused.txt"
sleep 1.5 # five refresh intervals
cap >/dev/null
cmp -s "$tmp/paused.txt" "$tmp/screen.txt" || fail "the screen changed while paused"

# ---- sort keys, on the paused screen ----------------------------------------------------
for k in m:max c:count n:contended a:avg w:total o:hold t:rate; do
	key "${k%%:*}"
	wait_for "sort: ${k#*:} " "sort: ${k#*:}"
	settle
	grep -q '^PAUSED' "$tmp/settle.txt" || fail "a sort key ended the pause"
	python3 "$here/top_screen.py" order "$tmp/settle.txt" "${k#*:}" || fail "sort ${k#*:}"
	python3 "$here/top_screen.py" parts "$tmp/settle.txt" || fail "sort ${k#*:}: contention first"
done
# l: one list (as --merged), and back
key l
wait_gone '^-- Lock contention' "l: the locks' title"
settle
python3 "$here/top_screen.py" parts "$tmp/settle.txt" merged || fail "l: one list"
python3 "$here/top_screen.py" order "$tmp/settle.txt" rate || fail "l: sort rate"
key l
wait_for '^-- Lock contention' "l again: the locks' title"
settle
python3 "$here/top_screen.py" parts "$tmp/settle.txt" || fail "l again: contention first"
# ---- a narrow window, still paused: SIGWINCH redraws -------------------------------------
T resize-window -t top -x 80 -y 20
wait_for '^TYPE .*WAIT% .*SITE' "columns at 80"
cols=$(python3 "$here/top_screen.py" columns "$tmp/screen.txt")
echo "80 columns: $cols"
case " $cols " in *" OBJECT "*) fail "OBJECT kept at 80 columns: $cols" ;; esac
wait_for 'journal_append bank\.c:56' "the site at 80 columns"
# 20 lines: 3 of header, the column titles, 16 of rows and the parts' titles
test "$(sed -n '/^TYPE/,$p' "$tmp/screen.txt" | grep -c .)" -le 17 || fail "more rows than 20 lines hold"
python3 "$here/top_screen.py" parts "$tmp/screen.txt" || fail "contention first at 80x20"
grep -q '^PAUSED' "$tmp/screen.txt" || fail "the resize ended the pause"
T resize-window -t top -x 160 -y 40
wait_for '^TYPE .* OBJECT +SITE' "OBJECT back at 160 columns"

key s
wait_for "sort: total " "s: the key after rate"
key h
wait_for '^Keys:' "help"
wait_for '^  r +reset' "help: reset"
key x
wait_gone '^Keys:' "help after a key"
wait_for '^mutex .* journal_append bank\.c:56' "the rows after help"
grep -q '^PAUSED' "$tmp/screen.txt" || fail "help ended the pause"

# ---- reset, still paused: one refresh, and the screen stays -------------------------------
before=$(profiled)
key r
wait_for 'reset: the numbers count from now' "the reset's message"
wait_for '^PAUSED .*rates: since start-up or the last reset' "rates since the reset"
after=$(profiled)
echo "profiled: $before s before the reset, $after s after"
awk -v a="$after" -v b="$before" 'BEGIN { exit !(a < b) }' ||
	fail "profiled time after the reset ($after s) not below before it ($before s)"

# ---- space again: refreshes go on -----------------------------------------------------------
before=$(profiled)
key Space
wait_gone '^PAUSED' "PAUSED after space"
for _ in $(seq 100); do
	cap >/dev/null
	[ "$(profiled)" != "$before" ] && break
	sleep 0.1
done
[ "$(profiled)" != "$before" ] || fail "no refresh after the pause ended"

# ---- q: the terminal is back -------------------------------------------------------------
key q
terminal_back 0

# ---- SIGTERM, Ctrl-C -----------------------------------------------------------------
start_top
kill -TERM "$(cat "$tmp/top.pid")"
terminal_back 143
start_top
key C-c
terminal_back 130

# ---- bank exits ---------------------------------------------------------------------------
start_top
kill "$bpid"
wait "$runpid" 2>/dev/null
runpid= bpid=
wait_for "^syncprof top: process [0-9]+ \(.*bank.*\) exited" "the process exited"
terminal_back 0
echo "top_tmux: ok"
