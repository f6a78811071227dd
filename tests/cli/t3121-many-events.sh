#!/usr/bin/env bash
# Issue 30 item 3: no fixed number of probe events in a process (there
# were 256 slots: the 257th definition was refused with "Too many probe
# events").  1000 events on a running program's functions, all placed,
# all hit, all removed, the program's results right throughout.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probescale-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
cp "$PROG" prog
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog 0 2 "$TMP/stop" > run.txt 2> prog-err.txt &
PID=$!
trap 'touch "$TMP/stop"; kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1
# 1000 events over the five functions' entries and return probes
FUNCS=(epi_pop rip_ret shared_ret jcc_ret call_entry)
DEFS=()
for i in $(seq 0 999); do
	k=$((i % 5))
	if [ $((i / 5 % 2)) = 0 ]; then
		DEFS+=("p:many/e$i ${FUNCS[$k]}")
	else
		DEFS+=("r:many/e$i ${FUNCS[$k]}")
	fi
done
check "1000 definitions taken (the 257th was refused)" bash -c '
	"$UTRACE" probe -p "$1" "${@:2}" 2> "$TMP/err" &&
	[ "$("$UTRACE" probe -p "$1" -l | grep -c "^[pr]:many/")" = 1000 ]' _ "$PID" "${DEFS[@]}"
check "all on at once" "$UTRACE" enable -p "$PID" 'many:*'
"$UTRACE" probe -p "$PID" -l -v > lv.txt 2> "$TMP/err"
check "every site placed" bash -c '
	n=$(sed -n "s/^# sites: [0-9]* of \([0-9]*\) placed.*/\1/p" lv.txt)
	[ "$n" -ge 1000 ] && ! grep -q "not placed" lv.txt'
hit_all() {
	"$UTRACE" probe -p "$1" --profile > prof.txt 2> "$TMP/err" &&
	[ "$(awk '$2 ~ /^e[0-9]+$/ && $3 > 0' prof.txt | wc -l)" = 1000 ]
}
check "every event hit" wait_for hit_all "$PID"
check "all off at once" "$UTRACE" disable -p "$PID" 'many:*'
check "all removed" bash -c '
	"$UTRACE" probe -p "$1" -d "many/" 2> "$TMP/err" &&
	[ "$("$UTRACE" probe -p "$1" -l | grep -c "^[pr]:many/")" = 0 ]' _ "$PID"
# 500 events on 500 distinct libc functions (each definition resolved in
# libc's symbol table, loaded once and kept; the functions utrace's own
# work calls are skipped by the engine, those that jump or fork are left
# out: their probes are right but the program would leave its loop)
LIBC=$(awk '$NF ~ /\/libc\.so\.6$/ { print $NF; exit }' "/proc/$PID/maps")
mapfile -t LDEFS < <(nm -D --defined-only "$LIBC" 2> /dev/null |
	awk '$2 == "T" || $2 == "W" { sub(/@.*/, "", $3); print $3 }' | sort -u |
	grep -v '^_\|jmp\|exit\|fork\|clone\|context$\|^memcpy$\|^memmove$\|^mempcpy$' |
	head -500 | awk '{ printf "p:libc/f%d libc.so.6:%s\n", NR, $1 }')
check "500 definitions on 500 libc functions taken" bash -c '
	"$UTRACE" probe -p "$1" "${@:2}" 2> "$TMP/err" &&
	[ "$("$UTRACE" probe -p "$1" -l | grep -c "^p:libc/")" = 500 ]' _ "$PID" "${LDEFS[@]}"
check "... placed, and off again" bash -c '
	"$UTRACE" enable -p "$1" "libc:*" && "$UTRACE" probe -p "$1" -l -v > lv2.txt &&
	n=$(sed -n "s/^# sites: [0-9]* of \([0-9]*\) placed.*/\1/p" lv2.txt) && [ "$n" = 500 ] &&
	"$UTRACE" disable -p "$1" "libc:*" && "$UTRACE" probe -p "$1" -d "libc/" &&
	[ "$("$UTRACE" probe -p "$1" -l | grep -c "^p:libc/")" = 0 ]' _ "$PID" 2> "$TMP/err"
touch "$TMP/stop"
wait "$PID"
rc=$?
check "the program's results were right throughout" \
	bash -c '[ $1 = 0 ] && grep -q " bad 0$" run.txt' _ "$rc"
done_testing
