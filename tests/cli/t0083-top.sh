#!/usr/bin/env bash
# utrace top: the table of utrace report over running processes' buffers.
# Snapshots printed one after another (--stdio, -n) are checked number by
# number against what the programs fire (samples/sample.c: ten demo_tick
# for each demo_request, four request paths in turn; tests/cli/req-demo.c:
# /fast, /medium (1 ms), /slow (4 ms)); the screen is checked on a
# terminal through tmux; top switches events on in a buffer of its own (an
# instance utrace-top-PID, seen through the mount) and leaves the process's
# own events as they were, and the instance is gone after it, whether it
# ended by itself, by 'q' or by SIGTERM; a recording made meanwhile misses
# nothing.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/req-demo"
mount_setup      # a runtime directory of our own; the programs killed at exit
cd "$TMP" || exit 1

# on PID: the events switched on in process PID (utrace ps's ON column)
on() {
	"$UTRACE" ps | awk -v p="$1" '$1 == p { print $4 }'
}
# inst PID: the events on in top's instance in PID (utrace-top-*), '-'
# when there is none, '?' without the mount
HAVE_MNT=
if [ -c /dev/fuse ] && command -v fusermount3 > /dev/null &&
	"$UTRACE" mount "$MNT" 2> /dev/null; then
	HAVE_MNT=1
fi
inst() {
	[ -n "$HAVE_MNT" ] || { echo "?"; return; }
	local f
	f=$(ls -d "$MNT/$1"/instances/utrace-top-* 2> /dev/null)
	if [ -z "$f" ]; then echo -; else wc -l < "$f/set_event"; fi
}
# inst_is PID N: N events in top's instance (true without the mount)
inst_is() {
	local v
	v=$(inst "$1")
	[ "$v" = "?" ] || [ "$v" = "$2" ]
}

usage_errors() {
	"$UTRACE" top > /dev/null 2> "$TMP/err"
	[ $? -eq 129 ] && grep -q "which process" "$TMP/err" || return 1
	"$UTRACE" top -p 1 -s 'comm,a.b.c' > /dev/null 2> "$TMP/err"
	[ $? -eq 129 ] && grep -q "bad sort key at 'a.b.c'" "$TMP/err" || return 1
	"$UTRACE" top -p 1 -d 0 > /dev/null 2> "$TMP/err"
	[ $? -eq 129 ] && grep -q "bad delay '0'" "$TMP/err" || return 1
	"$UTRACE" top -p 1 --latency nodot > /dev/null 2> "$TMP/err"
	[ $? -eq 129 ] && grep -q "bad latency 'nodot'" "$TMP/err" || return 1
	"$UTRACE" top -a -p 1 > /dev/null 2> "$TMP/err"
	[ $? -eq 129 ] || return 1
	"$UTRACE" top --help | grep -q '^usage: utrace top'
}
check "usage errors are one line each, --help prints the usage" usage_errors

"$SAMPLE" --run 0 --log "$TMP/log" > /dev/null 2> "$TMP/sample.err" &
SPID=$!
pids+=("$SPID")
wait_traceable "$SPID" "$TMP/sample.err"
wait_for has_lines "$TMP/log" 5

no_such_process() {
	"$UTRACE" top -p 4000000 -n 1 > /dev/null 2> "$TMP/err"
	[ $? -eq 1 ] && [ "$(wc -l < "$TMP/err")" -eq 1 ]
}
check "a process that is not there: one line, status 1" no_such_process

# verify FILE: python3 with the snapshots of FILE in 'snaps' (each a list
# of its lines) and fail()
verify() {
	python3 - "$@" <<EOF
import re, sys
lines = open(sys.argv[1]).read().split('\n')
def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)
snaps = []
for l in lines:
    if l.startswith('   UtraceTop:'):
        snaps.append([])
    if snaps:
        snaps[-1].append(l)
head = re.compile(r'^   UtraceTop: +(\d+) events/s  events: (\d+)  lost: (\d+)  \[(.*)\]$')
def rows(s):
    # the rows after the column heads and their dots: (percent, count, cells)
    out = []
    for l in s[6:]:
        if not l.strip():
            break
        m = re.match(r'^ +(\d+\.\d\d)% +(\d+)(.*)$', l)
        if not m:
            fail('not a row: %r' % l)
        out.append((float(m.group(1)), int(m.group(2)), m.group(3).split()))
    return out
