#!/usr/bin/env bash
# Dynamic probes in a library loaded after they are defined (placed at
# each dlopen, taken off before each dlclose: the dynamic linker's r_brk),
# and on an IFUNC symbol (strlen: the implementation the process runs,
# not the resolver).  probe-dl-prog dlopen()s the library, calls
# plib_add and plib_mix N times, dlclose()s it, again with M calls, then
# calls strlen N times on a string of its own.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-dl-prog"
LIB="$UTRACE_BUILD/tests/libprobe-dl-lib.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
LIBC=$(ldd "$PROG" | awk '$1 == "libc.so.6" { print $3 }')
# libc's strlen implementations have names only with libc's -dbg symbols
bid=$(readelf -n "$LIBC" | sed -n 's/^ *Build ID: //p')
LIBC_SYMS=
[ -n "$bid" ] && [ -e "/usr/lib/debug/.build-id/${bid:0:2}/${bid:2}.debug" ] && LIBC_SYMS=1
cd "$TMP" || exit 1
N=5 M=7

# --- recorded: the probes defined at start, the library loaded later ---

"$UTRACE" record -o dl.dat \
	--probe "p:grp/ladd $LIB:plib_add a=%di:s32 b=%si:s32" \
	--probe "p:grp/lmix $LIB:plib_mix a=%di:s64" \
	--probe "r:grp/lmix_ret $LIB:plib_mix \$retval:s64" \
	--probe "p:grp/sl libc.so.6:strlen s=+0(%di):string" \
	-- "$PROG" "$LIB" $N $M > out.txt 2> rec-err.txt
cp rec-err.txt "$TMP/err"
check "the program runs as without probes" grep -qx "sum=$( "$PROG" "$LIB" $N $M | sed -n 's/^sum=\([0-9]*\) .*/\1/p') len=$((N * 19))" out.txt
"$UTRACE" script -i dl.dat > s.txt 2> "$TMP/err"
sed -n 's/^.* ladd: ([^)]*) //p' s.txt > got.txt
{ for i in $(seq 0 $((N - 1))) $(seq 0 $((M - 1))); do echo "a=$i b=$((10 * i))"; done; } > want.txt
check "every call in both loads, in order (N+M, the first call of each load counted)" same got.txt want.txt
check "a jump-placed function and its return probe: N+M each" bash -c '
	[ "$(grep -c " lmix: " s.txt)" = $(($1 + $2)) ] &&
	[ "$(grep -c " lmix_ret: " s.txt)" = $(($1 + $2)) ] &&
	[ "$(sed -n "s/^.* lmix: ([^)]*) a=//p" s.txt | tr "\n" " ")" = "$(echo $(seq 0 $(($1 - 1))) $(seq 0 $(($2 - 1)))) " ]' _ $N $M
check "strlen (an IFUNC): the implementation is probed, each call counted" bash -c '
	[ "$(grep -c " sl: ([^)]*) s=\"utrace-strlen-probe\"\$" s.txt)" = "$1" ]' _ $N
check "no warning" bash -c '! grep -v "^utrace record:" rec-err.txt | grep -q .'

# an IFUNC of the program whose implementation is static: with its
# symbol, and in a stripped copy without (probed at its entry as found
# by the dynamic linker); the resolver itself ran before any probe
strip -o prog-stripped "$PROG"
seq 0 $((N - 1)) | sed 's/^/a=/' > want-pm.txt
for p in "$PROG" ./prog-stripped; do
	check "an IFUNC of the program ($(basename "$p")): each call of its implementation" bash -c '
		"$UTRACE" record -o pm.dat --probe "p:grp/pm prog_mix a=%di:s64" \
			-- "$1" "$2" $3 $4 > /dev/null 2> "$5/err" &&
		"$UTRACE" script -i pm.dat | sed -n "s/^.* pm: ([^)]*) //p" > got-pm.txt &&
		diff -u want-pm.txt got-pm.txt >&2' _ "$p" "$LIB" $N $M "$TMP"
done

# --- live: defined while the library is not loaded; listing and profile ---

rm -f go go.end
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" "$PROG" "$LIB" $N $M "$TMP/go" > live.txt 2> "$TMP/prog-err" &
pid=$!
wait_traceable "$pid" "$TMP/prog-err" > "$TMP/err" 2>&1
check "definitions on a library not loaded are taken" bash -c '
	"$UTRACE" probe -p "$1" "p:grp/ladd $2:plib_add a=%di:s32 b=%si:s32" \
		"p:grp/sl libc.so.6:strlen s=+0(%di):string" "p:grp/pm prog_mix" 2> "$3/err"' \
	_ "$pid" "$LIB" "$TMP"
check "uprobe_events lists it as the kernel does (the file's offset)" bash -c '
	"$UTRACE" probe -p "$1" -l > l.txt 2> "$4/err" &&
	grep -qx "p:grp/ladd $2:0x$(printf %016x $((0x$(nm "$2" | awk "\$3 == \"plib_add\" { print \$1 }")))) a=%di:s32 b=%si:s32" l.txt &&
	grep -q "^p:grp/sl $3:0x[0-9a-f]* s=+0(%di):string\$" l.txt' _ "$pid" "$LIB" "$LIBC" "$TMP"
