#!/usr/bin/env bash
# Synthetic events and inter-event hist triggers (the kernel's
# synthetic_events file and histogram.rst's section 2.2): the
# wakeup-latency example adapted to req-demo's requests (req_begin and
# req_end with the same id; /medium sleeps 1 ms, /slow 4 ms): a variable
# ts0 on the begin, an expression with $ts0 on the end, onmatch().trace()
# generating the synthetic event, its records and its hist; readback of
# synthetic_events, of the format and of the triggers as the kernel prints
# them; errors with the kernel's messages; EBUSY while in use.
. "$(dirname "$0")/lib.sh"
mount_demo "$UTRACE_BUILD/tests/req-demo" loop
export -f same
wait_for test -e "$D/synthetic_events" || { echo "not ok - no synthetic_events"; exit 1; }

check "synthetic_events: empty, mode -rw-r-----" bash -c '
	[ ! -s "$1/synthetic_events" ] && [ "$(stat -c %A "$1/synthetic_events")" = "-rw-r-----" ]' _ "$D"
check "echo >> synthetic_events defines events; the readback is the kernel's" bash -c '
	echo "wakeup_latency u64 lat; int id" >> "$1/synthetic_events" &&
	echo "other unsigned int a; char b; s64 c" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "wakeup_latency\tu64 lat; int id\nother\tunsigned int a; char b; s64 c")" ]' _ "$D"
check "each is an event: its directory, available_events, the kernel's format (u64 slots)" bash -c '
	wait_for test -e "$1/events/synthetic/wakeup_latency/format" &&
	[ "$(ls "$1/events/synthetic/wakeup_latency" | tr "\n" " ")" = "enable filter format hist id trigger " ] &&
	grep -qx "synthetic:wakeup_latency" "$1/available_events" &&
	grep -qx "synthetic:other" "$1/available_events" &&
	sed -n "1p;3,12p" "$1/events/synthetic/wakeup_latency/format" > "$2/f" &&
	printf "%s\n" "name: wakeup_latency" "format:" \
"	field:unsigned short common_type;	offset:0;	size:2;	signed:0;" \
"	field:unsigned char common_flags;	offset:2;	size:1;	signed:0;" \
"	field:unsigned char common_preempt_count;	offset:3;	size:1;	signed:0;" \
"	field:int common_pid;	offset:4;	size:4;	signed:1;" "" \
"	field:u64 lat;	offset:8;	size:8;	signed:0;" \
"	field:int id;	offset:16;	size:4;	signed:1;" "" \
"print fmt: \"lat=%llu, id=%d\", REC->lat, REC->id" > "$2/want" && same "$2/f" "$2/want" &&
	grep -q "^	field:char b;	offset:16;	size:1;	signed:1;$" "$1/events/synthetic/other/format" &&
	grep -q "^	field:s64 c;	offset:24;	size:8;	signed:1;$" "$1/events/synthetic/other/format" &&
	grep -q "^print fmt: \"a=%u, b=%d, c=%lld\", REC->a, REC->b, REC->c$" "$1/events/synthetic/other/format"' _ "$D" "$TMP"

