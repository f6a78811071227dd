#!/usr/bin/env bash
# utrace convert: the trace.dat it writes, read by the real trace-cmd,
# shows what utrace script shows: the same events with the same text, in
# the same order on each CPU, and the lost events.  Corrupt inputs give
# the reader's error, never a crash.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"

# compare SCRIPT-OUTPUT REPORT-OUTPUT [--expect-loss]: 'utrace script' lines
# against 'trace-cmd report -t' lines (docs/trace-dat-export.md)
compare() {
	python3 - "$@" <<'EOF'
import re, sys
from collections import defaultdict
script, report = sys.argv[1], sys.argv[2]
expect_loss = '--expect-loss' in sys.argv
S = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d{3})\] \S{5}\s+(\d+)\.(\d{6}): (.*)$')
R = re.compile(r'^\s*(.*?)-(\d+)\s+\[(\d{3})\]\s+(\d+)\.(\d{9}): (\S+): (.*)$')
D = re.compile(r'^CPU:(\d+) \[(?:(\d+) )?EVENTS DROPPED\]$')
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
# trace-cmd on libtraceevent before 1.8.4 (Debian 12 has 1.7.1) prints
# __print_array() as "1 2 3" where the kernel and utrace print
# "{0x1,0x2,0x3}": compare in its form when it differs only there.
def old_array(t):
    return re.sub(r'\{((?:0x[0-9a-f]+,?)*)\}',
                  lambda m: ' '.join(str(int(v, 16)) for v in m.group(1).split(',') if v), t)
# script: per CPU, (comm, tid, usec time, name, text)
s_cpu, s_lost, s_unknown, n_s = defaultdict(list), 0, False, 0
for line in open(script, errors='replace'):
    line = line.rstrip('\n')
    m = S.match(line)
    if not m:
        fail('cannot read script line: ' + line)
    comm, tid, cpu, sec, usec, rest = m.groups()
    lm = re.match(r'^\[LOST (?:(\d+) )?EVENTS\]$', rest)
    if lm:
        if lm.group(1):
            s_lost += int(lm.group(1))
        else:
            s_unknown = True
        continue
    name, _, text = rest.partition(': ')
    s_cpu[int(cpu)].append((comm, int(tid), int(sec) * 10**6 + int(usec), name, text))
    n_s += 1
