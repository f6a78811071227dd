#!/usr/bin/env bash
# Issue 34 item 1: who sent what.  utrace export's resources carry the
# OpenTelemetry semantic conventions' identity (host.name, host.id,
# service.name, service.instance.id, process.*, telemetry.sdk.*), and the
# SDKs' variables are read as the SDKs read them: OTEL_SERVICE_NAME,
# OTEL_RESOURCE_ATTRIBUTES, OTEL_EXPORTER_OTLP_ENDPOINT / _HEADERS /
# _TIMEOUT / _COMPRESSION / _PROTOCOL and their _LOGS_ / _TRACES_ forms,
# under the command line's options (--otlp, --service, --resource, ...).
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is missing"
unset OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES ${!OTEL_EXPORTER_OTLP_*}

"$UTRACE" record -o "$TMP/s.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err"
check "a recording" test -s "$TMP/s.dat"

start_server() { otlp_start "$1" accept; }
trap 'otlp_stop; rm -rf "$TMP"' EXIT

# res OUT: each request's path, headers, encoding and its resources'
# attributes, one JSON line per resource
cat > "$TMP/res.py" <<'PY'
import json, sys
for line in open(sys.argv[1]):
    q = json.loads(line)
    b = q['body']
    for r in b.get('resourceLogs', []) + b.get('resourceSpans', []):
        a = {}
        for kv in r['resource']['attributes']:
            (k, v), = kv['value'].items()
            if kv['key'] in a:
                print('TWICE', kv['key'])
            a[kv['key']] = v
        print(json.dumps({'path': q['path'], 'encoding': q['encoding'],
                          'headers': q['headers'], 'attrs': a}))
PY
# attr OUT KEY: the values of resource attribute KEY, sorted, one a line
attr() {
	python3 -c '
import json, sys
v = sorted({str(json.loads(l)["attrs"].get(sys.argv[2], "-")) for l in open(sys.argv[1])})
print("\n".join(v))' <(python3 "$TMP/res.py" "$TMP/$1.out") "$2"
}
field() {   # field OUT PY-EXPRESSION-OF-q: the values, sorted, unique
	python3 -c '
import json, sys
print("\n".join(sorted({str(eval(sys.argv[2], {"q": json.loads(l)})) for l in open(sys.argv[1])})))' \
		<(python3 "$TMP/res.py" "$TMP/$1.out") "$2"
}
SL=(--slice foo_bar.bar:foo_with_template_print.bar)

# --- the identity, with no variable set ---
start_server plain
"$UTRACE" export --otlp "$URL" -i "$TMP/s.dat" "${SL[@]}" > /dev/null 2> "$TMP/err"
check "export: exit 0" test $? = 0
check "no attribute twice" bash -c "! python3 '$TMP/res.py' '$TMP/plain.out' | grep -q TWICE"
check "host.name is the machine's name" test "$(attr plain host.name)" = "$(hostname)"
if [ -s /etc/machine-id ]; then
	check "host.id is /etc/machine-id" test "$(attr plain host.id)" = "$(cat /etc/machine-id)"
fi
check "os.type linux" test "$(attr plain os.type)" = linux
check "telemetry.sdk.name utrace" test "$(attr plain telemetry.sdk.name)" = utrace
check "telemetry.sdk.language and version" \
	test "$(attr plain telemetry.sdk.language)" = cpp -a "$(attr plain telemetry.sdk.version)" = 0.1.0
check "service.name: the program's name" test "$(attr plain service.name)" = sample
check "process.executable.name, process.pid" \
	test "$(attr plain process.executable.name)" = sample -a "$(attr plain process.pid | wc -l)" = 1
check "service.instance.id: one UUID, on logs and spans alike" bash -c \
	"[ \$(echo '$(attr plain service.instance.id)' | grep -cE '^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$') = 1 ]"
id1=$(attr plain service.instance.id)
otlp_stop
start_server again
"$UTRACE" export --otlp "$URL" -i "$TMP/s.dat" > /dev/null 2> "$TMP/err"
check "service.instance.id: the same on a second export" test "$(attr again service.instance.id)" = "$id1"
otlp_stop
"$UTRACE" record -o "$TMP/s2.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err"
start_server other
"$UTRACE" export --otlp "$URL" -i "$TMP/s2.dat" > /dev/null 2> "$TMP/err"
check "service.instance.id: another for another process" \
	test "$(attr other service.instance.id)" != "$id1"
otlp_stop

# --- the variables ---
start_server env
OTEL_SERVICE_NAME=checkout \
OTEL_RESOURCE_ATTRIBUTES='deployment.environment=prod, team=pay%2Cments ,service.name=nope,host.name=box-7' \
OTEL_EXPORTER_OTLP_ENDPOINT="$URL/base/" \
OTEL_EXPORTER_OTLP_LOGS_ENDPOINT="$URL/custom/logs" \
OTEL_EXPORTER_OTLP_HEADERS='api-key=se%20cret,x-tenant=t1' \
OTEL_EXPORTER_OTLP_TRACES_HEADERS='x-only-traces=yes' \
OTEL_EXPORTER_OTLP_COMPRESSION=none \
OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip \
OTEL_EXPORTER_OTLP_TIMEOUT=5000 \
	"$UTRACE" export -i "$TMP/s.dat" "${SL[@]}" > /dev/null 2> "$TMP/err"
