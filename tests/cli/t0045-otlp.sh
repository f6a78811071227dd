#!/usr/bin/env bash
# utrace export --otlp: the events of a recording, and of a running
# process, reach an OTLP/HTTP collector (a loopback server, otlp-server.py)
# once each, field by field as `utrace script --json` shows them, through
# refused connections, 503s, stalls and dropped connections; what cannot be
# delivered is said and counted; a stalled collector never slows the
# traced program.
. "$(dirname "$0")/lib.sh"
SERVER="$UTRACE_SRC/tests/cli/otlp-server.py"
command -v python3 > /dev/null || skip_all "python3 is missing"

# --- the recordings: every field type (sample), and volume (sample --run) ---
"$UTRACE" record -o "$TMP/s.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err"
# (about 600 events a second, fewer on a busy machine: 296 in 0.5 s were
# seen; the checks need a few batches of 50)
"$UTRACE" record -e 'demo:*' -o "$TMP/r.dat" -- "$SAMPLE" --run 1 > /dev/null 2>> "$TMP/err"
for f in s r; do
	"$UTRACE" script -i "$TMP/$f.dat" > "$TMP/$f.txt" 2>> "$TMP/err"
	"$UTRACE" script --json -i "$TMP/$f.dat" > "$TMP/$f.json" 2>> "$TMP/err"
done
check "the recordings have events" \
	test "$(wc -l < "$TMP/s.txt")" -ge 20 -a "$(wc -l < "$TMP/r.txt")" -ge 200

# start_server NAME MODE [ARGS]: a collector in the background; sets PORT
start_server() {
	local name=$1
	shift
	rm -f "$TMP/$name.port" "$TMP/$name.out" "$TMP/$name.out.attempts"
	python3 "$SERVER" --port-file "$TMP/$name.port" --out "$TMP/$name.out" --mode "$@" \
		> "$TMP/$name.log" 2>&1 &
	SERVER_PID=$!
	wait_for test -s "$TMP/$name.port" || return 1
	PORT=$(cat "$TMP/$name.port")
	URL="http://127.0.0.1:$PORT"
	touch "$TMP/$name.out"
}
SERVER_PID=
stop_server() {
	[ -n "$SERVER_PID" ] && kill "$SERVER_PID" 2> /dev/null && wait "$SERVER_PID" 2> /dev/null
	SERVER_PID=
	return 0
}
trap 'stop_server; rm -rf "$TMP"' EXIT

# The checker: what the collector kept against `utrace script` (text and
# --json) of the same file.
cat > "$TMP/verify.py" <<'EOF'
import json, re, sys
out, txt, js = sys.argv[1:4]
opts = sys.argv[4:]
live = '--live' in opts
def opt(name, default=None):
    return opts[opts.index(name) + 1] if name in opts else default
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
reqs = [json.loads(l) for l in open(out)]
logs, spans = [], []
for q in reqs:
    if q['type'] != opt('--type', 'application/x-protobuf'):
        fail('content type %r' % q['type'])
    if q['encoding'] != opt('--encoding', 'gzip'):
        fail('content encoding %r' % q['encoding'])
    for k, v in (opt('--header', '=').split('=', 1),):
        if k and q['headers'].get(k.lower()) != v:
            fail('header %s: %r' % (k, q['headers'].get(k.lower())))
    b = q['body']
    if q['path'] == '/v1/logs':
        for rl in b['resourceLogs']:
            ra = {a['key']: a['value'] for a in rl['resource']['attributes']}
            for sl in rl['scopeLogs']:
                if sl['scope'] != {'name': 'utrace', 'version': '0.1.0'}:
                    fail('scope %r' % sl['scope'])
                for r in sl['logRecords']:
                    logs.append((ra, r))
    elif q['path'] == '/v1/traces':
        for rs in b['resourceSpans']:
            for ss in rs['scopeSpans']:
                spans.extend(ss['spans'])
    else:
        fail('path ' + q['path'])
