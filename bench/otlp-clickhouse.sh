#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Issue 34 item 7: a fleet's path end to end, on this machine.
#
#   four "machines" (ctx-demo recordings exported with their own
#   host.name) -> utrace export (OTLP/HTTP protobuf) -> a receiver ->
#   ClickHouse: two shards (two clickhouse-server on 127.0.0.1) behind
#   Distributed tables, in the OpenTelemetry ClickHouse exporter's layout
#   adapted to Debian 12's server (18.16: no Map type, so attributes are
#   Nested key and value arrays; no DateTime64, so a DateTime and the ns;
#   ReplacingMergeTree by log.record.uid)
#   -> the SQL a fleet user asks, compared with `utrace report`.
#
# The stand-in for the Collector: none is packaged for Debian; the test
# receiver (tests/cli/otlp-server.py, which decodes protobuf with the
# opentelemetry-proto tables) keeps each request as a JSON line, and a
# loader writes the rows with clickhouse-client, as the Collector's
# clickhouseexporter would (the same columns, the sharding by trace id).
#
# usage: bench/otlp-clickhouse.sh [BUILD-DIR]   (needs clickhouse-server,
# clickhouse-client, python3; prints the comparisons, exits 1 on a
# mismatch)
set -eu
SRC=$(cd "$(dirname "$0")/.." && pwd)
BUILD=$(cd "${1:-$SRC/build}" && pwd)
U="$BUILD/tools/utrace/utrace"
DEMO="$BUILD/tests/ctx-demo"
for c in clickhouse-server clickhouse-client python3; do
	command -v "$c" > /dev/null || { echo "otlp-clickhouse: $c is missing" >&2; exit 2; }
