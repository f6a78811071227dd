#!/usr/bin/env bash
# utrace hist: the kernel's hist triggers (Documentation/trace/histogram.rst)
# run on a recording of tests/cli/hist-demo.c, whose events are shaped
# like the documented ones (kmem:kmalloc's fields, a task event with a
# char[16] comm and a __string path, a counter).  Each table is checked
# line by line against the kernel's layout (trace_events_hist.c's format
# strings): the header, the keys and their padding, the sort order, the
# values, the totals; and the refusals with the kernel's messages and the
# error_log caret.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/hist-demo"
cd "$TMP" || exit 1

"$UTRACE" record -o h.dat -- "$DEMO" 200 > /dev/null 2> "$TMP/err"
check "the demo is recorded" test -s h.dat

# hist EVENT TRIGGER... < EXPECTED: the output is exactly EXPECTED
hist() {
	cat > want.txt
	"$UTRACE" hist -i h.dat "$@" > got.txt 2> "$TMP/err" && same got.txt want.txt
}
# refused EVENT TRIGGER... < EXPECTED: exit 1, nothing on stdout, stderr
# exactly EXPECTED
refused() {
	cat > want.txt
	"$UTRACE" hist -i h.dat "$@" > got.txt 2> got-err.txt
	local rc=$?
	cp got-err.txt "$TMP/err"
	[ "$rc" = 1 ] && [ ! -s got.txt ] && same got-err.txt want.txt
}

# histogram.rst's first example: keys=call_site, vals=bytes_req; the
# default sort is hitcount ascending; the filter leaves out the call from
# a real function of the program (its address changes from run to run)
check "keys=call_site:val=bytes_req (sort=hitcount, if FILTER)" \
	hist kmalloc 'hist:key=call_site:val=bytes_req if gfp_flags != 0x10' <<'EOF'
# event histogram
#
# trigger info: hist:keys=call_site:vals=hitcount,bytes_req:sort=hitcount:size=2048 if gfp_flags != 0x10 [active]
#

{ call_site: 18446744072101849617 } hitcount:          1  bytes_req:          8
{ call_site: 18446744071582723703 } hitcount:          2  bytes_req:       1512
{ call_site: 18446744071581323680 } hitcount:          3  bytes_req:        148
{ call_site: 18446744071585143902 } hitcount:          4  bytes_req:      15288

Totals:
    Hits: 10
    Entries: 4
    Dropped: 0
EOF

check ".hex keys, values=a,b, sort=bytes_alloc.descending" \
	hist histdemo:kmalloc \
	'hist:keys=call_site.hex:values=bytes_req,bytes_alloc:sort=bytes_alloc.descending if gfp_flags != 16' <<'EOF'
# event histogram
#
# trigger info: hist:keys=call_site.hex:vals=hitcount,bytes_req,bytes_alloc:sort=bytes_alloc.descending:size=2048 if gfp_flags != 16 [active]
#

{ call_site: ffffffff81601c5e } hitcount:          4  bytes_req:      15288  bytes_alloc:      16384
{ call_site: ffffffff813b2e77 } hitcount:          2  bytes_req:       1512  bytes_alloc:       1536
{ call_site: ffffffff8125d1a0 } hitcount:          3  bytes_req:        148  bytes_alloc:        192
{ call_site: ffffffffa02c6a11 } hitcount:          1  bytes_req:          8  bytes_alloc:          8

Totals:
    Hits: 10
    Entries: 4
    Dropped: 0
EOF

# .sym and .sym-offset: "[%llx] %-45ps" / "%-55pS"; an address no symbol
# holds is 0x..., as the kernel's %ps prints it
"$UTRACE" hist -i h.dat kmalloc 'hist:keys=call_site.sym:sort=call_site' \
	'hist:keys=call_site.sym-offset if gfp_flags == 16' > sym.txt 2> "$TMP/err"
check ".sym: the program's function by name, padded to 45" \
	grep -qE '^\{ call_site: \[[0-9a-f]+\] hist_demo_alloc {31}\} hitcount:          1$' sym.txt
check ".sym: an unknown address as 0x..., padded to 45" \
	grep -qxF '{ call_site: [ffffffff8125d1a0] 0xffffffff8125d1a0                            } hitcount:          3' sym.txt
check ".sym-offset: name+off/size, padded to 55" \
	grep -qE '^\{ call_site: \[[0-9a-f]+\] hist_demo_alloc\+0x4/0x[0-9a-f]+ +\} hitcount:          1$' sym.txt
