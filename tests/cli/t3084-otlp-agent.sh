#!/usr/bin/env bash
# Issue 34 item 5: utrace agent follows every traced process of its
# runtime directory as they start and exit, and ships their events to
# the collector.  40 short-lived programs (8 at a time) against a
# collector that stalls: every program is followed, none waits for the
# collector (each exits in its time), every event it fired is accounted
# for (sent + dropped by the agent + lost in its buffer), what the agent
# says it sent is what the collector has, and when they are gone the
# agent keeps nothing of them (bounded memory).  --config FILE, SIGUSR1.
. "$(dirname "$0")/lib.sh"
SERVER="$UTRACE_SRC/tests/cli/otlp-server.py"
command -v python3 > /dev/null || skip_all "python3 is missing"
unset OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES ${!OTEL_EXPORTER_OTLP_*}
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$TMP"' EXIT

# a collector whose first 4 requests stall 3 s (past the agent's 1 s
# timeout and 1.5 s retry time: given up, dropped), then takes them
python3 "$SERVER" --port-file "$TMP/port" --out "$TMP/col.out" --mode stall --times 4 \
	--stall 3 > "$TMP/col.log" 2>&1 &
pids+=($!)
wait_for test -s "$TMP/port"
URL="http://127.0.0.1:$(cat "$TMP/port")"

cat > "$TMP/agent.conf" <<CONF
# utrace agent's configuration (t3084)
otlp $URL
event demo:demo_request
batch-time 0.1
timeout 1
retry-time = 1.5
resource deployment.environment=test
CONF
"$UTRACE" agent --config "$TMP/agent.conf" --batch 20 > /dev/null 2> "$TMP/agent.err" &
A=$!
pids+=("$A")
# (SIGUSR1 asks it for its line once it catches it)
check "the agent runs" wait_for catches "$A" 10

# 40 programs, 8 at a time, their events on from their start
for wave in 1 2 3 4 5; do
	for k in 1 2 3 4 5 6 7 8; do
		i=$(( (wave - 1) * 8 + k ))
		( s=$(date +%s%N)
		  UTRACE_EVENTS=demo:demo_request "$SAMPLE" --run 0.6 --log "$TMP/log$i" > /dev/null 2>&1
		  echo "$? $(( ($(date +%s%N) - s) / 1000000 ))" > "$TMP/ran$i" ) &
	done
	wait_for bash -c 'for i in $(seq '$(( (wave - 1) * 8 + 1 ))' '$(( wave * 8 ))'); do [ -s "$0/ran$i" ] || exit 1; done' "$TMP"
done
check "40 programs ran, each exit 0" test "$(cat "$TMP"/ran* | grep -c '^0 ')" = 40
slowest=$(cat "$TMP"/ran* | cut -d' ' -f2 | sort -n | tail -1)
check "none waited for the stalled collector: the slowest took $slowest ms (--run 0.6)" \
	test "$slowest" -lt 2800
fired=$(cat "$TMP"/log* | wc -l)

# the collector takes requests again once its stalls are over
check "requests given up while it stalls, then taken again" wait_for bash -c '
	grep -q "gave up after" "$0" && grep -q "the collector takes the requests again" "$0"' \
	"$TMP/agent.err"
# all read out, sent, and forgotten: SIGUSR1 says so
check "the agent follows them all, sends all it has, and forgets them" wait_for bash -c '
	kill -USR1 '$A'; sleep 0.2
	tail -1 "$0" | grep -qE "^utrace agent: 40 processes followed \(0 now, 40 ended, 0 not followable, 0 gone before\).* 0 waiting,.* 0 processes kept"' \
	"$TMP/agent.err"
hwm=$(awk '/VmHWM/ {print $2}' /proc/$A/status)
kill -TERM "$A"
wait "$A"
st=$?
tail -1 "$TMP/agent.err" | sed 's/^/# /'
check "SIGTERM: the agent ends, exit 1 (some were dropped)" test "$st" = 1
# (a sanitizer build's shadow memory and quarantine: 114 MB seen; 256 MB there)
lim=65536
sanitizer_build && lim=262144
check "the agent's peak memory: $hwm kB (< $((lim / 1024)) MB)" test "$hwm" -lt $lim
read -r events sent dropped waiting lost < <(tail -1 "$TMP/agent.err" | sed -E \
	's/.*, ([0-9]+) events: ([0-9]+) sent, ([0-9]+) dropped by the agent, ([0-9]+) waiting, ([0-9]+) lost.*/\1 \2 \3 \4 \5/')
check "every event fired is accounted for: fired $fired = $events (sent $sent + dropped $dropped + lost $lost)" \
	test "$fired" = "$events" -a "$events" = $((sent + dropped + lost)) -a "$waiting" = 0
check "the stalled requests were dropped, counted ($dropped)" test "$dropped" -gt 0
got=$(python3 -c '
import json, sys
uids, pids, env = set(), set(), set()
for l in open(sys.argv[1]):
    for rl in json.loads(l)["body"].get("resourceLogs", []):
        ra = {a["key"]: list(a["value"].values())[0] for a in rl["resource"]["attributes"]}
        pids.add(ra["process.pid"])
        env.add(ra.get("deployment.environment"))
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                if r["eventName"] == "demo:demo_request":
                    uids.add([a["value"]["stringValue"] for a in r["attributes"] if a["key"] == "log.record.uid"][0])
print(len(uids), len(pids), sorted(env))' "$TMP/col.out")
check "the collector has what the agent sent: $got" test "$got" = "$sent 40 ['test']"

# a config line that is not an option
printf 'otlp %s\n--event x\n' "$URL" > "$TMP/bad.conf"
"$UTRACE" agent --config "$TMP/bad.conf" > /dev/null 2> "$TMP/err"
check "a bad --config line: refused, said with its line" grep -q "bad.conf:2: '--event' is not an option name" "$TMP/err"
"$UTRACE" agent --otlp "$URL" -i x > /dev/null 2> "$TMP/err"
check "agent -i: refused" grep -q "no -i: the agent follows" "$TMP/err"

done_testing