check "bad definitions: the kernel's errnos and error_log entries" bash -c '
	! echo "bad u65 x" >> "$1/synthetic_events" 2> "$2/e" && grep -q "Invalid argument" "$2/e" &&
	[ "$(tail -n 3 "$1/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //")" = "synthetic_events: error: Invalid type
  Command: bad u65 x
               ^" ] &&
	! echo "wakeup_latency u64 x" >> "$1/synthetic_events" 2> "$2/e" && grep -q "File exists" "$2/e" &&
	! echo "1x u64 x" >> "$1/synthetic_events" 2> /dev/null &&
	[ "$(tail -n 3 "$1/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //" | head -n 1)" = "synthetic_events: error: Illegal name" ] &&
	! echo "!nosuch" >> "$1/synthetic_events" 2> "$2/e" && grep -q "No such file" "$2/e"' _ "$D" "$TMP"
check "!name removes one" bash -c '
	echo "!other" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "wakeup_latency\tu64 lat; int id")" ] &&
	wait_for test ! -e "$1/events/synthetic/other" && ! grep -q "synthetic:other" "$1/available_events"' _ "$D"

BEGIN='hist:keys=id:ts0=common_timestamp.usecs'
END='hist:keys=id:wakeup_lat=common_timestamp.usecs-$ts0:onmatch(reqdemo.req_begin).trace(wakeup_latency,$wakeup_lat,id)'
export BEGIN END
check "a variable: ts0=common_timestamp.usecs, read back as the kernel prints it" bash -c '
	echo "$BEGIN" >> "$1/reqdemo/req_begin/trigger" &&
	[ "$(cat "$1/reqdemo/req_begin/trigger")" = "hist:keys=id:vals=hitcount:ts0=common_timestamp.usecs:sort=hitcount:size=2048:clock=global [active]" ]' _ "$E"
check "errors: a bad variable reference, an unknown synthetic event (the kernel's messages)" bash -c '
	! echo "hist:keys=id:lat=common_timestamp.usecs-\$nosuch" >> "$1/reqdemo/req_end/trigger" 2> /dev/null &&
	[ "$(tail -n 3 "$2/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //")" = "hist:reqdemo:req_end: error: Couldn'\''t find variable
  Command: hist:keys=id:lat=common_timestamp.usecs-\$nosuch
                                                    ^" ] &&
	! echo "hist:keys=id:l=common_timestamp.usecs-\$ts0:onmatch(reqdemo.req_begin).trace(nosuch,\$l,id)" >> "$1/reqdemo/req_end/trigger" 2> /dev/null &&
	[ "$(tail -n 3 "$2/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //")" = "hist:reqdemo:req_end: error: Couldn'\''t find synthetic event
  Command: hist:keys=id:l=common_timestamp.usecs-\$ts0:onmatch(reqdemo.req_begin).trace(nosuch,\$l,id)
                                                                                       ^" ] &&
	! echo "hist:keys=id:l=common_timestamp.usecs-\$ts0:onmatch(reqdemo.req_begin).wakeup_latency(\$l)" >> "$1/reqdemo/req_end/trigger" 2> /dev/null &&
	tail -n 3 "$2/error_log" | grep -q "error: Param count doesn'\''t match synthetic event field count$" &&
	! echo "hist:keys=id:l=common_timestamp.usecs-\$ts0:onmatch(reqdemo.req_begin).wakeup_latency(id,\$l)" >> "$1/reqdemo/req_end/trigger" 2> /dev/null &&
	tail -n 3 "$2/error_log" | grep -q "error: Param type doesn'\''t match synthetic event field type$" &&
	[ "$(cat "$1/reqdemo/req_end/trigger" | head -n 1)" = "# Available triggers:" ]' _ "$E" "$D"
check "onmatch().trace(): the end trigger's readback, as the kernel prints it" bash -c '
	echo "hist:keys=lat.log2" >> "$1/synthetic/wakeup_latency/trigger" &&
	echo 1 > "$1/synthetic/wakeup_latency/enable" &&
	echo "$END" >> "$1/reqdemo/req_end/trigger" &&
	[ "$(cat "$1/reqdemo/req_end/trigger")" = "hist:keys=id:vals=hitcount:wakeup_lat=common_timestamp.usecs-\$ts0:sort=hitcount:size=2048:clock=global:onmatch(reqdemo.req_begin).trace(wakeup_latency,\$wakeup_lat,id) [active]" ]' _ "$E"
# the synthetic event's records, once a few dozen requests have ended
wait_for bash -c '[ "$(grep -c "wakeup_latency: lat=" "$1/trace")" -ge 30 ]' _ "$D"
grep "wakeup_latency: lat=" "$D/trace" > "$TMP/recs"
check "the synthetic event's records: lat >= the request's sleep (1 ms, 4 ms), an id each" bash -c '
	[ "$(wc -l < "$1")" -ge 30 ] &&
	sed -E "s/.*wakeup_latency: lat=([0-9]+), id=([0-9]+)$/\1 \2/" "$1" | awk "
		NF != 2 { bad = 1 }
		\$2 % 3 == 2 && \$1 < 1000 { bad = 1 }
		\$2 % 3 == 0 && \$1 < 4000 { bad = 1 }
		\$1 > 10000000 { bad = 1 }
		{ seen[\$2]++; if (seen[\$2] > 1) bad = 1; n[\$2 % 3]++ }
		END { exit bad || !n[0] || !n[1] || !n[2] }"' _ "$TMP/recs"
# (the table is live: events come between the reading of the entries and
# that of Hits, so the sums agree only once it is paused; :pause returns
# when no writer adds to it any more)
check "the synthetic event's hist (keys=lat.log2): the 4 ms requests in 2^12 and above" bash -c '
	cat "$1/synthetic/wakeup_latency/hist" > "$2/h" &&
	grep -qx "# trigger info: hist:keys=lat.log2:vals=hitcount:sort=hitcount:size=2048 \[active\]" "$2/h" &&
	echo "hist:keys=lat.log2:pause" >> "$1/synthetic/wakeup_latency/trigger" &&
	cat "$1/synthetic/wakeup_latency/hist" > "$2/p" && sleep 0.1 &&
	cat "$1/synthetic/wakeup_latency/hist" > "$2/p2" && same "$2/p2" "$2/p" &&
	grep -qx "# trigger info: hist:keys=lat.log2:vals=hitcount:sort=hitcount:size=2048 \[paused\]" "$2/p" &&
	awk "/^{ lat: ~ 2\\^/ { b = \$4 + 0; sub(/^2\\^/, \"\", \$4); if (\$4 + 0 >= 12) slow += \$7; all += \$7 }
	     /Hits:/ { hits = \$2 }
	     END { exit !(slow > 0 && all == hits && hits >= 30) }" "$2/p" &&
	echo "hist:keys=lat.log2:cont" >> "$1/synthetic/wakeup_latency/trigger"' _ "$E" "$TMP"
check "utrace trigger -p and utrace hist -p: the same as the files, the synthetic event by name" bash -c '
	# (not cmp -s: it would trust the size 0 that the mount shows)
	[ "$("$0" trigger -p "$1" reqdemo:req_end)" = "$(cat "$2/reqdemo/req_end/trigger")" ] &&
	[ "$("$0" trigger -p "$1" synthetic:wakeup_latency)" = "$(cat "$2/synthetic/wakeup_latency/trigger")" ] &&
	"$0" hist -p "$1" synthetic:wakeup_latency > "$3/c" &&
	grep -q "^# trigger info: hist:keys=lat.log2:" "$3/c"' "$UTRACE" "$P" "$E" "$TMP"
check "in use: removing the event, or the trigger whose variable is read, is EBUSY" bash -c '
	! echo "!wakeup_latency" >> "$1/synthetic_events" 2> "$3/e" && grep -q "busy" "$3/e" &&
	! { : > "$1/synthetic_events"; } 2> /dev/null &&
	! echo "!$BEGIN" >> "$2/reqdemo/req_begin/trigger" 2> "$3/e" && grep -q "busy" "$3/e"' _ "$D" "$E" "$TMP"
check "once its users are gone the event goes, with its directory" bash -c '
	echo "!$END" >> "$2/reqdemo/req_end/trigger" && echo "!$BEGIN" >> "$2/reqdemo/req_begin/trigger" &&
	echo "!hist:keys=lat.log2" >> "$2/synthetic/wakeup_latency/trigger" &&
	echo 0 > "$2/synthetic/wakeup_latency/enable" &&
	echo "!wakeup_latency" >> "$1/synthetic_events" && [ ! -s "$1/synthetic_events" ] &&
	wait_for test ! -e "$2/synthetic/wakeup_latency"' _ "$D" "$E"
check "plain common_timestamp (ns) and the .SYNTH(...) form of the action, read back as the kernel's" bash -c '
	echo "lat_ns u64 lat; int id" >> "$1/synthetic_events" &&
	echo "hist:keys=id:t=common_timestamp" >> "$2/reqdemo/req_begin/trigger" &&
	echo "hist:keys=id:l=common_timestamp-\$t:onmatch(reqdemo.req_begin).lat_ns(\$l,id)" >> "$2/reqdemo/req_end/trigger" &&
	[ "$(cat "$2/reqdemo/req_begin/trigger")" = "hist:keys=id:vals=hitcount:t=common_timestamp:sort=hitcount:size=2048:clock=global [active]" ] &&
	[ "$(cat "$2/reqdemo/req_end/trigger")" = "hist:keys=id:vals=hitcount:l=common_timestamp-\$t:sort=hitcount:size=2048:clock=global:onmatch(reqdemo.req_begin).lat_ns(\$l,id) [active]" ] &&
	echo "hist:keys=lat.buckets=1000000" >> "$2/synthetic/lat_ns/trigger" &&
	wait_for grep -q "^{ lat: ~ 4000000-4999999 } hitcount: " "$2/synthetic/lat_ns/hist" &&
	echo "!hist:keys=id:l=common_timestamp-\$t:onmatch(reqdemo.req_begin).lat_ns(\$l,id)" >> "$2/reqdemo/req_end/trigger" &&
	echo "!hist:keys=id:t=common_timestamp" >> "$2/reqdemo/req_begin/trigger" &&
	echo "!hist:keys=lat.buckets=1000000" >> "$2/synthetic/lat_ns/trigger" &&
	echo "!lat_ns" >> "$1/synthetic_events" && [ ! -s "$1/synthetic_events" ]' _ "$D" "$E"
check "an action that generates its own event again: four levels deep, then dropped (no crash)" bash -c '
	echo "loop u64 n; int id" >> "$1/synthetic_events" &&
	echo "hist:keys=id:onmatch(reqdemo.req_begin).loop(common_timestamp,id)" >> "$2/reqdemo/req_end/trigger" &&
	echo "hist:keys=id:w=n:onmatch(synthetic.loop).loop(\$w,id)" >> "$2/synthetic/loop/trigger" &&
	echo 1 > "$2/synthetic/loop/enable" &&
	wait_for bash -c "[ \$(grep -c \" loop: n=\" \"\$0/trace\") -ge 40 ]" "$1" &&
	kill -0 "$3" &&
	grep " loop: n=" "$1/trace" | sed -E "s/.*loop: n=[0-9]+, id=([0-9]+)$/\1/" | sort -n | uniq -c |
		awk "{ if (\$1 > 5) bad = 1 } END { exit bad }" &&
	echo 0 > "$2/synthetic/loop/enable" &&
	echo "!hist:keys=id:w=n:onmatch(synthetic.loop).loop(\$w,id)" >> "$2/synthetic/loop/trigger" &&
	echo "!hist:keys=id:onmatch(reqdemo.req_begin).loop(common_timestamp,id)" >> "$2/reqdemo/req_end/trigger" &&
	echo "!loop" >> "$1/synthetic_events"' _ "$D" "$E" "$P"
kill "$P"
wait "$P" 2> /dev/null
check "the demo wrote nothing on its stderr" bash -c '[ ! -s "$1" ] || { cp "$1" "$2"; false; }' _ "$TMP/demo.err" "$TMP/err"
fusermount3 -u "$MNT" 2> /dev/null
done_testing