check ".sym-offset keeps its name in the trigger info" \
	grep -qxF '# trigger info: hist:keys=call_site.sym-offset:vals=hitcount:sort=hitcount:size=2048 if gfp_flags == 16 [active]' sym.txt
second=$(grep -n '^# event histogram$' sym.txt | sed -n '2s/:.*//p')
check "two triggers: two tables, apart by \\n\\n" \
	test "$(grep -c '^# event histogram$' sym.txt)" = 2 -a \
	"$(sed -n "$((second - 3)),$((second - 1))p" sym.txt | tr '\n' ';')" = "    Dropped: 0;;;"

check ".log2 keys: '~ 2^N', sorted by key" \
	hist kmalloc 'hist:key=bytes_req.log2:vals=bytes_alloc:sort=bytes_req' <<'EOF'
# event histogram
#
# trigger info: hist:keys=bytes_req.log2:vals=hitcount,bytes_alloc:sort=bytes_req.log2:size=2048 [active]
#

{ bytes_req: ~ 2^3  } hitcount:          1  bytes_alloc:          8
{ bytes_req: ~ 2^4  } hitcount:          1  bytes_alloc:         16
{ bytes_req: ~ 2^5  } hitcount:          2  bytes_alloc:         64
{ bytes_req: ~ 2^7  } hitcount:          1  bytes_alloc:        128
{ bytes_req: ~ 2^9  } hitcount:          1  bytes_alloc:        512
{ bytes_req: ~ 2^10 } hitcount:          1  bytes_alloc:       1024
{ bytes_req: ~ 2^12 } hitcount:          4  bytes_alloc:      16384

Totals:
    Hits: 11
    Entries: 7
    Dropped: 0
EOF

check ".buckets=N keys: '~ N-M'" \
	hist kmalloc 'hist:keys=bytes_alloc.buckets=1024:sort=bytes_alloc' <<'EOF'
# event histogram
#
# trigger info: hist:keys=bytes_alloc.buckets=1024:vals=hitcount:sort=bytes_alloc.buckets=1024:size=2048 [active]
#

{ bytes_alloc: ~ 0-1023 } hitcount:          6
{ bytes_alloc: ~ 1024-2047 } hitcount:          1
{ bytes_alloc: ~ 4096-5119 } hitcount:          4

Totals:
    Hits: 11
    Entries: 3
    Dropped: 0
EOF

check "a char[16] key padded to 50, a value" \
	hist task 'hist:keys=comm:vals=prio' <<'EOF'
# event histogram
#
# trigger info: hist:keys=comm:vals=hitcount,prio:sort=hitcount:size=2048 [active]
#

{ comm: sshd                                               } hitcount:          1  prio:        120
{ comm: bash                                               } hitcount:          5  prio:        580

Totals:
    Hits: 6
    Entries: 2
    Dropped: 0
EOF

check "a __string and a number as a compound key, two sort keys" \
	hist task 'hist:keys=path,pid:sort=pid.descending,path' <<'EOF'
# event histogram
#
# trigger info: hist:keys=path,pid:vals=hitcount:sort=pid.descending,path:size=2048 [active]
#

{ path: /usr/sbin/sshd                                    , pid:        200 } hitcount:          1
{ path: /bin/cat                                          , pid:        101 } hitcount:          2
{ path: /bin/ls                                           , pid:        100 } hitcount:          3

Totals:
    Hits: 6
    Entries: 3
    Dropped: 0
EOF

check ".percent and .graph values with nohitcount" \
	hist task 'hist:keys=comm:vals=prio.percent,prio.graph:NOHC' <<'EOF'
# event histogram
#
# trigger info: hist:keys=comm:vals=prio.percent,prio.graph:sort=hitcount:size=2048:nohitcount [active]
#

{ comm: sshd                                               }  prio (%):  17.14  prio: ####                
{ comm: bash                                               }  prio (%):  82.85  prio: ####################

Totals:
    Hits: 6
    Entries: 2
    Dropped: 0
EOF

"$UTRACE" hist -i h.dat task 'hist:keys=common_pid.execname' > exec.txt 2> "$TMP/err"
check "common_pid.execname: 'comm [pid]' with %-16s[%10llu]" \
	grep -qE '^\{ common_pid: hist-demo       \[ {0,9}[0-9]{1,10}\] \} hitcount:          6$' exec.txt

# a signed key sorts as signed and prints as %llu of its u64, as the kernel
"$UTRACE" hist -i h.dat tick 'hist:keys=delta:sort=delta' > delta.txt 2> "$TMP/err"
check "a negative key: sorted first, printed as an unsigned 64-bit number" \
	test "$(sed -n 6p delta.txt)" = "{ delta: 18446744073709551516 } hitcount:          1" -a \
	"$(sed -n 205p delta.txt)" = "{ delta:         99 } hitcount:          1"