def latency(s):
    # the latency's title line: its index in s and (pairs, unmatched
    # begins, unmatched ends)
    i = next((k for k, l in enumerate(s) if l.startswith('  Latency: ')), None)
    if i is None:
        fail('no latency in %r' % s)
    m = re.match(r'^  Latency: req_begin.id -> req_end.id   pairs: (\d+)  unmatched '
                 r'begins: (\d+)  unmatched ends: (\d+)$', s[i])
    if not m:
        fail(s[i])
    return i, tuple(int(x) for x in m.groups())
$(cat)
EOF
}

L0=$(log_lines "$TMP/log")
"$UTRACE" top -p "$SPID" -e demo:demo_request,demo:demo_tick -d 1 -n 3 > interval.txt 2> "$TMP/err"
st=$?
# a request top counted may be logged just after top ended: two more lines
# and it is in
wait_for has_lines "$TMP/log" $(($(log_lines "$TMP/log") + 2))
L1=$(log_lines "$TMP/log")
check "top -n 3 prints three snapshots and exits 0" test "$st" -eq 0
check "per interval: the counts are those the program fired" verify interval.txt "$SPID" "$L0" "$L1" <<'EOF'
pid, l0, l1 = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
if len(snaps) != 3:
    fail('%d snapshots' % len(snaps))
total_req = 0
for s in snaps:
    m = head.match(s[0])
    if not m or not re.match(r'pid %s, \d+\.\d s, per interval$' % pid, m.group(4)):
        fail('header %r' % s[0])
    if s[1] != '-' * 79 or s[2] != '':
        fail('under the header %r' % s[1:3])
    if s[3] != '  Overhead  Samples  Command  Event' or \
       s[4] != '  ........  .......  .......  .................' or s[5] != '':
        fail('column heads %r' % s[3:6])
    r = rows(s)
    got = {c[1]: n for p, n, c in r}
    if sorted(got) != ['demo:demo_request', 'demo:demo_tick'] or \
       any(c[0] != 'sample' for p, n, c in r):
        fail('rows %r' % r)
    tick, req = got['demo:demo_tick'], got['demo:demo_request']
    # a request each ten ticks: cut anywhere, at most ten ticks apart
    if req < 1 or abs(tick - 10 * req) > 10:
        fail('%d ticks for %d requests' % (tick, req))
    n = tick + req
    if int(m.group(2)) != n or m.group(3) != '0':
        fail('header %r, rows %r' % (s[0], r))
    for p, c, cells in r:
        if abs(p - 100.0 * c / n) > 0.006:
            fail('percent %r of %d' % (p, n))
    if r[0][1] < r[1][1]:
        fail('not sorted by count %r' % r)
    total_req += req
# what top counted was fired while it ran (and switched on)
if not 3 <= total_req <= l1 - l0:
    fail('%d requests counted, %d fired meanwhile' % (total_req, l1 - l0))
EOF
check "the events top switched on are off again" test "$(on "$SPID")" = 0

"$UTRACE" top -p "$SPID" -e demo:demo_request -s demo_request.path -d 1 -n 2 > path.txt 2> "$TMP/err"
check "--sort FIELD: a row per value, as report prints it" verify path.txt <<'EOF'
if len(snaps) != 2:
    fail('%d snapshots' % len(snaps))
paths = ['/api/v1/items', '/health', '/index.html', '/static/app.js']
for s in snaps:
    w = max(len(p) for p in paths)
    if s[3] != '  Overhead  Samples  %*s' % (w, 'path'):
        fail('column heads %r' % s[3])
    r = rows(s)
    got = {c[0]: n for p, n, c in r}
    # the paths in turn: no two counts more than one apart
    if sorted(got) != paths or max(got.values()) - min(got.values()) > 1:
        fail('rows %r' % r)
EOF

"$UTRACE" top -p "$SPID" -e demo:demo_request -s event --cumulative -d 1 -n 3 > cum.txt 2> "$TMP/err"
check "--cumulative: counts since the start" verify cum.txt <<'EOF'
if len(snaps) != 3:
    fail('%d snapshots' % len(snaps))
counts, interval = [], []
for s in snaps:
    if not s[0].endswith(', cumulative]'):
        fail('header %r' % s[0])
    r = rows(s)
    if [c for p, n, c in r] != [['demo:demo_request']] or r[0][0] != 100.0:
        fail('rows %r' % r)
    counts.append(r[0][1])
    interval.append(int(head.match(s[0]).group(2)))
# each snapshot adds the interval's events to the one before
if counts[0] != interval[0] or counts[1] != counts[0] + interval[1] or \
   counts[2] != counts[1] + interval[2] or interval[2] < 1:
    fail('counts %r, interval events %r' % (counts, interval))
