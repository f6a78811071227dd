#!/usr/bin/env bash
# The kernel-uprobe fallback, for programs without libutrace (root):
# utrace probe -k turns [OBJ:]SYMBOL[+OFFS] into the kernel's
# PATH:0xFILEOFFSET after checking the site is an instruction boundary
# (the kernel does not check: a probe inside an instruction is taken and
# corrupts the program), and utrace record --kernel-probe records the
# probe's events of a running plain C program, or of a command, through
# its tracing instance, with the values the program passed, then removes
# the probe, and those of killed recorders.  Needs root and tracefs.
. "$(dirname "$0")/lib.sh"
T=/sys/kernel/tracing
[ "$(id -u)" -eq 0 ] || skip_all "the kernel's uprobes need root (this runs as uid $(id -u))"
if [ ! -e "$T/uprobe_events" ]; then
	mount -t tracefs nodev "$T" 2> /dev/null ||
		skip_all "tracefs is not mounted at $T and cannot be mounted here"
fi
[ -w "$T/uprobe_events" ] || skip_all "$T/uprobe_events is missing or not writable (kernel without CONFIG_UPROBE_EVENTS?)"
[ -w "$T/instances" ] || skip_all "$T/instances is not writable (no tracing instances)"
# The probed program is built with gcc whatever built utrace (CC=clang in
# CI's clang run): the expected locations are gcc's code and DWARF.
CC=$(command -v gcc || echo "${CC:-cc}")
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC) to build the probed program"
command -v objdump > /dev/null || skip_all "objdump (binutils) is missing"
"$CC" -O2 -g -o "$TMP/prog" "$UTRACE_SRC/tests/cli/probe-dwarf-prog.c" 2> "$TMP/err" ||
	skip_all "cannot build the probed program: $(head -1 "$TMP/err")"
PROG=$(realpath "$TMP/prog")
G=t0091_$$
PIDS=()
cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null; done
	grep -E "^[pr]:$G/" "$T/uprobe_events" 2> /dev/null | cut -d' ' -f1 |
		sed 's/^[pr]:/-:/' >> "$T/uprobe_events" 2> /dev/null
	rm -rf "$TMP"
}
trap cleanup EXIT

