#!/usr/bin/env bash
# The function tracers' files in the mount (issue 31 item 2), as the
# kernel's: current_tracer and available_tracers, available_filter_functions
# (libraries' functions with [module]), set_ftrace_filter and
# set_ftrace_notrace (globs, '!', '>' empties, '>>' adds, a glob that
# matches nothing is EINVAL), set_graph_function, max_graph_depth,
# enabled_functions; the sites follow each write while the program runs,
# and go back to NOPs with nop.
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace preloaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
PROG="$UTRACE_BUILD/tests/fgraph-prog"
mount_demo env LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" "$PROG" run

# errno of one write (echo's own message is not the test's)
wr() {
	python3 -c '
import errno, os, sys
fd = os.open(sys.argv[1], os.O_WRONLY | (os.O_APPEND if sys.argv[3] == "a" else os.O_TRUNC))
try:
    os.write(fd, sys.argv[2].encode())
    print("ok")
except OSError as e:
    print(errno.errorcode[e.errno])
os.close(fd)' "$@"
}
export -f wr
export D

check "available_tracers lists function_graph function nop; current_tracer is nop" bash -c '
	[ "$(cat "$D/available_tracers")" = "function_graph function nop" ] &&
	[ "$(cat "$D/current_tracer")" = nop ]'

check "available_filter_functions: the program's, then [module] for a library's" bash -c '
	grep -qx "leaf" "$D/available_filter_functions" &&
	grep -qx "top" "$D/available_filter_functions" &&
	grep -qx "fg_lib_twice \[libfgraph-lib.so\]" "$D/available_filter_functions" &&
	! grep -q "utrace" "$D/available_filter_functions"'

check "set_ftrace_filter: empty is every function; a glob; >> adds; ! removes" bash -c '
	[ "$(cat "$D/set_ftrace_filter")" = "#### all functions enabled ####" ] &&
	[ "$(wr "$D/set_ftrace_filter" "le*" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_filter")" = leaf ] &&
	[ "$(wr "$D/set_ftrace_filter" "mid top" a)" = ok ] &&
	[ "$(sort "$D/set_ftrace_filter" | tr "\n" " ")" = "leaf mid top " ] &&
	[ "$(wr "$D/set_ftrace_filter" "!mid" a)" = ok ] &&
	[ "$(sort "$D/set_ftrace_filter" | tr "\n" " ")" = "leaf top " ] &&
	[ "$(wr "$D/set_ftrace_filter" "*:mod:libfgraph-lib.so" t)" = ok ] &&
	[ "$(sort "$D/set_ftrace_filter" | tr "\n" " ")" = "fg_lib_twice lib_inner " ]'

check "set_ftrace_filter: a glob that matches nothing is EINVAL" bash -c '
	[ "$(wr "$D/set_ftrace_filter" "nosuch_fn" a)" = EINVAL ] &&
	[ "$(wr "$D/set_ftrace_filter" "" t)" = ok ] &&
	[ "$(cat "$D/set_ftrace_filter")" = "#### all functions enabled ####" ]'

check "current_tracer: an unknown tracer is EINVAL; function switches the sites on" bash -c '
	[ "$(wr "$D/current_tracer" blk t)" = EINVAL ] &&
	[ "$(cat "$D/enabled_functions")" = "" ] &&
	[ "$(wr "$D/set_ftrace_filter" "top mid" t)" = ok ] &&
	[ "$(wr "$D/current_tracer" function t)" = ok ] &&
	[ "$(cat "$D/current_tracer")" = function ] &&
	[ "$(sort "$D/enabled_functions" | tr "\n" " ")" = "mid (1) top (1) " ]'

check "set_ftrace_notrace takes functions out while tracing" bash -c '
	[ "$(cat "$D/set_ftrace_notrace")" = "" ] &&
	[ "$(wr "$D/set_ftrace_notrace" "mid" t)" = ok ] &&
	[ "$(cat "$D/enabled_functions")" = "top (1)" ] &&
	[ "$(wr "$D/set_ftrace_notrace" "" t)" = ok ] &&
	[ "$(sort "$D/enabled_functions" | tr "\n" " ")" = "mid (1) top (1) " ]'

check "the function events reach the buffer (trace)" \
	wait_for grep -q " top <-" "$D/trace"

check "function_graph, set_graph_function, max_graph_depth" bash -c '
	[ "$(wr "$D/set_ftrace_filter" "" t)" = ok ] &&
	[ "$(wr "$D/current_tracer" function_graph t)" = ok ] &&
	[ "$(cat "$D/current_tracer")" = function_graph ] &&
	[ "$(wr "$D/set_graph_function" "mid" t)" = ok ] &&
	[ "$(cat "$D/set_graph_function")" = mid ] &&
	[ "$(cat "$D/max_graph_depth")" = 0 ] &&
	[ "$(wr "$D/max_graph_depth" 2 t)" = ok ] &&
	[ "$(cat "$D/max_graph_depth")" = 2 ] &&
	[ "$(wr "$D/max_graph_depth" x t)" = EINVAL ]'

check "trace: the header names the tracer, function_graph its columns; the graph lines" bash -c '
	[ "$(head -n 4 "$D/trace" | tr "\n" ";")" = "# tracer: function_graph;#;# CPU  DURATION                  FUNCTION CALLS;# |     |   |                     |   |   |   |;" ] &&
	wait_for grep -Eq "^ [0-9]+\) +[ +!#*@$] +[0-9]+\.[0-9]+ us +\|    leaf\(\);$" "$D/trace"'

check "nop: every site a NOP again, the program runs on" bash -c '
	[ "$(wr "$D/current_tracer" nop t)" = ok ] &&
	[ "$(cat "$D/enabled_functions")" = "" ] && [ "$(cat "$D/current_tracer")" = nop ]'

check "the program ends well" bash -c '
	kill -TERM "$1" && wait_for bash -c "! kill -0 $1 2>/dev/null"' _ "$P"

done_testing