r_cpu, r_lost, r_unknown, n_r, markers = defaultdict(list), 0, False, 0, 0
last = {}
for line in open(report, errors='replace'):
    line = line.rstrip('\n')
    if line.startswith('cpus='):
        continue
    m = D.match(line)
    if m:
        if m.group(2):
            r_lost += int(m.group(2))
        else:
            r_unknown = True
        continue
    m = R.match(line)
    if not m:
        fail('cannot read trace-cmd line: ' + line)
    comm, tid, cpu, sec, nsec, name, rest = m.groups()
    ns = int(sec) * 10**9 + int(nsec)
    cpu = int(cpu)
    if ns < last.get(cpu, 0):
        fail('time goes back on CPU %d: %s' % (cpu, line))
    last[cpu] = ns
    if name == 'lost_events':           # the exporter's end-of-CPU marker
        markers += 1
        continue
    text = rest[max(0, 20 - len(name)):]   # trace-cmd pads the name to 20
    r_cpu[cpu].append((comm, int(tid), (ns + 500) // 1000, name, text))   # rounded, as the kernel prints
    n_r += 1
if n_s != n_r:
    fail('utrace script: %d events, trace-cmd report: %d' % (n_s, n_r))
for cpu in sorted(set(s_cpu) | set(r_cpu)):
    a, b = s_cpu.get(cpu, []), r_cpu.get(cpu, [])
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y and x[:4] + (old_array(x[4]),) != y:
            fail('CPU %d, event %d:\n#  script:    %r\n#  trace-cmd: %r' % (cpu, i, x, y))
if s_lost != r_lost or s_unknown != r_unknown:
    fail('lost: script %d%s, trace-cmd %d%s' % (s_lost, '+?' if s_unknown else '',
         r_lost, '+?' if r_unknown else ''))
if expect_loss and not (r_lost or r_unknown):
    fail('no lost events shown')
print('# %d events on %d CPUs, %d lost, %d end markers' % (n_r, len(r_cpu), r_lost, markers))
EOF
}

# convert_check NAME FILE [--expect-loss]: script, convert, report, compare
convert_check() {
	local f=$1
	shift
	"$UTRACE" script -i "$f" > "$f.script" 2> "$TMP/err" &&
	"$UTRACE" convert -i "$f" -o "$f.trace.dat" 2> "$TMP/err" &&
	trace-cmd report -t -i "$f.trace.dat" > "$f.report" 2> "$TMP/err" &&
	compare "$f.script" "$f.report" "$@" 2> "$TMP/err"
}

if ! command -v trace-cmd > /dev/null; then
	echo "1..0 # SKIP trace-cmd is not installed (apt-get install trace-cmd)"
	exit 0
fi

check "sample, every event type: trace-cmd report shows what utrace script shows" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... converted and compared" convert_check "$TMP/s.dat"

check "sample --run 0.3, demo events" bash -c '
	"$0" record -e "demo:*" -o "$2/r.dat" -- "$1" --run 0.3 > /dev/null 2> "$2/err"' \
	"$UTRACE" "$SAMPLE" "$TMP"
check "  ... converted and compared" convert_check "$TMP/r.dat"

check "rb-stress, 4 threads, events lost between pages (discard)" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 64K -o "$2/t.dat" -- "$1" threads 4 100000 > /dev/null 2> "$2/err" &&
	grep -q "LOST [0-9]* EVENTS" <("$0" script -i "$2/t.dat" 2> /dev/null)' "$UTRACE" "$RB" "$TMP"
check "  ... converted: same events, CPU:n [N EVENTS DROPPED] for the losses" \
	convert_check "$TMP/t.dat" --expect-loss

check "rb-stress with signals, overwrite: losses at the end of a CPU" bash -c '
	"$0" record -m 16K --overwrite -o "$2/o.dat" -- "$1" threads 2 50000 > /dev/null 2> "$2/err"' \
	"$UTRACE" "$RB" "$TMP"
end_marker() {
	convert_check "$TMP/o.dat" --expect-loss &&
	grep -q "lost_events: *count=[1-9]" "$TMP/o.dat.report"
}
check "  ... converted: the end marker carries the count" end_marker

check "trace-cmd sees trace.dat version 7, clock mono, no TSC2NSEC" bash -c '
	trace-cmd dump --summary -i "$0/s.dat.trace.dat" > "$0/dump" 2>&1 &&
	grep -qE "^\s*7\s+\[Version\]" "$0/dump" &&
	trace-cmd dump --options -i "$0/s.dat.trace.dat" > "$0/dump" 2>&1 &&
	grep -q "\[mono\]" "$0/dump" && ! grep -q TSC2NSEC "$0/dump"' "$TMP"

# %ps / %pS: the recording's SYMBOL records go into the kallsyms
# section, and trace-cmd names the addresses (libtraceevent prints %pS
# as name+0xoff, without the kernel's /0xsize).
pfmt_names() {
	"$UTRACE" record -e 'pfmt:*' -o "$TMP/pf.dat" -- "$UTRACE_BUILD/tests/pfmt-demo" 1 \
		"$UTRACE_BUILD/tests/libpfmt-lib.so" > /dev/null 2> "$TMP/err" &&
	"$UTRACE" convert -i "$TMP/pf.dat" -o "$TMP/pf.trace.dat" 2>> "$TMP/err" &&
	trace-cmd report -i "$TMP/pf.trace.dat" > "$TMP/pf.report" 2>> "$TMP/err" &&
	grep -q "pfmt_sym: *fn=pfmt_worker caller=pfmt_worker+0x10\$" "$TMP/pf.report" &&
	grep -q "pfmt_sym: *fn=pfmt_lib_fn caller=pfmt_lib_fn+0x4\$" "$TMP/pf.report" ||
	{ cat "$TMP/pf.report" "$TMP/err" >&2; false; }
}
check "trace-cmd report names %ps/%pS from the kallsyms section" pfmt_names

check "usage errors: exit 129" bash -c '
	"$0" convert -i "$1/s.dat" 2> "$1/err"; [ $? -eq 129 ] && grep -q "no output file" "$1/err" &&
	"$0" convert -i "$1/s.dat" -o "$1/x" --format nosuch 2> "$1/err"; [ $? -eq 129 ] &&
	grep -q "unknown format '\''nosuch'\'' (there are trace.dat, html, ctf, sqlite, json, perfetto)" \
		"$1/err"' "$UTRACE" "$TMP"

check "the input as output is refused, the input kept" bash -c '
	cp "$1/s.dat" "$1/same.dat" &&
	! "$0" convert -i "$1/same.dat" -o "$1/same.dat" 2> "$1/err" &&
	grep -q "is the input file" "$1/err" && cmp -s "$1/s.dat" "$1/same.dat"' "$UTRACE" "$TMP"

check "a write error names the output file" bash -c '
	! "$0" convert -i "$1/s.dat" -o /dev/full 2> "$1/err" &&
	[ "$(cat "$1/err")" = "utrace: cannot write '\''/dev/full'\'': No space left on device" ] &&
	! "$0" convert -i "$1/s.dat" -o "$1/no/such/dir.dat" 2> "$1/err" &&
	grep -q "cannot open '\''$1/no/such/dir.dat'\''" "$1/err"' "$UTRACE" "$TMP"

check "a missing input: one line naming it" bash -c '
	! "$0" convert -i "$1/nothing.dat" -o "$1/x.dat" 2> "$1/err" &&
	[ "$(wc -l < "$1/err")" -eq 1 ] && grep -q "'\''$1/nothing.dat'\''" "$1/err" &&
	[ ! -e "$1/x.dat" ]' "$UTRACE" "$TMP"

# The corrupt-file corpus of tests/reader: convert says what the reader
# says (its first line is script's, or convert's own refusal of a format;
# for a cut file script adds how many events it printed), exits 0 or 1,
# never crashes.
corpus() {
	local f st bad=0
	"$MKFILE" corrupt "$TMP/corrupt" > /dev/null || return 1
	: > "$TMP/tc-died"
	for f in "$TMP"/corrupt/*.dat; do
		rm -f "$TMP/c.trace.dat"
		"$UTRACE" convert -i "$f" -o "$TMP/c.trace.dat" > /dev/null 2> "$TMP/cerr"
		st=$?
		"$UTRACE" script -i "$f" > /dev/null 2> "$TMP/serr"
		if [ "$st" -gt 1 ]; then
			echo "# ${f##*/}: convert exit status $st" >&2; bad=1; continue
		fi
		if [ "$st" -eq 1 ] && ! head -1 "$TMP/cerr" | grep -qF "utrace: '$f': "; then
			echo "# ${f##*/}: the first line does not name the file:" >&2
			sed 's/^/#   /' "$TMP/cerr" >&2; bad=1
		fi
		if [ -s "$TMP/cerr" ] && ! [ "$(head -1 "$TMP/cerr")" = "$(head -1 "$TMP/serr")" ] &&
		   ! { grep -q ': file cut short at byte' "$TMP/cerr" &&
		       [ "$(head -1 "$TMP/serr")" = "$(head -1 "$TMP/cerr"): printed the $(
			   sed -n 's/.*: printed the \([0-9]*\) events before it$/\1/p' "$TMP/serr"
			) events before it" ]; } &&
		   ! head -1 "$TMP/cerr" | grep -q "has no 'common_type' of 2 bytes at offset 0"; then
			echo "# ${f##*/}: convert said '$(head -1 "$TMP/cerr")'," \
			     "script '$(head -1 "$TMP/serr")'" >&2; bad=1
		fi
		if [ -e "$TMP/c.trace.dat" ]; then
			# (30 s: a hang is a failure, but a loaded machine is no hang)
			( timeout 30 trace-cmd report -i "$TMP/c.trace.dat" > /dev/null 2>&1 ) 2> /dev/null
			st=$?
			[ "$st" -gt 123 ] && echo "${f##*/} ($st)" >> "$TMP/tc-died"
		fi
	done
	return $bad
}
if [ -x "$MKFILE" ]; then
	check "corrupt inputs: the reader's error, exit 0 or 1, no crash" corpus
	# Records and formats made to crash libtraceevent are left out, as
	# utrace script leaves them out: trace-cmd must survive what is left.
	check "trace-cmd report survives the converted corpus" bash -c '! [ -s "$0/tc-died" ] ||
		{ echo "# trace-cmd died on: $(tr "\n" " " < "$0/tc-died")" >&2; false; }' "$TMP"
fi

done_testing