def attrs(r):
    d = {}
    for a in r['attributes']:
        if a['key'] in d:
            fail('attribute %s twice' % a['key'])
        d[a['key']] = a['value']
    # the event's name: the record's eventName "SYSTEM:NAME" (issue 34),
    # checked against event.system; and its log.record.uid, a ULID
    if 'eventName' in r:
        if 'event.name' in d:
            fail('the deprecated attribute event.name')
        sysname, _, evname = r['eventName'].partition(':')
        if d['event.system'] != {'stringValue': sysname}:
            fail('eventName %r, event.system %r' % (r['eventName'], d['event.system']))
        d['event.name'] = {'stringValue': evname}
        u = d.pop('log.record.uid')['stringValue']
        if not re.fullmatch('[0-7][0-9A-HJKMNP-TV-Z]{25}', u):
            fail('log.record.uid %r' % u)
    return d
def anyv(v):
    (k, x), = v.items()
    if k == 'intValue':
        if not isinstance(x, str):
            fail('intValue not a string: %r' % v)
        return int(x)
    if k == 'stringValue':
        return x
    if k == 'arrayValue':
        return [anyv(e) for e in x['values']]
    fail('value %r' % v)
seqs = [anyv(attrs(r)['utrace.seq']) for _, r in logs]
if len(set(seqs)) != len(seqs):
    dup = sorted(s for s in set(seqs) if seqs.count(s) > 1)
    fail('records sent twice: seq %s' % dup[:10])
if sorted(seqs) != list(range(1, len(seqs) + 1)):
    fail('records missing: %d records, seq up to %d' % (len(seqs), max(seqs or [0])))
if live:
    # a live export: no file to compare with; print what came, for the test
    names = {}
    for ra, r in logs:
        a = attrs(r)
        n = anyv(a['event.name'])
        names[n] = names.get(n, 0) + 1
        if n == 'demo_request':
            print('request', anyv(a['id']))
        if n == 'lost':
            print('lost', anyv(a['utrace.lost']) if 'utrace.lost' in a else 0)
    print('events', len(logs) - names.get('lost', 0))
    sys.exit(0)
lines = open(txt).read().splitlines()
jlines = [json.loads(l) for l in open(js)]
if len(logs) != len(lines):
    fail('%d records, utrace script: %d lines' % (len(logs), len(lines)))
S = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d{3})\] \S{5}\s+(\d+)\.(\d{6}): ([^:]+): (.*)$')
offsets = set()
by_seq = {}
for ra, r in logs:
    a = attrs(r)
    k = anyv(a['utrace.seq'])
    by_seq[k] = (ra, r)
    m = S.match(lines[k - 1])
    j = jlines[k - 1]
    if not m:
        fail('script line %d: %s' % (k, lines[k - 1]))
    comm, tid, cpu, _, _, name, text = m.groups()
    want = {'event.name': name, 'thread.id': int(tid), 'cpu': int(cpu),
            'thread.name': comm, 'event.system': j['name'].split(':')[0]}
    for key, v in want.items():
        if anyv(a[key]) != v:
            fail('seq %d: %s %r, script: %r' % (k, key, anyv(a[key]), v))
    if r['body'] != {'stringValue': text}:
        fail('seq %d: body %r, script: %r' % (k, r['body'], text))
    if r['severityNumber'] != 9 or r['severityText'] != 'INFO':
        fail('seq %d: severity' % k)
    # the same offset from CLOCK_MONOTONIC for every record
    offsets.add(int(r['timeUnixNano']) - j['time'])
    if int(r['observedTimeUnixNano']) < int(r['timeUnixNano']):
        fail('seq %d: observed before it happened' % k)
    # every field, typed
    for f, v in j['fields'].items():
        key = f if f not in ('cpu', 'event.name') else 'field.' + f
        if anyv(a[key]) != v:
            fail('seq %d: field %s: %r, script --json: %r' % (k, f, anyv(a[key]), v))
    if len(a) != 6 + len(j['fields']):
        fail('seq %d: %d attributes for %d fields' % (k, len(a), len(j['fields'])))
    if anyv(ra['process.pid']) != j['pid']:
        fail('seq %d: process.pid' % k)
    if anyv(ra['service.name']) != opt('--service', j['comm']):
        fail('seq %d: service.name %r' % (k, anyv(ra['service.name'])))
