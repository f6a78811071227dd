#!/usr/bin/env bash
# Dynamic probes through the CLI (utrace-probe(1)): definitions checked
# and printed as uprobe_events reads them, the kernel's refusals with the
# error_log caret (08b-uprobe-errors.txt), then a plain program (no
# utrace in it, -O2 -g) recorded with --probe: every value and count of
# its calls, a string, an unreadable pointer, return values; and the
# mount's uprobe_events, uprobe_profile, format and filter of the events.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-prog"
# Built with ASan, the program is too, but libutrace comes first (preloaded)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
cp "$PROG" prog

# --- definitions, without a process ---

# (the sites are checked as a process would: add's and greet's entries;
# the decimal form of add's offset for the return probe)
A=$(nm prog | awk '$3 == "add" { print $1 }')
G=$(nm prog | awk '$3 == "greet" { print $1 }')
cat > want.txt <<EOF2
p:grp/add $TMP/prog:0x$(printf %016x $((0x$A))) a=%di:s32 b=%si:s32
r:uprobes/p_prog_0x$(printf %x $((0x$A))) $TMP/prog:0x$(printf %016x $((0x$A))) arg1=\$retval:x32
p:grp/t $TMP/prog:0x$(printf %016x $((0x$G))) s=+0(%di):string arr=+8(%si):u8[4] bf=%di:b4@4/8 c=\$comm
EOF2
check "definitions print as uprobe_events reads them back" bash -c '
	"$UTRACE" probe "p:grp/add $1/prog:0x$2 a=%di:s32 b=%si:s32" \
		"r $1/prog:$((0x$2)) \$retval:x32" \
		"p:grp/t   $1/prog:0x$3 s=+0(%di):string arr=+8(%si):u8[4] bf=%di:b4@4/8 c=\$comm" \
		> got.txt 2> "$1/err" && diff -u want.txt got.txt >&2' _ "$TMP" "$A" "$G"

check "a symbol resolves to its file offset (the file's symbols)" bash -c '
	[ "$("$UTRACE" probe "p:grp/s $1/prog:greet+0 n=+0(%di):string")" = \
	  "p:grp/s $1/prog:0x$(nm "$1/prog" | awk "\$3 == \"greet\" { print \$1 }") n=+0(%di):string" ]' _ "$TMP"

