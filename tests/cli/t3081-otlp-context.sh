#!/usr/bin/env bash
# Issue 34 item 2: one request followed across processes.  ctx-demo's
# frontend gives each request a W3C trace id and span id and passes them
# to a backend process; exported with --trace-id / --span-id /
# --parent-id, every log record carries its event's ids, the --slice spans
# of one request share its trace id in both processes, the backend's span
# is the child of the frontend's, a step inside the frontend's span nests
# in it by time, and each record's eventName is set (not event.name).
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/ctx-demo"
command -v python3 > /dev/null || skip_all "python3 is missing"
unset OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES ${!OTEL_EXPORTER_OTLP_*}

"$UTRACE" record -o "$TMP/c.dat" -- "$DEMO" 5 > "$TMP/ids" 2> "$TMP/err"
check "a recording of 5 requests, frontend and backends" \
	test "$(grep -c backend "$TMP/ids")" = 5

start_server() { otlp_start "$1" accept; }
trap 'otlp_stop; rm -rf "$TMP"' EXIT

CTX=(--trace-id trace --span-id span --parent-id parent
     --slice ctx_begin.id:ctx_end.id --slice ctx_step.id:ctx_step_done.id)
start_server a
"$UTRACE" export --otlp "$URL" -i "$TMP/c.dat" "${CTX[@]}" > /dev/null 2> "$TMP/err"
check "export: exit 0" test $? = 0

cat > "$TMP/check.py" <<'PY'
import json, re, sys
out, ids = sys.argv[1], sys.argv[2]
def fail(m):
    print('# ' + m, file=sys.stderr)
    sys.exit(1)
front, back = {}, {}
for l in open(ids):
    w = l.split()
    if w[0] == 'backend':
        back[int(w[1])] = w[2]
    else:
        front[int(w[0])] = (w[1], w[2])
logs, spans = [], []
for l in open(out):
    q = json.loads(l)
    for rl in q['body'].get('resourceLogs', []):
        for sl in rl['scopeLogs']:
            logs.extend(sl['logRecords'])
    for rs in q['body'].get('resourceSpans', []):
        pid = [a['value']['intValue'] for a in rs['resource']['attributes']
               if a['key'] == 'process.pid'][0]
        for ss in rs['scopeSpans']:
            for s in ss['spans']:
                s['pid'] = pid
                spans.append(s)
def attr(r, k):
    for a in r['attributes']:
        if a['key'] == k:
            (_, v), = a['value'].items()
            return v
what = sys.argv[3]
if what == 'logs':
    n = 0
    for r in logs:
        if not re.fullmatch(r'[a-z_]+:[a-z_]+', r.get('eventName', '')):
            fail('eventName %r' % r.get('eventName'))
        if attr(r, 'event.name') is not None:
            fail('the deprecated event.name attribute')
        name = r['eventName'].split(':')[1]
        if name in ('ctx_begin', 'ctx_log'):
            if r.get('traceId') != attr(r, 'trace') or r.get('spanId') != attr(r, 'span'):
                fail('%s: ids %r %r, fields %r %r' % (name, r.get('traceId'), r.get('spanId'),
                                                      attr(r, 'trace'), attr(r, 'span')))
            n += 1
        elif name == 'ctx_step':
            # no span of its own: the frontend's span it is in
            i = int(attr(r, 'id'))
            if (r.get('traceId'), r.get('spanId')) != front[i]:
                fail('ctx_step %d: %r %r' % (i, r.get('traceId'), r.get('spanId')))
            n += 1
        elif 'traceId' in r or 'spanId' in r:
            fail('%s has no trace field but ids' % name)
    print(n)