pids = {anyv(ra['process.pid']) for ra, _ in logs}
if opt('--pids') and len(pids) != int(opt('--pids')):
    fail('%d processes, want %s' % (len(pids), opt('--pids')))
if len(offsets) != 1:
    fail('times are not all CLOCK_MONOTONIC + one offset: %s' % sorted(offsets)[:5])
import time
if abs(offsets.pop() + jlines[0]['time'] - time.time_ns()) > 3600 * 10**9:
    fail('timeUnixNano is not Unix time')
# spans: BEGIN.FIELD:END.FIELD
sl = opt('--slice')
if sl:
    (b, bf), (e, ef) = [x.rsplit('.', 1) for x in sl.split(':')]
    want = []
    open_ = {}
    for k, j in enumerate(jlines, 1):
        n = j['name'].split(':')[1]
        if n == e and j['fields'][ef] in open_:
            bk, bj = open_.pop(j['fields'][ef])
            want.append((bk, bj, j))
        elif n == b:
            open_[j['fields'][bf]] = (k, j)
    if len(spans) != len(want):
        fail('%d spans, want %d' % (len(spans), len(want)))
    ids = set()
    got = sorted(spans, key=lambda s: int(s['startTimeUnixNano']))
    off = int(logs[0][1]['timeUnixNano']) - jlines[anyv(attrs(logs[0][1])['utrace.seq']) - 1]['time']
    for s, (bk, bj, ej) in zip(got, sorted(want, key=lambda w: w[1]['time'])):
        if not re.fullmatch('[0-9a-f]{32}', s['traceId']) or \
           not re.fullmatch('[0-9a-f]{16}', s['spanId']):
            fail('span ids %r %r' % (s['traceId'], s['spanId']))
        ids.add(s['spanId'])
        if s['name'] != b or s['kind'] != 1:
            fail('span name %r kind %r' % (s['name'], s['kind']))
        if int(s['startTimeUnixNano']) != bj['time'] + off or \
           int(s['endTimeUnixNano']) != ej['time'] + off:
            fail('span of seq %d: times' % bk)
        if s['attributes'] != [a for a in by_seq[bk][1]['attributes']
                               if a['key'] != 'log.record.uid']:
            fail('span of seq %d: not the begin event\'s attributes' % bk)
    if len(ids) != len(spans):
        fail('span ids repeat')
    print('\n'.join(sorted(s['traceId'] + s['spanId'] for s in spans)))
EOF
verify() {
	python3 "$TMP/verify.py" "$@" > "$TMP/verify.out" 2> "$TMP/err"
}
# export NAME FILE [ARGS]: utrace export of FILE to the server, short timeouts
run_export() {
	local name=$1 file=$2
	shift 2
	"$UTRACE" export --otlp "$URL" -i "$TMP/$file.dat" --timeout 1 --retry-time 30 \
		"$@" > "$TMP/$name.stdout" 2> "$TMP/$name.err"
	echo $? > "$TMP/$name.rc"
}
exported_ok() {
	[ "$(cat "$TMP/$1.rc")" = 0 ] || { sed 's/^/# /' "$TMP/$1.err" >&2; return 1; }
}
attempts() {
	grep -c -- "$2" "$TMP/$1.out.attempts"
}

# --- every field of every event, in batches, and the spans ---
start_server accept accept
run_export accept s --batch 7 --slice foo_bar.bar:foo_with_template_print.bar
check "export of a recording: exit 0" exported_ok accept
check "every event once, field by field, and the spans" \
	verify "$TMP/accept.out" "$TMP/s.txt" "$TMP/s.json" \
	--slice foo_bar.bar:foo_with_template_print.bar
cp "$TMP/verify.out" "$TMP/spans1"
check "4 spans from the 4 foo_bar ... foo_with_template_print pairs" \
	test "$(wc -l < "$TMP/spans1")" = 4
check "records in batches of 7: $(wc -l < "$TMP/s.txt") records in $(attempts accept /v1/logs) requests" \
	test "$(attempts accept /v1/logs)" = $(( ($(wc -l < "$TMP/s.txt") + 6) / 7 ))
