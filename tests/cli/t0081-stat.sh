#!/usr/bin/env bash
# utrace stat: perf stat's layout (standard, -x CSV, -j JSON, -I, -r) with
# the counts of a program that fires a known number of each event and
# sleeps a known number of times (tests/cli/req-demo.c: per round one
# /fast request and two that sleep; one more begin and one more end).
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/req-demo"
cd "$TMP" || exit 1
N=20
EV=$((3 * N + 1))             # of each event
SLEEPS=$((2 * N))             # at least as many context switches

"$UTRACE" stat -o std.txt -- "$DEMO" "$N" 2> "$TMP/err"
check "exit status 0, the command's" test $? -eq 0
check "perf stat's standard layout, with the counts" python3 - std.txt "$DEMO" "$N" "$EV" "$SLEEPS" <<'EOF'
import re, sys
path, demo, n, ev, sleeps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
out = open(path).read().split('\n')
def fail(m):
    print('# ' + m, file=sys.stderr); sys.exit(1)
if out[:3] != ['', " Performance counter stats for '%s %s':" % (demo, n), '']:
    fail('header %r' % out[:3])
lines = {}
pat = re.compile(r'^( {0,17}\d+(?:\.\d\d)?) (msec| {4}) (\S+) {1,}# +(\d+\.\d{3}) (CPUs utilized|[KMG]?/sec) *$')
for l in out[3:]:
    if not l:
        break
    m = pat.match(l)
    if not m or len(m.group(1)) != 18 or len(l) < 18 + 1 + 4 + 1 + 32 + 3 + 8:
        fail('line %r' % l)
    lines[m.group(3)] = (float(m.group(1)), m.group(2), m.group(5))
want = ['task-clock', 'context-switches', 'cpu-migrations', 'page-faults',
        'reqdemo:req_begin', 'reqdemo:req_end']
if list(lines) != want:
    fail('counters %r' % list(lines))
if lines['task-clock'][1] != 'msec' or lines['task-clock'][2] != 'CPUs utilized':
    fail('task-clock %r' % (lines['task-clock'],))
if lines['reqdemo:req_begin'][0] != ev or lines['reqdemo:req_end'][0] != ev:
    fail('events %r, expected %d each' % (lines, ev))
if lines['context-switches'][0] < sleeps:
    fail('%d context switches for %d sleeps' % (lines['context-switches'][0], sleeps))
if lines['page-faults'][0] <= 0 or lines['task-clock'][0] <= 0:
    fail('no page faults or task-clock')
rest = '\n'.join(out)
m = re.search(r'\n {1,8}(\d+\.\d{9}) seconds time elapsed\n\n {1,8}\d+\.\d{9} seconds user\n'
              r' {1,8}\d+\.\d{9} seconds sys\n\n\n$', rest)
if not m:
    fail('footer %r' % rest[-200:])
if float(m.group(1)) < int(n) * 0.005:
    fail('%s s elapsed for %s rounds of 5 ms asleep' % (m.group(1), n))
EOF

"$UTRACE" stat -o /dev/null -- sh -c 'exit 3' 2> "$TMP/err"
check "the exit status is the command's" test $? -eq 3

"$UTRACE" stat -x ';' -o csv.txt -- "$DEMO" "$N" 2> "$TMP/err"
check "-x: CSV lines perf's fields" python3 - csv.txt "$EV" <<'EOF'
import csv, sys
rows = list(csv.reader(open(sys.argv[1]), delimiter=';'))
ev = int(sys.argv[2])
def fail(m):
    print('# ' + m, file=sys.stderr); sys.exit(1)
names = [r[2] for r in rows]
if names != ['task-clock', 'context-switches', 'cpu-migrations', 'page-faults',
             'reqdemo:req_begin', 'reqdemo:req_end']:
    fail('%r' % rows)
for r in rows:
    # value, unit, event, runtime, percent running, metric, metric unit
    if len(r) != 7 or r[4] != '100.00' or not r[3].isdigit():
        fail('row %r' % r)
    float(r[0]); float(r[5])
if rows[0][1] != 'msec' or rows[0][6] != 'CPUs utilized':
    fail('task-clock %r' % rows[0])
if int(rows[4][0]) != ev or int(rows[5][0]) != ev:
    fail('events %r' % rows[4:])
EOF

"$UTRACE" stat -j -e reqdemo:req_end -o json.txt -- "$DEMO" "$N" 2> "$TMP/err"
check "-j: JSON lines; -e counts the events named" python3 - json.txt "$EV" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
ev = int(sys.argv[2])
def fail(m):
    print('# ' + m, file=sys.stderr); sys.exit(1)
