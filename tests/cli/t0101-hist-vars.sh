#!/usr/bin/env bash
# Issue 28 item 1: what histogram.rst and ftracetest do with variables, as
# a user would, live (the mount's trigger files in req-demo) and offline
# (utrace hist -i on a recording of the same program):
#  - "the 10 slowest requests with their key" in one recipe: a string
#    variable (p=path) on the begin, onmatch() passing it with the latency
#    to a synthetic event with a dynamic string field (char path[]), whose
#    own hist is sorted by latency;
#  - numeric literals and expressions (x=123, 16-8-4-2, 4*3/2*2, ...) and
#    their errors with the kernel's carets, ftracetest's
#    trigger-hist-expressions.tc cases;
#  - vals=hitcount.percent and .graph beside .percent, with nohitcount.
. "$(dirname "$0")/lib.sh"

SYNTH='req_latency u64 lat; char path[]'
BEGIN='hist:keys=id:ts0=common_timestamp.usecs:p=path'
END='hist:keys=id:lat=common_timestamp.usecs-$ts0:onmatch(reqdemo.req_begin).req_latency($lat,$p)'
TOP='hist:keys=lat,path:sort=lat.descending'
R="$TMP/r.dat"
export SYNTH BEGIN END TOP UTRACE R TMP
export -f same

# ---- offline: a recording of 20 rounds (/fast, /medium 1 ms, /slow 4 ms)
mkdir -m 700 "$TMP/rec-run"
UTRACE_RUNTIME_DIR="$TMP/rec-run" "$UTRACE" record -o "$R" -e 'reqdemo:*' -- \
	"$UTRACE_BUILD/tests/req-demo" 20 > /dev/null 2> "$TMP/rec.err" ||
	{ cat "$TMP/rec.err"; echo "not ok - cannot record"; exit 1; }

# The table of "hist:keys=lat,path:sort=lat.descending" in file $1 is
# right: rows in descending latency, the top 10 with a path each, and each
# path with its latency (the string variable joined its own request): a
# /slow request sleeps 4 ms, a /medium one 1 ms, whatever the load.
top10() {
	grep '^{' "$1" | sed -E 's/^\{ lat: +([0-9]+), path: ([^ ]+) +\} hitcount: +[0-9]+$/\1 \2/' \
		> "$1.rows" &&
	[ "$(head -n 10 "$1.rows" | grep -cE '^[0-9]+ /(fast|medium|slow)$')" = 10 ] &&
	sort -s -k1,1nr "$1.rows" | cmp -s - "$1.rows" &&
	awk '$2 == "/slow" && $1 < 4000 { exit 1 } $2 == "/medium" && $1 < 1000 { exit 1 }' "$1.rows" &&
	grep -q ' /slow$' "$1.rows" && grep -q ' /medium$' "$1.rows" && grep -q ' /fast$' "$1.rows"
}
export -f top10

"$UTRACE" hist -i "$TMP/r.dat" -s "$SYNTH" reqdemo:req_begin "$BEGIN" reqdemo:req_end "$END" \
	synthetic:req_latency "$TOP" > "$TMP/off" 2> "$TMP/err"
check "offline: the 10 slowest requests with their path (char path[] from p=path)" bash -c '
	sed -n "/trigger info: hist:keys=lat,path/,\$p" "$TMP/off" > "$TMP/off.top" &&
	top10 "$TMP/off.top" && grep -q "^    Hits: 60$" "$TMP/off.top"'
check "offline: the string variable in the trigger info (p=path)" \
	grep -qF "# trigger info: hist:keys=id:vals=hitcount:ts0=common_timestamp.usecs,p=path:sort=hitcount:size=2048:clock=global [active]" "$TMP/off"
check "offline: a char[16] field takes the string too" bash -c '
	"$UTRACE" hist -i "$R" -s "req_latency u64 lat; char path[16]" reqdemo:req_begin "$BEGIN" \
		reqdemo:req_end "$END" synthetic:req_latency "hist:keys=path:vals=lat:sort=path" > "$TMP/o16" &&
	grep -qE "^\{ path: /slow +\} hitcount: +20  lat: +[0-9]{5,}$" "$TMP/o16"'
check "offline: a string is no operand (the kernel's error and caret)" bash -c '
	! "$UTRACE" hist -i "$R" reqdemo:req_begin "hist:keys=id:x=path+1" > /dev/null 2> "$TMP/e" &&
	tail -n 3 "$TMP/e" > "$TMP/e3" && printf "%s\n" \