stop_server
start_server again accept
run_export again s --slice foo_bar.bar:foo_with_template_print.bar
verify "$TMP/again.out" "$TMP/s.txt" "$TMP/s.json" --slice foo_bar.bar:foo_with_template_print.bar
check "the span ids are the same on a second export" same "$TMP/verify.out" "$TMP/spans1"
stop_server

start_server plain accept
run_export plain r --batch 50 --compress none --header X-Scope-OrgID=tenant-1 --service web
check "--compress none, --header, --service: exit 0" exported_ok plain
check "--compress none, --header, --service: all there" \
	verify "$TMP/plain.out" "$TMP/r.txt" "$TMP/r.json" --encoding '' \
	--header X-Scope-OrgID=tenant-1 --service web
stop_server

# two processes (a fork): one resourceLogs each, in the same requests
RB_NO_SIGNALS=1 "$UTRACE" record -o "$TMP/f.dat" -- "$UTRACE_BUILD/tests/rb-stress" fork 300 \
	> /dev/null 2> "$TMP/err"
"$UTRACE" script -i "$TMP/f.dat" > "$TMP/f.txt" 2>> "$TMP/err"
"$UTRACE" script --json -i "$TMP/f.dat" > "$TMP/f.json" 2>> "$TMP/err"
start_server fork accept
run_export fork f --batch 1000
check "two processes: exit 0" exported_ok fork
check "two processes: each record once, under its own process" \
	verify "$TMP/fork.out" "$TMP/f.txt" "$TMP/f.json" --pids 2
check "two processes: both in one request" python3 -c '
import json, sys
sys.exit(not any(len(json.loads(l)["body"]["resourceLogs"]) == 2 for l in open(sys.argv[1])))
' "$TMP/fork.out"
stop_server

# --- a collector that misbehaves, then accepts: nothing lost, nothing twice ---
start_server refuse refuse --delay 1.5
run_export refuse r --batch 50
check "connection refused, then up: exit 0" exported_ok refuse
check "connection refused, then up: every event once" \
	verify "$TMP/refuse.out" "$TMP/r.txt" "$TMP/r.json"
stop_server

start_server s503 503 --times 3
t0=$(date +%s%N)
run_export s503 r --batch 50
t1=$(date +%s%N)
check "503 three times: exit 0" exported_ok s503
check "503 three times: every event once" verify "$TMP/s503.out" "$TMP/r.txt" "$TMP/r.json"
check "503 three times: three tries refused" test "$(attempts s503 ' 503')" = 3
check "Retry-After: 1 was waited for ($(( (t1 - t0) / 1000000 )) ms)" \
	test $(( (t1 - t0) / 1000000 )) -ge 1000
stop_server

start_server stall stall --times 1 --stall 3
run_export stall r --batch 50
check "a stall past --timeout: exit 0" exported_ok stall
check "a stall past --timeout: every event once" \
	verify "$TMP/stall.out" "$TMP/r.txt" "$TMP/r.json"
check "a stall past --timeout: the request stalled once" test "$(attempts stall stalled)" = 1
stop_server

start_server drop drop --times 2
run_export drop r --batch 50
check "dropped connections: exit 0" exported_ok drop
check "dropped connections: every event once" verify "$TMP/drop.out" "$TMP/r.txt" "$TMP/r.json"
check "dropped connections: two dropped" test "$(attempts drop dropped)" = 2
stop_server

# --- what cannot be delivered is said, with its count ---
N=$(wc -l < "$TMP/r.txt")
start_server always always503
run_export always r --batch 50 --retry-time 2
check "always 503: exit 1" test "$(cat "$TMP/always.rc")" = 1
check "always 503: gave up, all $N records not delivered" \
	grep -q "gave up after .* tries .*HTTP 503: busy" "$TMP/always.err" &&
	grep -q "not delivered: $N of $N log records" "$TMP/always.err"
stop_server

start_server bad bad400
run_export bad r --batch 50
check "400: exit 1, the server's message, no retry" \
	test "$(cat "$TMP/bad.rc")" = 1 -a "$(attempts bad ' 400')" = 1
