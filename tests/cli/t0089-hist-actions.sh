#!/usr/bin/env bash
# The rest of histogram.rst's inter-event section (2.2.3) on req-demo's
# requests (req_begin and req_end of the same path; /fast 0 ms, /medium
# 1 ms, /slow 4 ms; every third /fast ends 404): synthetic events in the
# kernel's older syntax (fields apart by white space, no ';') and with a
# char[N] string field fed from the event's own string; variables named
# as SYSTEM.EVENT.$var; onmax($var).save(...), onchange($var).save(...)
# and onmax($var).trace(...), their readback and their lines in `hist`
# ("max:", "changed:" and the saved fields) as the kernel prints them.
. "$(dirname "$0")/lib.sh"
mount_demo "$UTRACE_BUILD/tests/req-demo" loop
# refused TEXT FILE DIR MESSAGE: writing TEXT to FILE fails, and DIR's
# error_log's last entry is "...: error: MESSAGE"
refused() {
	! echo "$1" >> "$2" 2> /dev/null &&
		tail -n 3 "$3/error_log" | head -n 1 | grep -q "error: $4\$"
}
export -f same refused
wait_for test -e "$D/synthetic_events" || { echo "not ok - no synthetic_events"; exit 1; }

check "the older syntax (white space only) and a char[N] field: readback, format" bash -c '
	echo "req_lat  u64 lat int id char path[16]" > "$1/synthetic_events" &&
	echo "other unsigned int a s8 b ; char[8] c" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "req_lat\tu64 lat; int id; char[16] path\nother\tunsigned int a; s8 b; char[8] c")" ] &&
	wait_for test -e "$1/events/synthetic/req_lat/format" &&
	sed -n "9,13p" "$1/events/synthetic/req_lat/format" > "$2/f" &&
	printf "%s\n" "	field:u64 lat;	offset:8;	size:8;	signed:0;" \
"	field:int id;	offset:16;	size:4;	signed:1;" \
"	field:char path[16];	offset:24;	size:16;	signed:1;" "" \
"print fmt: \"lat=%llu, id=%d, path=%s\", REC->lat, REC->id, REC->path" > "$2/want" &&
	same "$2/f" "$2/want"' _ "$D" "$TMP"
check "bad definitions: a lone word, a bad array, char[] (the kernel's messages)" bash -c '
	! echo "bad u64 lat pid_t" >> "$1/synthetic_events" 2> /dev/null &&
	[ "$(tail -n 3 "$1/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //")" = "synthetic_events: error: Invalid field
  Command: bad u64 lat pid_t
                       ^" ] &&
	refused "bad char s[300]" "$1/synthetic_events" "$1" "Invalid array specification" &&
	refused "bad u64 x[4]" "$1/synthetic_events" "$1" "Invalid type" &&
	refused "bad unsigned x" "$1/synthetic_events" "$1" "Incomplete type" &&
	refused "bad unsigned" "$1/synthetic_events" "$1" "Command must be of the form: <name> field\[;field\] \.\.\." &&
	echo "!other" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "req_lat\tu64 lat; int id; char[16] path")" ]' _ "$D"

BEGIN='hist:keys=path:ts0=common_timestamp.usecs'
LAT='hist:keys=path:l=common_timestamp.usecs-$ts0'
END='hist:keys=path:onmatch(reqdemo.req_begin).req_lat(reqdemo.req_end.$l,id,path)'
export BEGIN LAT END
check "a qualified variable (SYSTEM.EVENT.\$var) in an action's parameters; a string parameter" bash -c '
	echo "$BEGIN" >> "$1/reqdemo/req_begin/trigger" &&
	echo "$LAT" >> "$1/reqdemo/req_end/trigger" &&
	echo "$END" >> "$1/reqdemo/req_end/trigger" &&
	[ "$(sed -n 2p "$1/reqdemo/req_end/trigger")" = "hist:keys=path:vals=hitcount:sort=hitcount:size=2048:onmatch(reqdemo.req_begin).req_lat(reqdemo.req_end.\$l,id,path) [active]" ] &&
	refused "hist:keys=path:onmatch(reqdemo.req_begin).req_lat(reqdemo.req_begin.\$l,id,path)" "$1/reqdemo/req_end/trigger" "$2" "Couldn'\''t find variable" &&
	refused "hist:keys=path:onmatch(reqdemo.req_begin).req_lat(reqdemo.req_end.\$l,path,id)" "$1/reqdemo/req_end/trigger" "$2" "Param type doesn'\''t match synthetic event field type"' _ "$E" "$D"
