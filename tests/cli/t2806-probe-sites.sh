#!/usr/bin/env bash
# Issue 28 item 6: one check of a probe's site, the same wherever a
# definition is taken: `utrace probe DEF` without -p (it accepted sites
# inside an instruction, past a function's end and return probes not at
# an entry), `utrace record --probe` (which then ran the command, status
# 0), `utrace probe -p PID` and the mount's uprobe_events.  Each refuses
# with the same error_log message, caret under the place.  The kernel
# checks none of these (it takes them, and the program crashes): shown
# beside it when this runs as root.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
cp "$PROG" prog
P="$TMP/prog"
A=$((16#$(nm prog | awk '$3 == "add" { print $1 }')))
ASIZE=$((16#$(nm -S prog | awk '$4 == "add" { print $2 }')))
# add's first instruction of more than one byte: its offset and length
# (objdump; the build decides the code: -O2 "lea; ret", ASan more)
read -r X1 L1 < <(objdump -d --start-address=$A --stop-address=$((A + ASIZE)) prog 2> /dev/null |
	awk -F'\t' '/^ *[0-9a-f]+:\t/ { n = split($2, b, " ");
		if (n > 1) { sub(/:.*/, "", $1); sub(/^ */, "", $1); print $1, n; exit } }')
[ -n "$L1" ] || skip_all "cannot read add()'s instructions (objdump)"
O1=$((16#$X1 - A))
hex() { printf '0x%x' "$1"; }
IN=$((O1 + 1))          # inside that instruction

# DEFINITION and the message every way of taking it must give
DEFS=("p $P:add+$IN"
      "p $P:$(hex $((A + IN)))"
      "p $P:add+$(hex $((ASIZE + 8)))"
      "r $P:$(hex $((A + ASIZE - 1)))")
MSGS=("Cannot probe: add+$(hex $IN) is not an instruction boundary (the instruction at +$(hex $O1) is $L1 bytes)"
      "Cannot probe: add+$(hex $IN) is not an instruction boundary (the instruction at +$(hex $O1) is $L1 bytes)"
      "add+$(hex $((ASIZE + 8))) is past the end of add ($ASIZE bytes)"
      "Return probe must be at a function's entry (add+$(hex $((ASIZE - 1))) is not)")

# logged WHO DEF MSG FILE: FILE holds the error_log entry of DEF with MSG,
# the caret under the place (word 1), after "WHO: "
logged() {
	printf '%s\n' "$1: trace_uprobe: error: $3" "  Command: $2" "$(printf '%*s^' 13 '')" |
		diff - "$4" >&2
}

for i in "${!DEFS[@]}"; do
	d=${DEFS[$i]} m=${MSGS[$i]}
	"$UTRACE" probe "$d" > out.txt 2> err.txt
	rc=$?
	cp err.txt "$TMP/err"
	check "utrace probe '$d' (no -p): refused" bash -c '[ $1 = 1 ] && [ ! -s out.txt ]' _ $rc
	check "... with the message of every other way" logged "utrace probe" "$d" "$m" err.txt
	rm -f ran
	"$UTRACE" record -o r.dat --probe "$d" -- touch ran > /dev/null 2> err.txt
	rc=$?
	cp err.txt "$TMP/err"
	check "utrace record --probe '$d': refused, the command not run" \
		bash -c '[ $1 = 1 ] && [ ! -e ran ]' _ $rc
	check "... the same message" logged "utrace record: --probe" "$d" "$m" err.txt
done

# the program's own symbols are the process's to find (the command may
# exec another program): refused there by the same check, said by the
# recorder, and the recording fails
"$UTRACE" record -o r2.dat --probe "p add+$IN" -- ./prog 1 > /dev/null 2> err.txt
rc=$?
cp err.txt "$TMP/err"
check "utrace record --probe 'p add+$IN' (the program's): refused in the process, status 1" bash -c '
	[ $1 = 1 ] && grep -qx "utrace record: pid [0-9]* (prog): --probe '\''p add+$3'\'' refused: $2" err.txt' \
	_ $rc "${MSGS[0]}" "$IN"

# a good site everywhere: the entry, and a return probe there
check "add's entry and its return probe are taken" bash -c '
	"$UTRACE" probe "p $1:add" "r $1:$(printf 0x%x '"$A"')" > /dev/null 2> "$2/err"' _ "$P" "$TMP"

# the process (utrace probe -p; the mount takes the same path)
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog 1 "$TMP/never" > /dev/null 2> prog-err.txt &
PID=$!
trap 'kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1
for i in "${!DEFS[@]}"; do
	d=${DEFS[$i]} m=${MSGS[$i]}
	"$UTRACE" probe -p "$PID" "$d" > /dev/null 2> err.txt
	rc=$?
	cp err.txt "$TMP/err"
	check "utrace probe -p PID '$d': refused, the same message" bash -c '
		[ $1 = 1 ] && sed "s/^utrace probe: process [0-9]*: /utrace probe: /" err.txt > e2.txt' _ $rc
	check "... (the process's error_log entry)" logged "utrace probe" "$d" "$m" e2.txt
done

# the mount's uprobe_events: the same refusal, the same error_log entry
if [ -c /dev/fuse ] && command -v fusermount3 > /dev/null; then
	mkdir mnt
	"$UTRACE" mount "$TMP/mnt" 2> mount-err.txt &
	MP=$!
	trap 'kill $PID 2> /dev/null; fusermount3 -u "$TMP/mnt" 2> /dev/null; kill $MP 2> /dev/null; rm -rf "$TMP"' EXIT
	if wait_for test -e "$TMP/mnt/$PID/uprobe_events"; then
		for i in "${!DEFS[@]}"; do
			d=${DEFS[$i]} m=${MSGS[$i]}
			( echo "$d" >> "$TMP/mnt/$PID/uprobe_events" ) 2> /dev/null
			rc=$?
			tail -n 3 "$TMP/mnt/$PID/error_log" | sed 's/^\[[^]]*\] /mount: /' > e3.txt
			check "the mount's uprobe_events refuses '$d' (EINVAL), the same error_log entry" \
				bash -c '[ $1 != 0 ] && [ "$(sed -n 1p e3.txt)" = "mount: trace_uprobe: error: $2" ] &&
					 [ "$(sed -n 2p e3.txt)" = "  Command: $3" ]' _ $rc "$m" "$d"
		done
	else
		n=$((n + 1)); echo "ok $n # SKIP no mount here ($(head -n 1 mount-err.txt))"
	fi
	fusermount3 -u "$TMP/mnt" 2> /dev/null
else
	n=$((n + 1)); echo "ok $n # SKIP no usable FUSE here"
fi

# the kernel's uprobes take all of them (it checks none): the difference
T=/sys/kernel/tracing
if [ "$(id -u)" = 0 ] && [ -w "$T/uprobe_events" ]; then
	G=t2806_$$
	ok=0
	for i in 0 1 3; do
		off=${DEFS[$i]##*:}
		[ "$i" = 0 ] && off=$(hex $((A + IN)))
		echo "${DEFS[$i]%% *}:$G/e$i $P:$off" >> "$T/uprobe_events" 2> /dev/null && ok=$((ok + 1))
		echo "-:$G/e$i" >> "$T/uprobe_events" 2> /dev/null
	done
	check "the kernel's uprobe_events takes these sites unchecked (3 of 3)" test "$ok" = 3
else
	n=$((n + 1)); echo "ok $n # SKIP the kernel's uprobe_events needs root"
fi

done_testing