# refused DEFINITION < EXPECTED-STDERR: exit 1 and exactly that
refused() {
	cat > want-err.txt
	"$UTRACE" probe "$1" > got.txt 2> got-err.txt
	local rc=$?
	cp got-err.txt "$TMP/err"
	[ "$rc" = 1 ] && [ ! -s got.txt ] && same got-err.txt want-err.txt
}
P="$TMP/prog"
pad=$(printf "%*s" $((${#P} + 27)) "")
check "a bad register: the kernel's message and caret" refused "p:g/e $P:0x1240 a=%rdi" <<EOF2
utrace probe: trace_uprobe: error: Invalid register name
  Command: p:g/e $P:0x1240 a=%rdi
$pad^
EOF2
pad=$(printf "%*s" $((${#P} + 31)) "")
check "a bad type: the caret under the type" refused "p:g/e $P:0x1240 a=%di:s99" <<EOF2
utrace probe: trace_uprobe: error: Unknown type is specified
  Command: p:g/e $P:0x1240 a=%di:s99
$pad^
EOF2
check "a missing file" refused "p:g/e /nonexistent/prog:0x10" <<EOF2
utrace probe: trace_uprobe: error: Failed to find the given file
  Command: p:g/e /nonexistent/prog:0x10
                 ^
EOF2
check "a bad event name" refused "p:g/bad-name $P:0x10" <<EOF2
utrace probe: trace_uprobe: error: Event name must follow the same rules as C identifiers
  Command: p:g/bad-name $P:0x10
               ^
EOF2
check "\$retval on an entry probe" refused "p:g/e $P:0x10 r=\$retval" <<EOF2
utrace probe: trace_uprobe: error: \$retval is not available on probe
  Command: p:g/e $P:0x10 r=\$retval
$(printf '%*s' $((${#P} + 25)) '')^
EOF2
check "what the kernel refuses without an error_log entry: one line" refused "p:g/e $P" <<EOF2
utrace probe: 'p:g/e $P': no ':' between the file and the offset
EOF2

# --- a plain program recorded with --probe ---

"$UTRACE" record -o p.dat \
	--probe 'p:grp/add add a=%di:s32 b=%si:s32' \
	--probe 'r:grp/add_ret add $retval:s32' \
	--probe 'p:grp/greet greet name=+0(%di):string' -- ./prog 3 > out.txt 2> rec-err.txt
cp rec-err.txt "$TMP/err"
check "the program runs as without probes" grep -qx 'sum=43' out.txt
"$UTRACE" script -i p.dat > s.txt 2> "$TMP/err"
addr=$(nm prog | awk '$3 == "add" { print $1 }')
sed -n 's/^.*\(add\|add_ret\|greet\): /\1: /p' s.txt |
	sed -e "s/(0x[0-9a-f]*\\([0-9a-f]\\{3\\}\\))/(IP\\1)/" \
	    -e "s/(0x[0-9a-f]* <- 0x[0-9a-f]*\\([0-9a-f]\\{3\\}\\))/(RET <- FUNC\\1)/" > got.txt
off=${addr: -3}
goff=$(nm prog | awk '$3 == "greet" { print substr($1, length($1) - 2) }')
cat > want.txt <<EOF2
add: (IP$off) a=0 b=0
add_ret: (RET <- FUNC$off) arg1=0
greet: (IP$goff) name="world"
add: (IP$off) a=1 b=10
add_ret: (RET <- FUNC$off) arg1=11
greet: (IP$goff) name=(fault)
add: (IP$off) a=2 b=20
add_ret: (RET <- FUNC$off) arg1=22
greet: (IP$goff) name="world"
EOF2
check "every call, its values and return value, as the kernel prints them" same got.txt want.txt
# a numeric fetch through memory and a return probe go through the fetch
# program into the inlined writer's reservation (uprobes.c: fetch_inline)
check "a fetch through memory, recorded: the byte, 0 where it faults" bash -c '
	"$UTRACE" record -o d.dat --probe "p:grp/g8 greet c=+0(%di):u8 d=+1(%di):x8" \
		-- ./prog 3 > /dev/null 2> d-err.txt &&
	"$UTRACE" script -i d.dat | sed -n "s/^.* g8: ([^)]*) //p" > d.txt &&
	printf "c=119 d=0x6f\nc=0 d=0x0\nc=119 d=0x6f\n" | diff - d.txt'

# (REFCTR): an SDT semaphore's file offset, counted up while the probe is
# placed (the kernel's ref_ctr_offset), and printed back
sema_off() {
	local va t o v p fs rest
	va=$((16#$(nm prog | awk '$3 == "add_sema" { print $1 }')))
	readelf -lW prog | while read -r t o v p fs rest; do
		[ "$t" = LOAD ] && [ "$va" -ge $((v)) ] && [ "$va" -lt $((v + fs)) ] &&
			printf '0x%x\n' $((va - v + o))
	done
}
check "(REFCTR): the semaphore counted while placed, read back as the kernel's" bash -c '
	s=$2
	[ -n "$s" ] && grep -qx "sema=0" out.txt &&
	"$UTRACE" record -o r.dat --probe "p:grp/add add($s) a=%di:s32" \
		-- ./prog 2 > out-r.txt 2> "$1/err" &&
	grep -qx "sema=1" out-r.txt &&
	[ "$("$UTRACE" script -i r.dat | grep -c " add: ")" = 2 ] &&
	"$UTRACE" probe "p:grp/add $1/prog:0x$3($s)" |
		grep -q "^p:grp/add $1/prog:0x$(printf %016x $((0x$3)))($s)\$" &&
	"$UTRACE" probe "p:grp/add $1/prog:0x$3(0x10)" > /dev/null 2> "$1/err" || exit 1
	! "$UTRACE" probe "p:grp/add $1/prog:0x$3(1a)" 2> e.txt &&
	grep -q "Invalid reference counter offset" e.txt || exit 1
	# the second definition is refused in the process: the recording
	# says so and fails (status 1)
	"$UTRACE" record -o m.dat --probe "p:grp/add add($s) a=%di:s32" \
		--probe "p:grp/add2 add a=%di:s32" -- ./prog 1 > out-m.txt 2> m-err.txt
	[ $? = 1 ] &&
	grep -q "p:grp/add2 add a=%di:s32.*Reference counter offset mismatch" m-err.txt' \
	_ "$TMP" "$(sema_off)" "$A"

addsize=$(printf %x $((16#$(nm -S prog | awk '$4 == "add" { print $2 }'))))
check "\$argN at an entry, the symbol type resolved in the recording" bash -c '
	"$UTRACE" record -o a.dat --probe "p:grp/a add x=\$arg1:s32 y=\$arg2:s32 f=%ip:symbol" \
		-- ./prog 2 > /dev/null 2> "$1/err" &&
	"$UTRACE" script -i a.dat | sed -n "s/^.* a: (0x[0-9a-f]*) //p" > got-a.txt &&
	printf "x=0 y=0 f=add+0x0/0x%s\nx=1 y=10 f=add+0x0/0x%s\n" "$2" "$2" > want-a.txt &&
	diff -u want-a.txt got-a.txt >&2' _ "$TMP" "$addsize"

# --- the mount ---

need_fuse_or_done() {
	if [ ! -c /dev/fuse ] || ! command -v fusermount3 > /dev/null; then
		n=$((n + 1)); echo "ok $n # SKIP no usable FUSE here"
		done_testing
	fi
}
need_fuse_or_done
mount_setup
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ./prog 2 "$TMP/go" > out2.txt 2> "$TMP/prog-err" &
pid=$!
pids+=("$pid")
wait_traceable "$pid" "$TMP/prog-err" > "$TMP/err" 2>&1
"$UTRACE" mount "$MNT" 2> "$TMP/err" &
pids+=($!)
wait_for test -d "$MNT/$pid"
D="$MNT/$pid"
check "uprobe_events takes definitions (>>) and reads them back" bash -c '
	echo "p:grp/add add a=%di:s32 b=%si:s32" >> "$1/uprobe_events" &&
	echo "r:grp/add_ret add ret=\$retval:s32" >> "$1/uprobe_events" &&
	printf "%s\n" "p:grp/greet greet name=+0(%di):string" >> "$1/uprobe_events" &&
	[ "$(cat "$1/uprobe_events")" = "p:grp/add $2:0x$3 a=%di:s32 b=%si:s32
r:grp/add_ret $2:0x$3 ret=\$retval:s32
p:grp/greet $2:0x$4 name=+0(%di):string" ]' _ "$D" "$TMP/prog" \
	"$(printf %016x $((0x$addr)))" "$(printf %016x $((0x$(nm prog | awk '$3 == "greet" { print $1 }'))))"
check "the format file is the kernel's" bash -c '
	sed -n "/__probe_ip/,\$p" "$1/events/grp/add/format" > got.txt &&
	printf "%s\n" "	field:unsigned long __probe_ip;	offset:8;	size:8;	signed:0;" \
		"	field:s32 a;	offset:16;	size:4;	signed:1;" \
		"	field:s32 b;	offset:20;	size:4;	signed:1;" "" \
		"print fmt: \"(%lx) a=%d b=%d\", REC->__probe_ip, REC->a, REC->b" > want.txt &&
	diff -u want.txt got.txt >&2' _ "$D"
check "a filter on a probe's field" bash -c '
	echo "a >= 1" > "$1/events/grp/add/filter" && [ "$(cat "$1/events/grp/add/filter")" = "a >= 1" ]' _ "$D"
check "multi-probe events: same arguments join, others are EEXIST with the kernel's caret" bash -c '
	echo "p:grp/two add v=%di:s32" >> "$1/uprobe_events" &&
	echo "p:grp/two greet v=%di:s32" >> "$1/uprobe_events" &&
	[ "$(grep -c "^p:grp/two " "$1/uprobe_events")" = 2 ] &&
	[ "$(grep -c " two  " "$1/uprobe_profile")" = 2 ] &&
	! ( echo "p:grp/two greet w=%di:u32" >> "$1/uprobe_events" ) 2> /dev/null &&
	tail -n 3 "$1/error_log" > got-log.txt &&
	sed -n 1p got-log.txt | grep -q "trace_uprobe: error: Argument type or name is different from existing probe\$" &&
	[ "$(sed -n 3p got-log.txt)" = "$(printf "%27s^" "")" ] &&
	echo "-:grp/two" >> "$1/uprobe_events" && ! grep -q two "$1/uprobe_events"' _ "$D"
check "> uprobe_events is EBUSY while an event is on" bash -c '
	echo 1 > "$1/events/grp/add/enable" && echo 1 > "$1/events/grp/greet/enable" &&
	! ( : > "$1/uprobe_events" ) 2> /dev/null && [ -n "$(cat "$1/uprobe_events")" ]' _ "$D"
touch "$TMP/go"
check "the enabled events are recorded, filtered" bash -c '
	wait_for has_lines "$1/trace" 2 " greet: " &&
	[ "$(grep -c " add: " "$1/trace")" = 1 ] && grep -q " add: (0x[0-9a-f]*) a=1 b=10\$" "$1/trace" &&
	grep -q " greet: (0x[0-9a-f]*) name=(fault)\$" "$1/trace"' _ "$D"
# hits count while the event is on, filtered out or not (the kernel's nhit)
check "uprobe_profile: the kernel's columns, hits while on, and misses" bash -c '
	grep -q "^  [^ ]*prog add  *2  *0\$" "$1/uprobe_profile" &&
	grep -q "^  [^ ]*prog greet  *2  *1\$" "$1/uprobe_profile" &&
	grep -q "^  [^ ]*prog add_ret  *0  *0\$" "$1/uprobe_profile"' _ "$D"
check "-: removes an idle event, EBUSY for an enabled one" bash -c '
	echo "-:grp/add_ret" >> "$1/uprobe_events" && ! echo "-:grp/add" >> "$1/uprobe_events" 2> /dev/null &&
	[ "$(grep -c . "$1/uprobe_events")" = 2 ]' _ "$D"
check "a refused definition leaves its entry in error_log" bash -c '
	! echo "p:grp/x add a=%xx" >> "$1/uprobe_events" 2> /dev/null &&
	tail -n 3 "$1/error_log" | head -1 | grep -q "trace_uprobe: error: Invalid register name\$"' _ "$D"
# (add is patched already: the site is checked on the file's bytes)
check "a site inside an instruction is refused, with the reason (the kernel takes it)" bash -c '
	! "$UTRACE" probe -p "$2" "p:grp/mid add+1" 2> got-err.txt && cp got-err.txt "$3/err" &&
	grep -q "^utrace probe: process $2: trace_uprobe: error: Cannot probe: add+0x1 is not an instruction boundary" got-err.txt &&
	tail -n 3 "$1/error_log" | head -1 | grep -q "Cannot probe: add+0x1 is not an instruction boundary"' _ "$D" "$pid" "$TMP"
check "utrace probe -p: -l reads uprobe_events, --profile uprobe_profile" bash -c '
	[ "$("$UTRACE" probe -p "$2" -l)" = "$(cat "$1/uprobe_events")" ] &&
	[ "$("$UTRACE" probe -p "$2" --profile)" = "$(cat "$1/uprobe_profile")" ]' _ "$D" "$pid"
check "> uprobe_events clears them once they are off" bash -c '
	echo 0 > "$1/events/grp/enable" && : > "$1/uprobe_events" && [ ! -s "$1/uprobe_events" ] &&
	wait_for test ! -e "$1/events/grp"' _ "$D"
done_testing
