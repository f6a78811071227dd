#!/usr/bin/env bash
# utrace convert --format sqlite: the database it writes, queried with the
# real sqlite3, holds what utrace script shows: a table per event with as
# many rows as the event has lines, each field's value, the processes,
# threads and lost events, a view of everything in time order; names that
# need quoting (quotes and SQL in a system name, keywords as field names)
# are safe.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"

command -v sqlite3 > /dev/null ||
	skip_all "sqlite3 is not installed (apt-get install sqlite3; scripts/setup-debian.sh --tests)"

# compare SCRIPT-JSON DB: every event of 'utrace script --json' against
# the rows of its table, read with the sqlite3 program (strings and
# arrays as hex: every byte as it is)
compare() {
	python3 - "$@" <<'EOF'
import json, subprocess, sys
from collections import Counter, defaultdict
script, db = sys.argv[1:3]
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
def sql(q):
    r = subprocess.run(['sqlite3', '-batch', '-noheader', '-separator', '\x1f', db, q],
                       capture_output=True)
    if r.returncode:
        fail('sqlite3 %r: %s' % (q, r.stderr.decode(errors='replace')))
    return [l.split(b'\x1f') for l in r.stdout.split(b'\n') if l]
def text(b):
    s = b.decode('utf-8', 'surrogateescape')
    return ''.join(chr(ord(c) - 0xdc00) if 0xdc80 <= ord(c) <= 0xdcff else c for c in s)
def q(name):
    return '"' + name.replace('"', '""') + '"'
expected, lost = defaultdict(list), []
for line in open(script, encoding='utf-8'):
    j = json.loads(line)
    if 'lost' in j:
        lost.append((j['time'], j['pid'], j['tid'], j['cpu'], j['lost']))
        continue
    expected[j['name']].append(j)
tables = {}
for id_, system, name, table in sql('SELECT id, hex(system), hex(name), hex(table_name) FROM events'):
    tables[text(bytes.fromhex(system.decode())) + ':' + text(bytes.fromhex(name.decode()))] = \
        text(bytes.fromhex(table.decode()))
n = 0
for name, evs in expected.items():
    if name not in tables:
        fail('no table for %s (tables: %r)' % (name, tables))
    t = tables[name]
    cols = [(r[1].decode(), r[2].decode()) for r in sql('PRAGMA table_info(%s)' % q(t))]
    sel = ', '.join(('hex(%s)' if ty in ('TEXT', 'BLOB') else '%s') % q(c) for c, ty in cols)
    rows = sql('SELECT %s FROM %s ORDER BY rowid' % (sel, q(t)))
    if len(rows) != len(evs):
        fail('%s: utrace script %d events, table %s %d rows' % (name, len(evs), t, len(rows)))
    for j, row in zip(evs, rows):
        got = [int(row[i]) for i in range(4)]
        if got != [j['time'], j['pid'], j['tid'], j['cpu']]:
            fail('%s: time, pid, tid, cpu %r, script %r' % (name, got,
                 [j['time'], j['pid'], j['tid'], j['cpu']]))
        fields = list(j['fields'].items())
        if len(fields) != len(cols) - 4:
            fail('%s: %d fields, %d columns' % (name, len(fields), len(cols) - 4))
        for (k, v), (c, ty), cell in zip(fields, cols[4:], row[4:]):
            if c != k and c != 'field_' + k:
                fail('%s: field %s in column %s' % (name, k, c))
            if ty == 'INTEGER':
                # unsigned 64-bit values of 2^63 and more: the same bits, signed
                ok = isinstance(v, int) and int(cell) % 2**64 == v % 2**64
            elif ty == 'TEXT':
                ok = text(bytes.fromhex(cell.decode())) == v
            else:
                b = bytes.fromhex(cell.decode())
                es = len(b) // len(v) if v else 1
                ok = len(b) == es * len(v) and all(
                    int.from_bytes(b[i * es:(i + 1) * es], 'little') == x % 2**(8 * es)
                    for i, x in enumerate(v))
            if not ok:
                fail('%s at %d: %s = %r, column %s (%s) holds %r' % (name, j['time'], k, v,
                     c, ty, cell))
        n += 1
rows = [tuple(int(x) if x else None for x in r)
        for r in sql('SELECT time_ns, pid, tid, cpu, count FROM lost ORDER BY rowid')]
if rows != lost:
    fail('lost: table %r, script %r' % (rows, lost))
print('# %d events in %d tables, %d lost markers' % (n, len(expected), len(lost)))
EOF
}

