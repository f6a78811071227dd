#!/usr/bin/env bash
# The function and function_graph tracers on programs built the kernel's
# way (issue 31): -fpatchable-function-entry=5 (fgraph-prog and its
# library) and -pg -mfentry -mnop-mcount -mrecord-mcount (fgraph-mcount,
# gcc only).  The tracer is chosen from the start (UTRACE_TRACER) and its
# events are printed (UTRACE_PRINT); the program computes the same with
# and without it, entries are calls while traced and NOPs otherwise, and
# the graph stays right across tail calls, longjmp, signal handlers,
# threads leaving through pthread_exit and recursion 10,000 deep.
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace preloaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_CONTROL=0
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run"
LIB="$UTRACE_BUILD/lib/libutrace.so.0"
PROGS="$UTRACE_BUILD/tests/fgraph-prog"
[ -x "$UTRACE_BUILD/tests/fgraph-mcount" ] && PROGS="$PROGS $UTRACE_BUILD/tests/fgraph-mcount"

# run PROG TRACER MODE...: the program's output in $TMP/out, its events
# (the text after "event: ") in $TMP/ev
run() {
	local prog=$1 t=$2
	shift 2
	rm -f "$TMP/ev.raw"
	LD_PRELOAD="$LIB" UTRACE_TRACER="$t" UTRACE_PRINT="$TMP/ev.raw" "$prog" "$@" \
		> "$TMP/out" 2> "$TMP/err" || return 1
	if [ -e "$TMP/ev.raw" ]; then
		sed -E 's/^.*: (function|funcgraph_entry|funcgraph_exit): //; s/ \(start: .*//' \
			"$TMP/ev.raw" > "$TMP/ev"
	else
		: > "$TMP/ev"
	fi
}

# same_output PROG MODE...: with each tracer as without
same_output() {
	local prog=$1 t
	shift
	"$prog" "$@" > "$TMP/plain" 2>&1 || return 1
	for t in function function_graph; do
		run "$prog" $t "$@" && same "$TMP/out" "$TMP/plain" || return 1
	done
}

# balanced: every entry has its exit at the same depth, in order
balanced() {
	awk '/^-->/ { d = $3; gsub(/[()]/, "", d); st[n++] = $2 " " d; next }
	     /^<--/ { d = $3; gsub(/[()]/, "", d); if (!n || st[--n] != $2 " " d) bad = 1 }
	     END { exit (bad || n) }' "$TMP/ev"
}

export TMP LIB
export -f run balanced same

