#!/usr/bin/env bash
# utrace convert -f perfetto with call stacks (issue 32): a recording
# with --call-graph dwarf of stack-demo (the chain twice, the second
# stack a stack_ref, and the chain through a linked library) exported to
# Perfetto: each event's TrackEvent has callstack_iid, a Callstack
# interned with its Frames and function names (Perfetto's
# profile_common.proto, frames outermost first), the stack records are
# no events of their own.  Read back by Debian's protoc with
# tests/data/perfetto-subset.proto (Perfetto's field numbers; no unknown
# field left) and by export-decode.py's wire reader, which checks that
# every iid is defined before use; the frames are utrace script's.
# Perfetto's trace_processor is not in Debian or npm, so it does not
# read the file here.
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/export-lib.sh"
command -v protoc > /dev/null ||
	skip_all "protoc is not installed (Debian: apt-get install protobuf-compiler)"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
r=$!
printf 'chain\nchain\nlib\nquit\n' > "$TMP/ff"
wait "$r"

check "convert -f perfetto: exit 0" "$UTRACE" convert -f perfetto -i "$TMP/r.dat" -o "$TMP/r.pf"
check "protoc decodes it with Perfetto's field numbers, no field unknown" bash -c '
	protoc --proto_path="$0" --decode=perfetto.protos.Trace perfetto-subset.proto \
		< "$1/r.pf" > "$1/r.txt" 2> "$1/perr" &&
	! grep -E "^ *[0-9]+:" "$1/r.txt" >&2 &&
	[ "$(grep -c "callstack_iid:" "$1/r.txt")" = 3 ] &&
	[ "$(grep -c "^    callstacks {" "$1/r.txt")" = 2 ]' "$UTRACE_SRC/tests/data" "$TMP"
check "wire reader: three events (no stack event), each with its whole chain in order" bash -c '
	python3 "$0" wire "$1/r.pf" > "$1/ev" 2> "$1/derr" &&
	python3 - "$1/ev" <<PY
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
names = [e.get("name") for e in evs]
if names != ["stackdemo:hit"] * 3:
    sys.exit("events: %s" % names)
want = [["sd_leaf", "sd_inner", "sd_middle", "sd_outer", "sd_chain", "main"]] * 2 + \
       [["sd_leaf", "sdlib_inner", "sdlib_outer", "main"]]
for e, w in zip(evs, want):
    print("# " + " ".join(e.get("stack", [])))
    if e.get("stack", [])[:len(w)] != w:
        sys.exit("stack %s, not %s" % (e.get("stack"), w))
PY' "$DECODE" "$TMP"
check "the frames are those utrace script prints (without the offsets)" bash -c '
	"$0" script -i "$1" | awk "/<user stack trace>/ { n++ } n == 3 && /^ => / { f = \$2; if (f !~ /^\[/) sub(/\+0x.*/, \"\", f); print f }" > "$2/want3"
	python3 -c "
import json, sys
print(\"\n\".join(json.loads(open(sys.argv[1]).readlines()[2])[\"stack\"]))" "$2/ev" > "$2/got3"
	diff -u "$2/want3" "$2/got3" >&2' "$UTRACE" "$TMP/r.dat" "$TMP"
# two other threads and a signal handler: each event's stack is its own
rm -f "$TMP/ff"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/t.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
r=$!
printf 'thread\nchain\nthread\nsignal\nquit\n' > "$TMP/ff"
wait "$r"
check "threads and a signal handler: each event with its own thread's chain" bash -c '
	"$0" convert -f perfetto -i "$1/t.dat" -o "$1/t.pf" &&
	python3 "$2" wire "$1/t.pf" > "$1/tev" &&
	python3 - "$1/tev" <<PY
import json, sys
evs = [json.loads(l) for l in open(sys.argv[1])]
got = [(e["args"]["where"], e.get("stack", [])[:5]) for e in evs]
chain = ["sd_leaf", "sd_inner", "sd_middle", "sd_outer"]
want = [(7, chain + ["sd_thread"]), (1, chain + ["sd_chain"]), (7, chain + ["sd_thread"])]
if got[:3] != want or got[3][0] != 4 or got[3][1][:2] != ["sd_leaf", "sd_on_signal"] or \
   len({e["tid"] for e in evs}) != 3:
    sys.exit("events: %s" % got)
PY' "$UTRACE" "$TMP" "$DECODE"
check "a recording without stacks: no callstack at all" bash -c '
	"$0" record -o "$1/n.dat" -- "$2" > /dev/null 2>&1 &&
	"$0" convert -f perfetto -i "$1/n.dat" -o "$1/n.pf" &&
	python3 "$3" wire "$1/n.pf" > "$1/nev" && [ -s "$1/nev" ] && ! grep -q "\"stack\"" "$1/nev"' \
	"$UTRACE" "$TMP" "$SAMPLE" "$DECODE"
done_testing
