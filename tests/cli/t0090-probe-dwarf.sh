#!/usr/bin/env bash
# utrace probe -x: C names through DWARF, as perf probe -x.  A small C
# program built -O0 -g and -O2 -g; its functions (--funcs), variables
# (--vars), probe-able lines (--line), and perf-style definitions turned
# into raw uprobe_events definitions, field by field, against what the
# compiler says elsewhere: the -O0 stack slots from objdump's prologue
# stores (and gdb's DWARF expressions when gdb is here), the -O2 argument
# registers from the SysV ABI, member offsets from offsetof().  What cannot
# be fetched is refused with its reason.
. "$(dirname "$0")/lib.sh"
# The probed program is built with gcc whatever built utrace (CC=clang in
# CI's clang run): the expected locations are gcc's code and DWARF.
CC=$(command -v gcc || echo "${CC:-cc}")
command -v "$CC" > /dev/null || skip_all "no C compiler ($CC) to build the probed program"
command -v objdump > /dev/null || skip_all "objdump (binutils) is missing"
SRC="$TMP/prog.c"
cp "$UTRACE_SRC/tests/cli/probe-dwarf-prog.c" "$SRC"
P0="$TMP/prog0"
P2="$TMP/prog2"
"$CC" -O0 -g -o "$P0" "$SRC" 2> "$TMP/err" || skip_all "cannot build with -O0 -g: $(head -1 "$TMP/err")"
"$CC" -O2 -g -o "$P2" "$SRC" 2> "$TMP/err" || skip_all "cannot build with -O2 -g: $(head -1 "$TMP/err")"
read -r ID NAME TAG VALS <<< "$("$P0" --offsets | sed 's/[a-z]*=//g')"
P0=$(realpath "$P0")
P2=$(realpath "$P2")

probe() { "$UTRACE" probe "$@" > "$TMP/out" 2> "$TMP/err"; }

# --funcs: the ELF function symbols, sorted; '!_*' by default
funcs_default() {
	probe -x "$P0" --funcs &&
	grep -qx add "$TMP/out" && grep -qx handle "$TMP/out" && grep -qx main "$TMP/out" &&
	! grep -q '^_' "$TMP/out" && sort -c "$TMP/out"
}
check "--funcs lists add, handle, main, sorted, none starting with _" funcs_default
check "--funcs 'h*' lists handle only" \
	bash -c '"$0" probe -x "$1" --funcs "h*" > "$2/out" && [ "$(cat "$2/out")" = handle ]' \
	"$UTRACE" "$P0" "$TMP"

