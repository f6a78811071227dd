#!/usr/bin/env bash
# utrace convert --format json: Chrome's trace event format, read back
# with python3's json module (strict: no raw control bytes in strings)
# and compared field by field with `utrace script --json` of the same
# file; --slice pairs as B/E, --counter values as C events, lost events,
# strings with every kind of byte, numbers at their limits; bad options,
# bad files, a full disk; memory that does not grow with the trace.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export-lib.sh"

# as_script FILE [CONVERT-OPTIONS...]: export FILE, and compare the
# export's events with utrace script --json's, in order, field by field
as_script() {
	local f=$1
	shift
	script_events "$f" &&
	"$UTRACE" convert -f json -i "$f" -o "$f.json" "$@" 2> "$TMP/err" &&
	python3 "$DECODE" json "$f.json" > "$f.j" 2> "$TMP/err" &&
	grep -v '"type": "meta"' "$f.j" > "$f.jev" &&
	same "$f.jev" "$f.s" 2> "$TMP/err"
}

# meta FILE: a process_name for each process and a thread_name for each
# thread that has a name, as utrace script names them
meta() {
	python3 - "$1.sj" "$1.j" 2> "$TMP/err" <<'EOF'
import json, sys
script = [json.loads(l) for l in open(sys.argv[1])]
meta = [json.loads(l) for l in open(sys.argv[2])]
meta = {(m["what"], m["pid"], m["tid"]): m["name"] for m in meta if m["type"] == "meta"}
for e in script:
    tid = e["tid"] or e["pid"]
    if e["comm"] != "<...>" and meta.get(("thread_name", e["pid"], tid)) != e["comm"]:
        sys.exit("thread %d: script says %r, thread_name %r" %
                 (tid, e["comm"], meta.get(("thread_name", e["pid"], tid))))
    if ("process_name", e["pid"], e["pid"]) not in meta and e["comm"] != "<...>":
        sys.exit("no process_name for pid %d" % e["pid"])
EOF
}

check "sample, every field type: recorded" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... exported: the events of utrace script --json, field by field" as_script "$TMP/s.dat"
check "  ... process_name and thread_name metadata" meta "$TMP/s.dat"

if [ -e "$UTRACE_BUILD/tests/reader/basic.dat" ]; then
	cp "$UTRACE_BUILD/tests/reader/basic.dat" "$TMP/basic.dat"
	check "mkfile basic: 3 processes, TSC time, lost events of known and unknown count" \
		as_script "$TMP/basic.dat"
	check "  ... metadata" meta "$TMP/basic.dat"
	check "  ... lost events are lost_events instants with their count" bash -c '
		grep -q "\"name\":\"lost_events\",\"cat\":\"utrace\".*\"args\":{\"count\":5}" "$0" &&
		grep -q "\"name\":\"lost_events\".*\"args\":{\"count\":null}" "$0"' "$TMP/basic.dat.json"
fi

# Kernel events in the same file: the mkfile sample's (kernel headers,
# negative and 64-bit values), and recorded ones (root and tracefs; else
# not checked), on the tracks of their tasks as utrace script shows them.
if [ -x "$MKFILE" ]; then
	"$MKFILE" sample "$TMP/k.dat" "$TMP/k.expected" > /dev/null
	check "mkfile sample with kernel events: exported as utrace script --json shows them" \
		as_script "$TMP/k.dat"
fi
if kernel_tracing; then
	check "kernel events with the sample's" record_kernel_sample "$TMP/kr.dat"
	check "  ... exported as utrace script --json shows them" as_script "$TMP/kr.dat"
else
	echo "# recorded kernel events not checked: they need root and tracefs instances"
fi

check "xport-demo: recorded" bash -c '
	"$0" record -o "$2/x.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$DEMO" "$TMP"
check "  ... exported: the events of utrace script --json" as_script "$TMP/x.dat"

# The strings, as python reads them back: a byte that is not part of a
# UTF-8 character is the code point of its number (as script --json).
strings() {
	python3 - "$TMP/x.dat.json" 2> "$TMP/err" <<'EOF'
import json, sys
raw = open(sys.argv[1], "rb").read()
doc = json.loads(raw.decode("utf-8"))
got = [e["args"] for e in doc["traceEvents"] if e.get("name") == "text"]
want = [{"s": "q\"b\\n\n\t\r\x01\x1f\x7f", "tag": "ctl"},
        {"s": "caf\u00e9 \u20ac \U0001F600", "tag": "utf8"},
        {"s": "bad\x80 \xc3 \xe2\x82 \xc0\xaf \xff", "tag": "bad"},
        {"s": "", "tag": "eightchr"}]
if got != want:
    sys.exit("strings:\n  got  %r\n  want %r" % (got, want))
for b in (b"\x01", b"\x1f", b"\t", b"\r"):
    if b in raw:
        sys.exit("a raw control byte %r in the output" % b)
lim = [e["args"] for e in doc["traceEvents"] if e.get("name") == "limits"]
if lim != [{"smin": -2**63, "umax": 2**64 - 1, "c": -128, "us": 65535,
            "v": [-1, 0, 2**31 - 1]}]:
    sys.exit("limits: %r" % lim)
EOF
}
check "  ... quotes, backslash, control bytes, UTF-8 and stray bytes escaped; numbers exact" strings