EOF

# events on before top stay as they are while it runs and after it; its
# instance is gone after SIGTERM as after its end
restore_on_sigterm() {
	"$UTRACE" enable -p "$SPID" demo:demo_tick 2> "$TMP/err" &&
	[ "$(on "$SPID")" = 1 ] || return 1
	"$UTRACE" top -p "$SPID" -e 'demo:*' -d 1 > term.txt 2> "$TMP/err" &
	local tp=$!
	wait_for has_lines term.txt 1 UtraceTop &&
	[ "$(on "$SPID")" = 1 ] && inst_is "$SPID" 2 &&
	{ [ -z "$HAVE_MNT" ] || [ -d "$MNT/$SPID/instances/utrace-top-$tp" ]; } &&
	kill -TERM "$tp" && wait "$tp" &&
	[ "$(on "$SPID")" = 1 ] && inst_is "$SPID" - &&
	"$UTRACE" disable -p "$SPID" demo:demo_tick 2> "$TMP/err" &&
	[ "$(on "$SPID")" = 0 ]
}
check "SIGTERM ends top, status 0, the events as they were" restore_on_sigterm

"$DEMO" loop > /dev/null 2> "$TMP/demo.err" &
DPID=$!
pids+=("$DPID")
wait_traceable "$DPID" "$TMP/demo.err"
"$UTRACE" top -p "$DPID" --latency req_begin.id:req_end.id -s req_begin.path -d 1 -n 2 \
	> lat.txt 2> "$TMP/err"
check "--latency: per path, /slow over 4 ms, /medium over 1 ms" verify lat.txt <<'EOF'
if len(snaps) != 2:
    fail('%d snapshots' % len(snaps))
for s in snaps:
    i, (npairs, ub, ue) = latency(s)
    if npairs < 3:
        fail(s[i])
    if s[i + 2].split() != ['path', 'Count', 'Min(us)', 'Mean(us)', 'Max(us)', 'p50(us)',
                            'p90(us)', 'p99(us)']:
        fail('heads %r' % s[i + 2])
    got = {}
    for l in s[i + 5:]:
        if not l.strip():
            break
        c = l.split()
        got[c[0]] = [float(x) for x in c[1:]]
    if sorted(got) != ['/fast', '/medium', '/slow']:
        fail('rows %r' % got)
    if got['/slow'][1] < 4000 or got['/medium'][1] < 1000 or got['/fast'][1] >= 1000:
        fail('minimums %r' % got)
    pairs = sum(int(v[0]) for v in got.values())
    if pairs != npairs:
        fail('%d pairs in the rows, %d said' % (pairs, npairs))
    # the counts: as many begins as ends paired, give or take those cut
    r = rows(s)
    if sum(n for p, n, c in r) != int(head.match(s[0]).group(2)):
        fail('rows %r' % r)
EOF
check "req-demo's events are off again" test "$(on "$DPID")" = 0

# --latency over requests of 1.5 s, three intervals long (-d 0.5): a begin
# waits from one read of the buffers to the next until its end comes; the
# path from the begin, the pid from the end
"$DEMO" long > /dev/null 2> "$TMP/long.err" &
LPID=$!
pids+=("$LPID")
wait_traceable "$LPID" "$TMP/long.err"
"$UTRACE" top -p "$LPID" --latency req_begin.id:req_end.id -s req_begin.path,pid -d 0.5 \
	-n 12 --cumulative > long.txt 2> "$TMP/err"
check "--latency: requests longer than the interval pair across reads" \
	verify long.txt "$LPID" <<'EOF'
if len(snaps) != 12:
    fail('%d snapshots' % len(snaps))
last = 0
for s in snaps:
    i, (pairs, ub, ue) = latency(s)
    # top may start within a request: its end alone, at most one
    if pairs < last or ub != 0 or ue > 1:
        fail('%s (pairs before: %d)' % (s[i], last))
    last = pairs
    if not pairs:
        continue
    if s[i + 2].split() != ['path', 'Pid:Command', 'Count', 'Min(us)', 'Mean(us)', 'Max(us)',
                            'p50(us)', 'p90(us)', 'p99(us)']:
        fail('heads %r' % s[i + 2])
    got = []
    for l in s[i + 5:]:
        if not l.strip():
            break
        got.append(l.split())
    if len(got) != 1 or got[0][:3] != ['/long', sys.argv[2] + ':req-demo', str(pairs)]:
        fail('rows %r, %d pairs' % (got, pairs))
    # 1.5 s asleep: not less, and not 2.5 s more even on a loaded machine
    mn, mean, mx = (float(x) for x in got[0][3:6])
    if not 1500000 <= mn <= mean <= mx < 4000000:
        fail('min, mean, max %r' % got[0][3:6])