done
W=$(mktemp -d "${TMPDIR:-/tmp}/utrace-ch.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null || true; done
	wait 2> /dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT
BASE=$(( 20000 + RANDOM % 20000 ))

# --- two shards ---
for s in 0 1; do
	d="$W/ch$s"
	mkdir -p "$d/data" "$d/tmp"
	cat > "$d/users.xml" <<'EOF'
<yandex><profiles><default/></profiles><users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users><quotas><default/></quotas></yandex>
EOF
	cat > "$d/config.xml" <<EOF
<yandex>
  <logger><level>warning</level><log>$d/log</log><errorlog>$d/err</errorlog></logger>
  <http_port>$((BASE + 10 * s))</http_port><tcp_port>$((BASE + 10 * s + 1))</tcp_port>
  <interserver_http_port>$((BASE + 10 * s + 2))</interserver_http_port>
  <listen_host>127.0.0.1</listen_host>
  <path>$d/data/</path><tmp_path>$d/tmp/</tmp_path>
  <users_config>$d/users.xml</users_config>
  <default_profile>default</default_profile><default_database>default</default_database>
  <mark_cache_size>5368709</mark_cache_size>
  <remote_servers><fleet>
    <shard><replica><host>127.0.0.1</host><port>$((BASE + 1))</port></replica></shard>
    <shard><replica><host>127.0.0.1</host><port>$((BASE + 11))</port></replica></shard>
  </fleet></remote_servers>
</yandex>
EOF
	nice clickhouse-server --config-file="$d/config.xml" > "$d/out" 2>&1 &
	pids+=($!)
done
ch() { clickhouse-client --port $((BASE + 1)) "$@"; }
for s in 0 1; do
	for i in $(seq 100); do
		clickhouse-client --port $((BASE + 10 * s + 1)) --query 'SELECT 1' > /dev/null 2>&1 && break
		sleep 0.2
	done
done
echo "two shards: clickhouse-server $(ch --query 'SELECT version()') on ports $((BASE + 1)), $((BASE + 11))"

# --- the tables: the exporter's otel_logs / otel_traces, adapted ---
for s in 0 1; do
	clickhouse-client --port $((BASE + 10 * s + 1)) --multiquery --query "
CREATE TABLE otel_logs (
  Timestamp DateTime, TimeUnixNano UInt64, TraceId String, SpanId String, SeverityText String,
  SeverityNumber Int32, ServiceName String, HostName String, Body String,
  EventName String, Uid String,
  ResourceAttributes Nested(key String, value String),
  LogAttributes Nested(key String, value String)
) ENGINE = ReplacingMergeTree() PARTITION BY toDate(Timestamp)
  ORDER BY (ServiceName, Uid);
CREATE TABLE otel_traces (
  Timestamp DateTime, StartTimeUnixNano UInt64, TraceId String, SpanId String, ParentSpanId String,
  SpanName String, ServiceName String, HostName String, Duration Int64,
  SpanAttributes Nested(key String, value String)
) ENGINE = MergeTree() PARTITION BY toDate(Timestamp)
  ORDER BY (ServiceName, SpanName, StartTimeUnixNano);
CREATE TABLE otel_logs_all AS otel_logs ENGINE = Distributed(fleet, default, otel_logs, cityHash64(TraceId, Uid));
CREATE TABLE otel_traces_all AS otel_traces ENGINE = Distributed(fleet, default, otel_traces, cityHash64(TraceId));" \
		2>&1 | grep -v '^$' || true
done

# --- four machines, one receiver ---
python3 "$SRC/tests/cli/otlp-server.py" --port-file "$W/port" --out "$W/otlp.out" --mode accept \
	> "$W/receiver.log" 2>&1 &
pids+=($!)
for i in $(seq 100); do [ -s "$W/port" ] && break; sleep 0.1; done
URL="http://127.0.0.1:$(cat "$W/port")"
for m in 1 2 3 4; do
	"$U" record -o "$W/m$m.dat" -- "$DEMO" $((10 * m)) > "$W/m$m.ids" 2> /dev/null
	"$U" export --otlp "$URL" -i "$W/m$m.dat" --resource host.name=machine-$m \
		--trace-id trace --span-id span --parent-id parent \
		--slice ctx_begin.id:ctx_end.id 2> "$W/m$m.export"
	"$U" report -i "$W/m$m.dat" --latency ctx_begin.id:ctx_end.id > "$W/m$m.report" 2>&1
done
# one machine's export twice (a retry's copies): the store keeps one
"$U" export --otlp "$URL" -i "$W/m1.dat" --resource host.name=machine-1 \
	--trace-id trace --span-id span --parent-id parent 2> /dev/null

# --- the loader (the Collector's clickhouseexporter, as rows) ---
python3 - "$W/otlp.out" "$W/logs.tsv" "$W/traces.tsv" <<'PY'
import json, sys
def kv(attrs):
    out = {}
    for a in attrs:
        (_, v), = a['value'].items()
        out[a['key']] = v if isinstance(v, str) else json.dumps(v)
    return out
def esc(s):
    return str(s).replace('\\', '\\\\').replace('\t', '\\t').replace('\n', '\\n')
def arr(xs):
    return '[' + ','.join("'" + str(x).replace('\\', '\\\\').replace("'", "\\'") + "'" for x in xs) + ']'
def ts(ns):
    import time
    return time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime(int(ns) // 10**9))
logs, traces = open(sys.argv[2], 'w'), open(sys.argv[3], 'w')
for line in open(sys.argv[1]):
    b = json.loads(line)['body']
    for rl in b.get('resourceLogs', []):
        ra = kv(rl['resource']['attributes'])
        for sl in rl['scopeLogs']:
            for r in sl['logRecords']:
                la = kv(r['attributes'])
                logs.write('\t'.join(esc(x) for x in (
                    ts(r['timeUnixNano']), r['timeUnixNano'], r.get('traceId', ''), r.get('spanId', ''),
                    r['severityText'], r['severityNumber'], ra['service.name'],
                    ra['host.name'], r['body']['stringValue'], r.get('eventName', ''),
                    la['log.record.uid'], arr(ra), arr(ra.values()), arr(la),
                    arr(la.values()))) + '\n')
    for rs in b.get('resourceSpans', []):
        ra = kv(rs['resource']['attributes'])
        for ss in rs['scopeSpans']:
            for s in ss['spans']:
                sa = kv(s['attributes'])
                traces.write('\t'.join(esc(x) for x in (
                    ts(s['startTimeUnixNano']), s['startTimeUnixNano'], s['traceId'], s['spanId'],
                    s.get('parentSpanId', ''), s['name'], ra['service.name'],
                    ra['host.name'],
                    int(s['endTimeUnixNano']) - int(s['startTimeUnixNano']),
                    arr(sa), arr(sa.values()))) + '\n')
PY
ch --query 'INSERT INTO otel_logs_all FORMAT TabSeparated' < "$W/logs.tsv"
ch --query 'INSERT INTO otel_traces_all FORMAT TabSeparated' < "$W/traces.tsv"
# the Distributed tables write their shards in the background
for i in $(seq 100); do
	[ "$(ch --query 'SELECT count() FROM otel_traces_all')" = "$(wc -l < "$W/traces.tsv")" ] &&
	[ "$(ch --query 'SELECT count() FROM otel_logs_all')" = "$(wc -l < "$W/logs.tsv")" ] && break
	sleep 0.2
done
status=0
say() { printf '%-58s %s\n' "$1" "$2"; }
cmp_eq() {   # cmp_eq WHAT GOT WANT
	if [ "$2" = "$3" ]; then say "$1" "same ($2)"; else say "$1" "DIFFERENT: $2 vs $3"; status=1; fi
}
echo "rows: $(ch --query 'SELECT count() FROM otel_logs_all') log rows, $(ch --query 'SELECT count() FROM otel_traces_all') spans;" \
	"per shard: $(clickhouse-client --port $((BASE + 1)) --query 'SELECT count() FROM otel_logs') + $(clickhouse-client --port $((BASE + 11)) --query 'SELECT count() FROM otel_logs') log rows"

# 1. the latency per host and process: SQL against utrace report
echo "== latency of ctx_begin.id -> ctx_end.id per host and process (us: count min mean max)"
ch --query "SELECT HostName, ServiceName, count(), min(Duration), round(avg(Duration)), max(Duration)
            FROM otel_traces_all WHERE SpanName = 'ctx_begin'
            GROUP BY HostName, ServiceName ORDER BY HostName, ServiceName FORMAT TabSeparated" > "$W/sql.lat"
for m in 1 2 3 4; do
	awk -v m=$m '/^  [a-z]/ && NF == 8 { printf "machine-%s\t%s\t%d\t%.3f\t%.3f\t%.3f\n", m, $1, $2, $3, $4, $5 }' \
		"$W/m$m.report"
done > "$W/report.lat"
python3 - "$W/sql.lat" "$W/report.lat" <<'PY' || status=1
import sys
sql = [l.split('\t') for l in open(sys.argv[1]).read().splitlines()]
rep = [l.split('\t') for l in open(sys.argv[2]).read().splitlines()]
bad = 0
for (h, s, n, lo, mean, hi), (h2, s2, n2, lo2, mean2, hi2) in zip(sql, rep):
    same = (h, s, n) == (h2, s2, n2) and abs(int(lo) / 1000 - float(lo2)) < 0.002 and \
        abs(int(hi) / 1000 - float(hi2)) < 0.002 and abs(float(mean) / 1000 - float(mean2)) < 0.002
    print('  %-10s %-9s SQL %4s %11.3f %11.3f %11.3f  report %4s %11s %11s %11s  %s' % (
        h, s, n, int(lo) / 1000, float(mean) / 1000, int(hi) / 1000, n2, lo2, mean2, hi2,
        'same' if same else 'DIFFERENT'))
    bad += not same
sys.exit(1 if bad or len(sql) != len(rep) or not sql else 0)
PY
echo "== latency histogram per host (log2 buckets of ms, all processes)"
ch --query "SELECT HostName, floor(log2(Duration / 1000000)) AS b, count() FROM otel_traces_all
            GROUP BY HostName, b ORDER BY HostName, b FORMAT PrettyCompactNoEscapes"

# 2. top N by key: events by name, SQL against utrace script
echo "== top 3 event names (records, after dropping the re-sent copies)"
ch --query "SELECT EventName, uniqExact(Uid) AS n FROM otel_logs_all GROUP BY EventName
            ORDER BY n DESC, EventName LIMIT 3 FORMAT TabSeparated" > "$W/sql.top"
for m in 1 2 3 4; do "$U" script -i "$W/m$m.dat" 2> /dev/null; done |
	sed -E 's/^.*\] [^ ]+ +[0-9.]+: ([a-z_]+):.*/ctx:\1/' | sort | uniq -c |
	awk '{print $2 "\t" $1}' | sort -t$'\t' -k2,2nr -k1,1 | head -3 > "$W/script.top"
cmp_eq "top 3 (SQL vs utrace script)" "$(tr '\t\n' ' ;' < "$W/sql.top")" "$(tr '\t\n' ' ;' < "$W/script.top")"
cmp_eq "log rows with copies vs distinct log.record.uid" \
	"$(ch --query 'SELECT count() - uniqExact(Uid) FROM otel_logs_all')" \
	"$("$U" script -i "$W/m1.dat" 2> /dev/null | wc -l)"

# 3. one request across processes
read -r _ trace fspan < <(head -1 "$W/m3.ids")
echo "== one request of machine-3: trace $trace"
ch --query "SELECT ServiceName, SpanName, SpanId, ParentSpanId, Duration FROM otel_traces_all
            WHERE TraceId = '$trace' ORDER BY StartTimeUnixNano FORMAT PrettyCompactNoEscapes"
cmp_eq "its spans: the frontend's, and the backend's child of it" \
	"$(ch --query "SELECT count(), countIf(ParentSpanId = '$fspan'), countIf(SpanId = '$fspan') FROM otel_traces_all WHERE TraceId = '$trace'" | tr '\t' ' ')" \
	"2 1 1"
cmp_eq "its log records, in both processes" \
	"$(ch --query "SELECT uniqExact(Uid), uniqExact(arrayElement(ResourceAttributes.value, indexOf(ResourceAttributes.key, 'process.pid'))) FROM otel_logs_all WHERE TraceId = '$trace'" | tr '\t' ' ')" \
	"5 2"
exit $status
