#!/usr/bin/env bash
# C++ exceptions through functions the function_graph tracer hooked
# (issue 31): a throw through a frame with a destructor, caught two
# frames up, and a rethrow from a function called in a catch block
# (tests/cli/fgraph-cxx.cc).  The unwinder must find the real return
# addresses: libutrace puts them back when a throw starts (its
# _Unwind_RaiseException and _Unwind_Resume_or_Rethrow), recording those
# frames' exits then; the program computes the same as untraced.
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace preloaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
export UTRACE_CONTROL=0
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run"
LIB="$UTRACE_BUILD/lib/libutrace.so.0"
PROG="$UTRACE_BUILD/tests/fgraph-cxx"

"$PROG" > "$TMP/plain" 2>&1

for t in function function_graph; do
	check "$t: throws through traced frames, the same results as untraced" bash -c '
		LD_PRELOAD="$1" UTRACE_TRACER=$2 UTRACE_PRINT="$3/ev.$2" "$4" > "$3/out.$2" 2> "$3/err" &&
		diff -u "$3/plain" "$3/out.$2" >&2 &&
		[ "$(grep -c "thrower" "$3/ev.$2")" -ge 7 ]' _ "$LIB" "$t" "$TMP" "$PROG"
done

check "function_graph: every hooked frame's exit is recorded (at its return or at the throw)" bash -c '
	e=$(grep -c "funcgraph_entry:" "$1/ev.function_graph")
	x=$(grep -c "funcgraph_exit:" "$1/ev.function_graph")
	[ "$e" -gt 0 ] && [ "$e" = "$x" ]' _ "$TMP"

check "the rethrow from a function called in a catch block is caught" \
	grep -q "rethrower" "$TMP/ev.function_graph"

GCC_S=$(ldd "$PROG" | awk '/libgcc_s/ { print $3 }')
if [ -n "$GCC_S" ]; then
	check "libgcc_s ahead of libutrace: said when function_graph starts" bash -c '
		LD_PRELOAD="$1 $2" UTRACE_TRACER=function_graph "$3" > /dev/null 2> "$4/err2"
		grep -q "function_graph: C++ exceptions go through .*libgcc_s.*ahead of libutrace" \
			"$4/err2"' _ "$GCC_S" "$LIB" "$PROG" "$TMP"
fi

done_testing
