#!/usr/bin/env bash
# Issue 34 item 4: exactly-once-able.  A collector that stored a request
# but whose answer came too late gets it again (OTLP delivers at least
# once): both copies carry the same log.record.uid, so a store that keeps
# one row per uid has every record once.  429 (with its Retry-After),
# 502 and 504 are tried again, after the server's wait; 415 is not; a
# partial success in either encoding is read and counted.
. "$(dirname "$0")/lib.sh"
command -v python3 > /dev/null || skip_all "python3 is missing"
unset OTEL_SERVICE_NAME OTEL_RESOURCE_ATTRIBUTES ${!OTEL_EXPORTER_OTLP_*}

"$UTRACE" record -e 'demo:*' -o "$TMP/r.dat" -- "$SAMPLE" --run 0.3 > /dev/null 2> "$TMP/err"
"$UTRACE" script -i "$TMP/r.dat" > "$TMP/r.txt" 2>> "$TMP/err"
nrec=$(wc -l < "$TMP/r.txt")
check "a recording ($nrec events)" test "$nrec" -ge 40

start_server() { otlp_start "$@"; }   # start_server NAME MODE [ARGS]
trap 'otlp_stop; rm -rf "$TMP"' EXIT
run() {   # run NAME ARGS: export r.dat to the server
	local name=$1
	shift
	"$UTRACE" export --otlp "$URL" -i "$TMP/r.dat" --batch 10 --timeout 1 --retry-time 30 "$@" \
		> /dev/null 2> "$TMP/$name.err"
	echo $? > "$TMP/$name.rc"
}
# uids OUT: "rows UNIQUE-UIDS SEQS-OF-DUPLICATES-WITH-ANOTHER-UID"
uids() {
	python3 -c '
import json, sys
rows, by_uid = 0, {}
for l in open(sys.argv[1]):
    for rl in json.loads(l)["body"].get("resourceLogs", []):
        for sl in rl["scopeLogs"]:
            for r in sl["logRecords"]:
                a = {x["key"]: list(x["value"].values())[0] for x in r["attributes"]}
                rows += 1
                by_uid.setdefault(a["log.record.uid"], set()).add(a["utrace.seq"])
# one uid, one record (its seq), however often it came
print(rows, len(by_uid), sum(len(v) > 1 for v in by_uid.values()))' "$1"
}

# --- stored, then stalled past the client's timeout: sent again ---
start_server keep stallkeep --times 2 --stall 2.5
run keep
check "stored-but-stalled requests: exit 0" test "$(cat "$TMP/keep.rc")" = 0
read -r rows uniq mixed < <(uids "$TMP/keep.out")
check "the collector has copies: $rows rows for $nrec records" test "$rows" -gt "$nrec"
check "one log.record.uid per record: $uniq uids, no uid for two records" \
	test "$uniq" = "$nrec" -a "$mixed" = 0
otlp_stop

# --- 429 with Retry-After: 2, then taken ---
start_server r429 429 --times 2 --retry-after 2
run r429
check "429 twice: exit 0, every record there" \
	test "$(cat "$TMP/r429.rc")" = 0 -a "$(uids "$TMP/r429.out" | cut -d' ' -f2)" = "$nrec"
check "429: the next try waited for Retry-After (2 s)" python3 -c '
import sys
t = [float(l.split()[0]) for l in open(sys.argv[1])]
sys.exit(0 if len(t) >= 3 and t[1] - t[0] >= 1.9 and t[2] - t[1] >= 1.9 else 1)' "$TMP/r429.out.attempts"
otlp_stop
for code in 502 504; do
	start_server "r$code" "$code" --times 2
	run "r$code"
	check "$code twice: tried again (backoff), exit 0, all there" \
		test "$(cat "$TMP/r$code.rc")" = 0 -a "$(grep -c " $code\$" "$TMP/r$code.out.attempts")" = 2 -a \
		"$(uids "$TMP/r$code.out" | cut -d' ' -f2)" = "$nrec"
	otlp_stop
done

# --- 415 to JSON (a receiver of protobuf only): not tried again ---
start_server pbonly pbonly
run js --otlp-protocol http/json
check "415 to http/json: exit 1, one try, said" \
	test "$(cat "$TMP/js.rc")" = 1 -a "$(grep -c ' 415$' "$TMP/pbonly.out.attempts")" = 1
check "415: the server's message said" grep -q "HTTP 415: unsupported content type" "$TMP/js.err"
run pb
check "the same receiver takes the default, protobuf" \
	test "$(cat "$TMP/pb.rc")" = 0 -a "$(uids "$TMP/pbonly.out" | cut -d' ' -f2)" = "$nrec"
otlp_stop

# --- partial success, protobuf and JSON answers ---
for proto in http/protobuf http/json; do
	start_server partial partial
	run partial --otlp-protocol "$proto"
	check "partial success ($proto): counted, exit 1" \
		bash -c "[ \$(cat '$TMP/partial.rc') = 1 ] && grep -q 'rejected 2 of 10 log records: two too old' '$TMP/partial.err' &&
			 grep -q 'rejected 2 log records and 0 spans' '$TMP/partial.err'"
	otlp_stop
done

done_testing