# 6 s at least: the first begin seen within 1.5 s, its end 1.5 s later
if last < 1:
    fail('no pair in 12 snapshots of 0.5 s')
EOF

# --- on a terminal: a screen redrawn, 'q' quits ---
TMUX_SOCK="$TMP/tmux.sock"
pane() { tmux -S "$TMUX_SOCK" capture-pane -p -t t0083 2> /dev/null; }
pane_has() { pane | grep -Eq -- "$1"; }
# the count of demo_tick on the screen
ticks() { pane | awk '$NF == "demo:demo_tick" { print $2 }'; }
ticks_change() { [ -n "$(ticks)" ] && [ "$(ticks)" != "$1" ]; }
export -f pane pane_has ticks ticks_change
export TMUX_SOCK
# on_terminal COLS ROWS SHELL-COMMAND: run it in a new tmux session of that
# size; wait until it shows a demo event
on_terminal() {
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s t0083 -x "$1" -y "$2" "$3" &&
	wait_for pane_has 'demo:demo_' || { pane > "$TMP/err"; return 1; }
}
screen() {
	on_terminal 100 12 "'$UTRACE' top -p $SPID -e demo:demo_tick,demo:demo_request -d 1; echo TOP-EXIT=\$?; sleep 600" ||
		return 1
	wait_for pane_has 'demo:demo_tick' || { pane > "$TMP/err"; return 1; }
	pane > screen1.txt
	[ "$(on "$SPID")" = 0 ] && inst_is "$SPID" 2 ||
		{ echo "# on: $(on "$SPID"), in top's instance: $(inst "$SPID")" > "$TMP/err"; return 1; }
	# the header, the column heads, two rows; the pane's 12 lines hold it
	grep -Eq "^   UtraceTop: +[0-9]+ events/s  events: [0-9]+  lost: 0  \[pid $SPID, " screen1.txt &&
	grep -q '^  Overhead  Samples  Command  Event$' screen1.txt &&
	grep -Eq '^ +[0-9.]+% +[0-9]+  sample   demo:demo_request$' screen1.txt ||
		{ cp screen1.txt "$TMP/err"; return 1; }
	# redrawn in place with new counts: one header still
	local t1
	t1=$(ticks)
	wait_for ticks_change "$t1" || { pane > "$TMP/err"; return 1; }
	pane > screen2.txt
	[ "$(grep -c UtraceTop screen2.txt)" -eq 1 ] || { cp screen2.txt "$TMP/err"; return 1; }
	tmux -S "$TMUX_SOCK" send-keys -t t0083 q &&
	wait_for pane_has 'TOP-EXIT=0' || { pane > "$TMP/err"; return 1; }
	# the terminal back as it was: the table gone with the screen top drew
	! pane_has UtraceTop &&
	[ "$(on "$SPID")" = 0 ] && inst_is "$SPID" -
}
ctrl_c() {
	# (the shell around top ignores the ^C that the terminal sends to
	# both: top sets its own handler, and the shell stays to say how it
	# ended)
	on_terminal 100 12 "trap '' INT; '$UTRACE' top -p $SPID -e demo:demo_request -d 1; echo TOP-EXIT=\$?; sleep 600" &&
	[ "$(on "$SPID")" = 0 ] && inst_is "$SPID" 1 &&
	tmux -S "$TMUX_SOCK" send-keys -t t0083 C-c &&
	wait_for pane_has 'TOP-EXIT=0' || { pane > "$TMP/err"; return 1; }
	! pane_has UtraceTop && [ "$(on "$SPID")" = 0 ] && inst_is "$SPID" -
}
small() {
	# 8 lines: the header, and what fits of the table
	on_terminal 60 8 "'$UTRACE' top -p $SPID -e demo:demo_tick,demo:demo_request -s demo_request.path,event -d 1; sleep 600" ||
		return 1
	pane > small.txt
	[ "$(wc -l < small.txt)" -le 8 ] && head -n 1 small.txt | grep -q UtraceTop &&
	[ "$(awk 'length > 60' small.txt | wc -l)" -eq 0 ] &&
	[ "$(grep -c '%' small.txt)" -eq 2 ] || { cp small.txt "$TMP/err"; return 1; }
}
# -a reads the processes that start after it, and goes on when they exit:
# a req-demo (copied under a name of this test's: as root, -a also reads
# the processes of the tests running beside this one) started once top
# shows its second snapshot appears in a later one, and after it is
# killed top still runs, its last snapshots without it.
all_dynamic() {
	all_dynamic_ || { grep -h UtraceTop all.txt | tail -n 12 > "$TMP/err"; return 1; }
}
all_dynamic_() {
	local tp lp k
	kill "$DPID" 2> /dev/null       # the req-demo of the tests above
	wait "$DPID" 2> /dev/null
	cp "$DEMO" "$TMP/rq-t0083"
	"$UTRACE" top -a --stdio -e 'reqdemo:*' -s comm,event -d 0.5 -n 200 > all.txt \
		2> /dev/null &
	tp=$!
	wait_for bash -c '[ "$(grep -c UtraceTop all.txt)" -ge 2 ]' || return 1
	if grep -q 'rq-t0083' all.txt; then kill "$tp"; return 1; fi
	"$TMP/rq-t0083" loop > /dev/null 2> "$TMP/demo2.err" &
	lp=$!
	pids+=("$lp")
	wait_for grep -q ' rq-t0083  *reqdemo:req_begin' all.txt || { kill "$tp"; return 1; }
	kill "$lp"
	wait "$lp" 2> /dev/null
	k=$(grep -c UtraceTop all.txt)
	# three snapshots more: the last two without it
	wait_for bash -c '[ "$(grep -c UtraceTop all.txt)" -ge $(('"$k"' + 3)) ]' ||
		{ kill "$tp"; return 1; }
	kill -0 "$tp" && kill "$tp" && wait "$tp" || return 1
	awk '/UtraceTop/ { n++ } { s[n] = s[n] $0 "\n" } END { printf "%s%s", s[n - 1], s[n] }' \
		all.txt > "$TMP/last2"
	! grep -q rq-t0083 "$TMP/last2"
}
check "-a: a process that starts later is read, one that exits dropped" all_dynamic

