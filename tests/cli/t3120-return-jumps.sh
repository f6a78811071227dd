#!/usr/bin/env bash
# Issue 30 item 2: a return probe on a function that ends in a 1-byte ret
# is a jump, placed over the ret and the straight-line instructions before
# it in its block (relocated into the trampoline, RIP-relative operands
# rewritten), when no branch lands inside; a ret that a branch lands on
# stays a breakpoint, saying so.  The values are right, `utrace probe -l
# -v` tells which, and the probes go on and off many times while threads
# run through the covered bytes, every result still right.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probescale-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
cp "$PROG" prog

DEFS=('r:grp/e epi_pop v=$retval:s32' 'r:grp/r rip_ret v=$retval:s32'
      'r:grp/s shared_ret v=$retval:s32' 'r:grp/j jcc_ret v=$retval:s32'
      'p:grp/c call_entry v=%di:s32')
"$UTRACE" record -o r.dat "${DEFS[@]/#/--probe=}" -- ./prog 3 > out.txt 2> err.txt
cp err.txt "$TMP/err"
check "the program's results are right under the probes" grep -qx "counter 3 bad 0" out.txt
"$UTRACE" script -i r.dat > s.txt 2>> "$TMP/err"
check "each return recorded with its value" python3 - <<'PY'
import re, sys
got = {}
for l in open('s.txt'):
    m = re.search(r' (\w): \(0x[0-9a-f]+(?: <- 0x[0-9a-f]+)?\) v=(-?\d+)$', l)
    if m:
        got.setdefault(m.group(1), []).append(int(m.group(2)))
want = {'e': [1, 2, 3], 'r': [1, 2, 3], 's': [0, 2, 4], 'j': [0, 1, 2],
        'c': [0, 1, 2]}
if got != want:
    print('# got %r, want %r' % (got, want)); sys.exit(1)
PY
check "record warns of the breakpoints (shared_ret, jcc_ret's second ret) only" bash -c '
	grep -q "probe '\''r:grp/s .* is a breakpoint at shared_ret+0x9" err.txt &&
	grep -q "probe '\''r:grp/j .* is a breakpoint at 1 of 2 exits, the first at jcc_ret+0xa" err.txt &&
	! grep -q "probe '\''[rp]:grp/[erc] .* is a breakpoint" err.txt'

# the same in a running process, 2 threads, until the file stop exists
UTRACE_PROBES=$(printf '%s\n' "${DEFS[@]}") UTRACE_EVENTS='grp:*' \
	LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog 0 2 "$TMP/stop" > run.txt 2> prog-err.txt &
PID=$!
trap 'touch "$TMP/stop"; kill $PID 2> /dev/null; rm -rf "$TMP"' EXIT
wait_traceable "$PID" prog-err.txt > "$TMP/err" 2>&1
# (the agent places the probes of UTRACE_PROBES as it starts)
placed() { "$UTRACE" probe -p "$1" -l -v > lv.txt 2> "$TMP/err" && grep -q "^# sites: 6 " lv.txt; }
wait_for placed "$PID"
check "-l -v: the covered returns and the entry over a call are jumps, the shared rets breakpoints, and why" python3 - <<'PY'
import re, sys
lv = open('lv.txt').read().split('\n')
want = {'e': (1, 0), 'r': (1, 0), 's': (0, 1), 'j': (1, 1), 'c': (1, 0)}
for i, l in enumerate(lv):
    m = re.match(r'^[pr]:grp/(\w) ', l)
    if not m:
        continue
    p = re.search(r'placed: (\d+) jumps?, (\d+) breakpoints?', lv[i + 1])
    if not p or (int(p.group(1)), int(p.group(2))) != want.pop(m.group(1)):
        print('# %r: %r' % (l, lv[i + 1])); sys.exit(1)
if want:
    print('# not listed: %r' % want); sys.exit(1)
if not re.search(r'the branch at \+0x4 lands at \+0x9 itself \(a jump could start there only\)', '\n'.join(lv)):
    print('# no reason for the breakpoint'); print('\n'.join('# ' + x for x in lv)); sys.exit(1)
PY
cp lv.txt "$TMP/err"
check "-l -v: the placement rate of the process" \
	grep -q "^# sites: 4 of 6 placed as jumps (66.7 %)" lv.txt
# off and on 30 times while both threads run through the covered bytes
cycle() {
	for i in $(seq 30); do
		"$UTRACE" disable -p "$1" 'grp:*' > /dev/null || return 1
		"$UTRACE" enable -p "$1" 'grp:*' > /dev/null || return 1
	done
}
check "30 removals and placements under 2 threads" cycle "$PID"
touch "$TMP/stop"
wait "$PID"
rc=$?
cp prog-err.txt "$TMP/err"
check "... and every result was right (status 0, no wrong result)" \
	bash -c '[ $1 = 0 ] && grep -q " bad 0$" run.txt' _ "$rc"
done_testing
