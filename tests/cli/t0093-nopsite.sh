#!/usr/bin/env bash
# Jump-label call sites (issue 16): a switched-off site is a 5-byte NOP,
# a jmp while its event is on, and a NOP again after; in the program, in
# a library whose event the program calls too, in a dlopen()ed C++ module,
# across fork and dlclose.  The program reads its own code
# (tests/cli/nopsite-demo.c).  UTRACE_NO_JUMP_LABEL keeps the compiled
# load and branch and records the same events; so does an object whose
# code cannot be written.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/nopsite-demo"
MOD="$UTRACE_BUILD/tests/libnopsite-mod.so"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
# No agent: a `utrace record -a` or `enable -a` of another test on this
# machine must not switch our events on meanwhile (ps_sites starts one).
export UTRACE_CONTROL=0

# A sanitizer build compiles the load and branch (no jump labels): only
# the checks that do not look at the sites run.
JL=1
"$DEMO" "$MOD" sites > "$TMP/probe.out" 2> /dev/null
grep -q no-jump-labels "$TMP/probe.out" && JL=0
# jl_check NAME CMD...: a check that needs jump labels compiled in
jl_check() {
	if [ $JL = 1 ]; then
		check "$@"
	else
		n=$((n + 1))
		echo "ok $n - $1 # SKIP built without jump labels (sanitizer or not x86-64)"
	fi
}

# the expected lines, with every site of each step: W is what an
# off site holds, then what an on one holds
want() {
	local off=$1 on=$2
	local m=$off o=$off l=$off
	line() {
		echo "$1: main.nop_lib=$4 main.nop_main=$2 main.nop_odd=$3 lib.nop_lib=$4 hits=$5"
	}
	line start "$m" "$o" "$l" 0
	line main-on "$on" "$o" "$l" 0
	line main-fired "$on" "$o" "$l" 3
	line odd-on "$m" "$on" "$l" 3
	line lib-on "$m" "$o" "$on" 5
	line lib-off "$m" "$o" "$l" 8
	echo "mod-loaded: mod.nop_mod=$off"
	echo "mod-on: mod.nop_mod=$on hits=2"
	echo "mod-off: mod.nop_mod=$off"
	line after-dlclose "$on" "$o" "$l" 8
	line child "$on" "$o" "$l" 10
	line child-off "$m" "$o" "$l" 10
	line end "$m" "$o" "$l" 8
}

sites() {
	want nop on > "$TMP/want" &&
	"$DEMO" "$MOD" sites > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] && same "$TMP/out" "$TMP/want"
}
jl_check "sites: NOP while off, jmp while on, NOP again (program, library, C++ module, fork)" sites

sites_fallback() {
	want branch branch > "$TMP/want" &&
	UTRACE_NO_JUMP_LABEL=1 "$DEMO" "$MOD" sites > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] && same "$TMP/out" "$TMP/want"
}
jl_check "UTRACE_NO_JUMP_LABEL: the sites keep their load and branch, same hits" sites_fallback

refused() {
	printf '%s\n' \
		"before: main.nop_lib=nop main.nop_main=nop main.nop_odd=nop lib.nop_lib=nop hits=0" \
		"refused-mod-on: mod.nop_mod=branch hits=3" > "$TMP/want" &&
	"$DEMO" "$MOD" refused > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] && same "$TMP/out" "$TMP/want"
}
jl_check "code writes refused (seccomp) before a module loads: its sites load and branch, its event fires" refused

closefds() {
	printf '%s\n' \
		"closefds-on: main.nop_lib=nop main.nop_main=on main.nop_odd=nop lib.nop_lib=nop hits=2" \
		"closefds-off: main.nop_lib=nop main.nop_main=nop main.nop_odd=nop lib.nop_lib=nop hits=2" \
		> "$TMP/want" &&
	"$DEMO" "$MOD" closefds "$TMP/f" > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] && same "$TMP/out" "$TMP/want" &&
	[ -f "$TMP/f" ] && [ ! -s "$TMP/f" ]
}
jl_check "a program that closes its descriptors and opens a file: the code is written, the file is not" closefds

recorded() {
	UTRACE_EVENTS='nop:*' UTRACE_PRINT="$TMP/jl.txt" "$DEMO" "$MOD" fire > /dev/null 2> "$TMP/err" &&
	UTRACE_NO_JUMP_LABEL=1 UTRACE_EVENTS='nop:*' UTRACE_PRINT="$TMP/br.txt" "$DEMO" "$MOD" fire \
		> /dev/null 2>> "$TMP/err" &&
	[ ! -s "$TMP/err" ] &&
	normalize "$TMP/jl.txt" | sed -E 's/-PID \[CPU\].*TIME: / /' > "$TMP/jl.norm" &&
	normalize "$TMP/br.txt" | sed -E 's/-PID \[CPU\].*TIME: / /' > "$TMP/br.norm" &&
	# 5 nop_main, 2 nop_odd (1, 3), 5 + 1 nop_lib, 1 nop_mod
	[ "$(grep -c ' nop_main: ' "$TMP/jl.norm")" = 5 ] &&
	[ "$(grep -c ' nop_odd: ' "$TMP/jl.norm")" = 2 ] &&
	[ "$(grep -c ' nop_lib: ' "$TMP/jl.norm")" = 6 ] &&
	[ "$(grep -c ' nop_mod: ' "$TMP/jl.norm")" = 1 ] &&
	same "$TMP/jl.norm" "$TMP/br.norm"
}
check "UTRACE_EVENTS from the start: the same events recorded with and without jump labels" recorded

stress() {
	"$DEMO" "$MOD" stress 10000 > "$TMP/out" 2> "$TMP/err" &&
	grep -q '^toggles=10000 calls=[0-9]* hits-while-toggling<=calls=yes checked=400000 own-traps=0$' "$TMP/out" &&
	{ [ $JL = 0 ] || grep -q '^stress-end: main.nop_lib=nop main.nop_main=on main.nop_odd=nop ' "$TMP/out"; } ||
		{ cat "$TMP/out" >> "$TMP/err"; false; }
}
check "4 threads through the site while a probe comes and goes 10000 times (the program has its own SIGTRAP handler)" stress

# ps_row PID WANT: `utrace ps` lists PID with its sites as WANT:N (a
# loaded machine can make one ps miss its 1 s answer: asked again then)
ps_row() {
	"$UTRACE" ps > "$TMP/ps" 2>> "$TMP/err" &&
	awk -v p="$1" '$1 == p' "$TMP/ps" | grep -Eq " $2:[1-9][0-9]* *\$"
}

# ps_sites WANT [ENV...]: `utrace ps` shows the demo's sites as WANT:N
ps_sites() {
	local want=$1
	shift
	env -u UTRACE_CONTROL "$@" "$DEMO" "$MOD" wait > "$TMP/w.out" 2> "$TMP/err" &
	local pid=$!
	wait_for grep -q ready "$TMP/w.out" && wait_for ps_row "$pid" "$want"
	local r=$?
	kill "$pid" 2> /dev/null
	wait "$pid" 2> /dev/null
	[ $r = 0 ] || { cat "$TMP/ps" >> "$TMP/err"; return 1; }
}
jl_check "utrace ps says the sites are NOPs" ps_sites nop
jl_check "utrace ps says the sites load and branch with UTRACE_NO_JUMP_LABEL" \
	ps_sites branch UTRACE_NO_JUMP_LABEL=1
done_testing
