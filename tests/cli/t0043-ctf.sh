#!/usr/bin/env bash
# utrace convert --format ctf: the CTF trace it writes, read by the real
# babeltrace2, holds what utrace script shows: every event with its name,
# time to the nanosecond, CPU, process and thread, and each field's value
# (negative numbers, 64-bit extremes, strings with quotes, control bytes
# and bytes that are not UTF-8); events lost while recording show as
# babeltrace2's discarded-events warnings, with the same counts.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"

command -v babeltrace2 > /dev/null ||
	skip_all "babeltrace2 is not installed (apt-get install babeltrace2; scripts/setup-debian.sh --tests)"

# compare SCRIPT-JSON BABELTRACE-OUT BABELTRACE-ERR [--expect-loss]:
# 'utrace script --json' against 'babeltrace2 --clock-cycles' (times are
# then CLOCK_MONOTONIC ns); lost counts against the discarded warnings
compare() {
	python3 - "$@" <<'EOF'
import json, re, sys
from collections import Counter
script, bt, bterr = sys.argv[1:4]
expect_loss = '--expect-loss' in sys.argv
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
def text(b):
    # bytes that are not UTF-8 as the code points of the same number,
    # as utrace's JSON writes them (\u00XX)
    s = b.decode('utf-8', 'surrogateescape')
    return ''.join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c for c in s)
ESC = {ord('n'): 10, ord('t'): 9, ord('r'): 13, ord('a'): 7, ord('b'): 8, ord('f'): 12,
       ord('v'): 11, ord('0'): 0}
class P:
    """babeltrace2's pretty text of one event's fields"""
    def __init__(self, b):
        self.b, self.i = b, 0
    def peek(self, s):
        return self.b.startswith(s, self.i)
    def eat(self, s):
        if not self.peek(s):
            fail('babeltrace2 line: expected %r at %d: %r' % (s, self.i, self.b))
        self.i += len(s)
    def name(self):
        m = re.compile(rb'[A-Za-z_][A-Za-z0-9_]*').match(self.b, self.i)
        if not m:
            fail('babeltrace2 line: no field name at %d: %r' % (self.i, self.b))
        self.i = m.end()
        return m.group().decode()
    def value(self):
        if self.peek(b'"'):
            self.i += 1
            out = bytearray()
            while not self.peek(b'"'):
                c = self.b[self.i]
                if c == 0x5c:
                    e = self.b[self.i + 1]
                    if e == ord('x'):
                        out.append(int(self.b[self.i + 2:self.i + 4], 16))
                        self.i += 4
                        continue
                    out.append(ESC.get(e, e))
                    self.i += 2
                    continue
                out.append(c)
                self.i += 1
            self.i += 1
            return text(bytes(out))
        if self.peek(b'[ ]'):
            self.i += 3
            return []
        if self.peek(b'[ '):
            self.i += 2
            v = []
            while True:
                m = re.compile(rb'\[\d+\] = ').match(self.b, self.i)
                if not m:
                    fail('babeltrace2 line: bad array at %d: %r' % (self.i, self.b))
                self.i = m.end()
                v.append(self.value())
                if self.peek(b', '):
                    self.i += 2
                    continue
                self.eat(b' ]')
                return v
        m = re.compile(rb'-?(0x[0-9a-fA-F]+|\d+)').match(self.b, self.i)
        if not m:
            fail('babeltrace2 line: bad value at %d: %r' % (self.i, self.b))
        self.i = m.end()
        return int(m.group(), 0)
    def struct(self):
        d = {}
        if self.peek(b'{ }'):
            self.i += 3
            return d
        self.eat(b'{ ')
        while True:
            k = self.name()
            self.eat(b' = ')
            d[k] = self.value()
            if self.peek(b', '):
                self.i += 2
                continue
            self.eat(b' }')
            return d
L = re.compile(rb'^\[(\d+)\] \([^)]*\) (.*?): (\{ cpu_id = .*)$')
events = []
for line in open(bt, 'rb'):
    line = line.rstrip(b'\n')
    m = L.match(line)
    if not m:
        fail('cannot read babeltrace2 line: %r' % line)
    p = P(m.group(3))
    pc = p.struct()
    p.eat(b', ')
    ec = p.struct()
    fields = {}
    if p.peek(b', '):
        p.i += 2
        fields = p.struct()
    if p.i != len(p.b):
        fail('babeltrace2 line: left over at %d: %r' % (p.i, line))
    events.append((int(m.group(1)), text(m.group(2)), pc['cpu_id'], ec['vpid'], ec['vtid'],
                   fields))
expected, lost, unknown = [], 0, False
for line in open(script, encoding='utf-8'):
    j = json.loads(line)
    if 'lost' in j:
        if j['lost'] is None:
            unknown = True
        else:
            lost += j['lost']
        continue
    expected.append((j['time'], j['name'], j['cpu'], j['pid'], j['tid'], j['fields']))
if len(events) != len(expected):
    fail('utrace script: %d events, babeltrace2: %d' % (len(expected), len(events)))