# add's address and file offset (the executable PT_LOAD), its first
# instruction's length (objdump)
ADDR=$((16#$(nm "$PROG" | awk '$3 == "add" { print $1 }')))
read -r LOFF LVADDR <<< "$(readelf -lW "$PROG" | awk '$1 == "LOAD" && / R E / { print $2, $3; exit }')"
FOFF=$((ADDR - LVADDR + LOFF))
read -r I0 I1 _ <<< "$(objdump -d --no-show-raw-insn "$PROG" | awk '/<add>:/ { on = 1; next }
	on && /^$/ { exit } on { sub(":", "", $1); printf "%s ", $1 }')"
FIRST_LEN=$((16#$I1 - 16#$I0))
check "add's first instruction is longer than a byte (so add+1 is inside it)" test "$FIRST_LEN" -gt 1

# a plain C program, running (add() and handle() every 100 ms)
"$PROG" 1000000 > /dev/null &
PID=$!
PIDS+=("$PID")

check "probe -k -n: [OBJ:]SYMBOL becomes PATH:0xFILEOFFSET, the arguments as given" \
	bash -c '[ "$("$0" probe -k -n "p:$1/add add a=%di:s32 b=%si:s64" -p "$2")" = \
		"p:$1/add $3:$(printf 0x%x "$4") a=%di:s32 b=%si:s64" ]' \
	"$UTRACE" "$G" "$PID" "$PROG" "$FOFF"
libc_path() { awk '$6 ~ /\/libc[.-]/ { print $6; exit }' "/proc/$PID/maps"; }
check "probe -k -n: OBJ 'libc' is the process's libc; default names as perf's" \
	bash -c '"$0" probe -k -n -p "$1" "p libc:strlen s=+0(%di):string" | grep -qE "^p:uprobes/strlen $2:0x[0-9a-f]+ s=\+0\(%di\):string$"' \
	"$UTRACE" "$PID" "$(realpath "$(libc_path)")"

# inside an instruction: refused before the kernel sees it
mid_probe() {
	"$UTRACE" probe -k "p:$G/mid $PROG:add+1" > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 1 ] && grep -qE "is not an instruction boundary.*\b$FIRST_LEN[- ]byte" "$TMP/err" &&
		! grep -q "$G/mid" "$T/uprobe_events"
}
check "probe -k add+1 (mid-instruction) is refused; uprobe_events is unchanged" mid_probe
mid_record() {
	"$UTRACE" record --kernel-probe "p add+1 a=%di:s32" -p "$PID" -o "$TMP/mid.dat" 2> "$TMP/err"
	[ $? -eq 1 ] && grep -q "refusing 'p add+1 a=%di:s32': .* is not an instruction boundary" "$TMP/err" &&
		[ ! -e "$TMP/mid.dat" ] && ! grep -q "$PROG:0x0*$(printf %x $((FOFF + 1)))\b" "$T/uprobe_events" &&
		kill -0 "$PID"
}
check "record --kernel-probe add+1 is refused; nothing written; the program runs on" mid_record

# add / remove with probe -k and -d
check "probe -k adds the probe to uprobe_events" \
	bash -c '"$0" probe -k "p:$1/add $2:add a=%di:s32" > /dev/null 2>&1 &&
		grep -qE "^p:$1/add $2:0x0*$(printf %x "$3") a=%di:s32$" "$4/uprobe_events"' \
	"$UTRACE" "$G" "$PROG" "$FOFF" "$T"
check "probe -k -d removes it" \
	bash -c '"$0" probe -k -d "$1/add" && ! grep -q "^p:$1/add " "$2/uprobe_events"' "$UTRACE" "$G" "$T"

# record a running process that has no libutrace
rec_pid() {
	"$UTRACE" record --kernel-probe 'p add a=%di:s32 b=%si:s64' \
		--kernel-probe 'p:h handle name=+0(+8(%di)):string id=+0(%di):s32' \
		-p "$PID" --duration 2 -o "$TMP/pid.dat" 2> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/pid.dat" > "$TMP/pid.txt" 2>> "$TMP/err"
}
check "record --kernel-probe -p PID (no libutrace) records" rec_pid
add_values() {
	awk -v low="$(printf %x $((ADDR & 0xfff)))" '
		$5 == "add:" {
			n++
			ip = $6; gsub(/[()]/, "", ip)
			if (substr(ip, length(ip) - 2) != sprintf("%03s", low)) { print "ip " ip; bad++ }
			split($7, A, "="); split($8, B, "=")
			if (A[1] != "a" || B[1] != "b" || B[2] != A[2] + 100) { print "values " $0; bad++ }
			if (n > 1 && A[2] != last + 1) { print "sequence " $0; bad++ }
			last = A[2]
		}
		END { if (n < 3) { print "only " n " add events"; bad++ } exit bad != 0 }' "$1"
}
check "each add event: the probed address, a = the previous + 1, b = a + 100" add_values "$TMP/pid.txt"
handle_values() {
	awk '$5 == "h:" { n++; split($8, I, "=")
		if ($7 != "name=\"hello\"" || (n > 1 && I[2] != last + 1)) bad++; last = I[2] }
		END { exit (n < 3 || bad) }' "$TMP/pid.txt"
}
check "each handle event: r->name is \"hello\", r->id goes up by one" handle_values
# (the recorder's pid, from its "kernel uprobe p:utrace_PID/add" line)
gone() {
	local r
	r=$(sed -n 's/^utrace record: kernel uprobe p:utrace_\([0-9]*\)\/add .*/\1/p' "$TMP/err" | head -1)
	[ -n "$r" ] && ! grep -q "^[pr]:utrace_$r/" "$T/uprobe_events" &&
		[ ! -e "$T/instances/utrace-record-$r" ] && kill -0 "$PID"
}
check "the probes and the instance are gone afterwards; the program runs on" gone

# record a command, with a return probe
rec_cmd() {
	"$UTRACE" record --kernel-probe 'p add a=%di:s32 b=%si:s64' \
		--kernel-probe 'r add ret=$retval:s32' -o "$TMP/cmd.dat" -- "$PROG" 4 \
		> /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/cmd.dat" > "$TMP/cmd.txt" &&
	[ "$(awk '$5 == "add:" { printf "%s %s,", $7, $8 }' "$TMP/cmd.txt")" = \
		"a=0 b=100,a=1 b=101,a=2 b=102,a=3 b=103," ] &&
	[ "$(awk '$5 == "add__return:" { printf "%s,", $NF }' "$TMP/cmd.txt")" = \
		"ret=100,ret=103,ret=106,ret=109," ] &&
	grep -qE 'add__return: \((0x)?[0-9a-f]+ <- (0x)?[0-9a-f]+\)' "$TMP/cmd.txt"
}
check "record --kernel-probe -- COMMAND: 4 calls, their arguments and return values" rec_cmd

# C names through DWARF, run by the kernel: a global (DW_OP_addr as
# @+OFFSET), -O2 registers, and -O0 stack slots off the CFA behind a
# pointer; the values the program really had
"$CC" -O0 -g -o "$TMP/prog0" "$UTRACE_SRC/tests/cli/probe-dwarf-prog.c" 2> /dev/null
dwarf_run() {   # BINARY DEFINITION: the events' "name=value ..." parts
	local line
	line=$("$UTRACE" probe -k -n -x "$1" "$2") || return 1
	"$UTRACE" record --kernel-probe "$line" -o "$TMP/dw.dat" -- "$1" 4 > /dev/null 2>> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/dw.dat" | sed -E 's/.*: \(0x[0-9a-f]+\) //; s/.*: \([0-9a-f]+\) //' | tr '\n' ,
}
# handle() adds 30 + 5 + 17 to total; add(i, 100 + i) adds 3i + 100
check "'add total a' (-O2): the global total before each call, 0 152 307 465" \
	test "$(dwarf_run "$PROG" 'add total a')" = \
		"total=0 a=0,total=152 a=1,total=307 a=2,total=465 a=3,"
check "'handle r->name:string r->id' (-O0, past the prologue): hello, ids 7 to 10" \
	test "$(dwarf_run "$(realpath "$TMP/prog0")" 'handle r->name:string r->id')" = \
		'name="hello" id=7,name="hello" id=8,name="hello" id=9,name="hello" id=10,'
line2() {
	dwarf_run "$(realpath "$TMP/prog0")" 'add:2 a b c' |
		grep -qE '^a=0 b=100 c=-?[0-9]+,a=1 b=101 c=-?[0-9]+,a=2 b=102 c=-?[0-9]+,a=3 b=103 c=-?[0-9]+,$'
}
check "'add:2 a b c' (-O0, line 2 before c is stored): a and b as passed" line2

# a killed recorder's probe is removed by the next recorder
stale() {
	local r
	"$UTRACE" record --kernel-probe 'p add a=%di:s32' -p "$PID" -o "$TMP/killed.dat" \
		2> /dev/null &
	r=$!
	wait_for grep -q "^p:utrace_$r/add " "$T/uprobe_events" || return 1
	kill -9 "$r"
	wait "$r" 2> /dev/null
	"$UTRACE" record --kernel-probe 'p add a=%di:s32' -p "$PID" --duration 0.3 \
		-o "$TMP/next.dat" 2> "$TMP/err" &&
	grep -q "removed the kernel uprobe 'utrace_$r/add' of a recorder that did not end cleanly" \
		"$TMP/err" && ! grep -q "^p:utrace_$r/" "$T/uprobe_events"
}
check "a SIGKILLed recorder's probe is removed by the next recorder" stale
check "a definition of an unknown function: one line, exit 1" \
	bash -c '"$0" probe -k -n -p "$1" "p nosuch" 2> "$2/err"; [ $? -eq 1 ] &&
		[ "$(cat "$2/err")" = "utrace probe: no function '\''nosuch'\'' in '\''$3'\''" ]' \
	"$UTRACE" "$PID" "$TMP" "$PROG"
done_testing
