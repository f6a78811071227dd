#!/usr/bin/env bash
# Issue 27 item 2: a probe's 5-byte jump must never cover an address that
# control reaches from elsewhere.  glibc's mempcpy jumps to memcpy+3, and
# `utrace record --probe 'p:a/m libc.so.6:memcpy' -- /bin/ls /` died
# (SIGILL; the 13 common libc probes together: SIGSEGV).  The engine now
# knows every jump target of the object (branches of its whole code,
# symbols, .eh_frame FDEs, landing pads) and places a breakpoint there,
# saying so once.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/jump-into-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 -p "$UTRACE_RUNTIME_DIR"
cd "$TMP" || exit 1
cp "$PROG" prog

# (each program under 'timeout': a thread sent into the middle of a jump
# may run on in garbage instead of dying)
# 1. a function jumping (asm) into the middle of the probed one, no libc
./prog 1000 > want.txt
"$UTRACE" record -o r.dat --probe 'p:t/covered covered x=%di:s32' -- \
	sh -c 'timeout 60 ./prog 1000 > got.txt; echo $? > status' > /dev/null 2> err.txt
cp err.txt "$TMP/err"
check "into() jumping to covered+4: the program runs, status 0" \
	bash -c '[ "$(cat status)" = 0 ]'
check "... its output unchanged" same got.txt want.txt
check "... covered's probe is a breakpoint, the reason said once" \
	bash -c '[ "$(grep -c "probe .*covered.* is a breakpoint at covered+0x0 (+0x4 is the target of the jump at into+0x" err.txt)" = 1 ]'
"$UTRACE" script -i r.dat > s.txt 2>> "$TMP/err"
check "... every call recorded (1000)" bash -c '[ "$(grep -c "covered: .*x=" s.txt)" = 1000 ]'

# 2. libc's string functions in real programs (IFUNCs: the probe is on
# the implementation the process uses; the others of the family jump
# into it)
LIBC=$(ldd /bin/ls | awk '/libc\.so/ { print $3 }')
[ -n "$LIBC" ] || LIBC=libc.so.6
# the real python3, not a version manager's shell shim (pyenv)
PYTHON=$(command -v /usr/bin/python3 || command -v python3)
export PYTHON
PY='import json, re; d = {str(i): "x" * (i % 50) for i in range(300)}; s = json.dumps(d); print(len(s), len(re.findall("x+", s)), sorted(d)[7])'
/bin/ls -la /usr/bin > ls-want.txt
"$PYTHON" -c "$PY" > py-want.txt
# run DEFS...: ls and python3 under the probes; status and output kept
run() {
	local args=() d
	for d in "$@"; do args+=(--probe "$d"); done
	"$UTRACE" record -o l.dat "${args[@]}" -- \
		sh -c 'timeout 60 /bin/ls -la /usr/bin > ls-got.txt; echo $? > ls-status' > /dev/null 2> err.txt
	"$UTRACE" record -o p.dat "${args[@]}" -- \
		sh -c 'timeout 60 "$PYTHON" -c "$0" > py-got.txt; echo $? > py-status' "$PY" > /dev/null 2>> err.txt
	cp err.txt "$TMP/err"
}
ok_run() {
	[ "$(cat ls-status)" = 0 ] && [ "$(cat py-status)" = 0 ] &&
		same ls-got.txt ls-want.txt && same py-got.txt py-want.txt &&
		[ "$("$UTRACE" script -i l.dat 2> /dev/null | grep -c " $1: ")" -gt 0 ] &&
		[ "$("$UTRACE" script -i p.dat 2> /dev/null | grep -c " $1: ")" -gt 0 ]
}
for f in memcpy memmove memset strlen strcmp; do
	run "p:a/$f $LIBC:$f"
	check "libc $f probed: ls and python3 run, status 0, output unchanged, hits recorded" ok_run "$f"
done

# 3. the 13 common libc probes together
COMMON="malloc free calloc realloc memcpy memmove memset memcmp strlen strcmp strncmp strchr strcpy"
defs=()
for f in $COMMON; do defs+=("p:a/$f $LIBC:$f"); done
run "${defs[@]}"
check "13 libc probes together: ls and python3 run, status 0, output unchanged" ok_run malloc

done_testing