# babeltrace2 before 2.0.5 (Debian 12 has 2.0.4) shows an empty string
# field with the value the field had in an event of the same class it
# decoded before (it recycles event objects and leaves the string as it
# was: babeltrace change 4528, "string fields display the value of a
# previous event, despite their length being set to zero"): a value seen
# before counts also as the empty string it may be in the file.
seen = {}
for n, e in enumerate(events):
    for k, v in e[5].items():
        if isinstance(v, str):
            s = seen.setdefault((e[2], e[1], k), set())
            if v in s:
                e[5][k] = ('maybe-empty', v)
            s.add(v)
def same_str(x, y):
    return x == y or (x == '' and isinstance(y, tuple)) or \
        (isinstance(y, tuple) and x == y[1])
# babeltrace2 merges its streams by time: events of one time may come in
# another order than utrace's
key = lambda e: (e[0], e[2], e[4], e[1])
def norm(e):
    f = dict(e[5])
    for k, v in e[5].items():
        # a sequence's length field, "<name>_length", before it
        if k.endswith('_length') and isinstance(f.get(k[:-7]), list) and k not in ref:
            if v != len(f[k[:-7]]):
                fail('%s = %d, but %s has %d elements' % (k, v, k[:-7], len(f[k[:-7]])))
            del f[k]
    return e[:5] + (f,)
for i, (x, y) in enumerate(zip(sorted(expected, key=key), sorted(events, key=key))):
    ref = x[5]
    y = norm(y)
    if x[:5] != y[:5] or set(x[5]) != set(y[5]) or \
       any(not same_str(v, y[5][k]) for k, v in x[5].items()):
        fail('event %d:\n#  script:      %r\n#  babeltrace2: %r' % (i, x, y))
# the discarded-events warnings
d = sum(int(n) for n in re.findall(r'discarded (\d+) events? ', open(bterr, errors='replace').read()))
want = lost + (1 if unknown else 0)
if unknown and d < want or not unknown and d != want:
    fail('lost: script %d%s, babeltrace2 discarded %d' % (lost, '+?' if unknown else '', d))
if expect_loss and not d:
    fail('no discarded events shown')
print('# %d events, %d discarded, %d names' % (len(events), d, len(Counter(e[1] for e in events))))
EOF
}

# convert_check FILE [--expect-loss]: script, convert, babeltrace2, compare
convert_check() {
	local f=$1
	shift
	rm -rf "$f.ctf"
	"$UTRACE" script -i "$f" --json > "$f.json" 2> "$TMP/err"
	"$UTRACE" convert -i "$f" -o "$f.ctf" --format ctf 2> "$TMP/err" &&
	babeltrace2 --clock-cycles "$f.ctf" > "$f.bt" 2> "$f.bterr" &&
	compare "$f.json" "$f.bt" "$f.bterr" "$@" 2> "$TMP/err"
}

check "sample, every event type" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... converted: babeltrace2 shows each event, field by field" convert_check "$TMP/s.dat"

check "sample --run 0.3, demo events" bash -c '
	"$0" record -e "demo:*" -o "$2/r.dat" -- "$1" --run 0.3 > /dev/null 2> "$2/err"' \
	"$UTRACE" "$SAMPLE" "$TMP"
check "  ... converted and compared" convert_check "$TMP/r.dat"

check "rb-stress, 4 threads, events lost between pages" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 64K -o "$2/t.dat" -- "$1" threads 4 100000 > /dev/null 2> "$2/err" &&
	grep -q "LOST [0-9]* EVENTS" <("$0" script -i "$2/t.dat" 2> /dev/null)' "$UTRACE" "$RB" "$TMP"
check "  ... converted: the same events, the losses as discarded events" \
	convert_check "$TMP/t.dat" --expect-loss

check "rb-stress, 4 threads, nothing lost" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 32M -o "$2/m.dat" -- "$1" threads 4 20000 > /dev/null 2> "$2/err"' \
	"$UTRACE" "$RB" "$TMP"
check "  ... converted and compared" convert_check "$TMP/m.dat"
# several FILE.bt PROCESSES THREADS: babeltrace2 tells them apart
several() {
	python3 - "$@" <<'EOF'
import re, sys
pids, tids = set(), set()
for line in open(sys.argv[1], 'rb'):
    m = re.search(rb'\{ cpu_id = \d+ \}, \{ vpid = (\d+), vtid = (\d+) \}', line)
    pids.add(m.group(1))
    tids.add(m.group(2))
if len(pids) < int(sys.argv[2]) or len(tids) < int(sys.argv[3]):
    sys.exit('# %d processes, %d threads' % (len(pids), len(tids)))
EOF
}
check "  ... its threads are told apart (vtid)" several "$TMP/m.dat.bt" 1 4

# Kernel events recorded into the same file (root and tracefs; else not
# checked): their fields and tasks as utrace script shows them.
if kernel_tracing; then
	check "kernel events with the sample's" record_kernel_sample "$TMP/kr.dat"
	check "  ... converted and compared" convert_check "$TMP/kr.dat"