# the -O0 slots of add's and handle's arguments, from their prologue stores
slot() {        # FUNC REG: the rbp offset REG is stored to, in decimal
	local hex
	hex=$(objdump -d --no-show-raw-insn "$1" | awk -v f="<$2>:" '$2 == f { on = 1; next }
		on && /^$/ { exit } on' | grep -m1 -E "mov +%$3,-0x[0-9a-f]+\(%rbp\)" |
		sed -E 's/.*,-0x([0-9a-f]+)\(%rbp\).*/\1/')
	[ -n "$hex" ] && echo $((-16#$hex))
}
A=$(slot "$P0" add edi); B=$(slot "$P0" add rsi); R=$(slot "$P0" handle rdi)
# the first instruction after the last store of add's prologue: the
# body, where perf puts a probe that fetches -O0 variables
body() {
	objdump -d --no-show-raw-insn "$P0" | awk '/<add>:/ { on = 1; next } on && /^$/ { exit }
		on { print }' | grep -A1 -E 'mov +%rsi,-0x' | tail -1 | awk '{ sub(":", "", $1); print $1 }'
}
ADD0=$(nm "$P0" | awk '$3 == "add" { print $1 }')
BODY=$(( 16#$(body) - 16#$ADD0 ))
check "objdump shows add's and handle's argument stores (-O0)" \
	test -n "$A" -a -n "$B" -a -n "$R" -a "$BODY" -gt 0

vars_O0() {
	probe -x "$P0" --vars add &&
	printf 'Available variables at add\n\t@<add+0>\n\t\tint\ta\n\t\tint\tc\n\t\tlong int\tb\n' \
		> "$TMP/want" && same "$TMP/out" "$TMP/want"
}
check "--vars add (-O0): a, b and c (their slots hold everywhere), sorted as perf" vars_O0
vars_O2() {
	probe -x "$P2" --vars add &&
	printf 'Available variables at add\n\t@<add+0>\n\t\tint\ta\n\t\tlong int\tb\n' \
		> "$TMP/want" && same "$TMP/out" "$TMP/want"
}
check "--vars add (-O2): a and b at the entry; c has no location there" vars_O2

# --line: perf's format, numbered from the function's first line
line_add() {
	local first
	probe -x "$P0" --line add || return 1
	first=$(grep -n 'int add(int a, long b)' "$SRC" | cut -d: -f1)
	head -1 "$TMP/out" | grep -qx "<add@$SRC:0>" &&
	# the blank line has no code; the return statement has
	grep -qxE '         ' "$TMP/out" &&
	grep -qE '^      5  	return c \+ \(int\)b;$' "$TMP/out" &&
	grep -qE '^      2  	int c = a \* 2;$' "$TMP/out" &&
	[ "$(sed -n 2p "$TMP/out" | sed -E 's/^ {9}//; s/^ +0  //')" = "$(sed -n "${first}p" "$SRC")" ]
}
check "--line add: header, numbered lines with code, blank line without" line_add

# raw definitions, -O0: slots off the frame base (the CFA, rbp + 16)
raw_O0() {
	probe -x "$P0" 'add a b c' 'handle r->name:string r->id r->vals[2]' &&
	printf '%s\n' \
	"p:probe_prog0/add $P0:add+$(printf 0x%x "$BODY") a=$A(%bp):s32 b=$B(%bp):s64 c=-4(%bp):s32" \
		> "$TMP/want" && head -1 "$TMP/out" | same - "$TMP/want" &&
	sed -n 2p "$TMP/out" | grep -qE "^p:probe_prog0/handle $P0:handle\+0x[0-9a-f]+ name=\+0\(\+$NAME\($R\(%bp\)\)\):string id=\+$ID\($R\(%bp\)\):s32 vals=\+$((VALS + 16))\($R\(%bp\)\):s64$"
}
check "-O0: 'add a b c' and 'handle r->name:string r->id r->vals[2]' field by field" raw_O0
# c's slot is the store of the body's first statement
check "-O0: c's slot (-4) is where add's body stores it" \
	bash -c 'objdump -d --no-show-raw-insn "$0" | awk "/<add>:/ { on = 1; next } on && /^\$/ { exit } on" |
		grep -qE "mov +%eax,-0x4\(%rbp\)"' "$P0"
if command -v gdb > /dev/null; then
	gdb_fbreg() {   # FUNC VAR: gdb's DW_OP_fbreg operand of VAR, + 16 (the CFA off rbp)
		gdb -nx -batch -ex "info scope $1" "$P0" 2> /dev/null |
			awk -v v="Symbol $2 " 'index($0, v) == 1 { on = 1; next }
				on && /DW_OP_fbreg/ { print $3 + 16; exit }'
	}
	check "-O0: gdb's DW_OP_fbreg of a, b, r (+16) give the same slots" \
		test "$(gdb_fbreg add a) $(gdb_fbreg add b) $(gdb_fbreg handle r)" = "$A $B $R"
else
	check "-O0: gdb's DW_OP_fbreg check # SKIP gdb is missing" true
fi

# raw definitions, -O2: the SysV argument registers at the entry
raw_O2() {
	probe -x "$P2" 'add a b' \
		'handle r->name:string r->tag:string r->vals[2] r->flags r->prio r' \
		'add%return $retval' 'add a' 'myev=add b' 'grp:ev2=add a:x32' 'add %si $stack1' \
		'add:0 x=a' 'handle r->id q=r->id r->id' &&
	printf '%s\n' \
		"p:probe_prog2/add $P2:add a=%di:s32 b=%si:s64" \
		"p:probe_prog2/handle $P2:handle name=+0(+$NAME(%di)):string tag=+$TAG(%di):string vals=+$((VALS + 16))(%di):s64 flags=+$((TAG + 8))(%di):b3@0/32 prio=+$((TAG + 8))(%di):b5@3/32 r=%di:x64" \
		"r:probe_prog2/add__return $P2:add arg1=\$retval:s32" \
		"p:probe_prog2/add_1 $P2:add a=%di:s32" \
		"p:probe_prog2/myev $P2:add b=%si:s64" \
		"p:grp/ev2 $P2:add a=%di:x32" \
		"p:probe_prog2/add_2 $P2:add %si \$stack1" \
		"p:probe_prog2/add_L0 $P2:add x=%di:s32" \
		"p:probe_prog2/handle_1 $P2:handle id=+$ID(%di):s32 q=+$ID(%di):s32 r_id=+$ID(%di):s32" \
		> "$TMP/want" &&
	same "$TMP/out" "$TMP/want"
}
check "-O2: registers, member paths, bit fields, \$retval, names as perf's, raw fetchargs" raw_O2

# perf probe itself, when it is here: the same --line and --vars output
# byte for byte, and the same uprobe_events lines (-k -n: the file
# offset form) for what perf translates (it has no bit fields)
if command -v perf > /dev/null && perf probe -x "$P0" --line add > /dev/null 2>&1; then
	as_perf() {
		local b f m bad=0
		for b in "$P0" "$P2"; do
			for f in add handle main; do
				for m in --line --vars; do
					perf probe -x "$b" $m $f > "$TMP/perf" 2>&1
					"$UTRACE" probe -x "$b" $m $f > "$TMP/ours" 2>&1
					same "$TMP/ours" "$TMP/perf" || bad=1
				done
			done
		done
		return $bad
	}
	check "--line and --vars of add, handle, main (-O0, -O2) are perf's, byte for byte" as_perf
	# (named: perf refuses a name that any uprobe_events line has, and
	# other tests add probes named add)
	perf_defs() {
		local b d k=0 bad=0
		for b in "$P0" "$P2"; do
			for d in 'add a b' 'add $params' 'add:2 a' 'handle r->name:string r->tag:string r->vals[2] r r->id'; do
				[ "$b" = "$P2" ] && [ "$d" = 'add:2 a' ] && continue
				k=$((k + 1))
				d="t0090_$$_$k=$d"
				perf probe -x "$b" -n -v "$d" 2>&1 | sed -n 's/^Writing event: //p' > "$TMP/perf"
				"$UTRACE" probe -k -n -x "$b" "$d" > "$TMP/ours" 2>&1
				[ -s "$TMP/perf" ] && same "$TMP/ours" "$TMP/perf" || bad=1
			done
		done
		return $bad
	}
	check "-k -n writes what perf probe writes to uprobe_events (file offsets, fetchargs, names)" perf_defs
else
	check "the same output as perf probe # SKIP perf (linux-perf) is missing or cannot read DWARF here" true
	check "the same uprobe_events lines as perf probe # SKIP perf is missing" true
fi

# what cannot be fetched, and bad input: one line naming it, exit 1
refused() {     # PATTERN ARGS...
	local pat=$1
	shift
	probe "$@"
	[ $? -eq 1 ] && [ ! -s "$TMP/out" ] && [ "$(wc -l < "$TMP/err")" -eq 1 ] &&
		grep -qE "$pat" "$TMP/err"
}
check "-O2: c at add's entry is refused (no location there)" \
	refused "'c' (is optimized out|at 0x[0-9a-f]+ is a computed value)" -x "$P2" 'add c'
check "an unknown variable is refused" refused "no variable 'nosuch' in scope at add" \
	-x "$P2" 'add nosuch'
check "a missing member name is refused (it once looped)" \
	refused "a member name is missing" -x "$P2" 'add a->'
check "a bad event name is refused" refused "group and event names are C identifiers" \
	-x "$P2" ':ev=add'
check "an unknown member is refused" refused "no member 'nope'" -x "$P2" 'handle r->nope'
check "-> on a non-pointer is refused" refused "not a pointer" -x "$P2" 'add a->x'
check "a whole struct is refused" refused "is a struct or union: name a member" \
	-x "$P0" 'main r'
check "a variable in a return probe is refused" refused "return probe" -x "$P2" 'add%return a'
check "a line without code is refused" refused "has no code to probe; see --line add" \
	-x "$P0" 'add:3 a'
check "an offset outside the function is refused" refused "is outside 'add'" \
	-x "$P0" 'add+0x10000'
check "an unknown function is refused" refused "no function 'nosuch'" -x "$P0" --vars nosuch
check "a binary without DWARF is refused" refused "has no DWARF debug information" \
	-x "$(type -P true)" --vars main
check "a missing binary is refused" refused "cannot open '/nonexistent'" \
	-x /nonexistent --funcs
check "--help describes -x and -k" \
	bash -c '"$0" probe --help | grep -q -- "--vars POINT" && "$0" probe --help | grep -q -- "--kernel"' \
	"$UTRACE"
# -x BINARY -p PID: the C names translated, then given to the process's
# agent as 'utrace probe -p PID RAW' would (its uprobe_events lists them)
LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" ASAN_OPTIONS=verify_asan_link_order=0 \
	"$P0" 1000 > /dev/null 2> "$TMP/prog-err" &
PROG_PID=$!
trap 'kill "$PROG_PID" 2> /dev/null; rm -rf "$TMP"' EXIT
agent_probe() {
	wait_traceable "$PROG_PID" "$TMP/prog-err" &&
	probe -x "$P0" -p "$PROG_PID" 'add a b' && [ ! -s "$TMP/out" ] &&
	"$UTRACE" probe -p "$PROG_PID" -l > "$TMP/list" &&
	grep -q "^p:probe_prog0/add $P0:0x[0-9a-f]* a=-[0-9]*(%bp):s32 b=-[0-9]*(%bp):s64\$" "$TMP/list"
}
check "-x BINARY -p PID: the raw definitions go to the process's agent" agent_probe
kill "$PROG_PID" 2> /dev/null

# clang 14 describes bit fields the DWARF 2 way (DW_AT_bit_offset from the
# storage unit's most significant bit, DW_AT_data_member_location), gcc
# the DWARF 4 way (DW_AT_data_bit_offset): the same fetchargs from both
if command -v clang > /dev/null && clang -O2 -g -o "$TMP/progc" "$SRC" 2> /dev/null; then
	check "bit fields from clang's DWARF: as from gcc's" bash -c '
		"$0" probe -x "$1" -n "handle r->flags r->prio" > "$2/bfc" &&
		"$0" probe -x "$3" -n "handle r->flags r->prio" > "$2/bfg" &&
		[ "$(sed "s/^.*handle //" "$2/bfc")" = "$(sed "s/^.*handle //" "$2/bfg")" ] &&
		grep -q "flags=+[0-9]*(%di):b3@0/32 prio=+[0-9]*(%di):b5@3/32$" "$2/bfc"' \
		"$UTRACE" "$TMP/progc" "$TMP" "$P2"
	# and a global through DW_OP_addrx (DWARF 5's .debug_addr index)
	check "a global from clang's DWARF (DW_OP_addrx): its address" bash -c '
		"$0" probe -x "$1" -n "add total" |
		grep -q " total=@+0x$(nm "$1" | awk "\$3 == \"total\" { sub(/^0+/, \"\", \$1); print \$1 }"):s64$"' \
		"$UTRACE" "$TMP/progc"
else
	for _ in 1 2; do n=$((n + 1)); echo "ok $n # SKIP no clang to build the program with"; done
fi

done_testing