if [r['event'] for r in rows] != ['task-clock', 'context-switches', 'cpu-migrations',
                                   'page-faults', 'reqdemo:req_end']:
    fail('%r' % rows)
for r in rows:
    if set(r) != {'counter-value', 'unit', 'event', 'event-runtime', 'pcnt-running',
                  'metric-value', 'metric-unit'}:
        fail('keys %r' % r)
if float(rows[4]['counter-value']) != ev or rows[0]['unit'] != 'msec':
    fail('%r' % rows)
EOF

"$UTRACE" stat -r 3 -o rep.txt -- "$DEMO" 5 2> "$TMP/err"
check "-r: the runs in the header, the spread of the time" python3 - rep.txt "$DEMO" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
if " Performance counter stats for '%s 5' (3 runs):\n" % sys.argv[2] not in t:
    print('# ' + t, file=sys.stderr); sys.exit(1)
if not re.search(r'\n +\d+\.\d+ \+- \d+\.\d+ seconds time elapsed( +\( \+- +\d+\.\d\d% \))?\n\n$', t):
    print('# ' + t, file=sys.stderr); sys.exit(1)
if not re.search(r'\n +16      reqdemo:req_begin ', t):
    print('# ' + t, file=sys.stderr); sys.exit(1)
EOF

"$UTRACE" stat -I 20 -o int.txt -- "$DEMO" "$N" 2> "$TMP/err"
check "-I: interval lines, then the events" python3 - int.txt "$EV" <<'EOF'
import re, sys
out = open(sys.argv[1]).read().split('\n')
def fail(m):
    print('# ' + m, file=sys.stderr); sys.exit(1)
if out[0] != '#           time             counts unit events':
    fail(out[0])
times, sw = [], {}
for l in out[1:]:
    m = re.match(r'^ +(\d+\.\d{9}) +(\d+(?:\.\d\d)?) (msec| {4}) (\S+) ', l)
    if not m:
        break
    times.append(float(m.group(1)))
    sw[m.group(4)] = sw.get(m.group(4), 0) + float(m.group(2))
if len(times) < 8 or times != sorted(times):
    fail('interval times %r' % times)
if sw.get('context-switches', 0) < 2 * 20:
    fail('context switches over the intervals %r' % sw)
if not re.search(r'\n +%d      reqdemo:req_end ' % int(sys.argv[2]), '\n'.join(out)):
    fail('no final event count')
EOF

"$UTRACE" stat --rusage -o ru.txt -- "$DEMO" "$N" 2> "$TMP/err"
check "--rusage: getrusage() counts, and says so" python3 - ru.txt "$SLEEPS" <<'EOF'
import re, sys
t = open(sys.argv[1]).read()
def fail(m):
    print('# ' + m + '\n' + t, file=sys.stderr); sys.exit(1)
if not re.search(r'\n   <not supported>      cpu-migrations +\n', t):
    fail('cpu-migrations')
m = re.search(r'\n +(\d+)      context-switches ', t)
if not m or int(m.group(1)) < int(sys.argv[2]):
    fail('context-switches')
if ' # task-clock, context-switches and page-faults from getrusage() of the command: --rusage\n' not in t:
    fail('no note')
EOF

# perf_event_open() denied: the same fallback, said (only where it is)
if [ "$(id -u)" -ne 0 ] && [ "$(cat /proc/sys/kernel/perf_event_paranoid)" -gt 2 ]; then
	"$UTRACE" stat -o deny.txt -- "$DEMO" 2 2> "$TMP/err"
	check "perf_event_open denied: getrusage(), said" grep -q "from getrusage() of the command: perf_event_open" deny.txt
fi

"$UTRACE" stat -e reqdemo:req_end,nosuch -o /dev/null -- "$DEMO" 1 2> "$TMP/err"
check "an -e entry that matches no event is said" grep -q "^utrace stat: no event of '.*req-demo' matches 'nosuch'\$" "$TMP/err"

"$UTRACE" stat -x , -j -- true > /dev/null 2> "$TMP/err"
check "-x with -j is a usage error" test $? -eq 129
"$UTRACE" stat > /dev/null 2> "$TMP/err"
check "no command is a usage error" test $? -eq 129
check "... said" grep -q "no command: give -- COMMAND" "$TMP/err"
"$UTRACE" stat -I 1 -- true > /dev/null 2> "$TMP/err"
check "a too short interval is a usage error" test $? -eq 129
"$UTRACE" stat --help | grep -q "perf_event_open"
check "--help" test $? -eq 0

done_testing