check "with OTEL_EXPORTER_OTLP_ENDPOINT and no --otlp: exit 0" test $? = 0
check "_LOGS_ENDPOINT as it is, traces at ENDPOINT/v1/traces" \
	test "$(field env "q['path']" | tr '\n' ' ')" = "/base/v1/traces /custom/logs "
check "OTEL_SERVICE_NAME over OTEL_RESOURCE_ATTRIBUTES' service.name" \
	test "$(attr env service.name)" = checkout
check "OTEL_RESOURCE_ATTRIBUTES, %-decoded, trimmed" \
	test "$(attr env team)" = "pay,ments" -a "$(attr env deployment.environment)" = prod
check "OTEL_RESOURCE_ATTRIBUTES over the machine's host.name" test "$(attr env host.name)" = box-7
check "OTEL_EXPORTER_OTLP_HEADERS on the logs, %-decoded" \
	test "$(field env "(q['path'], q['headers'].get('api-key'), q['headers'].get('x-tenant'))" | grep custom)" = "('/custom/logs', 'se cret', 't1')"
check "_TRACES_HEADERS instead of them on the traces" \
	test "$(field env "(q['path'], q['headers'].get('api-key'), q['headers'].get('x-only-traces'))" | grep traces)" = "('/base/v1/traces', None, 'yes')"
check "OTEL_EXPORTER_OTLP_COMPRESSION=none, _TRACES_COMPRESSION=gzip" \
	test "$(field env "(q['path'], q['encoding'])" | tr '\n' ' ')" = "('/base/v1/traces', 'gzip') ('/custom/logs', '') "
otlp_stop

# --- the command line over the variables ---
start_server cmd
OTEL_SERVICE_NAME=checkout OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:1/nowhere \
OTEL_RESOURCE_ATTRIBUTES='team=a' \
	"$UTRACE" export --otlp "$URL" -i "$TMP/s.dat" --service web --resource team=b \
	--resource 'k=v=w' --header X-A=1 > /dev/null 2> "$TMP/err"
check "--otlp over OTEL_EXPORTER_OTLP_ENDPOINT: exit 0" test $? = 0
check "--service over OTEL_SERVICE_NAME" test "$(attr cmd service.name)" = web
check "--resource over OTEL_RESOURCE_ATTRIBUTES; '=' in a value" \
	test "$(attr cmd team)" = b -a "$(attr cmd k)" = v=w
check "--header" test "$(field cmd "q['headers'].get('x-a')")" = 1
otlp_stop

# --- a live process: its command line from /proc ---
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
UTRACE_EVENTS='demo:*' "$SAMPLE" --run 20 --log "$TMP/live.log" > /dev/null 2> "$TMP/prog.err" &
P=$!
wait_traceable "$P" "$TMP/prog.err"
start_server live
"$UTRACE" export --otlp "$URL" -p "$P" --batch-time 0.1 > /dev/null 2> "$TMP/live.err" &
X=$!
wait_for test -s "$TMP/live.out"
kill -USR1 "$P"
wait "$P"
wait "$X"
check "export -p: process.command_line, as /proc says" \
	test "$(attr live process.command_line)" = "$SAMPLE --run 20 --log $TMP/live.log"
check "export -p: one service.instance.id, not the file's" bash -c \
	"[ \$(echo '$(attr live service.instance.id)' | wc -l) = 1 ] && [ '$(attr live service.instance.id)' != '$id1' ]"
otlp_stop
unset UTRACE_RUNTIME_DIR

# --- wrong values: one line naming what is wrong, nothing sent ---
bad() {   # bad VAR=VALUE PATTERN
	env "$1" "$UTRACE" export --otlp http://127.0.0.1:1 -i "$TMP/s.dat" > /dev/null 2> "$TMP/err"
	local st=$?
	[ "$st" = 2 ] && [ "$(wc -l < "$TMP/err")" = 1 ] && grep -q -- "$2" "$TMP/err"
}
check "OTEL_EXPORTER_OTLP_TIMEOUT=abc refused" bad OTEL_EXPORTER_OTLP_TIMEOUT=abc "OTEL_EXPORTER_OTLP_TIMEOUT: 'abc'"
check "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=grpc refused" bad OTEL_EXPORTER_OTLP_LOGS_PROTOCOL=grpc "OTEL_EXPORTER_OTLP_LOGS_PROTOCOL: 'grpc'"
check "OTEL_EXPORTER_OTLP_COMPRESSION=br refused" bad OTEL_EXPORTER_OTLP_COMPRESSION=br "unknown compression 'br'"
check "OTEL_RESOURCE_ATTRIBUTES=novalue refused" bad OTEL_RESOURCE_ATTRIBUTES=novalue "'novalue' is not KEY=VALUE"
check "OTEL_EXPORTER_OTLP_HEADERS=a=%zz refused" bad OTEL_EXPORTER_OTLP_HEADERS=a=%zz "OTEL_EXPORTER_OTLP_HEADERS"
"$UTRACE" export -i "$TMP/s.dat" > /dev/null 2> "$TMP/err"
check "no endpoint at all: said" grep -q "OTEL_EXPORTER_OTLP_ENDPOINT" "$TMP/err"

done_testing