# convert_check FILE: script, convert, compare
convert_check() {
	local f=$1
	"$UTRACE" script -i "$f" --json > "$f.json" 2> "$TMP/err"
	"$UTRACE" convert -i "$f" -o "$f.db" --format sqlite 2> "$TMP/err" &&
	compare "$f.json" "$f.db" 2> "$TMP/err"
}

check "sample, every event type" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... converted: a row per event, field by field" convert_check "$TMP/s.dat"

# counts per table, as grep -c on utrace script's lines
counts() {
	local n
	for e in foo_bar foo_bar_with_fn foo_with_template_simple; do
		n=$(sqlite3 "$TMP/s.dat.db" "SELECT count(*) FROM \"sample_trace_$e\"") &&
		[ "$n" = "$("$UTRACE" script -i "$TMP/s.dat" 2> /dev/null | grep -c " $e: ")" ] &&
		[ "$n" -gt 0 ] || return 1
	done
	[ "$(sqlite3 "$TMP/s.dat.db" "SELECT count(*) FROM all_events")" = \
	  "$("$UTRACE" script -i "$TMP/s.dat" 2> /dev/null | wc -l)" ]
}
check "  ... counts per table and in all_events equal utrace script's lines" counts

view() {
	# all_events: every event, in time order, with its name and fields
	sqlite3 -separator ' ' "$TMP/s.dat.db" \
		"SELECT time_ns, tid, name FROM all_events" > "$TMP/view" &&
	"$UTRACE" script -i "$TMP/s.dat" --json 2> /dev/null | python3 -c '
import json, sys
for l in sys.stdin:
    j = json.loads(l)
    print(j["time"], j["tid"], j["name"].split(":", 1)[1])' | sort > "$TMP/want" &&
	[ -s "$TMP/view" ] && sort -c -s -n -k1,1 "$TMP/view" &&
	sort "$TMP/view" > "$TMP/view.sorted" && same "$TMP/view.sorted" "$TMP/want" &&
	sqlite3 "$TMP/s.dat.db" "SELECT name, line FROM all_events" > "$TMP/lines" &&
	grep -q '^foo_bar_with_fn|foo=fun bar=1$' "$TMP/lines" &&
	grep -q '^foo_with_template_simple|foo=simple bar=1 pt=01000000FFFFFFFF bytes=DEADBEEF big=78187493520 small=-1 ok=1$' "$TMP/lines"
}
check "  ... the view all_events: every event in time order, its fields as a line" view

latency() {
	# the time from each foo_bar to the foo_bar_with_fn of the same bar
	# in the same thread, in SQL and from utrace script's times
	sqlite3 -separator ' ' "$TMP/s.dat.db" "
		SELECT a.bar, (SELECT min(b.time_ns) FROM sample_trace_foo_bar_with_fn b
		               WHERE b.tid = a.tid AND b.bar = a.bar AND b.time_ns >= a.time_ns)
		              - a.time_ns
		FROM sample_trace_foo_bar a ORDER BY a.time_ns" > "$TMP/lat" &&
	"$UTRACE" script -i "$TMP/s.dat" --json 2> /dev/null | python3 -c '
import json, sys
ev = [json.loads(l) for l in sys.stdin]
for a in ev:
    if a["name"].endswith(":foo_bar"):
        b = min(e["time"] for e in ev if e["name"].endswith(":foo_bar_with_fn") and
                e["tid"] == a["tid"] and e["fields"]["bar"] == a["fields"]["bar"] and
                e["time"] >= a["time"])
        print(a["fields"]["bar"], b - a["time"])' > "$TMP/lat.want" &&
	[ -s "$TMP/lat" ] && same "$TMP/lat" "$TMP/lat.want"
}
check "  ... a latency query between two events gives utrace script's times" latency