check "400: the server's message and the count not delivered" \
	grep -q "HTTP 400: test collector says no: bad field); not tried again" "$TMP/bad.err" &&
	grep -q "not delivered: $N of $N" "$TMP/bad.err"
stop_server

start_server partial partial
run_export partial r --batch 50
check "partial success: said, with the server's message" \
	grep -q "rejected 2 of 50 log records: two too old" "$TMP/partial.err" &&
	grep -q "rejected 2 log records and 0 spans" "$TMP/partial.err"
stop_server

# A file cut short (the recorder killed): the events before the cut, as
# utrace script prints them.
size=$(stat -c %s "$TMP/r.dat")
head -c $((size * 2 / 3)) "$TMP/r.dat" > "$TMP/cut.dat"
"$UTRACE" script -i "$TMP/cut.dat" > "$TMP/cut.txt" 2> /dev/null
"$UTRACE" script --json -i "$TMP/cut.dat" > "$TMP/cut.json" 2> /dev/null
start_server cut accept
run_export cut cut --batch 50
check "a file cut short: exit 0, the cut said" \
	exported_ok cut && grep -q "cut short.*exported the events before it" "$TMP/cut.err"
check "a file cut short: the events before the cut, once each" \
	verify "$TMP/cut.out" "$TMP/cut.txt" "$TMP/cut.json"
stop_server

# --- bad input: one line, no crash ---
bad_input() {
	local want=$1
	shift
	"$UTRACE" export "$@" > /dev/null 2> "$TMP/err"
	local rc=$?
	[ "$rc" -ne 0 ] && [ "$rc" -lt 128 -o "$rc" = 129 ] && grep -q -- "$want" "$TMP/err" &&
		[ "$(wc -l < "$TMP/err")" = 1 ]
}
check "no --otlp" bad_input "give --otlp URL" -i "$TMP/s.dat"
check "not a URL" bad_input "not an http:// or https:// URL" --otlp ftp://127.0.0.1/ -i "$TMP/s.dat"
check "bad --slice" bad_input "is not BEGIN.FIELD:END.FIELD" --otlp http://127.0.0.1:9 --slice foo
check "bad --header" bad_input "is not a header" --otlp http://127.0.0.1:9 --header 'a b=c'
check "bad --compress" bad_input "unknown compression" --otlp http://127.0.0.1:9 --compress lz4
check "no such file" bad_input "cannot read" --otlp http://127.0.0.1:9 -i "$TMP/none.dat"
check "not a trace file" bad_input "not a utrace trace file" --otlp http://127.0.0.1:9 -i "$SERVER"
check "-i and -p" bad_input "not both" --otlp http://127.0.0.1:9 -i x -p 1
check "-p of a process that is not traceable" bad_input "is not traceable" \
	--otlp http://127.0.0.1:9 -p $$

# --- live: a running process, followed until it exits ---
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run"
start_server live accept
UTRACE_EVENTS='demo:*' "$SAMPLE" --run 0 --log "$TMP/live.log" 2> "$TMP/live.prog" &
prog=$!
wait_traceable $prog "$TMP/live.prog"
"$UTRACE" export --otlp "$URL" -p $prog --timeout 5 --batch-time 0.2 \
	> /dev/null 2> "$TMP/live.err" &
exp=$!
wait_for has_lines "$TMP/live.log" 100
# the export sends while the program runs (--batch-time)
check "live: records arrive while the program runs" wait_for test -s "$TMP/live.out"
kill -USR1 $prog
wait $prog
wait $exp
check "live: the export ends with the process, exit 0" test $? = 0
check "live: every record once" verify "$TMP/live.out" x x --live
grep '^request ' "$TMP/verify.out" | cut -d' ' -f2 | sort > "$TMP/live.got"
cut -d' ' -f2 "$TMP/live.log" | sort > "$TMP/live.want"
# (the buffer is large: nothing is lost; the last pages are read after
# the process exited)
check "live: each request the program made, once, the last ones too" \
	same "$TMP/live.got" "$TMP/live.want"
stop_server