else
	echo "# kernel events not checked: they need root and tracefs instances"
fi

if [ -x "$MKFILE" ]; then
	"$MKFILE" sample "$TMP/k.dat" "$TMP/k.expected" > /dev/null
	check "every event of the sample and kernel headers (negative, 64-bit values)" \
		convert_check "$TMP/k.dat"
	"$MKFILE" basic "$TMP/b.dat"
	check "three processes, TSC time, lost events of unknown count" \
		convert_check "$TMP/b.dat" --expect-loss
	check "  ... its processes and threads are told apart (vpid, vtid)" \
		several "$TMP/b.dat.bt" 3 4
	"$MKFILE" odd "$TMP/o.dat"
	check "odd names and strings: quotes, keywords, bytes not UTF-8, extremes" \
		convert_check "$TMP/o.dat" --expect-loss
	odd_names() {
		grep -q '^\[0*5000001000\] .* it'\''s"; DROP TABLE events; --:weird: ' "$TMP/o.dat.bt" &&
		grep -q ' string = 2147483647, from = 9223372036854775807, u64max = 18446744073709551615,' \
			"$TMP/o.dat.bt" &&
		grep -q 'discarded 6 events .*utrace_1"' "$TMP/o.dat.bterr" &&
		grep -q 'discarded 4 events .*utrace_0"' "$TMP/o.dat.bterr"
	}
	check "  ... by name: the system name, keyword fields, losses at the end of a CPU" odd_names
fi

layout() {
	local d=$TMP/s.dat.ctf
	[ -f "$d/metadata" ] && ls "$d"/utrace_* > /dev/null 2>&1 &&
	head -1 "$d/metadata" | grep -qx '/\* CTF 1.8 \*/' &&
	grep -q 'byte_order = le;' "$d/metadata" &&
	grep -q 'freq = 1000000000;' "$d/metadata" &&
	grep -qE '^[[:space:]]*name = "monotonic";' "$d/metadata" &&
	# each stream file starts with the CTF magic, little endian
	for f in "$d"/utrace_*; do
		[ "$(od -An -tx1 -N4 "$f" | tr -d ' ')" = "c11ffcc1" ] || return 1
	done
}
check "the directory: TSDL metadata (CTF 1.8, le, clock monotonic), magic packets" layout

wall() {
	# the default output: wall-clock time of day, from the clock offset
	babeltrace2 "$TMP/s.dat.ctf" 2> /dev/null | head -1 > "$TMP/w" &&
	"$UTRACE" script -i "$TMP/s.dat" --json 2> /dev/null | head -1 > "$TMP/j" &&
	python3 - "$TMP/w" "$TMP/j" "$(date +%s%N)" <<'EOF'
import json, re, sys, time
w = open(sys.argv[1]).read()
j = json.loads(open(sys.argv[2]).read())
m = re.match(r'^\[(\d\d):(\d\d):(\d\d)\.(\d{9})\]', w)
if not m:
    sys.exit('# no time of day in: ' + w)
# the event happened less than a few minutes ago, today: its time of day
# is within that of now (local time, as babeltrace2 prints)
h, mi, s, ns = map(int, m.groups())
tod = h * 3600 + mi * 60 + s
lt = time.localtime(int(sys.argv[3]) // 10**9)
now = lt.tm_hour * 3600 + lt.tm_min * 60 + lt.tm_sec
if not 0 <= (now - tod) % 86400 < 600:
    sys.exit('# babeltrace2 time of day %s, now %d s' % (m.group(0), now))
EOF
}
check "babeltrace2's default output shows the wall-clock time" wall

refuse() {
	mkdir -p "$TMP/full" && : > "$TMP/full/x" &&
	! "$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/full" --format ctf 2> "$TMP/err" &&
	grep -q "'$TMP/full' is not empty" "$TMP/err" && [ "$(wc -l < "$TMP/err")" -eq 1 ] &&
	mkdir -p "$TMP/empty" &&
	"$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/empty" --format ctf 2> "$TMP/err" &&
	[ -f "$TMP/empty/metadata" ] &&
	! "$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/no/such" --format ctf 2> "$TMP/err" &&
	grep -q "cannot make the directory '$TMP/no/such'" "$TMP/err" &&
	! "$UTRACE" convert -i "$TMP/nothing.dat" -o "$TMP/n.ctf" --format ctf 2> "$TMP/err" &&
	[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "'$TMP/nothing.dat'" "$TMP/err"
}
check "a directory that is not empty, one that cannot be made, a missing input" refuse

# The corrupt-file corpus: convert says what the reader says, exits 0 or
# 1, never crashes, and babeltrace2 reads what it wrote.
[ -x "$MKFILE" ] && check "corrupt inputs: the reader's error, exit 0 or 1, readable exports" \
	convert_corpus ctf "$TMP/c.ctf" babeltrace2

done_testing
