#!/usr/bin/env bash
# utrace report: the counts by sort key and the latencies of a recorded
# fake request loop (tests/cli/req-demo.c), each number checked against
# what python computes from `utrace script --json` of the same file, and
# the layout of perf report --stdio checked line by line.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/req-demo"
cd "$TMP" || exit 1

N=20
"$UTRACE" record -o req.dat -- "$DEMO" "$N" > /dev/null 2> "$TMP/err"
check "the request loop is recorded" test -s req.dat
"$UTRACE" script -i req.dat --json > req.json 2> "$TMP/err"
check "utrace script --json reads it" test -s req.json

# verify SCRIPT: python3 SCRIPT with req.json and the report output
verify() {
	python3 - "$@" <<EOF
import json, math, re, sys
ev = [json.loads(l) for l in open('req.json')]
out = open(sys.argv[1]).read().split('\n')
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
$(cat)
EOF
}

# the header of perf's report --stdio, then one block per table
"$UTRACE" report -i req.dat > default.txt 2> "$TMP/err"
check "report with the default keys (comm,event)" verify default.txt <<'EOF'
n = len(ev)
want = ['#', '# Total Lost Samples: 0', '#',
        "# Samples: %d  of events 'reqdemo:req_begin, reqdemo:req_end'" % n,
        '# Event count (approx.): %d' % n, '#',
        '# Overhead  Command   Event            ',
        '# ........  ........  .................', '#']
if out[:len(want)] != want:
    fail('header %r' % out[:len(want)])
rows = out[len(want):len(want) + 2]
for name, line in zip(['reqdemo:req_begin', 'reqdemo:req_end'], rows):
    c = sum(1 for e in ev if e['name'] == name)
    exp = '   %6.2f%%  %-8s  %-17s' % (100.0 * c / n, 'req-demo', name)
    if line != exp:
        fail('row %r, expected %r' % (line, exp))
if out[len(want) + 2:] != ['', '', '']:
    fail('after the rows: %r' % out[len(want) + 2:])
EOF

# no 'event' key: one block per event; a field of one event
"$UTRACE" report -i req.dat --sort req_begin.path > path.txt 2> "$TMP/err"
check "--sort req_begin.path: a block per event, the path column in one" verify path.txt <<'EOF'
blocks = '\n'.join(out).split('\n\n\n')
b0 = blocks[0].split('\n')
begins = [e for e in ev if e['name'] == 'reqdemo:req_begin']
ends = [e for e in ev if e['name'] == 'reqdemo:req_end']
if b0[3] != "# Samples: %d  of event 'reqdemo:req_begin'" % len(begins):
    fail(b0[3])
# perf's dynamic key: right-aligned, as wide as the widest value
w = max(len('path'), max(len(e['fields']['path']) for e in begins))
if b0[6] != '# Overhead  %*s' % (w, 'path') or b0[7] != '# ........  ' + '.' * w:
    fail('column header %r %r' % (b0[6], b0[7]))
counts = {}
for e in begins:
    counts[e['fields']['path']] = counts.get(e['fields']['path'], 0) + 1
exp = ['   %6.2f%%  %*s' % (100.0 * c / len(begins), w, p)
       for p, c in sorted(counts.items(), key=lambda x: (-x[1], x[0]))]
if b0[9:] != exp:
    fail('rows %r, expected %r' % (b0[9:], exp))
b1 = blocks[1].split('\n')
if b1[0] != "# Samples: %d  of event 'reqdemo:req_end'" % len(ends):
    fail(b1[0])
if b1[3] != '# Overhead' or b1[6] != '   100.00%':
    fail('req_end block %r' % b1)
EOF

# a field printed as the event prints it (__print_symbolic), and /raw
"$UTRACE" report -i req.dat -s req_end.status,req_end.status/raw > status.txt 2> "$TMP/err"
check "--sort FIELD prints as TP_printk, FIELD/raw the number" verify status.txt <<'EOF'
ends = [e for e in ev if e['name'] == 'reqdemo:req_end']
n404 = sum(1 for e in ends if e['fields']['status'] == 404)
blk = '\n'.join(out).split("of event 'reqdemo:req_end'")[1].split('\n')
rows = [l for l in blk if l.startswith('   ') and '%' in l]
name = {200: 'OK', 404: 'NOT_FOUND'}
got = sorted(re.split(r'\s+', l.strip()) for l in rows)
exp = sorted(['%.2f%%' % (100.0 * c / len(ends)), name[s], str(s)]
             for s, c in ((200, len(ends) - n404), (404, n404)))
if n404 == 0 or got != exp:
    fail('%r, expected %r' % (got, exp))
EOF

"$UTRACE" report -i req.dat -s pid,tid,cpu > pid.txt 2> "$TMP/err"
check "--sort pid,tid,cpu: perf's Pid:Command and CPU columns" verify pid.txt <<'EOF'
e0 = ev[0]
hdr = [l for l in out if l.startswith('# Overhead')][0]
# as wide as "%7d:" and the comm: 8 more than the comm (perf)
if hdr != '# Overhead  %-16s  %-16s  CPU' % ('    Pid:Command', '    Tid:Command'):
    fail(hdr)