check "-l -v: pending, and the IFUNC's implementation named" bash -c '
	"$UTRACE" probe -p "$1" -l -v > v.txt 2> "$3/err" &&
	grep -qx "    # pending: $2 is not loaded; placed when it is" v.txt &&
	grep -q "^    # at mix_impl (0x[0-9a-f]*), the implementation of the IFUNC prog_mix this process uses; not placed (the event is off)\$" v.txt &&
	{ [ -z "$4" ] ||
	  grep -q "^    # at __strlen_[a-z0-9_]* (0x[0-9a-f]*), the implementation of the IFUNC strlen this process uses; not placed (the event is off)\$" v.txt; }' \
	_ "$pid" "$LIB" "$TMP" "$LIBC_SYMS"
check "uprobe_profile: 0 hits before the load" bash -c '
	"$UTRACE" probe -p "$1" --profile | grep -q "^  $2 ladd  *0  *0\$"' _ "$pid" "$LIB"
check "the events are switched on" "$UTRACE" enable -p "$pid" grp:ladd grp:sl
touch go
check "uprobe_profile: exactly N+M hits over two loads" bash -c '
	wait_for grep -q "^sum=" live.txt &&
	"$UTRACE" probe -p "$1" --profile > prof.txt &&
	grep -q "^  $2 ladd  *$(($3 + $4))  *0\$" prof.txt' _ "$pid" "$LIB" $N $M
check "after the dlclose it is pending again; strlen stays placed (a jump or a breakpoint)" bash -c '
	"$UTRACE" probe -p "$1" -l -v > v2.txt &&
	grep -qx "    # pending: $2 is not loaded; placed when it is" v2.txt &&
	grep -q "IFUNC strlen this process uses; placed: 1 " v2.txt' _ "$pid" "$LIB"
touch go.end
wait "$pid"
rc=$?
check "the program ends well" bash -c '[ "$1" = 0 ] && grep -q "^sum=" live.txt' _ "$rc"

# --- a symbol sharing its address (libc's open64 = open = __open64), and
# utrace's own calls (placing probes: its symbol files) not traced ---

echo hello > alias-file.txt
"$UTRACE" record -o alias.dat \
	--probe "p:grp/op libc.so.6:open64 path=+0(%di):string" \
	--probe "r:grp/opr libc.so.6:open64 \$retval:s32" \
	-- cat alias-file.txt > alias-out.txt 2> alias-err.txt
cp alias-err.txt "$TMP/err"
check "probes on open64 (an alias of open in .dynsym) are placed, the program runs" bash -c '
	grep -qx hello alias-out.txt && ! grep -v "^utrace record:" alias-err.txt | grep -q .'
"$UTRACE" script -i alias.dat > alias.txt 2> "$TMP/err"
check "the program's open is recorded once, with its return" bash -c '
	[ "$(grep -c " op: ([^)]*) path=\"alias-file.txt\"\$" alias.txt)" = 1 ] &&
	[ "$(grep -c " op: " alias.txt)" = "$(grep -c " opr: " alias.txt)" ]'
check "utrace's own opens (symbol files, its maps) are not recorded" bash -c '
	! grep " op: " alias.txt | grep -E "libc\.so|/proc/self/maps|\.debug|build-id"'

# --- record --probe refuses a bad definition before the command runs ---

check "a site inside an instruction: refused, the command not run" bash -c '
	! "$UTRACE" record -o bad.dat --probe "p:grp/bad $1:plib_add+1" -- touch ran1 \
		> /dev/null 2> bad1.txt &&
	[ ! -e ran1 ] && [ "$(wc -l < bad1.txt)" = 3 ] &&
	grep -qx "utrace record: --probe: trace_uprobe: error: Cannot probe: plib_add+0x1 is not an instruction boundary (the instruction at +0x0 is [0-9]* bytes)" bad1.txt &&
	grep -qx "  Command: p:grp/bad $1:plib_add+1" bad1.txt' _ "$LIB"
check "a bad fetcharg: the kernel's error and caret, the command not run" bash -c '
	! "$UTRACE" record -o bad.dat --probe "p:grp/bad $1:plib_add a=%zz" -- touch ran2 \
		> /dev/null 2> bad2.txt &&
	[ ! -e ran2 ] &&
	printf "%s\n" "utrace record: --probe: trace_uprobe: error: Invalid register name" \
		"  Command: p:grp/bad $1:plib_add a=%zz" \
		"$(printf "%*s^" $((33 + ${#1})) "")" > want-bad2.txt &&
	diff -u want-bad2.txt bad2.txt >&2' _ "$LIB"
check "what only the process can check is left to it (%return, a soname)" bash -c '
	"$UTRACE" record -o ok.dat --probe "p:grp/okr $1:plib_add%return" \
		--probe "p:grp/oks libc.so.6:strlen" -- touch ran3 > /dev/null 2> "$2/err" &&
	[ -e ran3 ]' _ "$LIB" "$TMP"

# --- outside a process: an IFUNC is said to be one ---

check "utrace probe without -p says an IFUNC's file address is its resolver" bash -c '
	"$UTRACE" probe "p:grp/sl $1:strlen" > o.txt 2> e.txt &&
	grep -q "^p:grp/sl $1:0x" o.txt && grep -q "note: strlen is an IFUNC" e.txt' _ "$LIBC"
done_testing