check "the synthetic event's records carry the path; its hist keyed by the char[16]" bash -c '
	echo "hist:keys=path:vals=lat:sort=path" >> "$1/synthetic/req_lat/trigger" &&
	echo 1 > "$1/synthetic/req_lat/enable" &&
	wait_for bash -c "[ \$(grep -c \"req_lat: lat=[0-9]*, id=[0-9]*, path=/slow$\" \"\$0/trace\") -ge 5 ]" "$2" &&
	grep -q "req_lat: lat=[0-9]*, id=[0-9]*, path=/fast$" "$2/trace" &&
	grep -q "req_lat: lat=[0-9]*, id=[0-9]*, path=/medium$" "$2/trace" &&
	cat "$1/synthetic/req_lat/hist" > "$3/h" &&
	grep -E "^\{ path: /fast +\} hitcount: +[0-9]+  lat: +[0-9]+$" "$3/h" > /dev/null &&
	[ "$(grep -c "^{ path: " "$3/h")" = 3 ] &&
	grep "^{ path: /slow" "$3/h" | awk "{ n = \$6; l = \$8 } END { exit !(n > 0 && l >= 4000 * n) }"' _ "$E" "$D" "$TMP"
check "trigger removal: the hist and the synthetic event go" bash -c '
	echo "!$END" >> "$1/reqdemo/req_end/trigger" &&
	echo 0 > "$1/synthetic/req_lat/enable" &&
	echo "!hist:keys=path:vals=lat:sort=path" >> "$1/synthetic/req_lat/trigger" &&
	echo "!req_lat" >> "$2/synthetic_events" && [ ! -s "$2/synthetic_events" ]' _ "$E" "$D"

MAX='hist:keys=path:l=common_timestamp.usecs-$ts0:onmax($l).save(id,status,path)'
export MAX
check "onmax(\$l).save(...): readback; \"max:\" and the saved fields per entry, as the kernel prints them" bash -c '
	echo "!$LAT" >> "$1/reqdemo/req_end/trigger" &&
	echo "$MAX" >> "$1/reqdemo/req_end/trigger" &&
	[ "$(cat "$1/reqdemo/req_end/trigger")" = "hist:keys=path:vals=hitcount:l=common_timestamp.usecs-\$ts0:sort=hitcount:size=2048:clock=global:onmax(\$l).save(id,status,path) [active]" ] &&
	wait_for bash -c "grep -A1 \"^{ path: /slow\" \"\$0/reqdemo/req_end/hist\" | grep -q max:" "$1" &&
	sleep 0.2 && cat "$1/reqdemo/req_end/hist" > "$2/h" &&
	[ "$(grep -c "^{ path: " "$2/h")" = 3 ] &&
	grep -A1 "^{ path: /slow" "$2/h" | tail -n 1 > "$2/l" &&
	grep -Eq "^	max: +[0-9]+  id: +[0-9]+  status: +200  path: /slow {27}$" "$2/l" &&
	awk "{ exit !(\$2 >= 4000 && \$4 % 3 == 0) }" "$2/l" &&
	grep -A1 "^{ path: /medium" "$2/h" | tail -n 1 | awk "{ exit !(\$2 >= 1000 && \$4 % 3 == 2) }" &&
	echo "!$MAX" >> "$1/reqdemo/req_end/trigger"' _ "$E" "$TMP"
CHG='hist:keys=path:st=status:onchange($st).save(id)'
export CHG
check "onchange(\$st).save(id): \"changed:\" with the last status of each path" bash -c '
	echo "$CHG" >> "$1/reqdemo/req_end/trigger" &&
	wait_for bash -c "grep -A1 \"^{ path: /fast\" \"\$0/reqdemo/req_end/hist\" | grep -Eq \"changed: +(200|404)\"" "$1" &&
	cat "$1/reqdemo/req_end/hist" > "$2/h" &&
	grep -A1 "^{ path: /slow" "$2/h" | tail -n 1 | grep -Eq "^	changed: +200  id: +[0-9]+$" &&
	echo "!$CHG" >> "$1/reqdemo/req_end/trigger"' _ "$E" "$TMP"
TR='hist:keys=path:l=common_timestamp.usecs-$ts0:onmax($l).trace(new_max,$l,path)'
export TR
check "onmax(\$l).trace(): a synthetic event at each new maximum only" bash -c '
	echo "new_max u64 lat; char path[16]" >> "$2/synthetic_events" &&
	echo 1 > "$1/synthetic/new_max/enable" &&
	echo "$TR" >> "$1/reqdemo/req_end/trigger" &&
	wait_for grep -q "new_max: lat=[0-9]*, path=/slow" "$2/trace" && sleep 0.3 &&
	grep -o "new_max: lat=[0-9]*, path=/slow" "$2/trace" | sed "s/.*lat=\([0-9]*\).*/\1/" > "$3/m" &&
	sort -n -c "$3/m" && [ "$(sort -u "$3/m" | wc -l)" = "$(wc -l < "$3/m")" ] &&
	[ "$(grep -c "^	max: " "$1/reqdemo/req_end/hist")" = 3 ] &&
	echo "!$TR" >> "$1/reqdemo/req_end/trigger" && echo 0 > "$1/synthetic/new_max/enable" &&
	echo "!new_max" >> "$2/synthetic_events"' _ "$E" "$D" "$TMP"
check "errors: onmax of a field, of an unknown variable, onmatch().save() (the kernel's messages)" bash -c '
	refused "hist:keys=path:onmax(status).save(id)" "$1/reqdemo/req_end/trigger" "$2" "For onmax(x) or onchange(x), x must be a variable" &&
	refused "hist:keys=path:onmax(\$nosuch).save(id)" "$1/reqdemo/req_end/trigger" "$2" "Couldn'\''t find onmax or onchange variable" &&
	refused "hist:keys=path:onmatch(reqdemo.req_begin).save(id)" "$1/reqdemo/req_end/trigger" "$2" "Handler doesn'\''t support action" &&
	refused "hist:keys=path:x=status:onmax(\$x).save()" "$1/reqdemo/req_end/trigger" "$2" "No params found for save()"' _ "$E" "$D"
kill "$P"
wait "$P" 2> /dev/null
check "the demo wrote nothing on its stderr" bash -c '[ ! -s "$1" ] || { cp "$1" "$2"; false; }' _ "$TMP/demo.err" "$TMP/err"
fusermount3 -u "$MNT" 2> /dev/null
done_testing
