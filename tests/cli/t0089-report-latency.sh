#!/usr/bin/env bash
# utrace report --latency on a made file (reader-mkfile req): five threads
# of two processes with the same ids, pairs begun on one thread and ended
# on another, ids begun twice, ends without a begin, equal times across
# threads, a thread whose clock runs back at each page, lost events and a
# process timed in TSC ticks.  Each report must be byte for byte what the
# report printed before its per-event caches (t0089-report-latency.golden,
# made by the tree of commit 0918975), and the pairs must be those that
# python finds in `utrace script --json` order.
. "$(dirname "$0")/lib.sh"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
GOLDEN="$UTRACE_SRC/tests/cli/t0089-report-latency.golden"
cd "$TMP" || exit 1

"$MKFILE" req req.dat 2> "$TMP/err"
check "reader-mkfile req makes the file" test -s req.dat

# Every report of the golden file: the arguments, then what it printed
# and its exit status.  (To remake the golden file with another utrace:
# UTRACE=... and this function's output.)
reports() {
	local a
	while IFS= read -r a; do
		echo "=== utrace report -i req.dat $a"
		# shellcheck disable=SC2086
		"$UTRACE" report -i req.dat $a 2>&1
		echo "=== exit $?"
	done <<'EOF'
--latency req_begin.id:req_end.id
--latency req_begin.id:req_end.id --sort req_begin.path
--latency req_begin.id:req_end.id --sort path
--latency req_begin.id:req_end.id --sort req_end.path
--latency req_begin.id:req_end.id --sort req_end.status,req_begin.path/raw
--latency req_begin.id:req_end.id --sort pid,req_begin.path,cpu
--latency req_begin.id:req_end.id --sort comm,tid
--latency req_begin.id:req_end.id --sort event,path,tid
--latency req_begin.path:req_end.path --sort status
--latency req_begin.id:req_end.id --latency req_begin.path:req_end.path --sort path,comm
--latency reqdemo:req_begin.id:reqdemo:req_end.id --sort event
EOF
}
reports > out.txt
check "every report is what it was before the caches" same out.txt "$GOLDEN"

# The pairing rule itself: in the merged order (script's), per process,
# an end takes the begin of its id still waiting; a second begin leaves
# the first unmatched.  Per path of the begin: count, min and max.
"$UTRACE" script -i req.dat --json > req.json 2> "$TMP/err"
"$UTRACE" report -i req.dat --latency req_begin.id:req_end.id --sort req_begin.path \
	> lat.txt 2> "$TMP/err"
check "the pairs are those of the merged order, across threads" python3 - <<'EOF'
import json, re, sys
ev = [json.loads(l) for l in open('req.json')]
out = open('lat.txt').read().split('\n')
begin, lat, unb, une, cross, back = {}, {}, 0, 0, 0, 0
last = {}
for e in ev:
    if 'fields' not in e:
        continue                # the lost-events marker
    if e['time'] < last.get(e['tid'], 0):
        back += 1
    last[e['tid']] = e['time']
    k = (e['pid'], e['fields']['id'])
    if e['name'] == 'reqdemo:req_begin':
        if k in begin:
            unb += 1
        begin[k] = e
    elif k in begin:
        b = begin.pop(k)
        cross += b['tid'] != e['tid']
        lat.setdefault(b['fields']['path'], []).append(max(e['time'] - b['time'], 0))
    else:
        une += 1
pairs = sum(len(v) for v in lat.values())
if cross < 100 or back < 5:
    print('# the file should have pairs across threads and times that run back '
          '(%d, %d)' % (cross, back)); sys.exit(1)
want = '# Pairs: %d  Unmatched begins: %d  Unmatched ends: %d' % (pairs, unb + len(begin), une)
if want not in out:
    print('# want %r' % want); sys.exit(1)
i = out.index(want)
rows = {}
for l in out[i:]:
    m = re.match(r'^ *(\S*) +(\d+) +([\d.]+) +([\d.]+) +([\d.]+) ', l)
    if m:
        rows[m.group(1)] = (int(m.group(2)), m.group(3), m.group(5))
for p, v in lat.items():
    w = (len(v), '%.3f' % (min(v) / 1e3), '%.3f' % (max(v) / 1e3))
    if rows.get(p) != w:
        print('# path %r: %r, want %r' % (p, rows.get(p), w)); sys.exit(1)
if len(rows) != len(lat):
    print('# rows %r' % rows); sys.exit(1)
EOF

done_testing
