#!/usr/bin/env bash
# Issue 28 item 3: utrace record --probe takes perf probe's form too,
#   utrace record --probe 'add a b' --probe 'handle r->name:string' -- ./prog
# resolved from the program's DWARF as `utrace probe -x` does (one step,
# not a shell loop over utrace probe -x's output); and record says, per
# probe, where the engine placed a breakpoint rather than a jump, and
# what a hit costs there -- the engine's own placement, as the process's
# `utrace probe -l -v` reports it.
. "$(dirname "$0")/lib.sh"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
CC=$(command -v gcc || echo "${CC:-cc}")
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC) to build the probed program"
cd "$TMP" || exit 1
"$CC" -O0 -g -o prog "$UTRACE_SRC/tests/cli/probe-dwarf-prog.c" 2> "$TMP/err" ||
	skip_all "cannot build with -O0 -g: $(head -1 "$TMP/err")"

"$UTRACE" record -o p.dat --probe 'add a b' --probe 'handle r->name:string n' \
	--probe 'handle%return $retval' -- ./prog 3 > out.txt 2> err.txt
rc=$?
cp err.txt "$TMP/err"
check "perf probe's form in record --probe: recorded (status 0)" bash -c '[ $1 = 0 ]' _ $rc
check "... each made into a raw definition from the DWARF, and said" bash -c '
	grep -q "^utrace record: --probe '\''add a b'\'': p:probe_prog/add $1/prog:add+0x[0-9a-f]* a=.*:s32 b=.*:s64\$" err.txt &&
	grep -q "^utrace record: --probe '\''handle r->name:string n'\'': p:probe_prog/handle $1/prog:handle+0x[0-9a-f]* name=.*:string n=" err.txt &&
	grep -q "^utrace record: --probe '\''handle%return \$retval'\'': r:probe_prog/handle__return $1/prog:handle " err.txt' _ "$TMP"
"$UTRACE" script -i p.dat > s.txt 2> "$TMP/err"
check "... with the program's values (add(i, 100 + i), r->name)" bash -c '
	[ "$(sed -n "s/^.* add: ([^)]*) //p" s.txt | tr "\n" ";")" = "a=0 b=100;a=1 b=101;a=2 b=102;" ] &&
	[ "$(grep -c " handle: ([^)]*) name=\"hello\" n=" s.txt)" = 3 ] &&
	[ "$(grep -c " handle__return: " s.txt)" = 3 ]'
check "the same as utrace probe -x makes them" bash -c '
	"$UTRACE" probe -x prog "add a b" > x.txt 2> "$1/err" &&
	grep -qF "utrace record: --probe '\''add a b'\'': $(cat x.txt)" err.txt' _ "$TMP"
check "a perf-form definition that names nothing: refused before the command runs" bash -c '
	! "$UTRACE" record -o q.dat --probe "nosuch a" -- ./prog 1 > /dev/null 2> e.txt &&
	! grep -q "started pid" e.txt && [ ! -e q.dat ] &&
	grep -q "^utrace record: --probe: '\''nosuch a'\'': no function '\''nosuch'\''" e.txt &&
	! "$UTRACE" record -o q.dat --probe "main x" -- touch ran > /dev/null 2> e2.txt &&
	[ ! -e ran ] && grep -q "has no DWARF debug information (build it with -g)" e2.txt'

# Breakpoints: record's warning against the engine's own report of the
# same definitions in a process (utrace probe -p PID -l -v: "placed: J
# jumps, B breakpoints"), so whichever sites the engine makes jumps of,
# the warning follows it.
PROG="$UTRACE_BUILD/tests/probe-prog"
cp "$PROG" pprog
DEFS=('p:grp/add add a=%di:s32' 'r:grp/add_ret add $retval:s32' 'p:grp/greet greet'
      'p:grp/main main')
"$UTRACE" record -o b.dat "${DEFS[@]/#/--probe=}" -- ./pprog 2 > /dev/null 2> b-err.txt
cp b-err.txt "$TMP/err"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
UTRACE_PROBES=$(printf '%s\n' "${DEFS[@]}") UTRACE_EVENTS='grp:*' \
	LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./pprog 1 "$TMP/never" > /dev/null 2> prog-err.txt &
PID=$!
trap 'kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1
"$UTRACE" probe -p "$PID" -l -v > lv.txt 2> "$TMP/err"
check "a warning for each probe the engine placed as breakpoints, none for jumps" python3 - <<'EOF'
import re, sys
lv = open('lv.txt').read().split('\n')
err = open('b-err.txt').read()
bps = 0
for i, l in enumerate(lv):
    if not re.match(r'^[pr]:grp/', l):
        continue
    m = re.search(r'placed: (\d+) jumps?, (\d+) breakpoints?', lv[i + 1])
    if not m:
        print('# no placement under %r: %r' % (l, lv[i + 1])); sys.exit(1)
    said = re.search(r"probe '%s' is a breakpoint at \S+.*: a hit takes a trap, about 1 us, "
                     r"where a jump takes about 5 ns\n" % re.escape(l), err)
    b = int(m.group(2))
    bps += b > 0
    if bool(said) != (b > 0):
        print('# %r: %s breakpoints, warned: %s' % (l, b, bool(said))); sys.exit(1)
print('# %d of the probes are breakpoints here' % bps)
EOF
check "at least one breakpoint here to warn of (add: lea; ret)" \
	grep -q "placed: [0-9]* jumps\?, [1-9][0-9]* breakpoint" lv.txt

done_testing