for P in $PROGS; do
	B=$(basename "$P")
	for m in calls longjmp signal threads lib "recurse 10000" fork; do
		check "$B $m: the same results with each tracer as without" same_output "$P" $m
	done

	check "$B: entries are NOPs without a tracer, calls with one" bash -c '
		"$1" bytes | grep -Eq "^leaf=(sled|nop) mid=(sled|nop) top=(sled|nop)" &&
		LD_PRELOAD="$2" UTRACE_TRACER=function "$1" bytes |
			grep -q "^leaf=call mid=call top=call" &&
		LD_PRELOAD="$2" UTRACE_TRACER=nop "$1" bytes |
			grep -Eq "^leaf=(sled|nop) mid=(sled|nop) top=(sled|nop)"' _ "$P" "$LIB"

	check "$B: set_ftrace_filter and set_ftrace_notrace choose the sites" bash -c '
		LD_PRELOAD="$2" UTRACE_TRACER=function UTRACE_FTRACE_FILTER="le*" "$1" bytes |
			grep -Eq "^leaf=call mid=(sled|nop) top=(sled|nop)" &&
		LD_PRELOAD="$2" UTRACE_TRACER=function UTRACE_FTRACE_FILTER="*" \
			UTRACE_FTRACE_NOTRACE="leaf" "$1" bytes |
			grep -Eq "^leaf=(sled|nop) mid=call top=call"' _ "$P" "$LIB"

	cat > "$TMP/want" <<-'EOT'
	 top <-- main
	 mid <-- top
	 leaf <-- mid
	 leaf <-- top
	EOT
	check "$B: function: ip <-- parent_ip, as the kernel's" bash -c '
		run "$1" function calls && grep -E "^ (top|mid|leaf) <-- " "$TMP/ev" > "$TMP/got" &&
		same "$TMP/got" "$TMP/want"' _ "$P"

	cat > "$TMP/want" <<-'EOT'
	--> main (0)
	--> top (1)
	--> mid (2)
	--> leaf (3)
	<-- leaf (3)
	<-- mid (2)
	--> leaf (2)
	<-- leaf (2)
	<-- top (1)
	--> fleaf (1)
	<-- fleaf (1)
	--> vsum (1)
	<-- vsum (1)
	--> vfsum (1)
	<-- vfsum (1)
	<-- main (0)
	EOT
	check "$B: function_graph: entries and exits nested by depth" bash -c '
		run "$1" function_graph calls && same "$TMP/ev" "$TMP/want"' _ "$P"

	check "$B: function_graph: recursion 10,000 deep" bash -c '
		run "$1" function_graph recurse 10000 && balanced &&
		[ "$(grep -c "^--> recurse" "$TMP/ev")" = 10001 ] &&
		grep -q "^--> recurse (10001)$" "$TMP/ev" &&
		grep -q "^<-- recurse (10001)$" "$TMP/ev"' _ "$P"

	check "$B: function_graph: longjmp over traced frames (their exits at the next call)" bash -c '
		run "$1" function_graph longjmp && balanced &&
		[ "$(grep -c "^--> jumper (1)" "$TMP/ev")" = 5 ] &&
		! grep -q "^--> jumper (6)" "$TMP/ev" && grep -q "^--> top (1)" "$TMP/ev"' _ "$P"

	check "$B: function_graph: a signal handler nested in a traced function" bash -c '
		run "$1" function_graph signal && balanced &&
		[ "$(grep -A3 "^--> raiser (1)" "$TMP/ev" | tr "\n" ";")" = \
		  "--> raiser (1);--> on_sig (2);--> handler_work (3);--> leaf (4);" ]' _ "$P"

	check "$B: function_graph: threads, one leaving through pthread_exit" bash -c '
		run "$1" function_graph threads &&
		[ "$(grep -c "^--> worker (0)" "$TMP/ev")" = 4 ] &&
		[ "$(grep -c "^<-- worker (0)" "$TMP/ev")" = 3 ] &&
		grep -q "^--> exiter (1)" "$TMP/ev"' _ "$P"

	check "$B: function_graph: a tail call into a library function" bash -c '
		run "$1" function_graph lib && balanced &&
		grep -q "^--> fg_lib_twice (1)" "$TMP/ev" && grep -q "^--> lib_inner" "$TMP/ev"' _ "$P"

	check "$B: function_graph: fork inside a traced function, both return through it" bash -c '
		run "$1" function_graph fork && grep -q "^parent=42$" "$TMP/out" &&
		grep -q "^child=1012$" "$TMP/out" &&
		[ "$(grep -c "^<-- forker (1)" "$TMP/ev")" = 2 ]' _ "$P"

	check "$B: set_graph_function and max_graph_depth" bash -c '
		UTRACE_GRAPH_FUNCTION=mid run "$1" function_graph calls &&
		[ "$(cat "$TMP/ev" | tr "\n" ";")" = "--> mid (0);--> leaf (1);<-- leaf (1);<-- mid (0);" ] &&
		UTRACE_MAX_GRAPH_DEPTH=1 run "$1" function_graph calls &&
		[ "$(cat "$TMP/ev" | tr "\n" ";")" = "--> main (0);<-- main (0);" ]' _ "$P"
done

check "bad values: one line each, the program runs on untraced" bash -c '
	LD_PRELOAD="$2" UTRACE_TRACER=blk "$1" calls > "$TMP/out" 2> "$TMP/err" &&
	grep -q "top=12" "$TMP/out" && grep -q "UTRACE_TRACER: .blk. is not a tracer" "$TMP/err" &&
	LD_PRELOAD="$2" UTRACE_TRACER=function UTRACE_FTRACE_FILTER="nosuch*" "$1" calls \
		> "$TMP/out" 2> "$TMP/err" &&
	grep -q "top=12" "$TMP/out" &&
	grep -q "UTRACE_FTRACE_FILTER: .nosuch\*.: a glob matches no traceable function" "$TMP/err"' \
	_ "$UTRACE_BUILD/tests/fgraph-prog" "$LIB"

done_testing
