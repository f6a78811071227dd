#!/usr/bin/env bash
# Issue 34 item 3: OTLP/HTTP protobuf, the default, and JSON.  Every body
# utrace sends (logs and traces, every field type of the sample, trace
# context) is checked against the official opentelemetry-proto files
# (tests/data/opentelemetry-proto, Apache-2.0): the protobuf bodies
# decode with `protoc --decode` with no unknown field; the JSON bodies
# parse strictly (python3-protobuf's json_format, OTLP's hex ids made
# base64 first) into the same messages as the protobuf bodies of the
# same export.  A collector answering 415 to JSON takes protobuf.
. "$(dirname "$0")/lib.sh"
PROTO="$UTRACE_SRC/tests/data/opentelemetry-proto"
DEMO="$UTRACE_BUILD/tests/ctx-demo"
command -v python3 > /dev/null || skip_all "python3 is missing"
command -v protoc > /dev/null || skip_all "protoc is missing (Debian's protobuf-compiler)"
unset OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES ${!OTEL_EXPORTER_OTLP_*}

"$UTRACE" record -o "$TMP/s.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err"
"$UTRACE" record -o "$TMP/c.dat" -- "$DEMO" 3 > /dev/null 2>> "$TMP/err"
check "the recordings" test -s "$TMP/s.dat" -a -s "$TMP/c.dat"

start_server() {   # each request's body kept in $TMP/NAME.raw too
	rm -rf "$TMP/$1.raw"
	mkdir "$TMP/$1.raw"
	otlp_start "$1" accept --raw-dir "$TMP/$1.raw"
}
trap 'otlp_stop; rm -rf "$TMP"' EXIT

# export NAME ARGS: both recordings, with spans and trace context
run() {
	local name=$1
	shift
	start_server "$name"
	"$UTRACE" export --otlp "$URL" -i "$TMP/s.dat" --batch 9 \
		--slice foo_bar.bar:foo_with_template_print.bar "$@" > /dev/null 2> "$TMP/err" &&
	"$UTRACE" export --otlp "$URL" -i "$TMP/c.dat" --trace-id trace --span-id span \
		--parent-id parent --slice ctx_begin.id:ctx_end.id "$@" > /dev/null 2>> "$TMP/err"
	echo $? > "$TMP/$name.rc"
	otlp_stop
}
run pb
run js --otlp-protocol http/json
check "protobuf (the default) and JSON exports: exit 0" \
	test "$(cat "$TMP/pb.rc")$(cat "$TMP/js.rc")" = 00
check "protobuf by default: Content-Type application/x-protobuf, gzip" \
	test "$(python3 -c 'import json,sys; print(sorted({(json.loads(l)["type"], json.loads(l)["encoding"]) for l in open(sys.argv[1])}))' "$TMP/pb.out")" = "[('application/x-protobuf', 'gzip')]"
check "--otlp-protocol http/json: application/json" \
	test "$(python3 -c 'import json,sys; print(sorted({json.loads(l)["type"] for l in open(sys.argv[1])}))' "$TMP/js.out")" = "['application/json']"
npb=$(ls "$TMP/pb.raw" | wc -l)
check "requests of both signals: $npb protobuf bodies" bash -c \
	"ls '$TMP/pb.raw' | grep -q logs.pb && ls '$TMP/pb.raw' | grep -q traces.pb"

