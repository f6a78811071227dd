#!/usr/bin/env bash
# The mount's dynamic_events (the kernel's Documentation/trace/
# kprobetrace.rst and histogram.rst): one file for both kinds of dynamic
# events.  Probe definitions written there show in uprobe_events and back;
# "s:[synthetic/]NAME FIELDS" makes a synthetic event, shown in
# synthetic_events and read back with "s:synthetic/" before it; "-:NAME"
# removes either kind; an open with O_TRUNC removes all; errors as the
# files of each kind give them.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
cd "$TMP" || exit 1
cp "$PROG" prog
mount_setup
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog 2 "$TMP/go" > out.txt 2> "$TMP/prog-err" &
pid=$!
pids+=("$pid")
wait_traceable "$pid" "$TMP/prog-err" > "$TMP/err" 2>&1
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$pid"
wait_for test -e "$D/dynamic_events" || { echo "not ok - no dynamic_events"; exit 1; }
export -f same

check "dynamic_events: empty, mode -rw-r-----, not in instances" bash -c '
	[ ! -s "$1/dynamic_events" ] && [ "$(stat -c %A "$1/dynamic_events")" = "-rw-r-----" ] &&
	mkdir "$1/instances/i1" && [ ! -e "$1/instances/i1/dynamic_events" ] &&
	rmdir "$1/instances/i1"' _ "$D"
check "a probe written there is in uprobe_events, and both read it back the same" bash -c '
	echo "p:grp/add add a=%di:s32 b=%si:s32" >> "$1/dynamic_events" &&
	grep -qx "p:grp/add $2:0x[0-9a-f]\{16\} a=%di:s32 b=%si:s32" "$1/uprobe_events" &&
	cat "$1/uprobe_events" > "$3/u" && cat "$1/dynamic_events" > "$3/d" && same "$3/u" "$3/d" &&
	test -e "$1/events/grp/add/format"' _ "$D" "$TMP/prog" "$TMP"
check "s:synthetic/NAME and s:NAME make synthetic events; read back with s:synthetic/" bash -c '
	echo "s:synthetic/lat u64 lat; int id" >> "$1/dynamic_events" &&
	echo "s:other char c" >> "$1/dynamic_events" &&
	echo "third u32 x" >> "$1/synthetic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "lat\tu64 lat; int id\nother\tchar c\nthird\tu32 x")" ] &&
	[ "$(grep "^s:" "$1/dynamic_events")" = "$(printf "s:synthetic/lat\tu64 lat; int id\ns:synthetic/other\tchar c\ns:synthetic/third\tu32 x")" ] &&
	[ "$(grep -c "^p:grp/add " "$1/dynamic_events")" = 1 ] &&
	wait_for test -e "$1/events/synthetic/lat/format"' _ "$D"
check "-:NAME, -:synthetic/NAME and -:GRP/NAME remove the event of either kind" bash -c '
	echo "-:lat" >> "$1/dynamic_events" && echo "-:synthetic/third" >> "$1/dynamic_events" &&
	[ "$(cat "$1/synthetic_events")" = "$(printf "other\tchar c")" ] &&
	echo "-:grp/add" >> "$1/dynamic_events" && [ ! -s "$1/uprobe_events" ] &&
	[ "$(cat "$1/dynamic_events")" = "$(printf "s:synthetic/other\tchar c")" ]' _ "$D"
check "errors: each kind gives its own, nothing half-made" bash -c '
	! echo "s:synthetic/bad u65 x" >> "$1/dynamic_events" 2> "$2/e" && grep -q "Invalid argument" "$2/e" &&
	grep -q "synthetic_events: error: Invalid type" "$1/error_log" &&
	! echo "p:grp/x nosuchsymbol" >> "$1/dynamic_events" 2> /dev/null &&
	! echo "-:nosuch" >> "$1/dynamic_events" 2> /dev/null &&
	[ "$(cat "$1/dynamic_events")" = "$(printf "s:synthetic/other\tchar c")" ]' _ "$D" "$TMP"
check "> dynamic_events removes every dynamic event" bash -c '
	echo "p:grp/add add a=%di:s32" >> "$1/dynamic_events" &&
	[ "$(wc -l < "$1/dynamic_events")" = 2 ] &&
	: > "$1/dynamic_events" && [ ! -s "$1/dynamic_events" ] &&
	[ ! -s "$1/uprobe_events" ] && [ ! -s "$1/synthetic_events" ]' _ "$D"
done_testing