rows = [l for l in out if re.match(r'^ +\d+\.\d\d%', l)]
pat = re.compile(r'^ +(\d+\.\d\d)%  ( {0,6}\d+):req-demo  ( {0,6}\d+):req-demo  (\d{3})$')
tot = 0
for l in rows:
    m = pat.match(l)
    if not m or len(m.group(2)) < 7 or int(m.group(2)) != e0['pid']:
        fail('row %r' % l)
    tot += float(m.group(1))
if abs(tot - 200) > 0.05 * len(rows):   # two blocks, one per event
    fail('percentages add up to %f' % tot)
EOF

# The newcomer's question, in one command: which path is slowest, and how
# are its latencies spread (README tour, utrace-report(1))
"$UTRACE" report -i req.dat --latency req_begin.id:req_end.id --sort req_begin.path \
	> lat.txt 2> "$TMP/err"
check "--latency: count, min, mean, max, p50, p90, p99 per path" verify lat.txt <<'EOF'
begin = {}
lat = {}
unmatched_end = 0
for e in ev:
    k = (e['pid'], e['fields']['id'])
    if e['name'] == 'reqdemo:req_begin':
        begin[k] = e
    elif k in begin:
        b = begin.pop(k)
        lat.setdefault(b['fields']['path'], []).append(e['time'] - b['time'])
    else:
        unmatched_end += 1
i = out.index('# Latency: req_begin.id -> req_end.id')
pairs = sum(len(v) for v in lat.values())
want = '# Pairs: %d  Unmatched begins: %d  Unmatched ends: %d' % (pairs, len(begin), unmatched_end)
if out[i + 1] != want or len(begin) != 1 or unmatched_end != 1:
    fail('%r, expected %r' % (out[i + 1], want))
if re.split(r'\s+', out[i + 3]) != ['#', 'path', 'Count', 'Min(us)', 'Mean(us)', 'Max(us)',
                                     'p50(us)', 'p90(us)', 'p99(us)']:
    fail(out[i + 3])
def rank(v, q):
    return v[max(0, math.ceil(q * len(v)) - 1)]
rows = []
for p, v in lat.items():
    v.sort()
    rows.append((sum(v) / len(v), [p, str(len(v))] + ['%.3f' % (x / 1e3) for x in
                (v[0], sum(v) / len(v), v[-1], rank(v, .5), rank(v, .9), rank(v, .99))]))
rows.sort(key=lambda r: -r[0])
got = [re.split(r'\s+', l.strip()) for l in out[i + 6:i + 6 + len(rows)]]
if got != [r[1] for r in rows]:
    fail('%r, expected %r' % (got, [r[1] for r in rows]))
if got[0][0] != '/slow' or float(got[0][2]) < 4000 or float(lat_min := got[1][2]) < 1000:
    fail('/slow is not the slowest, or slept less than it asked: %r' % got)
