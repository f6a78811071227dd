#!/usr/bin/env bash
# Inter-event triggers offline: the same triggers set live in req-demo
# (through the mount, before its first event) and run by `utrace hist -i`
# on a recording of the same events must print the same hist files:
# variables, a reference to another event's variable, onmatch() writing a
# synthetic event (with a string field) whose own trigger aggregates it,
# and onmax().save().  No timestamps: a live trigger's common_timestamp is
# the time it ran, the recording's the record's, so they differ by a few
# hundred ns (the values here are fields, identical).
. "$(dirname "$0")/lib.sh"
GATE="$TMP/gate"
mkfifo "$GATE"
exec 3<> "$GATE"
mount_demo bash -c 'exec "$0" 30 gate < "$1"' "$UTRACE_BUILD/tests/req-demo" "$GATE"
wait_for test -e "$D/synthetic_events" || { echo "not ok - no synthetic_events"; exit 1; }

SYNTH='req_pair int d; int id; char path[16]'
T1='hist:keys=id:b=id'
T2='hist:keys=id:d=status-$b:onmatch(reqdemo.req_begin).req_pair($d,id,path)'
T3='hist:keys=path:n=id:onmax($n).save(status,id)'
T4='hist:keys=path:vals=d:sort=path'
check "the live triggers are set (the program waits)" bash -c '
	echo "$1" > "$2/synthetic_events" && wait_for test -e "$3/synthetic/req_pair/trigger" &&
	echo "$4" >> "$3/reqdemo/req_begin/trigger" && echo "$5" >> "$3/reqdemo/req_end/trigger" &&
	echo "$6" >> "$3/reqdemo/req_end/trigger" && echo "$7" >> "$3/synthetic/req_pair/trigger" &&
	echo 1 > "$3/reqdemo/enable"' _ "$SYNTH" "$D" "$E" "$T1" "$T2" "$T3" "$T4"
echo >&3
# 30 rounds of 3 requests, then one end that never began: 91 ends
wait_for grep -q "Hits: 91" "$E/reqdemo/req_end/hist"
{ cat "$E/reqdemo/req_begin/hist"; printf '\n\n'; cat "$E/reqdemo/req_end/hist"; printf '\n\n'
  cat "$E/synthetic/req_pair/hist"; } > "$TMP/live"
check "the live tables: 90 pairs, 3 paths, max: with the saved fields" bash -c '
	grep -c "Hits: 90" "$1" | grep -qx 2 && grep -q "Hits: 91" "$1" &&
	grep -Eq "^	max: +89  status: +200  id: +89$" "$1" &&
	grep -Eq "^\{ path: /fast +\} hitcount: +30  d: +[0-9]+$" "$1"' _ "$TMP/live"
timeout 60 "$UTRACE" record -p "$P" -e "reqdemo:*" --duration 1 -o "$TMP/r.dat" 2> "$TMP/rec.err"
echo >&3
wait "$P" 2> /dev/null
check "the recording holds the 182 events" bash -c '
	[ "$("$0" script -i "$1" | grep -c "req_\(begin\|end\):")" = 182 ]' "$UTRACE" "$TMP/r.dat"
"$UTRACE" hist -i "$TMP/r.dat" -s "$SYNTH" reqdemo:req_begin "$T1" reqdemo:req_end "$T2" "$T3" \
	synthetic:req_pair "$T4" > "$TMP/offline" 2> "$TMP/err"
check "utrace hist -i prints the same tables as the live hist files" same "$TMP/offline" "$TMP/live"
check "offline errors: an unknown synthetic event, a variable no earlier trigger has" bash -c '
	! "$0" hist -i "$1" reqdemo:req_end "hist:keys=id:onmatch(reqdemo.req_begin).nosuch(id)" 2> "$2/e" > /dev/null &&
	grep -q "error: Couldn'\''t find synthetic event$" "$2/e" &&
	! "$0" hist -i "$1" reqdemo:req_end "hist:keys=id:x=status-\$b" reqdemo:req_begin "$3" 2> "$2/e" > /dev/null &&
	grep -q "error: Couldn'\''t find variable$" "$2/e" &&
	! "$0" hist -i "$1" -s "bad u64" reqdemo:req_end "hist:keys=id" 2> "$2/e" > /dev/null &&
	grep -qF "synthetic_events: error: Command must be of the form: <name> field[;field] ..." "$2/e"' "$UTRACE" "$TMP/r.dat" "$TMP" "$T1"
fusermount3 -u "$MNT" 2> /dev/null
done_testing
