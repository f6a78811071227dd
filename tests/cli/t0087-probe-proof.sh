#!/usr/bin/env bash
# Dynamic probes' proofs (issue 12) through utrace record --probe on plain
# programs (-O2 -g, no utrace in them, libutrace preloaded), every value
# exact and every program's output unchanged: return probes on functions
# left by longjmp and by a C++ exception (no event, no crash, and right
# again after), a probe hit inside a signal handler, recursion (entries
# and returns in order), fork (the child keeps the probes, its events
# are recorded), exec (the new image is probed again only because
# UTRACE_PROBES and LD_PRELOAD are inherited), strings ending before an
# unmapped page ((fault), as the kernel's strncpy_from_user) or crossing
# into a mapped one (whole); then the same definitions through the
# kernel's uprobe_events give the same values (root and tracefs only).
. "$(dirname "$0")/lib.sh"
# Built with ASan, the programs are too, but libutrace comes first (preloaded)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
cp "$UTRACE_BUILD/tests/probe-proof-prog" prog
cp "$UTRACE_BUILD/tests/probe-proof-cxx" cxx

# The definitions of each case (NAME: the program and its arguments)
declare -A DEFS CMD
CMD[jmp]="./prog jmp"
DEFS[jmp]='p:g/j jumper x=%di:s32;r:g/jr jumper $retval:s32;r:g/tr twice $retval:s32'
CMD[cxx]="./cxx"
DEFS[cxx]='p:g/m mid x=%di:s32;r:g/mr mid $retval:s32;r:g/tr thrower $retval:s32'
CMD[sig]="./prog sig"
DEFS[sig]='p:g/h in_handler n=%di:s32;r:g/hr in_handler $retval:s32'
CMD[rec]="./prog rec"
DEFS[rec]='p:g/r rsum n=%di:s32;r:g/rr rsum $retval:s32'
CMD[str]="./prog str"
DEFS[str]='p:g/s greet s=+0(%di):string c=+0(%di):u8'

# record CASE [--probe|--kernel-probe] [SUFFIX]: CASE's program recorded
# with its definitions; CASE$SUFFIX.out is its output, CASE$SUFFIX.txt
# the events' names and values, without comm, pid and addresses
record() {
	local c=$1 opt=${2:---probe} f=$1${3:-} d def args=()

	IFS=';' read -ra d <<< "${DEFS[$c]}"
	for def in "${d[@]}"; do args+=("$opt" "$def"); done
	# shellcheck disable=SC2086
	"$UTRACE" record -o "$f.dat" "${args[@]}" -- ${CMD[$c]} > "$f.out" 2> "$f.err" &&
		"$UTRACE" script -i "$f.dat" > "$f.script" 2>> "$f.err" &&
		sed -n 's/^.* \([a-z0-9_]*\): (0x[0-9a-f]*\( <- 0x[0-9a-f]*\)\?) /\1: /p' "$f.script" > "$f.txt"
	local rc=$?
	cp "$f.err" "$TMP/err"
	return $rc
}
# unchanged CASE [SUFFIX]: the probed program printed what it prints alone
unchanged() {
	# shellcheck disable=SC2086
	${CMD[$1]} > "$1.plain" 2> "$TMP/err" && same "$1${2:-}.out" "$1.plain"
}

# --- return probes and longjmp, C++ exceptions ---

record jmp
printf '%s\n' "j: x=0" "jr: arg1=0" "j: x=1" "j: x=2" "jr: arg1=8" "j: x=3" \
	"tr: arg1=12" "tr: arg1=14" > jmp.want
check "longjmp out of a function with a return probe: the program's output unchanged" unchanged jmp
check "no return event for the calls left by longjmp; the others and later ones exact" same jmp.txt jmp.want

record cxx
printf '%s\n' "m: x=0" "tr: arg1=0" "mr: arg1=1" "m: x=1" "m: x=2" "tr: arg1=10" \
	"mr: arg1=11" "m: x=3" "m: x=8" "tr: arg1=0" "mr: arg1=1" "m: x=10" "tr: arg1=10" \
	"mr: arg1=11" > cxx.want
check "a C++ exception thrown through probed functions: the output unchanged" unchanged cxx
check "no return event for the calls the exception left; the others and later ones exact" same cxx.txt cxx.want

# --- a signal handler, recursion ---

record sig
printf '%s\n' "h: n=1" "hr: arg1=7" "h: n=8" "hr: arg1=56" "h: n=64" "hr: arg1=448" > sig.want
check "probes hit in a signal handler: the output unchanged" unchanged sig
check "probes hit in a signal handler: every entry and return value" same sig.txt sig.want

