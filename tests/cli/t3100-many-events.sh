#!/usr/bin/env bash
# Issue 33 item 4: a program with 5,000 events starts in instructions linear
# in its events (the registry's lookups are hash tables; an event going at
# exit no longer walks every event), and `utrace list`, `ps`, `record -p`
# and the mount work on it with nothing on its stderr (the formats a
# recorder gets on attach wait by id and are written as it reads them,
# instead of 5,000 messages filling the queue).  The program is generated here
# (many-events-gen.sh): 5 units of 1,000 events, linked as one object; the
# same main with the first unit only has 1,000.  UTRACE_TEST_LARGE=1 adds
# 50,000 events (50 units; minutes of compiling).
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace loaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"

LIBDIR=$UTRACE_BUILD/lib
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export UTRACE_RUNTIME_DIR=$TMP/run
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
CC=${CC:-cc}
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC)"
CFLAGS=(-std=gnu17 -O0 -I "$UTRACE_SRC/include" -I "$UTRACE_SRC/include/utrace/compat")

# build N-PER-UNIT UNITS DIR: DIR/many-1 (the first unit) and DIR/many-all
build() {
	mkdir -p "$3" && "$UTRACE_SRC/tests/cli/many-events-gen.sh" "$1" "$2" "$3" || return 1
	for ((u = 0; u < $2; u++)); do
		nice $CC "${CFLAGS[@]}" -I "$3" -c "$3/many-$u.c" -o "$3/many-$u.o" || return 1
	done
	$CC "${CFLAGS[@]}" -DUNITS=1 "$3/many-main.c" "$3/many-0.o" -L "$LIBDIR" -lutrace \
		-o "$3/many-1" &&
	$CC "${CFLAGS[@]}" "$3/many-main.c" "$3"/many-*.o -L "$LIBDIR" -lutrace -o "$3/many-all"
}
check "a program of 5 x 1,000 generated events builds" build 1000 5 "$TMP/g" 2> "$TMP/err"
[ -x "$TMP/g/many-all" ] || { done_testing; exit; }
G=$TMP/g

check "5,000 events register, none on the program's stderr" bash -c '
	UTRACE_EVENTS="many0:m0_ev0,many4:m4_ev999" UTRACE_PRINT="$1/print" "$0" > /dev/null 2> "$1/run.err" &&
	[ ! -s "$1/run.err" ] && [ "$(grep -c ": m[04]_ev" "$1/print")" = 2 ]' "$G/many-all" "$TMP"

# Recorded from its start (UTRACE_RECORD): the 5,000 formats go as the
# events register, those the socket cannot take wait by id.
check "record -- the program: its events and all 5,000 formats in the file" bash -c '
	"$0" record -e "many4:m4_ev999" -o "$2/start.dat" -- "$1" > /dev/null 2> "$2/rec0" &&
	! grep -q "missed\|dropped" "$2/rec0" && grep -q "1 events written, 0 lost" "$2/rec0" &&
	[ "$(grep -a -o "name: m[0-4]_ev[0-9]*" "$2/start.dat" | sort -u | wc -l)" = 5000 ]' \
	"$UTRACE" "$G/many-all" "$TMP"

# Instructions (callgrind: repeatable on a loaded machine) of the whole
# run, from the loader to exit: 5,000 events cost about 5 times 1,000
# (the quadratic registry cost 25 times: 2.4 G instructions for 5,000).
# Without valgrind, the CPU time of the run, bounded far above the linear
# registry's (0.05 s) and below the quadratic one's (0.7 s and more).
irefs() {
	valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -nE 's/.*refs: +([0-9,]+).*/\1/p' | tr -d ,
}
i1= i5=
if command -v valgrind > /dev/null; then
	i1=$(irefs "$G/many-1")
	i5=$(irefs "$G/many-all")
	# (valgrind 3.19 cannot read clang 14's DWARF 5: no count, the CPU bound)
	[ -n "$i1" ] && [ -n "$i5" ] || echo "# valgrind gave no count for these programs: the CPU time instead"
fi
if [ -n "$i1" ] && [ -n "$i5" ]; then
	echo "# instructions: 1,000 events $i1, 5,000 events $i5"
	check "registration is linear: 5,000 events < 8 x the instructions of 1,000 (quadratic: 25 x)" \
		test -n "$i1" -a -n "$i5" -a "$((i5 * 10))" -lt "$((i1 * 80))"
else
	cpu=$( { TIMEFORMAT='%U %S'; time "$G/many-all" > /dev/null 2>&1; } 2>&1 | awk '{ print ($1 + $2) * 1000 }')
	echo "# CPU of a run with 5,000 events: ${cpu%.*} ms"
	check "registration is linear: 5,000 events start and exit in < 400 ms of CPU" \
		test "${cpu%.*}" -lt 400
