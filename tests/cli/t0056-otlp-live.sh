#!/usr/bin/env bash
# The live OTLP export keeps reading while the collector does not take its
# requests (issue 27, item 7): requests given up are dropped, counted, the
# export goes on until the process ends or it is told to stop, and its
# last line accounts for every event it took: sent + dropped by it + lost
# in the buffer, with the sent ones those the collector got.
. "$(dirname "$0")/lib.sh"

command -v python3 > /dev/null || skip_all "no python3 for the test collector"
SERVER="$UTRACE_SRC/tests/cli/otlp-server.py"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done; wait 2> /dev/null; rm -rf "$TMP"' EXIT
mono() { python3 -c 'import time; print(time.monotonic_ns())'; }

# a collector that answers 503 to its first 15 requests, then takes them
python3 "$SERVER" --port-file "$TMP/port" --out "$TMP/col.out" --mode 503 --times 15 \
	> "$TMP/col.log" 2>&1 &
pids+=($!)
wait_for test -s "$TMP/port"
URL="http://127.0.0.1:$(cat "$TMP/port")"

"$SAMPLE" --run 0 --log "$TMP/req.log" > /dev/null 2> "$TMP/prog.err" &
P=$!
pids+=("$P")
wait_traceable "$P" "$TMP/prog.err"
"$UTRACE" export --otlp "$URL" -p "$P" --retry-time 0.5 --timeout 1 --batch 20 \
	--batch-time 0.1 > /dev/null 2> "$TMP/exp.err" &
X=$!
pids+=("$X")
# the export is attached (it made the pool) before the events go on
wait_for bash -c '"$0" ps | grep -qE "^ *$1 sample +[0-9]+ +0 +[0-9.]+[KM]"' "$UTRACE" "$P"
t0=$(mono)
"$UTRACE" enable -p "$P" demo:demo_request
t1=$(mono)

check "requests are given up, and the export reads on" bash -c '
	wait_for grep -q "gave up after" "$0/exp.err" &&
	n=$(wc -l < "$0/req.log") && wait_for bash -c "[ \$(wc -l < \"\$0\") -gt $((n + 200)) ]" "$0/req.log" &&
	kill -0 "$1"' "$TMP" "$X"
check "later requests are delivered" wait_for test -s "$TMP/col.out"
kill -USR1 "$P"
wait "$P"
wait "$X"
st=$?
cat "$TMP/exp.err" | tail -3 | sed 's/^/# /'
check "the export ends with the process; exit 1 (some were dropped)" test "$st" = 1

# the demo_request events fired while on: those whose time is surely after
# the enable, and those that may be (fired while it was answered)
python3 - "$TMP/req.log" "$t0" "$t1" > "$TMP/window" <<'PY'
import sys
log, t0, t1 = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sure = maybe = 0
for line in open(log):
    _, rid, before, after = line.split()
    before, after = int(before), int(after)
    if before > t1:
        sure += 1
    elif after >= t0:
        maybe += 1
print(sure, maybe)
PY
# what the collector got: demo_request records
python3 - "$TMP/col.out" > "$TMP/got" <<'PY'
import json, sys
n = 0
for line in open(sys.argv[1]):
    body = json.loads(line)["body"]
    for rl in body.get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                n += "demo_request" in json.dumps(r)
print(n)
PY
last=$(tail -n 1 "$TMP/exp.err")
check "its last line: N events = sent + dropped + lost, N those fired while on" bash -c '
	read sure maybe < "$1"
	echo "# window: $sure sure, $maybe maybe; collector got $(cat "$2")" >&2
	[[ $0 =~ pid\ $3\ \(sample\):\ ([0-9]+)\ events\ while\ attached:\ ([0-9]+)\ sent,\ ([0-9]+)\ dropped\ by\ the\ export,\ ([0-9]+)\ lost\ in\ the\ buffer ]] || exit 1
	n=${BASH_REMATCH[1]} s=${BASH_REMATCH[2]} d=${BASH_REMATCH[3]} l=${BASH_REMATCH[4]}
	[ $n = $((s + d + l)) ] && [ $d -gt 0 ] && [ $s -gt 0 ] &&
	[ $n -ge $sure ] && [ $n -le $((sure + maybe)) ] && [ $s = "$(cat "$2")" ]' \
	"$last" "$TMP/window" "$TMP/got" "$P"

# --- told to stop: SIGINT ends it, with the same accounting ---------------
"$SAMPLE" --run 0 > /dev/null 2> "$TMP/prog2.err" &
P2=$!
pids+=("$P2")
wait_traceable "$P2" "$TMP/prog2.err"
"$UTRACE" enable -p "$P2" demo:demo_tick
"$UTRACE" export --otlp "http://127.0.0.1:9" -p "$P2" --retry-time 0.3 --timeout 1 \
	--batch-time 0.1 > /dev/null 2> "$TMP/int.err" &
X2=$!
pids+=("$X2")
check "a collector that is not there: the export runs on, dropping" bash -c '
	wait_for grep -q "gave up after" "$0/int.err" && sleep 1 && kill -0 "$1"' "$TMP" "$X2"
kill -INT "$X2"
wait "$X2"
check "SIGINT: it ends, all dropped, counted" bash -c '
	tail -n 1 "$0/int.err" >&2
	[[ $(tail -n 1 "$0/int.err") =~ pid\ $1\ \(sample\):\ ([0-9]+)\ events\ while\ attached:\ 0\ sent,\ ([0-9]+)\ dropped\ by\ the\ export,\ ([0-9]+)\ lost ]] &&
	[ ${BASH_REMATCH[1]} -gt 100 ] &&
	[ ${BASH_REMATCH[1]} = $((BASH_REMATCH[2] + BASH_REMATCH[3])) ]' "$TMP" "$P2"
kill "$P2"

done_testing
