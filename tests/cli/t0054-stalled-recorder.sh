#!/usr/bin/env bash
# A recorder that stops reading never holds the traced program (issue 27,
# item 5): with the recorder stopped (SIGSTOP), a dlopen() that registers
# 200 events returns at once; a recorder that comes back soon gets every
# format; one that stays stuck is dropped with one warning, and the
# recording says what it missed.
. "$(dirname "$0")/lib.sh"

DEMO="$UTRACE_BUILD/tests/stall-demo"
LIB="$UTRACE_BUILD/tests/libstall-lib.so"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run"
rec=
cleanup() {
	[ -n "$rec" ] && kill -CONT "$rec" 2> /dev/null
	wait 2> /dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# run_stopped DIR: record the demo with state in DIR; stop the recorder once
# the demo is ready, let it dlopen, and wait (30 s at most) for it to say
# how long that took
run_stopped() {
	mkdir -p "$1"
	"$UTRACE" record -o "$1/f.dat" -- "$DEMO" "$LIB" "$1" > /dev/null 2> "$1/err" &
	rec=$!
	wait_for [ -e "$1/ready" ] || return 1
	kill -STOP "$rec"
	touch "$1/go"
	wait_for [ -e "$1/took" ]
}
took_ms() { sed 's/ ms//' "$1/took"; }

# --- a short stop: the program does not wait, the recorder gets it all ---
A="$TMP/a"
run_stopped "$A"
check "dlopen of 200 events with the recorder stopped returns in under 2 s" bash -c '
	echo "# dlopen took $(cat "$0/took" 2> /dev/null)" >&2
	[ -e "$0/took" ] && [ "$(sed "s/ ms//" "$0/took")" -lt 2000 ]' "$A"
kill -CONT "$rec"
touch "$A/end"
wait "$rec"; st=$?
rec=
check "the recorder, back within 5 s, got every format: 200 events printed" bash -c '
	cat "$0/err" >&2
	[ $1 = 0 ] && "$2" script -i "$0/f.dat" > "$0/out" 2> "$0/serr" &&
	[ "$(grep -c " stall_[0-9]*: request_number=" "$0/out")" = 200 ] &&
	! grep -q "dropped" "$0/err" "$0/serr"' "$A" "$st" "$UTRACE"

# --- a long stop: the recorder is dropped, once, and the recording says so ---
B="$TMP/b"
run_stopped "$B"
check "stuck for 5 s: the program drops the recorder with one warning" bash -c '
	wait_for grep -q "utrace: the recorder has not read its messages for 5 s" "$0/err"' "$B"
touch "$B/end"
# the program ends by itself while the recorder is still stopped
# (a zombie: its parent, the recorder, is stopped)
ended() { [ "$(awk '{ print $3 }' "/proc/$1/stat" 2> /dev/null)" = Z ]; }
check "and the program ends, the recorder still stopped" wait_for ended "$(cat "$B/ready")"
kill -CONT "$rec"
wait "$rec"
rec=
check "the recorder says what it missed; script too" bash -c '
	cat "$0/err" >&2
	[ "$(grep -c "has not read its messages" "$0/err")" = 1 ] &&
	grep -qE "utrace record: pid [0-9]+ \(stall-demo\) dropped this recorder, which had stopped reading: [0-9]+ event formats or objects missed" "$0/err" &&
	"$1" script -i "$0/f.dat" > /dev/null 2> "$0/serr"; cat "$0/serr" >&2
	grep -qE "pid [0-9]+ \(stall-demo\) dropped its recorder, which had stopped reading: [0-9]+ event formats or objects never reached the file" "$0/serr"' \
	"$B" "$UTRACE"

done_testing
