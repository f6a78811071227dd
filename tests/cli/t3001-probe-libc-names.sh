#!/usr/bin/env bash
# Issue 27 item 9: with libc6-dbg installed, the detached debug file's
# .symtab names libc's functions with their versions
# ("pthread_mutex_lock@@GLIBC_2.2.5", "clock_gettime@@GLIBC_2.17") or with
# three underscores ("___pthread_mutex_lock"), and `utrace probe` said
# "Failed to find the given symbol" for pthread_mutex_lock, pthread_create
# and clock_gettime.  A plain name is now matched as perf probe matches
# it: exactly, else its default version (@@), else any version.
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace loaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 -p "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
LIBC=$(ldd /bin/ls | awk '/libc\.so/ { print $3 }')
[ -n "$LIBC" ] || skip_all "no libc.so.6 found by ldd"
ID=$(readelf -n "$LIBC" 2> /dev/null | awk '/Build ID/ { print $3 }')
DBG=/usr/lib/debug/.build-id/${ID:0:2}/${ID:2}.debug
[ -n "$ID" ] && [ -f "$DBG" ] ||
	echo "# no detached debug file for libc ($DBG; Debian: libc6-dbg): only .dynsym's names are checked"

for f in pthread_mutex_lock pthread_create clock_gettime; do
	"$UTRACE" probe "p:a/x $LIBC:$f" > out.txt 2> "$TMP/err"
	check "utrace probe 'p:a/x libc:$f': found" grep -q "^p:a/x $LIBC:0x" out.txt
	# the address is the symbol's (nm -D gives the dynamic one)
	want=$(nm -D --defined-only "$LIBC" | awk -v f="$f" '$3 == f || index($3, f "@@") == 1 { print $1 }' | head -n 1)
	got=$(sed -n 's/^p:a\/x .*:0x\([0-9a-f]*\)$/\1/p' out.txt)
	check "... at its address in .dynsym" bash -c '[ -n "$1" ] && [ -n "$2" ] && [ $((16#$1)) = $((16#$2)) ]' _ "$want" "$got"
done
if [ -f "$DBG" ]; then
	"$UTRACE" probe "p:a/x $LIBC:___pthread_mutex_lock" > out.txt 2> "$TMP/err"
	check "the debug file's own name ___pthread_mutex_lock: found" grep -q "^p:a/x $LIBC:0x" out.txt
fi
"$UTRACE" probe "p:a/x $LIBC:no_such_function_here" > out.txt 2> err.txt
check "a name not there is still refused" grep -q "Failed to find the given symbol" err.txt

# recorded in a real program
"$UTRACE" record -o r.dat --probe "p:a/cg $LIBC:clock_gettime" \
	--probe "p:a/ml $LIBC:pthread_mutex_lock" -- \
	python3 -c 'import threading, time; l = threading.Lock(); [time.monotonic() for i in range(100)]; print("ok")' \
	> py.txt 2> "$TMP/err"
check "python3 under clock_gettime and pthread_mutex_lock probes: runs" grep -qx ok py.txt
"$UTRACE" script -i r.dat > s.txt 2>> "$TMP/err"
check "... clock_gettime hits recorded" bash -c '[ "$(grep -c " cg: " s.txt)" -ge 100 ]'

done_testing
