# SPDX-License-Identifier: MIT
# What the tests of the streamed exports share (t0041-json, t0042-perfetto):
# sourced after lib.sh.
RB="$UTRACE_BUILD/tests/rb-stress"
DEMO="$UTRACE_BUILD/tests/xport-demo"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
DECODE="$UTRACE_SRC/tests/cli/export-decode.py"
command -v python3 > /dev/null || skip_all "python3 is not installed"

# script_events FILE: FILE.s, utrace script --json's events in the form of
# export-decode.py
script_events() {
	"$UTRACE" script --json -i "$1" > "$1.sj" 2> "$TMP/err" &&
	python3 "$DECODE" script "$1.sj" > "$1.s" 2> "$TMP/err" &&
	[ -s "$1.s" ]
}

# check_slices EVENTS: export-decode.py's events of xport-demo's recording
# exported with --slice xport:req_begin.id:req_end.id --counter queue.depth:
# nested pairs begin/end, a stray end, overlapping pairs (the inner one
# closes, the outer end stays an instant), a begin that never ends, an end
# on another thread than its begin; a counter value for each queue event.
check_slices() {
	python3 - "$1" 2> "$TMP/err" <<'PY'
import json, sys
ev = [json.loads(l) for l in open(sys.argv[1])]
got = {}
for e in ev:
    if e["type"] in ("begin", "end", "instant") and e["args"].get("id") is not None:
        got.setdefault(e["tid"] == e["pid"], []).append((e["type"], e["args"]["id"]))
want_main = [("begin", 1), ("begin", 2), ("end", 2), ("instant", 9), ("end", 1),
             ("begin", 20), ("begin", 21), ("instant", 20), ("end", 21), ("begin", 3)]
want_worker = [("begin", 10), ("end", 10), ("instant", 3)]
if got.get(True) != want_main or got.get(False) != want_worker:
    sys.exit("slices:\n  main   %r\n  worker %r" % (got.get(True), got.get(False)))
queue = [e for e in ev if e.get("name") == "xport:queue"]
counter = [e for e in ev if e["type"] == "counter"]
if [(c["ts"], c["pid"], c["value"], c["track"]) for c in counter] != \
   [(q["ts"], q["pid"], q["args"]["depth"], "queue.depth") for q in queue] or len(queue) != 4:
    sys.exit("counter %r\n  queue %r" % (counter, queue))
PY
}

# corpus FORMAT CHECK...: the corrupt-file corpus of tests/reader through
# convert -f FORMAT: the reader's error (script's first line), exit 0 or
# 1, no crash, and CHECK FILE accepts what is written
corpus() {
	local fmt=$1 f st bad=0
	shift
	"$MKFILE" corrupt "$TMP/corrupt" > /dev/null || return 1
	for f in "$TMP"/corrupt/*.dat; do
		rm -f "$TMP/c.out"
		"$UTRACE" convert -f "$fmt" -i "$f" -o "$TMP/c.out" > /dev/null 2> "$TMP/cerr"
		st=$?
		"$UTRACE" script -i "$f" > /dev/null 2> "$TMP/serr"
		if [ "$st" -gt 1 ]; then
			echo "# ${f##*/}: exit status $st" >&2; bad=1; continue
		fi
		if [ -s "$TMP/cerr" ] && [ "$(head -1 "$TMP/cerr")" != "$(head -1 "$TMP/serr")" ] &&
		   ! { grep -q ': file cut short at byte' "$TMP/cerr" &&
		       head -1 "$TMP/serr" | grep -qF "$(head -1 "$TMP/cerr"): printed the"; }; then
			echo "# ${f##*/}: convert said '$(head -1 "$TMP/cerr")'," \
			     "script '$(head -1 "$TMP/serr")'" >&2; bad=1
		fi
		if [ -e "$TMP/c.out" ] && ! "$@" "$TMP/c.out" > /dev/null 2> "$TMP/verr"; then
			echo "# ${f##*/}: the output is not read back: $(cat "$TMP/verr")" >&2; bad=1
		fi
	done
	return $bad
}

# flat FORMAT: streamed, the largest resident size, less the input file
# (mapped and read whole by the reader, as by utrace script), stays the
# same from 100k to 1M events (within 4 MB; a buffer of all events would
# take 100+ MB).  GNU time's %M: the command's own peak (wait4).
flat() {
	local n rss size
	for n in 100000 1000000; do
		"$UTRACE" record -m 64M -o "$TMP/m$n.dat" -- "$DEMO" many "$n" > /dev/null 2> "$TMP/err" ||
			return 1
		rss=$(/usr/bin/time -f %M "$UTRACE" convert -f "$1" -i "$TMP/m$n.dat" -o "$TMP/m.out" \
			--slice req_begin.id:req_end.id --counter queue.depth 2>&1 > /dev/null | tail -1)
		size=$(( $(stat -c %s "$TMP/m$n.dat") / 1024 ))
		echo "# $1, $n events: max RSS $rss KiB, input $size KiB, output" \
			"$(( $(stat -c %s "$TMP/m.out") / 1024 )) KiB"
		[ "$rss" -gt 0 ] || return 1
		eval "r$n=\$((rss - size))"
		rm -f "$TMP/m$n.dat" "$TMP/m.out"
	done
	echo "# max RSS less the input: $r100000 KiB at 100k events, $r1000000 KiB at 1M"
	[ "$r1000000" -le $((r100000 + 4096)) ]
}
check_flat() {
	if [ -x /usr/bin/time ]; then
		check "memory does not grow with the trace (100k and 1M events)" flat "$1"
	else
		echo "# skipped the memory check: no /usr/bin/time (Debian: apt-get install time)"
	fi
}