# Ctrl-C: the export stops, sends what it took, and the program runs on.
start_server int accept
UTRACE_EVENTS='demo:*' "$SAMPLE" --run 0 --log "$TMP/int.log" 2> "$TMP/int.prog" &
prog=$!
wait_traceable $prog "$TMP/int.prog"
"$UTRACE" export --otlp "$URL" -p $prog --timeout 5 > /dev/null 2> "$TMP/int.err" &
exp=$!
wait_for has_lines "$TMP/int.log" 50
kill -INT $exp
wait $exp
check "live, Ctrl-C: the export ends, exit 0" test $? = 0
check "live, Ctrl-C: what it took was sent, once each" verify "$TMP/int.out" x x --live
check "live, Ctrl-C: some requests among them" grep -q '^request ' "$TMP/verify.out"
check "live, Ctrl-C: the program runs on" kill -0 $prog
kill -USR1 $prog
wait $prog
stop_server

# A collector that stalls the first requests past --timeout (the sender
# waits about 3.5 s): the program runs at its own pace and finishes; the
# export reads on meanwhile, its requests wait in its queue and go once the
# collector answers again (issue 27 item 7: before, the export stopped
# reading and the program's small buffer lost events).
start_server slow stall --times 3 --stall 4
UTRACE_EVENTS='demo:*' UTRACE_BUFFER_SIZE=16384 UTRACE_MODE=discard \
	"$SAMPLE" --run 7 --log "$TMP/slow.log" 2> "$TMP/slow.prog" &
prog=$!
wait_traceable $prog "$TMP/slow.prog"
"$UTRACE" export --otlp "$URL" -p $prog --timeout 1 --batch-time 0.1 \
	> /dev/null 2> "$TMP/slow.err" &
exp=$!
s0=$SECONDS
wait $prog
took=$((SECONDS - s0))
check "stalled collector: the program finishes its 7 s run in time (${took} s)" \
	test $took -le 25
# the program's own loop: about 10 ms per demo_request; never a long pause
check "stalled collector: no pause in the program's loop" python3 - "$TMP/slow.log" <<'EOF'
import sys
t = [int(l.split()[2]) for l in open(sys.argv[1])]
gap = max(b - a for a, b in zip(t, t[1:]))
print('# longest gap between requests: %.1f ms' % (gap / 1e6), file=sys.stderr)
sys.exit(gap > 1e9)
EOF
wait $exp
check "stalled collector: the export ends with the process" test $? = 0
check "stalled collector: every record once" verify "$TMP/slow.out" x x --live
check "stalled collector: the export dropped nothing (its queue held the requests)" \
	grep -qE "events while attached: [0-9]+ sent, 0 dropped by the export" "$TMP/slow.err"
check "stalled collector: the three stalls happened" test "$(attempts slow stalled)" = 3
grep '^request ' "$TMP/verify.out" | cut -d' ' -f2 | sort > "$TMP/slow.got"
cut -d' ' -f2 "$TMP/slow.log" | sort > "$TMP/slow.want"
check "stalled collector: the requests sent are requests the program made" \
	test -s "$TMP/slow.got" -a -z "$(comm -23 "$TMP/slow.got" "$TMP/slow.want")"
# Every event the program fired was sent or counted lost: R demo_request
# and between 10R-9 and 10R demo_tick.  (Discard mode: in overwrite mode
# the pool counts a page read in part, then overwritten, as lost whole.)
check "stalled collector: events sent + counted lost = events fired" python3 - \
	"$TMP/slow.log" "$TMP/verify.out" <<'EOF'
import sys
r = sum(1 for _ in open(sys.argv[1]))
out = [l.split() for l in open(sys.argv[2])]
sent = sum(int(l[1]) for l in out if l[0] == 'events')
lost = sum(int(l[1]) for l in out if l[0] == 'lost')
lo, hi = r + 10 * r - 9, r + 10 * r
print('# sent %d + lost %d = %d; fired %d..%d' % (sent, lost, sent + lost, lo, hi),
      file=sys.stderr)
sys.exit(not (lo <= sent + lost <= hi))
EOF
stop_server

done_testing