elif what == 'spans':
    if len(spans) != 15:
        fail('%d spans, want 15' % len(spans))
    for i, (trace, fspan) in front.items():
        mine = [s for s in spans if s['traceId'] == trace]
        f = [s for s in mine if s['name'] == 'ctx_begin' and s['spanId'] == fspan]
        b = [s for s in mine if s['name'] == 'ctx_begin' and s['spanId'] == back[i]]
        st = [s for s in mine if s['name'] == 'ctx_step']
        if len(mine) != 3 or len(f) != 1 or len(b) != 1 or len(st) != 1:
            fail('request %d: spans %r' % (i, [(s['name'], s['spanId']) for s in mine]))
        f, b, st = f[0], b[0], st[0]
        if 'parentSpanId' in f:
            fail('request %d: the frontend span has a parent' % i)
        if b.get('parentSpanId') != fspan or b['pid'] == f['pid']:
            fail('request %d: backend span parent %r, pids %s %s' % (i, b.get('parentSpanId'), b['pid'], f['pid']))
        if st.get('parentSpanId') != fspan or st['pid'] != f['pid']:
            fail('request %d: the step is not nested in the frontend span' % i)
        if not (int(f['startTimeUnixNano']) <= int(b['startTimeUnixNano']) and
                int(b['endTimeUnixNano']) <= int(f['endTimeUnixNano'])):
            fail('request %d: the backend span is not inside the frontend span' % i)
    print('ok')
elif what == 'uids':
    print('\n'.join(sorted(attr(r, 'log.record.uid') for r in logs)))
PY
check "log records: traceId/spanId of their fields, a step's of its enclosing span; eventName" \
	bash -c "python3 '$TMP/check.py' '$TMP/a.out' '$TMP/ids' logs > '$TMP/n' 2> '$TMP/err' && [ \$(cat '$TMP/n') = 25 ]"
check "spans: one trace per request across processes, backend child of frontend, step nested" \
	bash -c "python3 '$TMP/check.py' '$TMP/a.out' '$TMP/ids' spans > /dev/null 2> '$TMP/err'"
python3 "$TMP/check.py" "$TMP/a.out" "$TMP/ids" uids > "$TMP/uids1"
check "log.record.uid: one per record, no two alike" \
	test "$(sort -u "$TMP/uids1" | wc -l)" = "$("$UTRACE" script -i "$TMP/c.dat" | wc -l)"
otlp_stop

# the same file again: the same uids (a store drops the copies)
start_server b
"$UTRACE" export --otlp "$URL" -i "$TMP/c.dat" --batch 3 > /dev/null 2> "$TMP/err"
python3 "$TMP/check.py" "$TMP/b.out" "$TMP/ids" uids > "$TMP/uids2"
check "log.record.uid: the same on another export, in other batches" same "$TMP/uids2" "$TMP/uids1"
otlp_stop

# a numeric request id as the trace: the same trace id in every process
start_server n
"$UTRACE" export --otlp "$URL" -i "$TMP/c.dat" --trace-id id \
	--slice ctx_begin.id:ctx_end.id > /dev/null 2> "$TMP/err"
check "--trace-id of a number: one 32-hex trace id per request, in both processes" python3 -c '
import json, re, sys
t = {}
for l in open(sys.argv[1]):
    for rs in json.loads(l)["body"].get("resourceSpans", []):
        for ss in rs["scopeSpans"]:
            for s in ss["spans"]:
                i = [a["value"]["intValue"] for a in s["attributes"] if a["key"] == "id"][0]
                t.setdefault(i, set()).add(s["traceId"])
ok = len(t) == 5 and all(len(v) == 1 and re.fullmatch("[0-9a-f]{32}", next(iter(v))) for v in t.values()) \
    and len({next(iter(v)) for v in t.values()}) == 5
sys.exit(0 if ok else 1)' "$TMP/n.out"
otlp_stop

"$UTRACE" export --otlp http://127.0.0.1:1 -i "$TMP/c.dat" --trace-id 'a b' > /dev/null 2> "$TMP/err"
check "--trace-id 'a b': refused, said" grep -q "'a b' is not a field name" "$TMP/err"

done_testing
