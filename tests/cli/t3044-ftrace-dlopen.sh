#!/usr/bin/env bash
# The function tracers and libraries that come and go (issue 31): a
# library dlopen()ed after the tracer was set is read at the next write of
# a tracer's file (available_filter_functions too) and traced; one
# dlclose()d is forgotten, nothing is written where it was, and loaded
# again it is traced again (tests/cli/fgraph-prog.c 'dl', fgraph-mod.c).
. "$(dirname "$0")/lib.sh"
# (a sanitizer build: libutrace preloaded after the program's runtime)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
need_fuse
mount_setup
fifo_start "$UTRACE_BUILD/tests/fgraph-prog" dl "$UTRACE_BUILD/tests/libfgraph-mod.so"
"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
D="$MNT/$P"
export D

echo function > "$D/current_tracer"
fsend open
check "the dlopen()ed library: in available_filter_functions, then traced" bash -c '
	grep -qx "fg_mod_fn \[libfgraph-mod.so\]" "$D/available_filter_functions" &&
	echo > "$D/set_ftrace_notrace" && grep -qx "fg_mod_fn (1)" "$D/enabled_functions"'
fsend call
check "its calls are recorded" wait_for grep -q " fg_mod_fn <-main" "$D/trace"
fsend close
check "dlclose()d: forgotten at the next write, nothing written where it was" bash -c '
	echo "leaf" > "$D/set_ftrace_filter" &&
	! grep -q fg_mod_fn "$D/available_filter_functions" &&
	[ "$(cat "$D/enabled_functions")" = "leaf (1)" ] && kill -0 "$1"' _ "$P"
fsend open
check "loaded again: traced again" bash -c '
	echo > "$D/set_ftrace_filter" && grep -qx "fg_mod_fn (1)" "$D/enabled_functions"'
fsend call
check "the program ran every command" bash -c '
	[ "$(grep -c "^ok" "$1/out")" = 5 ] && kill -0 "$2"' _ "$TMP" "$P"
exec 3>&-

done_testing