"hist:reqdemo:req_begin: error: String type can not be an operand in expression" \
"  Command: hist:keys=id:x=path+1" \
"                          ^" > "$TMP/w" && same "$TMP/e3" "$TMP/w"'

# ftracetest's trigger-hist-expressions.tc: the value read back after x=
for e in "123 123" "16-8-4-2 2" "64/8/4/2 1" "16-8+4+2 14" "4*3/2*2 12" "4+3*2-2 8" \
	"4+6/2-2 5" "10/3 4"; do
	set -- $e
	check "offline: x=$1 reads back x=$2" bash -c '
		"$UTRACE" hist -i "$R" reqdemo:req_begin "hist:keys=id:x=$0" > "$TMP/x" &&
		[ "$(grep -o "x=[[:digit:]]*" "$TMP/x")" = "x=$1" ]' "$1" "$2"
done
# the errors, with the caret where ftracetest's ^ is
for e in 'x=32+^10*3/20-4|Too many subexpressions (3 max)' \
	 'x=^1+2+3+4+5|Too many subexpressions (3 max)' \
	 'x=-(^1)+2|Unary minus not supported in sub-expressions' \
	 'x=3/^0|Division by zero'; do
	cmd=${e%%|*} msg=${e#*|}
	rest=${cmd#*^}
	pos=$(( ${#cmd} - ${#rest} - 1 + 13 ))     # after "hist:keys=id:"
	check "offline: ${cmd/^/} is refused: $msg" bash -c '
		t="hist:keys=id:${0/^/}"
		! "$UTRACE" hist -i "$R" reqdemo:req_begin "$t" > /dev/null 2> "$TMP/e" &&
		tail -n 3 "$TMP/e" > "$TMP/e3" &&
		printf "hist:reqdemo:req_begin: error: %s\n  Command: %s\n%*s^\n" "$1" "$t" \
			$((11 + $2)) "" > "$TMP/w" && same "$TMP/e3" "$TMP/w"' "$cmd" "$msg" "$pos"
done

check "offline: vals=hitcount.percent (the raw hitcount, then its percentage)" bash -c '
	"$UTRACE" hist -i "$R" reqdemo:req_begin "hist:keys=path:vals=hitcount.percent:sort=path" > "$TMP/p" &&
	grep -qF "# trigger info: hist:keys=path:vals=hitcount,hitcount.percent:sort=path:size=2048 [active]" "$TMP/p" &&
	grep -qE "^\{ path: /fast +\} hitcount: +20  hitcount \(%\): +32\.78$" "$TMP/p"'
check "offline: .graph beside .percent, nohitcount (histogram.rst's example)" bash -c '
	"$UTRACE" hist -i "$R" reqdemo:req_begin \
		"hist:keys=path:vals=hitcount.percent,hitcount.graph:sort=path:nohitcount" > "$TMP/g" &&
	grep -qF "# trigger info: hist:keys=path:vals=hitcount.percent,hitcount.graph:sort=path:size=2048:nohitcount [active]" "$TMP/g" &&
	grep -qxF "{ path: /fast                                              }  hitcount (%):  32.78  hitcount: ####################" "$TMP/g" &&
	grep -qxF "{ path: /lost                                              }  hitcount (%):   1.63  hitcount: #                   " "$TMP/g"'

# ---- live: the same recipe in a running req-demo, through the mount
mount_demo "$UTRACE_BUILD/tests/req-demo" loop
wait_for test -e "$D/synthetic_events" || { echo "not ok - no synthetic_events"; exit 1; }
check "live: echo 'NAME u64 lat; char path[]' >> synthetic_events: the kernel's readback and format" bash -c '
	echo "$SYNTH" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "req_latency\tu64 lat; char[] path")" ] &&
	wait_for test -e "$1/events/synthetic/req_latency/format" &&
	grep -qxF "	field:__data_loc char[] path;	offset:16;	size:8;	signed:1;" "$1/events/synthetic/req_latency/format" &&
	grep -qxF "print fmt: \"lat=%llu, path=%s\", REC->lat, __get_str(path)" "$1/events/synthetic/req_latency/format"' _ "$D"
# ftracetest's trigger-synthetic_event_syntax_errors.tc: each refused,
# the kernel's message in error_log with the caret under the ^
for e in 'myevent ^chr arg|Invalid type' 'myevent ^unsigned arg|Incomplete type' \
	 'myevent char ^str]; int v|Illegal name' '^mye-vent char str[]|Illegal name' \
	 'myevent char ^st-r[]|Illegal name' 'myevent char str;^[]|Invalid field' \
	 'myevent char str; ^int|Invalid field' 'myevent char ^str[; int v|Invalid array specification' \
	 'myevent char ^str[kdjdk]|Invalid array specification' \
	 'myevent char ^str[257]|Invalid array specification' \
	 '^mye;vent char str[]|Command must be of the form: <name> field[;field] ...' \
	 '^myevent ; char str[]|Command must be of the form: <name> field[;field] ...' \
	 '^; char str[]|Command must be of the form: <name> field[;field] ...' \
	 '^myevent|Command must be of the form: <name> field[;field] ...' \
	 'dyn:^s:junk/myevent char str[|Command must be of the form: s or -:[synthetic/]<name> field[;field] ...'; do
	cmd=${e%%|*} msg=${e#*|} file=synthetic_events
	case $cmd in dyn:*) cmd=${cmd#dyn:} file=dynamic_events ;; esac
	rest=${cmd#*^}
	check "live: '${cmd/^/}' >> $file: $msg, the caret at ${#cmd}-${#rest}-1" bash -c '
		c=${0/^/}
		echo > "$4/error_log" && ! printf "%s" "$c" >> "$4/$1" 2> /dev/null &&
		tail -n 3 "$4/error_log" | sed -E "s/^\[ *[0-9]+\.[0-9]+\] //" > "$TMP/e3" &&
		printf "synthetic_events: error: %s\n  Command: %s\n%*s^\n" "$2" "$c" $((11 + $3)) "" \
			> "$TMP/w" && same "$TMP/e3" "$TMP/w"' "$cmd" "$file" "$msg" \
		$(( ${#cmd} - ${#rest} - 1 )) "$D"
done
check "live: the string variable, set and read back as the kernel prints it" bash -c '
	echo "$BEGIN" >> "$1/reqdemo/req_begin/trigger" &&
	[ "$(cat "$1/reqdemo/req_begin/trigger")" = "hist:keys=id:vals=hitcount:ts0=common_timestamp.usecs,p=path:sort=hitcount:size=2048:clock=global [active]" ] &&
	echo "$END" >> "$1/reqdemo/req_end/trigger" &&
	echo "$TOP" >> "$1/synthetic/req_latency/trigger" && echo 1 > "$1/synthetic/req_latency/enable"' _ "$E"
wait_for bash -c '[ "$(grep -c "path: /slow" "$1/synthetic/req_latency/hist")" -ge 10 ] &&
	grep -q "path: /medium" "$1/synthetic/req_latency/hist" &&
	grep -q "path: /fast" "$1/synthetic/req_latency/hist"' _ "$E"
cp "$E/synthetic/req_latency/hist" "$TMP/live"
check "live: the 10 slowest requests with their path" top10 "$TMP/live"
check "live: the synthetic records carry the path (trace)" bash -c '
	grep -qE " req_latency: lat=[0-9]{4,}, path=/slow$" "$1/trace" &&
	grep -qE " req_latency: lat=[0-9]+, path=/fast$" "$1/trace"' _ "$D"
check "live: x=123 and x=4*3/2*2 read back as numbers (ftracetest's grep)" bash -c '
	echo "hist:keys=id:x=123" > "$1/reqdemo/req_end/trigger" &&
	[ "$(grep -o "x=[[:digit:]]*" "$1/reqdemo/req_end/trigger")" = "x=123" ] &&
	echo "!hist:keys=id:x=123" >> "$1/reqdemo/req_end/trigger" &&
	echo "hist:keys=id:x=4*3/2*2" >> "$1/reqdemo/req_end/trigger" &&
	[ "$(grep -o "x=[[:digit:]]*" "$1/reqdemo/req_end/trigger")" = "x=12" ]' _ "$E"
check "live: vals=hitcount.percent,hitcount.graph" bash -c '
	echo "hist:keys=path:vals=hitcount.percent,hitcount.graph:nohitcount" >> "$1/reqdemo/req_begin/trigger" &&
	wait_for grep -qE "^\{ path: /slow +\}  hitcount \(%\): +[0-9]+\.[0-9]{2}  hitcount: #+ *$" "$1/reqdemo/req_begin/hist"' _ "$E"
done_testing