# one bpftrace hist() per path, in the same order
for p, _ in [(r[1][0], 0) for r in rows]:
    j = out.index('@latency_ns[%s]:' % p)
    v = lat[p]
    buckets = {}
    for x in v:
        buckets[x.bit_length() + 1] = buckets.get(x.bit_length() + 1, 0) + 1
    lo, hi, mx = min(buckets), max(buckets), max(buckets.values())
    def label(k):
        if k == 1: return '[0]'
        if k == 2: return '[1]'
        def s(e):
            return '%d%s' % (1 << (e % 10), ' KMGTPE'[e // 10].strip())
        return '[%s, %s)' % (s(k - 2), s(k - 1))
    for n, k in enumerate(range(lo, hi + 1)):
        c = buckets.get(k, 0)
        exp = '%-16s%8d |%-52s|' % (label(k), c, '@' * int(c / mx * 52))
        if out[j + 1 + n] != exp:
            fail('%r, expected %r' % (out[j + 1 + n], exp))
    if out[j + 2 + hi - lo] != '':
        fail('after the histogram of %s: %r' % (p, out[j + 2 + hi - lo]))
EOF

# a string id (the path: each request ends before the next begins), and
# no key to group by: one line, one histogram
"$UTRACE" report -i req.dat -s event --latency req_begin.path:req_end.path > bypath.txt 2> "$TMP/err"
check "--latency by a string field, no group key" python3 - bypath.txt "$N" <<'EOF2'
import sys
out = open(sys.argv[1]).read().split('\n')
n = int(sys.argv[2])
i = out.index('# Latency: req_begin.path -> req_end.path')
if out[i + 1] != '# Pairs: %d  Unmatched begins: 1  Unmatched ends: 1' % (3 * n):
    print('# ' + out[i + 1], file=sys.stderr); sys.exit(1)
rows = [l for l in out[i + 6:] if l.strip() and not l.startswith('@') and not l.startswith('[')]
if len(rows) != 1 or rows[0].split()[0] != str(3 * n) or '@latency_ns:' not in out:
    print('# %r' % out[i:], file=sys.stderr); sys.exit(1)
EOF2

# threads and a forked child: the shares by pid, tid and event (counted
# thread by thread, without the merge) equal script's
RB="$UTRACE_BUILD/tests/rb-stress"
by_thread() {
	"$UTRACE" record -o "$1.dat" -- "$RB" "$@" > /dev/null 2>&1 &&
	"$UTRACE" report -i "$1.dat" -s pid,tid,event > "$1.txt" 2> "$TMP/err" &&
	"$UTRACE" script -i "$1.dat" --json 2> "$TMP/err" | python3 -c '
import collections, json, re, sys
c = collections.Counter((e["pid"], e["tid"], e["name"]) for e in map(json.loads, sys.stdin))
got = {}
for l in open(sys.argv[1]):
    m = re.match(r"^ +([\d.]+)%  +(\d+):\S+ +(\d+):\S+ +(\S+) *$", l)
    if m:
        got[(int(m.group(2)), int(m.group(3)), m.group(4))] = m.group(1)
tot = sum(c.values())
exp = {k: "%.2f" % (100.0 * v / tot) for k, v in c.items()}
if got != exp or len(c) < 2:
    print("# %r, expected %r" % (got, exp), file=sys.stderr)
    sys.exit(1)
' "$1.txt"
}
check "4 threads: shares by pid, tid, event as script counts them" by_thread threads 4 20000
check "a forked child: the same" by_thread fork 5000

# the same in one command: record the program, then report
"$UTRACE" report --latency req_begin.id:req_end.id --sort req_begin.path -- "$DEMO" 4 \
	> once.txt 2> "$TMP/err"
check "report -- COMMAND records it and reports" grep -q "^# Pairs: 12  Unmatched begins: 1  Unmatched ends: 1$" once.txt
check "... with the recorder's lines on stderr" grep -q "^utrace record: 26 events written" "$TMP/err"
gone() {
	local f
	f=$(sed -n "s/^utrace record: .* events written, .*, '\(.*\)'$/\1/p" "$TMP/err")
	[ -n "$f" ] && [ ! -e "$f" ]
}
check "... and leaves no temporary file" gone
"$UTRACE" report -i req.dat -- "$DEMO" > /dev/null 2> "$TMP/err"
check "-i with a COMMAND is a usage error" test $? -eq 129

# what goes wrong is said in one line
"$UTRACE" report -i req.dat --sort 'a.b.c' > /dev/null 2> "$TMP/err"
check "a bad sort key is a usage error" test $? -eq 129
check "... that names it" grep -q "bad sort key at 'a.b.c'" "$TMP/err"
# (req_begin:req_end is a latency: the innermost begin of the thread, t2802)
"$UTRACE" report -i req.dat --latency 'req_begin.id:req_end' > /dev/null 2> "$TMP/err"
check "a bad --latency is a usage error" test $? -eq 129
"$UTRACE" report -i req.dat --latency req_begin.id:nosuch.id > out 2> "$TMP/err"
check "an event not in the file fails" test $? -eq 1
check "... and says which" grep -q "no event in 'req.dat' matches 'nosuch' of --latency" "$TMP/err"
"$UTRACE" report -i req.dat --latency req_begin.nofield:req_end.id > out 2> "$TMP/err"
check "a field the event lacks fails" test $? -eq 1
check "... and says which" grep -q "has no field 'nofield'" "$TMP/err"
"$UTRACE" report -i req.dat --sort comm,nofield > out 2> "$TMP/err"
check "a sort key no event has fails (as perf's), with no table" bash -c '
	[ "$1" = 1 ] && [ ! -s out ] && [ "$(wc -l < "$2/err")" = 1 ] &&
	grep -q "^utrace: no event in .req.dat. has a field .nofield. (--sort nofield; keys: comm, pid, tid, event, \[EVENT.\]FIELD\[/raw\])\$" "$2/err"' _ $? "$TMP"
"$UTRACE" report -i req.dat --sort req_end.nofield > out 2> "$TMP/err"
check "... EVENT.FIELD too" bash -c '[ "$1" = 1 ] &&
	grep -q "^utrace: no event .req_end. with a field .nofield. in .req.dat." "$2/err"' _ $? "$TMP"
"$UTRACE" report -i nosuch.dat > /dev/null 2> "$TMP/err"
check "a missing file fails" test $? -eq 1
check "... with the reason" grep -q "cannot read 'nosuch.dat': No such file" "$TMP/err"
head -c 5000 req.dat > cut.dat
"$UTRACE" report -i cut.dat > cut.txt 2> "$TMP/err"
check "a file cut short is reported up to the cut" test $? -le 1
check "... without a crash" grep -q "^# Total Lost Samples: 0" cut.txt
"$UTRACE" report --help > help.txt
check "--help shows the latency example" grep -q \
	"utrace report --latency req_begin.id:req_end.id --sort req_begin.path" help.txt

done_testing