# .syscall: "%-30s[%3llu]", the name from libseccomp when utrace has it
"$UTRACE" hist -i h.dat tick 'hist:keys=n.syscall:size=128' > sys.txt 2> "$TMP/err"
if ldd "$UTRACE" | grep -q libseccomp; then
	check ".syscall keys: the system call's name" \
		test "$(sed -n 6,7p sys.txt | tr '\n' ';')" = "{ n: read                          [  0] } hitcount:          1;{ n: write                         [  1] } hitcount:          1;"
else
	check ".syscall keys without libseccomp: unknown_syscall" \
		test "$(sed -n 6p sys.txt)" = "{ n: unknown_syscall               [  0] } hitcount:          1"
fi

# size: rounded up to a power of 2; a full table counts drops
"$UTRACE" hist -i h.dat tick 'hist:keys=n:size=100' > drop.txt 2> "$TMP/err"
check "size=100 is size=128: 128 entries, 72 dropped of 200 hits" \
	test "$(sed -n 3p drop.txt)" = "# trigger info: hist:keys=n:vals=hitcount:sort=hitcount:size=128 [active]" -a \
	"$(tail -n 3 drop.txt | tr -s ' ' | tr '\n' ';')" = " Hits: 200; Entries: 128; Dropped: 72;" -a \
	"$(grep -c '^{ n: ' drop.txt)" = 128

check "pause: no counts, [paused]" \
	hist task 'hist:keys=pid:pause' <<'EOF'
# event histogram
#
# trigger info: hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [paused]
#


Totals:
    Hits: 0
    Entries: 0
    Dropped: 0
EOF

check "a later cont applies to the paused trigger" \
	hist task 'hist:keys=pid:pause' 'hist:keys=pid:cont' <<'EOF'
# event histogram
#
# trigger info: hist:keys=pid:vals=hitcount:sort=hitcount:size=2048 [active]
#

{ pid:        200 } hitcount:          1
{ pid:        101 } hitcount:          2
{ pid:        100 } hitcount:          3

Totals:
    Hits: 6
    Entries: 3
    Dropped: 0
EOF

"$UTRACE" hist -i h.dat task 'hist:keys=common_cpu:vals=common_timestamp.usecs' > ts.txt 2> "$TMP/err"
check "common_timestamp: the trigger info names the clock" \
	grep -qxF '# trigger info: hist:keys=common_cpu:vals=hitcount,common_timestamp.usecs:sort=hitcount:size=2048:clock=global [active]' ts.txt
check "common_cpu keys count every event" \
	test "$(awk '/^\{ common_cpu: /{s += $6} END {print s}' ts.txt)" = 6

# the refusals: the kernel's errno, message and error_log caret
check "an unknown field" refused task 'hist:keys=foo' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Couldn't find field
  Command: hist:keys=foo
                     ^
EOF
check "an unknown modifier" refused task 'hist:keys=pid.hexx' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Invalid field modifier
  Command: hist:keys=pid.hexx
                         ^
EOF
check ".log2 on a value (the caret at the value, not the key)" \
	refused task 'hist:keys=prio:vals=prio.log2' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Invalid field modifier
  Command: hist:keys=prio:vals=prio.log2
                               ^
EOF
check ".percent on a key" refused task 'hist:keys=prio.percent' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Invalid field modifier
  Command: hist:keys=prio.percent
                          ^
EOF
check ".execname on another field than common_pid" refused task 'hist:keys=pid.execname' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Invalid field modifier
  Command: hist:keys=pid.execname
                         ^
EOF
check "a sort field that is no key or value" refused task 'hist:keys=pid:sort=prio' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Sort field must be a key or a val
  Command: hist:keys=pid:sort=prio
                              ^
EOF
check "a bad sort modifier" refused task 'hist:keys=pid:sort=pid.up' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Invalid sort modifier
  Command: hist:keys=pid:sort=pid.up
                                  ^
EOF
check "three sort fields" refused task 'hist:keys=pid:sort=hitcount,pid,prio' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Too many sort fields (Max = 2)
  Command: hist:keys=pid:sort=hitcount,pid,prio
                         ^
EOF
check "an empty assignment" refused task 'hist:keys=pid:vals=' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Empty assignment
  Command: hist:keys=pid:vals=
                         ^
