#!/usr/bin/env bash
# One event, one time: the same event read through `utrace show`, the
# mount's trace, `utrace record -p` (then `utrace script`) and the
# trace.dat export prints the same timestamp, from the first event on
# (the pool's calibration points: lib/common/calib.c,
# lib/reader/tsc-time.c), and that time is the CLOCK_MONOTONIC time the
# program saw around the event.
. "$(dirname "$0")/lib.sh"

export UTRACE_RUNTIME_DIR="$TMP/run"
MNT="$TMP/mnt"
mkdir -p "$MNT"
SP=
cleanup() {
	[ -n "$SP" ] && kill "$SP" 2> /dev/null
	if grep -q " $MNT fuse" /proc/self/mounts 2> /dev/null; then
		fusermount3 -u "$MNT" 2> /dev/null || umount -l "$MNT" 2> /dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

# Events on from the start, so the first show catches the pool young
# (before its 20 ms point: the reader adds that point, waiting for it).
LOG="$TMP/sample.log"
UTRACE_EVENTS='demo:*' "$SAMPLE" --run 0 --log "$LOG" > /dev/null 2> "$TMP/sample.err" &
SP=$!
wait_traceable "$SP" "$TMP/sample.err"
"$UTRACE" show -p "$SP" > "$TMP/s1.txt" 2> "$TMP/err"
wait_for has_lines "$LOG" 3
"$UTRACE" show -p "$SP" > "$TMP/s2.txt" 2>> "$TMP/err"

mounted=no
if [ -c /dev/fuse ] && command -v fusermount3 > /dev/null &&
   "$UTRACE" mount "$MNT" 2>> "$TMP/err"; then
	mounted=yes
	cat "$MNT/$SP/trace" > "$TMP/m.txt"
	fusermount3 -u "$MNT"
fi

# A recording of a second, then a show once the program has fired two
# more requests (the recorder took what was there; it leaves the pages the
# program is still writing in place, so both may see some of them).
"$UTRACE" record -p "$SP" -o "$TMP/r.dat" --duration 1 2>> "$TMP/err"
n0=$(log_lines "$LOG")
wait_for bash -c '[ "$(log_lines "$1")" -ge $(($2 + 2)) ]' _ "$LOG" "$n0"
"$UTRACE" show -p "$SP" > "$TMP/s3.txt" 2>> "$TMP/err"
kill -USR1 "$SP"
wait "$SP"
SP=
"$UTRACE" script -i "$TMP/r.dat" > "$TMP/r.txt" 2>> "$TMP/err"

# compare FILE...: every event (by name and fields, which count up) found
# in two files has the same time in both; prints "A B common differ".
compare() {
	python3 - "$@" << 'EOF'
import re, sys
line = re.compile(r'\s*\S+-\d+\s+\[\d+\]\s+\S+\s+(\d+\.\d+): (\S+): (.*)')
def load(f):
    d = {}
    for l in open(f):
        m = line.match(l)
        if m:
            d[(m.group(2), m.group(3))] = m.group(1)
    return d
files = sys.argv[1:]
D = [load(f) for f in files]
bad = 0
for i in range(len(files)):
    for j in range(i + 1, len(files)):
        common = set(D[i]) & set(D[j])
        diff = [k for k in common if D[i][k] != D[j][k]]
        print(files[i].split('/')[-1], files[j].split('/')[-1], len(common), len(diff))
        for k in diff[:5]:
            print('#  %s: %s: %s against %s' % (k[0], k[1], D[i][k], D[j][k]),
                  file=sys.stderr)
        bad += len(diff)
sys.exit(1 if bad else 0)
EOF
}
# common A B MIN: the two files have at least MIN events in common
common() {
	awk -v a="$1" -v b="$2" -v min="$3" '$1 == a && $2 == b { found = 1; ok = $3 >= min }
		END { exit !(found && ok) }' "$TMP/cmp"
}

files=("$TMP/s1.txt" "$TMP/s2.txt" "$TMP/s3.txt" "$TMP/r.txt")
[ $mounted = yes ] && files+=("$TMP/m.txt")
compare "${files[@]}" > "$TMP/cmp" 2> "$TMP/err"
cmp_status=$?
cat "$TMP/cmp" | sed 's/^/# /'

check "the first show, while the buffer is young, has events" has_lines "$TMP/s1.txt" 1 demo_
check "every event has one time: show, show, show, record -p, the mount" \
	[ "$cmp_status" = 0 ]
check "the young buffer's events are in the recording, at the same times" \
	common s1.txt r.txt 1
check "the later show and the recording share events" common s2.txt r.txt 10
if [ $mounted = yes ]; then
	check "the mount's trace shares events with show" common s2.txt m.txt 10
else
	echo "# the mount is not compared: cannot mount here (FUSE)"
fi

# The trace.dat export converts with the same points (trace-cmd prints
# the times it holds, to the microsecond).
if command -v trace-cmd > /dev/null; then
	check "trace.dat export: the same times as utrace script" bash -c '
		"$1" convert -i "$2/r.dat" -o "$2/r.tdat" 2> "$2/err" &&
		trace-cmd report -i "$2/r.tdat" 2>> "$2/err" |
			sed -nE "s/^ *[^ ]+ +\[[0-9]+\] +([0-9]+\.[0-9]{6}): ([^:]+): +(.*)$/\1 \2 \3/p" |
			sort > "$2/t1" &&
		sed -nE "s/^ *[^ ]+ +\[[0-9]+\] [^ ]+ +([0-9]+\.[0-9]{6}): ([^:]+): (.*)$/\1 \2 \3/p" \
			"$2/r.txt" | sort > "$2/t2" &&
		[ -s "$2/t1" ] && cmp -s <(cut -d" " -f1,2 "$2/t1") <(cut -d" " -f1,2 "$2/t2")' \
		_ "$UTRACE" "$TMP"
else
	echo "# trace.dat export not compared: trace-cmd is not installed"
fi

# Each demo_request's time lies between the CLOCK_MONOTONIC readings the
# program took around it (the log), in every file: the conversion is right,
# not only the same everywhere.
within() {
	python3 - "$LOG" "$1" << 'EOF'
import re, sys
around = {}
for l in open(sys.argv[1]):
    _, i, a, b = l.split()
    around[i] = (int(a), int(b))
n = bad = 0
for l in open(sys.argv[2]):
    m = re.search(r' (\d+)\.(\d{6}): demo_request: id=(\d+) ', l)
    if not m or m.group(3) not in around:
        continue
    t = int(m.group(1)) * 10**9 + int(m.group(2)) * 1000
    a, b = around[m.group(3)]
    n += 1
    # microseconds in the line, rounded: 500 ns either way, plus 50 us
    if not (a - 50500 <= t <= b + 50500):
        bad += 1
        print('# id %s at %d, not within [%d, %d]' % (m.group(3), t, a, b), file=sys.stderr)
sys.exit(0 if n and not bad else 1)
EOF
}
for f in s2 s3 r; do
	check "$f: each demo_request between the program's clock readings around it" \
		within "$TMP/$f.txt"
done

done_testing
