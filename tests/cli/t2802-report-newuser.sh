#!/usr/bin/env bash
# Issue 28 item 2: utrace report as a new user met it.  perf's -n
# (--show-nr-samples), an event selector (-e), --latency BEGIN:END without
# fields (entry and return probes of a recursive function, paired
# innermost per thread as function_graph pairs them), and an error, not
# "Pairs: 0", when a --latency field is not a field of its event.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/req-demo"
NEST="$UTRACE_BUILD/tests/nest-prog"
# Built with ASan, the probed program is too, but libutrace comes first
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1

"$UTRACE" record -o req.dat -- "$DEMO" 10 > /dev/null 2> "$TMP/err"
check "the request loop is recorded" test -s req.dat

# -n: perf's Samples column, 12 wide after Overhead (perf report -n --stdio)
check "-n: a Samples column beside the percentages, as perf's" bash -c '
	"$UTRACE" report -i req.dat -n --sort comm > n.txt 2> "$1/err" || exit 1
	b=$(grep -c " of event " n.txt)
	[ "$b" = 2 ] &&
	[ "$(grep -c "^# Overhead       Samples  Command \$" n.txt)" = 2 ] &&
	[ "$(grep -cxF "# ........  ............  ........" n.txt)" = 2 ] &&
	[ "$(grep -cx "   100.00%            31  req-demo" n.txt)" = 2 ]' _ "$TMP"

# -e: the tables of the selected events only (a field of req_end alone
# made a 100 % table of req_begin, which has no status)
check "-e req_end --sort status: only req_end's table" bash -c '
	"$UTRACE" report -i req.dat -e req_end --sort status > e.txt 2> "$1/err" || exit 1
	! grep -q "req_begin" e.txt &&
	grep -q "^# Samples: 31  of event '\''reqdemo:req_end'\''\$" e.txt &&
	grep -q "^     9.68%   NOT_FOUND\$" e.txt' _ "$TMP"
check "-e with the kernel's set_event syntax, and one that selects nothing" bash -c '
	"$UTRACE" report -i req.dat -e "reqdemo:*,!reqdemo:req_begin" > e2.txt 2> "$1/err" &&
	[ "$(grep -c " of event" e2.txt)" = 1 ] && grep -q "reqdemo:req_end" e2.txt &&
	! "$UTRACE" report -i req.dat -e nosuch > /dev/null 2> e3.txt &&
	grep -qx "utrace: no event in '\''req.dat'\'' matches '\''nosuch'\''" e3.txt' _ "$TMP"

# a --latency field that is not a field of its event: said, no table
check "--latency with a field the event lacks: an error naming it, no 'Pairs: 0'" bash -c '
	! "$UTRACE" report -i req.dat --latency req_begin.idx:req_end.id > l.txt 2> l-err.txt &&
	! grep -q "Pairs:" l.txt && [ ! -s l.txt ] &&
	grep -qx "utrace: '\''req.dat'\'': event '\''reqdemo:req_begin'\'' has no field '\''idx'\'' (its fields: id, path): --latency req_begin.idx:req_end.id pairs its events by that field" l-err.txt' _ "$TMP"

# --latency BEGIN:END on entry and return probes of walk(), recursive, in
# two threads (nest-prog.c): walk(3) to walk(0) enter 10 ms apart and
# return innermost first, so the pairs take 20, 40, 60 and 80 ms; first
# in, first out would make them all about 50 ms
"$UTRACE" record -o nest.dat --probe 'p:grp/walk walk depth=%di:s32' \
	--probe 'r:grp/walk_ret walk' -- "$NEST" > nest-out.txt 2> "$TMP/err"
check "the recursive program runs with the probes" grep -qx "calls=8" nest-out.txt
"$UTRACE" report -i nest.dat --latency 'walk:walk_ret' --sort tid > lat.txt 2> "$TMP/err"
check "--latency walk:walk_ret pairs innermost per thread" python3 - lat.txt <<'EOF'
import re, sys
out = open(sys.argv[1]).read().split('\n')
def fail(m):
    print('# ' + m); print('\n'.join('# ' + l for l in out)); sys.exit(1)
if '# Latency: walk -> walk_ret, innermost per thread' not in out:
    fail('no header')
if '# Pairs: 8  Unmatched begins: 0  Unmatched ends: 0' not in out:
    fail('pairs')
rows = [l for l in out if re.match(r'^ +\d+:nest-prog +4 ', l)]
if len(rows) != 2:
    fail('a row per thread: %r' % rows)
for r in rows:
    v = r.split()
    mn, mx = float(v[2]), float(v[4])
    # innermost: 20 ms the shortest, 80 ms the longest (a loaded machine
    # only lengthens the naps); first in, first out: ~50 ms each
    if not (19000 <= mn < 45000 and mx >= 79000):
        fail('min %.0f us, max %.0f us: not 20 and 80 ms' % (mn, mx))
EOF
check "the nested form takes SYS:BEGIN:SYS:END and refuses a mix of forms" bash -c '
	"$UTRACE" report -i nest.dat --latency grp:walk:grp:walk_ret 2> "$1/err" |
		grep -q "^# Pairs: 8  Unmatched begins: 0  Unmatched ends: 0\$" &&
	! "$UTRACE" report -i nest.dat --latency walk.depth:walk_ret 2> m.txt > /dev/null &&
	grep -q "bad latency '\''walk.depth:walk_ret'\''" m.txt' _ "$TMP"

done_testing
