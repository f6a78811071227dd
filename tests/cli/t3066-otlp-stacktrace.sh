#!/usr/bin/env bash
# utrace export --otlp with call stacks (issue 32): a recording with
# --call-graph dwarf of stack-demo (the chain twice, a linked library)
# sends its events as log records, each with its stack as the
# code.stacktrace attribute (one frame a line, innermost first, as utrace
# script names them); the stack records are no log records of their own.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "no python3 for the loopback collector"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
SERVER="$UTRACE_SRC/tests/cli/otlp-server.py"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
r=$!
printf 'chain\nchain\nlib\nquit\n' > "$TMP/ff"
wait "$r"

python3 "$SERVER" --port-file "$TMP/port" --out "$TMP/srv.out" --mode accept > "$TMP/srv.log" 2>&1 &
SRV=$!
trap 'kill "$SRV" 2> /dev/null; wait "$SRV" 2> /dev/null; rm -rf "$TMP"' EXIT
wait_for test -s "$TMP/port" || skip_all "the loopback collector did not start"
check "export: exit 0" "$UTRACE" export --otlp "http://127.0.0.1:$(cat "$TMP/port")" \
	-i "$TMP/r.dat" --timeout 2 --retry-time 30
cat > "$TMP/check.py" <<'PY'
import json, sys
recs = []
for line in open(sys.argv[1]):
    req = json.loads(line)
    for rl in req["body"].get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            recs += sl["logRecords"]
def attrs(r):
    return {a["key"]: a["value"] for a in r["attributes"]}
names = [r.get("eventName", "").split(":")[-1] for r in recs]
if names != ["hit", "hit", "hit"]:
    sys.exit("records: %s" % names)
for r, want in zip(recs, ["sd_inner", "sd_inner", "sdlib_inner"]):
    st = attrs(r).get("code.stacktrace", {}).get("stringValue")
    if st is None:
        sys.exit("no code.stacktrace")
    frames = [f.split("+")[0] for f in st.split("\n")]
    print("# " + " ".join(frames))
    if frames[:2] != ["sd_leaf", want] or "main" not in frames:
        sys.exit("frames: %s" % frames)
PY
check "three log records (no stack record of its own), each with its code.stacktrace" \
	python3 "$TMP/check.py" "$TMP/srv.out"
check "the stacktrace is what utrace script prints" bash -c '
	"$0" script -i "$1" | awk "/<user stack trace>/ { n++ } n == 1 && /^ => / { print \$2 }" > "$2/want" &&
	python3 -c "
import json, sys
for line in open(sys.argv[1]):
    for rl in json.loads(line)[\"body\"].get(\"resourceLogs\", []):
        r = rl[\"scopeLogs\"][0][\"logRecords\"][0]
        print({a[\"key\"]: a[\"value\"] for a in r[\"attributes\"]}[\"code.stacktrace\"][\"stringValue\"])
        sys.exit(0)
" "$2/srv.out" > "$2/got" && diff -u "$2/want" "$2/got" >&2' "$UTRACE" "$TMP/r.dat" "$TMP"
done_testing