slices() {
	"$UTRACE" convert -f json -i "$TMP/x.dat" -o "$TMP/xs.json" \
		--slice xport:req_begin.id:req_end.id --counter queue.depth 2> "$TMP/err" &&
	python3 "$DECODE" json "$TMP/xs.json" > "$TMP/xs.j" 2> "$TMP/err" &&
	check_slices "$TMP/xs.j"
}
check "--slice: B/E of the matched pairs, the rest instants; --counter: C events" slices
check "  ... and without them every event the same (the names, times and args)" bash -c '
	python3 - "$0/xs.j" "$0/x.dat.j" <<EOF
import json, sys
a = [json.loads(l) for l in open(sys.argv[1])]
b = [json.loads(l) for l in open(sys.argv[2])]
strip = lambda e: {k: v for k, v in e.items() if k not in ("type", "name")}
a = [strip(e) for e in a if e["type"] not in ("counter", "meta")]
b = [strip(e) for e in b if e["type"] != "meta"]
sys.exit(0 if a == b else "different events")
EOF' "$TMP"

check "rb-stress, 4 threads, events lost (discard): recorded" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 64K -o "$2/t.dat" -- "$1" threads 4 100000 > /dev/null 2> "$2/err" &&
	grep -q "LOST [0-9]* EVENTS" <("$0" script -i "$2/t.dat" 2> /dev/null)' "$UTRACE" "$RB" "$TMP"
check "  ... exported: the same events and losses as utrace script --json" as_script "$TMP/t.dat"

check "usage errors: exit 129, one line" bash -c '
	for bad in "--slice a.b" "--slice a:b" "--slice a.b:c" "--slice .x:b.y" "--slice a.1x:b.y" \
		   "--slice !a.x:b.y" "--counter a" "--counter a." "--counter a.b-c"; do
		"$0" convert -f json -i "$1/x.dat" -o "$1/u.json" $bad 2> "$1/err"
		[ $? -eq 129 ] && [ "$(wc -l < "$1/err")" -eq 1 ] && ! [ -e "$1/u.json" ] ||
			{ echo "# $bad" >&2; exit 1; }
	done
	"$0" convert -i "$1/x.dat" -o "$1/u.dat" --slice a.x:b.y 2> "$1/err"
	[ $? -eq 129 ] && grep -q -- "--slice is for --format html, json, perfetto" "$1/err" &&
	"$0" convert -i "$1/x.dat" -o "$1/u.html" -f html --counter a.x 2> "$1/err"
	[ $? -eq 129 ] && grep -q -- "--counter is for --format json, perfetto" "$1/err"' "$UTRACE" "$TMP"

check "a --slice or --counter that names no event: exit 1, no output" bash -c '
	! "$0" convert -f json -i "$1/x.dat" -o "$1/n.json" --slice req_begin.id:nothing.id 2> "$1/err" &&
	grep -q "no event in '\''$1/x.dat'\'' matches the end of --slice '\''req_begin.id:nothing.id'\''" "$1/err" &&
	! "$0" convert -f json -i "$1/x.dat" -o "$1/n.json" --counter nothing.x 2> "$1/err" &&
	grep -q "matches --counter '\''nothing.x'\''" "$1/err" && ! [ -e "$1/n.json" ]' "$UTRACE" "$TMP"

check "a field the event has not, a counter of a string: said, exit 1, the rest written" bash -c '
	! "$0" convert -f json -i "$1/x.dat" -o "$1/f.json" --slice req_begin.nope:req_end.id \
		--counter text.s 2> "$1/err" &&
	grep -q "'\''xport:req_begin'\'' has no field '\''nope'\'' (--slice" "$1/err" &&
	python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$1/f.json" &&
	! grep -q "\"ph\":\"B\"" "$1/f.json"' "$UTRACE" "$TMP"

check "a write error names the output file" bash -c '
	! "$0" convert -f json -i "$1/t.dat" -o /dev/full 2> "$1/err" &&
	[ "$(cat "$1/err")" = "utrace: cannot write '\''/dev/full'\'': No space left on device" ] &&
	! "$0" convert -f json -i "$1/x.dat" -o "$1/no/such/dir.json" 2> "$1/err" &&
	grep -q "cannot open '\''$1/no/such/dir.json'\''" "$1/err"' "$UTRACE" "$TMP"

json_doc() {
	python3 -c 'import json, sys; json.load(open(sys.argv[1], encoding="utf-8"))' "$1"
}
[ -x "$MKFILE" ] && check "corrupt inputs: the reader's error, exit 0 or 1, whole JSON" \
	corpus json json_doc

check_flat json

done_testing
