#!/usr/bin/env bash
# Issue 30 item 3: globs in a probe definition's SYMBOL ("p:grp/ glob_*",
# "libc.so.6:str*"): one probe on every matching function of the object's
# symbol table (functions of a size only), events named after each
# function or, when the definition names one, that one event for all; an
# empty match refused naming the glob.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/glob-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
cp "$PROG" prog
want_sum=$(./prog 3)

# each matching function is hit, in its own event named as the kernel
# names an event left unnamed (p_SYMBOL_0)
check "a glob, events unnamed: every matching function hit, no other" bash -c '
	"$UTRACE" record -o a.dat --probe "p:grp/ glob_* a=%di:s32" -- ./prog 3 > out.txt 2> "$TMP/err" &&
	[ "$(cat out.txt)" = "$1" ] &&
	grep -q "3 of 3 matching functions probed" "$TMP/err" &&
	"$UTRACE" script -i a.dat > a.txt &&
	for f in glob_alpha glob_beta glob_gamma; do
		for a in 0 1 2; do grep -q " p_${f}_0: (0x[0-9a-f]*) a=$a\$" a.txt || exit 1; done
	done &&
	[ "$(grep -c ": p_" a.txt)" = 9 ] && ! grep -q "other_fn\|glob_data" a.txt' _ "$want_sum"
# a named event: one event, many sites (each hit says its address)
check "a glob, one named event: all its sites in it" bash -c '
	"$UTRACE" record -o b.dat --probe "p:grp/gg glob_* a=%di:s32" -- ./prog 3 > out.txt 2> "$TMP/err" &&
	[ "$(cat out.txt)" = "$1" ] &&
	"$UTRACE" script -i b.dat > b.txt &&
	[ "$(grep -c " gg: (0x[0-9a-f]*) a=[012]\$" b.txt)" = 9 ] &&
	[ "$(sed -n "s/.* gg: (\(0x[0-9a-f]*\)).*/\1/p" b.txt | sort -u | wc -l)" = 3 ]' _ "$want_sum"
# brackets and ?: fnmatch(3)
check "a glob with [...] and ?" bash -c '
	"$UTRACE" record -o c.dat --probe "p:grp/ glob_[ab]?*" -- ./prog 2 > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i c.dat > c.txt &&
	grep -q p_glob_alpha_0 c.txt && grep -q p_glob_beta_0 c.txt && ! grep -q gamma c.txt'
# empty: refused, naming the glob (a data object is not a function)
check "an empty glob refused, naming it" bash -c '
	! "$UTRACE" record -o d.dat --probe "p:grp/ nomatch_*" -- ./prog 2 > /dev/null 2> "$TMP/err" &&
	grep -q "no function of the program matches .nomatch_\*." "$TMP/err"'
check "a data object does not match" bash -c '
	! "$UTRACE" record -o d.dat --probe "p:grp/ glob_data*" -- ./prog 2 > /dev/null 2> "$TMP/err" &&
	grep -q "matches .glob_data\*." "$TMP/err"'
# perf probe's form (-x, record --probe FUNC...): one raw definition
# keeping the glob, arguments the same in every function
check "probe -x -n with a glob: the raw definition keeps it, the count said" bash -c '
	"$UTRACE" probe -x ./prog -n "glob_* x" > x.txt 2> "$TMP/err" &&
	[ "$(cat x.txt)" = "p:probe_prog/ $PWD/prog:glob_* x=%di:s32" ] &&
	grep -q "3 functions of ./prog match" "$TMP/err"'
check "record --probe FUNC-glob in perf form: every matching function hit" bash -c '
	"$UTRACE" record -o x.dat --probe "glob_* x" -- ./prog 2 > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i x.dat > x.txt &&
	[ "$(grep -c " p_glob_[a-z]*_0: (0x[0-9a-f]*) x=[01]\$" x.txt)" = 6 ]'
check "probe -x: an empty glob and a glob with :LINE refused" bash -c '
	! "$UTRACE" probe -x ./prog -n "zz*" 2> "$TMP/err" &&
	grep -q "no function of ./prog matches .zz\*." "$TMP/err" &&
	! "$UTRACE" probe -x ./prog -n "glob_*:2" 2> "$TMP/err" &&
	grep -q "takes no :LINE" "$TMP/err"'
# in a library by name, without a process: the definitions printed, the count said
LIBC=$(ldd ./prog | awk '/libc\.so\.6/ { print $3 }')
if [ -n "$LIBC" ]; then
	nstr=$(nm -D --defined-only "$LIBC" | awk '($2 == "T" || $2 == "W" || $2 == "i") && $3 ~ /^str/ { print $1 }' | sort -u | wc -l)
	check "libc.so.6:str*, no process: one definition a function, the count said" bash -c '
		"$UTRACE" probe "p:grp/ libc.so.6:str*" > l.txt 2> "$TMP/err"
		n=$(grep -c "^p:grp/p_str" l.txt) &&
		[ "$n" -ge "$1" ] && grep -q "libc.so.6:str\*.: $n functions match" "$TMP/err"' _ "$nstr"
	check "libc.so.6:zzz*: refused, naming the glob" bash -c '
		! "$UTRACE" probe "p:grp/ libc.so.6:zzz*" 2> "$TMP/err" &&
		[ "$(wc -l < "$TMP/err")" = 1 ] &&
		grep -q "no function of libc.so.6 matches .zzz\*." "$TMP/err"'
	check "record --probe with an empty glob in a library: refused before it runs" bash -c '
		! "$UTRACE" record -o e.dat --probe "p:grp/ $1:zzz*" -- ./prog 2 > e-out.txt 2> "$TMP/err" &&
		[ ! -s e-out.txt ] && grep -q "matches .zzz\*." "$TMP/err"' _ "$LIBC"
fi
# a library loaded after the definition (pending, from the file's table),
# one named event: its sites placed at each dlopen, in one round
DLPROG="$UTRACE_BUILD/tests/probe-dl-prog"
DLLIB="$UTRACE_BUILD/tests/libprobe-dl-lib.so"
check "a glob on a library loaded later: each function hit at each load" bash -c '
	"$UTRACE" record -o dl.dat --probe "p:grp/pl $2:plib_* a=%di:s32" \
		-- "$1" "$2" 3 4 > dl-out.txt 2> "$TMP/err" &&
	grep -q "2 of 2 matching functions probed" "$TMP/err" &&
	"$UTRACE" script -i dl.dat > dl.txt &&
	[ "$(grep -c " pl: (0x[0-9a-f]*) a=" dl.txt)" = $((2 * (3 + 4))) ]' _ "$DLPROG" "$DLLIB"
# a running process: probe -p with a glob says how many it added
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog -1 > run.txt 2> prog-err.txt &
PID=$!
trap 'kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
if wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1; then
	check "probe -p with a glob: the definitions added, said" bash -c '
		"$UTRACE" probe -p "$1" "p:grp/ glob_*" 2> "$TMP/err" &&
		grep -q "3 definitions added" "$TMP/err" &&
		[ "$("$UTRACE" probe -p "$1" -l | grep -c "^p:grp/p_glob_")" = 3 ]' _ "$PID"
	check "probe -p with an empty glob: refused, naming it" bash -c '
		! "$UTRACE" probe -p "$1" "p:grp/ nomatch_*" 2> "$TMP/err" &&
		grep -q "matches .nomatch_\*." "$TMP/err"' _ "$PID"
fi
kill "$PID" 2> /dev/null
done_testing
