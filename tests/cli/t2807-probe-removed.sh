#!/usr/bin/env bash
# Issue 28 item 7: after `utrace probe -p P -d GRP/EV`, the records the
# probe left in the process's buffer are still read: `utrace show -p P`
# and `utrace record -p P` + `utrace script` failed with "no FORMAT for
# event id 3".  The process keeps a removed event's format (the kernel
# clears its buffers instead); an event defined again under the name with
# other arguments gets a new id, so the old records keep their format.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" "$PROG" 2 "$TMP/go" > out.txt 2> prog-err.txt &
P=$!
trap 'kill $P 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$P" prog-err.txt > "$TMP/err" 2>&1

"$UTRACE" probe -p "$P" 'p:grp/add add a=%di:s32' 2> "$TMP/err" &&
	"$UTRACE" enable -p "$P" grp:add 2>> "$TMP/err"
touch go
check "the probe records add()'s calls" wait_for bash -c \
	'[ "$("$UTRACE" show -p '"$P"' 2> /dev/null | grep -c " add: ")" = 2 ]'
"$UTRACE" disable -p "$P" grp:add 2> "$TMP/err"
"$UTRACE" probe -p "$P" -d grp/add 2>> "$TMP/err"
check "the probe is removed" bash -c '[ -z "$("$UTRACE" probe -p '"$P"' -l)" ]'

"$UTRACE" show -p "$P" > show.txt 2> "$TMP/err"
check "utrace show reads its records, with their format (status 0)" bash -c '
	[ $1 = 0 ] && [ ! -s "$2/err" ] &&
	grep -q " add: (0x[0-9a-f]*) a=0\$" show.txt && grep -q " add: (0x[0-9a-f]*) a=1\$" show.txt' \
	_ $? "$TMP"
"$UTRACE" record -p "$P" -o rec.dat --duration 0.3 > /dev/null 2> rec-err.txt
"$UTRACE" script -i rec.dat > script.txt 2> "$TMP/err"
check "utrace record -p copies them with their format, utrace script reads them" bash -c '
	[ $1 = 0 ] && [ ! -s "$2/err" ] && [ "$(grep -c " add: " script.txt)" = 2 ] &&
	grep -q " add: (0x[0-9a-f]*) a=1\$" script.txt' _ $? "$TMP"

# the same name again, other arguments: a new id; the old records keep
# theirs, and the new event reads its own format
"$UTRACE" probe -p "$P" 'p:grp/add add b=%si:u8' 2> "$TMP/err"
"$UTRACE" show -p "$P" > show2.txt 2> "$TMP/err"
check "defined again with other arguments: the old records read as before" bash -c '
	[ $1 = 0 ] && [ ! -s "$2/err" ] && grep -q " add: (0x[0-9a-f]*) a=1\$" show2.txt &&
	! grep -q "b=" show2.txt &&
	"$UTRACE" list -p '"$P"' | grep -qx "grp:add" &&
	"$UTRACE" list -p '"$P"' --format grp:add | grep -q "field:u8 b;"' _ $? "$TMP"

done_testing