record rec
printf '%s\n' "r: n=4" "r: n=3" "r: n=2" "r: n=1" "r: n=0" \
	"rr: arg1=0" "rr: arg1=1" "rr: arg1=3" "rr: arg1=6" "rr: arg1=10" > rec.want
check "recursion: the output unchanged" unchanged rec
check "recursion: entries outermost first, returns innermost first, values exact" same rec.txt rec.want

# --- strings at the end of a page ---

record str
printf '%s\n' "s: s=(fault) c=97" 's: s="abcdef" c=97' > str.want
check "strings at a page's end: the output unchanged" unchanged str
check "a string running into an unmapped page is (fault); one crossing into a mapped page is whole" \
	same str.txt str.want

# --- fork: the child keeps the probes, its events are recorded ---

CMD[fork]="./prog fork"
DEFS[fork]='p:g/t twice x=%di:s32;r:g/tr twice $retval:s32'
record fork
# the events with P for the command's pid and C for another one
awk -v p="$(sed -n 's/^utrace record: started pid \([0-9]*\) .*/\1/p' fork.err)" '
	match($0, /-[0-9]+ +\[/) {
		pid = substr($0, RSTART + 1, RLENGTH - 1); sub(/ .*/, "", pid)
		name = $0; sub(/^.* [0-9]+\.[0-9]+: /, "", name); sub(/: \(.*\) /, ": ", name)
		print (pid == p ? "P " : "C ") name
	}' fork.script > fork-pids.txt
printf '%s\n' "P t: x=1" "P tr: arg1=2" "C t: x=2" "C tr: arg1=4" "P t: x=3" "P tr: arg1=6" > fork.want
check "fork: the output unchanged" unchanged fork
check "fork: the child's hits are recorded as its own, with exact values" same fork-pids.txt fork.want
check "fork: the recorder counts two processes" grep -q "^utrace record: 6 events written, 0 lost, 2 processes," fork.err

# --- exec: nothing of the old image remains; UTRACE_PROBES applies again ---

CMD[exec]="./prog exec 1"
DEFS[exec]='p:g/t twice x=%di:s32'
record exec
printf '%s\n' "t: x=1" "t: x=2" "t: x=3" > exec.want
check "exec: the output unchanged" unchanged exec
check "exec: each new image is probed again (UTRACE_PROBES and LD_PRELOAD are inherited)" \
	same exec.txt exec.want
CMD[exec-clean]="./prog exec-clean 1"
DEFS[exec-clean]=${DEFS[exec]}
record exec-clean
printf '%s\n' "t: x=1" > exec-clean.want
check "exec with UTRACE_PROBES and LD_PRELOAD unset: the output unchanged" unchanged exec-clean
check "exec with them unset: the new images have no probe (only the first image's hit)" \
	same exec-clean.txt exec-clean.want

# --- the same definitions through the kernel's uprobes ---

T=/sys/kernel/tracing
kernel_why() {
	[ "$(id -u)" -eq 0 ] || { echo "the kernel's uprobes need root (uid $(id -u))"; return; }
	if [ ! -e "$T/uprobe_events" ] && ! mount -t tracefs nodev "$T" 2> /dev/null; then
		echo "tracefs is not mounted at $T and cannot be mounted here"; return
	fi
	[ -w "$T/uprobe_events" ] || { echo "$T/uprobe_events is missing or not writable"; return; }
	[ -w "$T/instances" ] || echo "$T/instances is not writable (no tracing instances)"
}
why=$(kernel_why)
# kernel_same CASE: CASE recorded with --probe and with --kernel-probe:
# the same events' values, and the same output
kernel_same() {
	record "$1" && unchanged "$1" && [ -s "$1.txt" ] &&
		record "$1" --kernel-probe -k && same "$1-k.txt" "$1.txt" && same "$1-k.out" "$1.plain"
}
# The kernel's return probes replace the return address on the stack with
# its trampoline's, which the C++ unwinder cannot get through: an
# exception thrown through a function with a kernel return probe ends in
# std::terminate ("terminate called after throwing an instance of
# 'std::runtime_error'", SIGABRT; Linux 6.x).  utrace's return probes are
# on the exits and leave the stack alone.  So the C++ program is compared
# with entry probes only.
CMD[cxx-entry]="./cxx"
DEFS[cxx-entry]='p:g/m mid x=%di:s32;p:g/t thrower x=%di:s32'
for c in jmp cxx-entry sig rec str fork exec; do
	if [ -n "$why" ]; then
		n=$((n + 1)); echo "ok $n # SKIP kernel uprobes ($c): $why"
		continue
	fi
	check "the kernel's uprobes give the same values, line by line ($c)" kernel_same "$c"
done
done_testing