check "rb-stress, 4 threads, events lost between pages" bash -c '
	RB_NO_SIGNALS=1 "$0" record -m 64K -o "$2/t.dat" -- "$1" threads 4 100000 > /dev/null 2> "$2/err" &&
	grep -q "LOST [0-9]* EVENTS" <("$0" script -i "$2/t.dat" 2> /dev/null)' "$UTRACE" "$RB" "$TMP"
check "  ... converted: the same events, the losses in the lost table" convert_check "$TMP/t.dat"

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
	check "three processes, TSC time, lost events of unknown count" convert_check "$TMP/b.dat"
	procs() {
		[ "$(sqlite3 "$TMP/b.dat.db" "SELECT pid, ppid, comm, exe FROM processes" | tr '\n' ' ')" = \
		  "1000|1|app|/usr/bin/app 2000|1000|tscapp|/opt/tscapp 3000|1||/bin/noname " ] &&
		[ "$(sqlite3 "$TMP/b.dat.db" "SELECT tid, pid, comm FROM threads ORDER BY tid" | tr '\n' ' ')" = \
		  "1000|1000|app 1001|1000|app-worker 2000|2000|tscapp 2002|2000|tscapp 3000|3000| " ]
	}
	check "  ... the processes and threads tables" procs
	"$MKFILE" odd "$TMP/o.dat"
	check "odd names and strings: quotes, keywords, bytes not UTF-8, extremes" \
		convert_check "$TMP/o.dat"
	odd_names() {
		local db=$TMP/o.dat.db
		# the system name with quotes and SQL went in as data, nothing ran
		[ "$(sqlite3 "$db" "SELECT system, name, table_name FROM events ORDER BY id" | tr '\n' '#')" = \
		  "it's\"; DROP TABLE events; --|weird|it_s___DROP_TABLE_events_____weird#odd-sys|x|odd_sys_x#odd_sys|x|odd_sys_x_2#" ] &&
		# keywords and the exports' own column names as field names
		[ "$(sqlite3 "$db" 'SELECT "select", "string", "from", field_pid, field_time_ns, u64max
			FROM it_s___DROP_TABLE_events_____weird ORDER BY time_ns LIMIT 1')" = \
		  "32767|2147483647|9223372036854775807|1311768467463790320|7|-1" ] &&
		[ "$(sqlite3 "$db" "SELECT count(*) FROM all_events WHERE system = 'it''s\"; DROP TABLE events; --'")" = 6 ] &&
		[ "$(sqlite3 "$db" "SELECT sum(count) FROM lost")" = 10 ]
	}
	check "  ... by name: quoted system, keyword and clashing columns, losses" odd_names
fi

refuse() {
	mkdir -p "$TMP/adir" &&
	! "$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/adir" --format sqlite 2> "$TMP/err" &&
	grep -q "'$TMP/adir' is not a regular file" "$TMP/err" &&
	echo junk > "$TMP/old.db" &&
	"$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/old.db" --format sqlite 2> "$TMP/err" &&
	[ "$(sqlite3 "$TMP/old.db" "SELECT count(*) FROM all_events")" -gt 0 ] &&
	! "$UTRACE" convert -i "$TMP/s.dat" -o "$TMP/no/such.db" --format sqlite 2> "$TMP/err" &&
	grep -q "cannot open '$TMP/no/such.db'" "$TMP/err" && [ ! -e "$TMP/no/such.db" ] &&
	! "$UTRACE" convert -i "$TMP/nothing.dat" -o "$TMP/n.db" --format sqlite 2> "$TMP/err" &&
	[ "$(wc -l < "$TMP/err")" -eq 1 ] && grep -q "'$TMP/nothing.dat'" "$TMP/err" &&
	[ ! -e "$TMP/n.db" ]
}
check "a directory refused, an old file replaced, bad paths and inputs: one line" refuse

# The corrupt-file corpus: convert says what the reader says, exits 0 or
# 1, never crashes, and sqlite3 reads what it wrote.
[ -x "$MKFILE" ] && check "corrupt inputs: the reader's error, exit 0 or 1, readable exports" \
	convert_corpus sqlite "$TMP/c.db" sqlite3 -batch -cmd "SELECT count(*) FROM all_events"

done_testing