# protoc --decode of every protobuf body, no field it does not know
decode() {   # decode FILE: text format on stdout
	local f=$1 svc
	case $f in
	*.logs.*) svc=opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest
		  set -- opentelemetry/proto/collector/logs/v1/logs_service.proto ;;
	*) svc=opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest
	   set -- opentelemetry/proto/collector/trace/v1/trace_service.proto ;;
	esac
	protoc -I "$PROTO" --decode="$svc" "$1" < "$f"
}
bad=0
for f in "$TMP"/pb.raw/*; do
	if ! decode "$f" > "$f.txt" 2> "$TMP/err" || grep -qE '^ *[0-9]+ *[:{]' "$f.txt"; then
		echo "# $f: $(head -3 "$TMP/err" "$f.txt")"
		bad=$((bad + 1))
	fi
done
check "protoc --decode: every protobuf body, no unknown field ($bad bad)" test "$bad" = 0
check "the decoded bodies carry what was sent (event_name, trace_id, parent_span_id, host.id)" \
	bash -c "cat '$TMP'/pb.raw/*.txt > '$TMP/all.txt' && grep -q 'event_name: \"ctx:ctx_begin\"' '$TMP/all.txt' &&
		 grep -q 'trace_id: \"' '$TMP/all.txt' && grep -q 'parent_span_id: \"' '$TMP/all.txt' &&
		 grep -q 'key: \"service.instance.id\"' '$TMP/all.txt' && grep -q 'array_value' '$TMP/all.txt' &&
		 grep -q 'time_unix_nano: [1-9]' '$TMP/all.txt'"

# the JSON bodies: strictly parsed against the same .proto files, the same
# messages as the protobuf bodies (but the observed times)
if /usr/bin/python3 -c 'import google.protobuf' 2> /dev/null; then
	protoc -I "$PROTO" --include_imports --descriptor_set_out="$TMP/otlp.desc" \
		opentelemetry/proto/collector/logs/v1/logs_service.proto \
		opentelemetry/proto/collector/trace/v1/trace_service.proto
	cat > "$TMP/same.py" <<'PY'
import base64, glob, json, re, sys
from google.protobuf import descriptor_pb2, descriptor_pool, json_format
try:
    from google.protobuf.message_factory import GetMessageClass
except ImportError:
    from google.protobuf import message_factory
    GetMessageClass = lambda d: message_factory.MessageFactory().GetPrototype(d)
fds = descriptor_pb2.FileDescriptorSet.FromString(open(sys.argv[1], 'rb').read())
pool = descriptor_pool.DescriptorPool()
for f in fds.file:
    pool.Add(f)
cls = {k: GetMessageClass(pool.FindMessageTypeByName(n)) for k, n in
       (('logs', 'opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest'),
        ('traces', 'opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest'))}
def unhex(o):
    # OTLP's JSON: the ids in hex, not base64 as protobuf's JSON mapping
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ('traceId', 'spanId', 'parentSpanId'):
                if not re.fullmatch('([0-9a-f]{2})+', v):
                    raise SystemExit('%s %r is not hex' % (k, v))
                o[k] = base64.b64encode(bytes.fromhex(v)).decode()
            else:
                unhex(v)
    elif isinstance(o, list):
        for v in o:
            unhex(v)
def norm(m):
    for rl in getattr(m, 'resource_logs', []):
        for sl in rl.scope_logs:
            for r in sl.log_records:
                r.observed_time_unix_nano = 0
    return m.SerializeToString(deterministic=True)
got = {}
for enc in ('pb', 'js'):
    out = []
    for f in sorted(glob.glob(sys.argv[2 if enc == 'pb' else 3] + '/*'),
                    key=lambda p: int(p.rsplit('/', 1)[1].split('.')[0])):
        if f.endswith('.txt'):
            continue
        kind = f.split('.')[-2]
        data = open(f, 'rb').read()
        if enc == 'pb':
            m = cls[kind].FromString(data)
        else:
            j = json.loads(data)
            unhex(j)
            m = json_format.ParseDict(j, cls[kind]())   # unknown fields: an error
            for rl in getattr(m, 'resource_spans', []):
                for ss in rl.scope_spans:
                    for s in ss.spans:
                        assert len(s.trace_id) == 16 and len(s.span_id) == 8
        out.append((kind, norm(m)))
    got[enc] = out
if got['pb'] != got['js']:
    raise SystemExit('%d protobuf and %d JSON bodies differ' % (len(got['pb']), len(got['js'])))
print(len(got['js']))
PY
	check "every JSON body parses strictly and equals its protobuf twin" \
		bash -c "/usr/bin/python3 '$TMP/same.py' '$TMP/otlp.desc' '$TMP/pb.raw' '$TMP/js.raw' > '$TMP/n' 2> '$TMP/err' && [ \$(cat '$TMP/n') = $npb ]"
else
	echo "# (no python3-protobuf for /usr/bin/python3: the JSON bodies' check is skipped)"
fi

# utrace's own JSON stays OTLP's: the collector sees the same records
check "the test collector reads both encodings to the same records" python3 -c '
import json, sys
def recs(p):
    out = []
    for l in open(p):
        b = json.loads(l)["body"]
        for rl in b.get("resourceLogs", []):
            for sl in rl["scopeLogs"]:
                for r in sl["logRecords"]:
                    r.pop("observedTimeUnixNano")
                    out.append(json.dumps(r, sort_keys=True))
    return out
a, b = recs(sys.argv[1]), recs(sys.argv[2])
sys.exit(0 if a == b and len(a) > 20 else 1)' "$TMP/pb.out" "$TMP/js.out"

"$UTRACE" export --otlp http://127.0.0.1:1 -i "$TMP/s.dat" --otlp-protocol grpc > /dev/null 2> "$TMP/err"
check "--otlp-protocol grpc: refused, said" grep -q "unknown protocol 'grpc'" "$TMP/err"

done_testing