fi

# One that runs (its rounds on stdout, every 10 ms): list, ps, record -p.
"$G/many-all" 300 > "$TMP/rounds" 2> "$TMP/prog.err" & P=$!
trap 'kill $P 2>/dev/null; rm -rf "$TMP"' EXIT
wait_traceable $P "$TMP/prog.err"
check "list -p shows its 5,000 events" bash -c '
	[ "$("$0" list -p $1 | grep -c "^many[0-4]:m[0-4]_ev[0-9]*$")" = 5000 ]' "$UTRACE" $P
check "ps shows 5,000 events" bash -c '"$0" ps | grep -qE "^ *$1 many-all +5000 "' "$UTRACE" $P
on() { "$UTRACE" ps | grep -qE "^ *$1 many-all +5000 +$2 "; }
rounds() { wc -l < "$1"; }
export -f on rounds
check "record -p on it: its events are recorded, every format arrives, nothing missed" bash -c '
	"$0" record -p "$1" -e "many0:m0_ev0,many4:m4_ev999" -o "$2/att.dat" 2> "$2/rec" & r=$!
	wait_for on "$1" 2 && c=$(rounds "$2/rounds") && wait_for has_lines "$2/rounds" $((c + 5))
	kill -INT $r; wait $r || exit 1
	cp "$2/rec" "$2/err"
	! grep -q "missed\|dropped\|does not answer" "$2/rec" &&
	grep -qE "pid $1 \(many-all\): [1-9][0-9]* events, 0 lost" "$2/rec" &&
	"$0" script -i "$2/att.dat" > "$2/att.txt" &&
	grep -q " m0_ev0: v=" "$2/att.txt" && grep -q " m4_ev999: v=" "$2/att.txt" &&
	wait_for on "$1" 0' "$UTRACE" $P "$TMP"
# (the file keeps each format's text, "name: EVENT" among it)
check "record -p: the file has all 5,000 formats" bash -c '
	[ "$(grep -a -o "name: m[0-4]_ev[0-9]*" "$0" | sort -u | wc -l)" = 5000 ]' "$TMP/att.dat"
# The mount (FUSE) of such a process: its 5,000 events, a format, enable.
M=$TMP/mnt
mkdir -p "$M"
trap 'kill $P 2>/dev/null; fusermount3 -u "$M" 2>/dev/null; rm -rf "$TMP"' EXIT
if [ -c /dev/fuse ] && command -v fusermount3 > /dev/null &&
   "$UTRACE" mount "$M" 2> "$TMP/mount.err"; then
	check "the mount: 5,000 events in available_events, their formats, enable" bash -c '
		[ "$(wc -l < "$0/available_events")" = 5000 ] &&
		[ "$(ls "$0/events/many3" | grep -c "^m3_ev")" = 1000 ] &&
		grep -q "^name: m3_ev777$" "$0/events/many3/m3_ev777/format" &&
		echo 1 > "$0/events/many2/m2_ev5/enable" &&
		[ "$(cat "$0/events/many2/m2_ev5/enable")" = 1 ] &&
		echo 0 > "$0/events/many2/m2_ev5/enable"' "$M/$P"
	fusermount3 -u "$M"
else
	echo "# no mount here (FUSE): $(head -n 1 "$TMP/mount.err" 2>/dev/null)"
fi
check "nothing on the program's stderr" test ! -s "$TMP/prog.err"
[ -s "$TMP/prog.err" ] && sed 's/^/# /' "$TMP/prog.err" | head -n 5
kill $P 2>/dev/null
wait $P 2>/dev/null

if [ "${UTRACE_TEST_LARGE:-}" = 1 ]; then
	check "50 x 1,000 events build" build 1000 50 "$TMP/g50" 2> "$TMP/err"
	check "50,000 events: register, list -p shows them all, nothing on stderr" bash -c '
		"$0" 300 > /dev/null 2> "$1/p50.err" & p=$!
		wait_for traceable $p || exit 1
		n=$("$2" list -p $p | grep -c "^many[0-9]*:m[0-9]*_ev[0-9]*$")
		"$2" record -p $p -e "many49:m49_ev999" -o "$1/r50.dat" --duration 1 2> "$1/r50.err"
		kill $p; wait $p
		echo "# $n events listed; recorder: $(tail -n 1 "$1/r50.err")"
		[ "$n" = 50000 ] && [ ! -s "$1/p50.err" ] && ! grep -q "missed\|dropped" "$1/r50.err"' \
		"$TMP/g50/many-all" "$UTRACE" "$TMP"
else
	echo "# 50,000 events: UTRACE_TEST_LARGE=1 (minutes of compiling)"
fi
done_testing