EOF
check "nohitcount without a value (ENOENT)" refused task 'hist:keys=pid:nohitcount' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: No such file or directory; error_log:
hist:histdemo:task: error: Non-hitcount value is required for 'nohitcount'
  Command: hist:keys=pid:nohitcount
           ^
EOF
check "a size out of range: EINVAL, nothing logged" refused task 'hist:keys=pid:size=1000000' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument (the kernel logs nothing)
EOF
check "no keys: EINVAL, nothing logged" refused task 'hist:vals=prio' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument (the kernel logs nothing)
EOF
check "a bad filter: the filter's error_log entry" refused task 'hist:keys=pid if prio ==' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
event filter parse error: error: Invalid value (did you forget quotes)?
  Command: prio ==
                   ^
EOF
check "the same trigger twice (EEXIST)" refused task 'hist:keys=pid' 'hist:keys=pid' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: File exists; error_log:
hist:histdemo:task: error: Hist trigger already exists
  Command: hist:keys=pid
           ^
EOF
check "clear of a trigger that does not exist (ENOENT)" refused task 'hist:keys=pid:clear' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: No such file or directory; error_log:
hist:histdemo:task: error: Can't clear or continue a nonexistent hist trigger
  Command: hist:keys=pid:clear
           ^
EOF
check "keys=stacktrace on a recording without call stacks is said" refused task 'hist:keys=stacktrace' <<'EOF'
utrace: 'h.dat' has no call stacks for keys=stacktrace (record with utrace record -g)
EOF
check "an event the file does not have" refused nosuch 'hist:keys=pid' <<'EOF'
utrace: no event in 'h.dat' matches 'nosuch' (the events in the file: utrace script --list -i 'h.dat')
EOF

# name=: triggers of two events with the same name share one table
# (histogram.rst, "named triggers"): 11 kmallocs and the 3 ticks with
# n < 3 in it, printed under each trigger's own info (its filter, and the
# shared table's size); a later one of other fields is refused
"$UTRACE" hist -i h.dat kmalloc 'hist:name=foo:keys=common_pid' \
	tick 'hist:name=foo:keys=common_pid:size=256 if n < 3' > named.txt 2> "$TMP/err"
check "name=: one table for both events, Hits = 11 + 3, printed for each" bash -c '
	NAMED="# trigger info: hist:name=foo:keys=common_pid:vals=hitcount:sort=hitcount:size=2048"
	[ "$(grep -c "^# trigger info:" named.txt)" = 2 ] &&
	grep -qxF "$NAMED [active]" named.txt && grep -qxF "$NAMED if n < 3 [active]" named.txt &&
	[ "$(grep -c "^    Hits: 14$" named.txt)" = 2 ] &&
	[ "$(grep -cE "^\{ common_pid: +[0-9]+ \} hitcount: +14$" named.txt)" = 2 ]'
"$UTRACE" hist -i h.dat kmalloc 'hist:keys=common_pid' tick 'hist:keys=common_pid' \
	> unnamed.txt 2> "$TMP/err"
check "without name=: the same trigger on two events is two tables (11 and 200 hits)" \
	test "$(sed -n 's/^    Hits: //p' unnamed.txt | tr '\n' ' ')" = "11 200 "
check "name=: a later trigger of other fields under the name (EINVAL)" \
	refused kmalloc 'hist:name=foo:keys=common_pid' task 'hist:name=foo:keys=pid' <<'EOF'
utrace: hist trigger for 'histdemo:task' refused: Invalid argument; error_log:
hist:histdemo:task: error: Named hist trigger doesn't match existing named trigger (includes variables)
  Command: hist:name=foo:keys=pid
                ^
EOF
check "name=: a trigger of the name on another event is no EEXIST, a second on one event is" \
	refused kmalloc 'hist:name=foo:keys=common_pid' tick 'hist:name=foo:keys=common_pid' \
	tick 'hist:name=foo:keys=common_pid' <<'EOF'
utrace: hist trigger for 'histdemo:tick' refused: File exists; error_log:
hist:histdemo:tick: error: Hist trigger already exists
  Command: hist:name=foo:keys=common_pid
           ^
EOF

"$UTRACE" hist -i h.dat task > /dev/null 2> "$TMP/err"
check "no trigger is a usage error (129)" test $? = 129
"$UTRACE" hist -i nosuch.dat task 'hist:keys=pid' > /dev/null 2> "$TMP/err"
check "a missing file is one line, status 1" \
	test $? = 1 -a "$(wc -l < "$TMP/err")" = 1
"$UTRACE" hist --help > help.txt 2> "$TMP/err"
check "--help" grep -q '^usage: utrace hist ' help.txt

done_testing