# A recording made while top -a reads the same process misses nothing:
# top reads its own instance (before, it took events out of the recorded
# buffer, and the recording came out short, fired > written + lost)
beside_record() {
	local rp tp st
	"$UTRACE" top -a -d 0.2 --stdio > beside-top.txt 2> "$TMP/top-err" &
	tp=$!
	RB_WAIT_FILE="$TMP/go" "$UTRACE" record -o beside.dat -- "$RB" paced 20000 \
		> beside-fired.txt 2> beside-rec.txt &
	rp=$!
	wait_for grep -q '^waiting$' beside-fired.txt || { kill "$tp" "$rp"; return 1; }
	# top has the process once its instance is there (2 s without the mount)
	if [ -n "$HAVE_MNT" ]; then
		local p
		p=$(sed -nE 's/^utrace record: started pid ([0-9]+) .*/\1/p' beside-rec.txt)
		wait_for sh -c "ls -d '$MNT/$p'/instances/utrace-top-$tp" > /dev/null 2>&1 ||
			{ kill "$tp" "$rp"; echo "# no instance of top in $p" > "$TMP/err"; return 1; }
	else
		sleep 2
	fi
	touch "$TMP/go"
	wait "$rp"; st=$?
	sleep 0.5
	kill -TERM "$tp"; wait "$tp"
	[ "$st" = 0 ] &&
	python3 "$CHECK" beside.dat beside-fired.txt --expect-no-loss > "$TMP/err" 2>&1 &&
	grep -q "rbstress:rb_ev" beside-top.txt ||
		{ cat beside-rec.txt >> "$TMP/err"; return 1; }
}
RB="$UTRACE_BUILD/tests/rb-stress"
CHECK="$UTRACE_SRC/tests/stress/check-trace.py"
check "a recording of a process top -a reads misses no event; top counts them too" beside_record

if why=$(tmux_unusable); then
	for i in 1 2 3; do
		n=$((n + 1)); echo "ok $n # SKIP top on a terminal: $why"
	done
else
	# a server each (a new session on a server being killed races it)
	trap 'for s in "$TMP"/tmux-*.sock; do tmux -S "$s" kill-server 2> /dev/null; done; mount_cleanup' EXIT
	TMUX_SOCK="$TMP/tmux-1.sock"
	check "on a terminal: a screen redrawn each second, 'q' quits and restores" screen
	TMUX_SOCK="$TMP/tmux-2.sock"
	check "Ctrl-C quits and restores" ctrl_c
	TMUX_SOCK="$TMP/tmux-3.sock"
	check "the table cut to the terminal's height and width" small
fi

done_testing
