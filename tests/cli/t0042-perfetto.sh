#!/usr/bin/env bash
# utrace convert --format perfetto: the protobuf trace decoded two ways,
# by Debian's protoc with tests/data/perfetto-subset.proto (Perfetto's
# field numbers) and by export-decode.py's own varint reader, which also
# checks the structure (sequence flags, the clock, interning, tracks,
# slices); both must give the same events, and those must be utrace
# script --json's, field by field.  Perfetto's own trace_processor is not
# in Debian, so it does not read the files here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export-lib.sh"
PROTO_DIR="$UTRACE_SRC/tests/data"
command -v protoc > /dev/null ||
	skip_all "protoc is not installed (Debian: apt-get install protobuf-compiler)"

# decode FILE.pftrace: FILE.pftrace.txt (protoc), .w (wire) and .t (text)
decode() {
	protoc --proto_path="$PROTO_DIR" --decode=perfetto.protos.Trace perfetto-subset.proto \
		< "$1" > "$1.txt" 2> "$TMP/err" &&
	python3 "$DECODE" wire "$1" > "$1.w" 2> "$TMP/err" &&
	python3 "$DECODE" text "$1.txt" > "$1.t" 2> "$TMP/err" &&
	same "$1.t" "$1.w" 2> "$TMP/err"
}

# as_script FILE [CONVERT-OPTIONS...]: export, decode both ways, compare
# with utrace script --json
as_script() {
	local f=$1
	shift
	script_events "$f" &&
	"$UTRACE" convert -f perfetto -i "$f" -o "$f.pftrace" "$@" 2> "$TMP/err" &&
	decode "$f.pftrace" &&
	same "$f.pftrace.w" "$f.s" 2> "$TMP/err"
}

# tracks FILE: protoc's text has a process track per process of the
# recording (pid, name) and a thread track per thread (pid, tid, name), as
# utrace script names them; the clock snapshot names CLOCK_MONOTONIC
tracks() {
	python3 - "$1.sj" "$1.pftrace.txt" 2> "$TMP/err" <<'EOF'
import json, re, sys
script = [json.loads(l) for l in open(sys.argv[1])]
text = open(sys.argv[2]).read()
for e in script:
    tid = e["tid"] or e["pid"]
    name = '\n *thread_name: "%s"' % re.escape(e["comm"]) if e["comm"] != "<...>" else ""
    if not re.search(r"thread \{\n *pid: %d\n *tid: %d%s\n" % (e["pid"], tid, name), text):
        sys.exit("no thread track for pid %d tid %d %s" % (e["pid"], tid, e["comm"]))
    if not re.search(r"process \{\n *pid: %d\n" % e["pid"], text):
        sys.exit("no process track for pid %d" % e["pid"])
if not re.search(r"clocks \{\n *clock_id: 3\n *timestamp: \d+\n *\}", text) or \
   "primary_trace_clock: BUILTIN_CLOCK_MONOTONIC" not in text or \
   not re.search(r"trace_packet_defaults \{\n *timestamp_clock_id: 3\n", text):
    sys.exit("the clock is not named CLOCK_MONOTONIC")
EOF
}

check "sample, every field type: recorded" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... exported: protoc and the wire decoder agree, with utrace script --json" \
	as_script "$TMP/s.dat"
check "  ... process and thread tracks, the clock" tracks "$TMP/s.dat"
check "  ... names and values in protoc's words" bash -c '
	grep -q "name: \"foo_bar\"" "$0" && grep -q "name: \"sample-trace\"" "$0" &&
	grep -q "string_value: \"hello\"" "$0" && grep -q "type: TYPE_INSTANT" "$0" &&
	grep -q "sequence_flags: 2" "$0" && grep -q "trusted_packet_sequence_id: 1" "$0"' \
	"$TMP/s.dat.pftrace.txt"

if [ -e "$UTRACE_BUILD/tests/reader/basic.dat" ]; then
	cp "$UTRACE_BUILD/tests/reader/basic.dat" "$TMP/basic.dat"
	check "mkfile basic: 3 processes, TSC time, lost events of known and unknown count" \
		as_script "$TMP/basic.dat"
	check "  ... tracks" tracks "$TMP/basic.dat"
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
check "  ... exported: strings (UTF-8, stray bytes), numbers at their limits" as_script "$TMP/x.dat"
check "  ... protoc shows the stray bytes as UTF-8 of their code points" bash -c '
	grep -qF "string_value: \"bad\\302\\200 \\303\\203 \\303\\242\\302\\202 \\303\\200\\302\\257 \\303\\277\"" "$0" &&
	grep -qF "int_value: -9223372036854775808" "$0" &&
	grep -qF "uint_value: 18446744073709551615" "$0"' "$TMP/x.dat.pftrace.txt"

slices() {
	"$UTRACE" convert -f perfetto -i "$TMP/x.dat" -o "$TMP/xs.pftrace" \
		--slice xport:req_begin.id:req_end.id --counter queue.depth 2> "$TMP/err" &&
	decode "$TMP/xs.pftrace" &&
	check_slices "$TMP/xs.pftrace.w" &&
	grep -q "type: TYPE_SLICE_BEGIN" "$TMP/xs.pftrace.txt" &&
	grep -q "type: TYPE_SLICE_END" "$TMP/xs.pftrace.txt" &&
	grep -q "type: TYPE_COUNTER" "$TMP/xs.pftrace.txt" &&
	grep -q "counter {" "$TMP/xs.pftrace.txt"
}
check "--slice: SLICE_BEGIN/END of the matched pairs, the rest instants; --counter" slices
check "  ... the same events as the JSON export with the same options" bash -c '
	"$0" convert -f json -i "$1/x.dat" -o "$1/xs.json" \
		--slice xport:req_begin.id:req_end.id --counter queue.depth 2> "$1/err" &&
	python3 "$2" json "$1/xs.json" | grep -v "\"type\": \"meta\"" > "$1/xs.j" &&
	diff -u "$1/xs.j" "$1/xs.pftrace.w" >&2' "$UTRACE" "$TMP" "$DECODE"

check "rb-stress, 4 threads, events lost (discard): recorded" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 64K -o "$2/t.dat" -- "$1" threads 4 100000 > /dev/null 2> "$2/err" &&
	grep -q "LOST [0-9]* EVENTS" <("$0" script -i "$2/t.dat" 2> /dev/null)' "$UTRACE" "$RB" "$TMP"
check "  ... exported: the same events and losses as utrace script --json" as_script "$TMP/t.dat"

check "usage errors: exit 129" bash -c '
	"$0" convert -f perfetto -i "$1/x.dat" -o "$1/u.pftrace" --slice a.b 2> "$1/err"
	[ $? -eq 129 ] && grep -q "give BEGIN.FIELD:END.FIELD" "$1/err" && ! [ -e "$1/u.pftrace" ]' \
	"$UTRACE" "$TMP"

check "a write error names the output file" bash -c '
	! "$0" convert -f perfetto -i "$1/t.dat" -o /dev/full 2> "$1/err" &&
	[ "$(cat "$1/err")" = "utrace: cannot write '\''/dev/full'\'': No space left on device" ]' \
	"$UTRACE" "$TMP"

wire_ok() {
	python3 "$DECODE" wire "$1"
}
[ -x "$MKFILE" ] && check "corrupt inputs: the reader's error, exit 0 or 1, a whole trace" \
	corpus perfetto wire_ok

check_flat perfetto

echo "# trace_processor (Perfetto's reader) is not in Debian: not run here"
done_testing
