#!/usr/bin/env bash
# utrace report -g (issue 32): the call stacks of a recording (utrace
# record --call-graph dwarf of tests/cli/stack-demo.c -O2: the chain twice,
# through a linked library, a dlopen()ed module, a signal handler) as perf
# report --no-children prints its call graph: per event, the innermost
# function and its share, then the tree of its callers, callee first, each
# branch with its share; -e selects events; a file without stacks is said.
. "$(dirname "$0")/lib.sh"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
rm -f "$TMP/ff"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
printf 'chain\nchain\nlib\ndl\nsignal\nquit\n' > "$TMP/ff"
wait $!

# (libc's static functions have no symbol: [libc.so.6]+0xoff, which varies)
cat > "$TMP/want" <<'W'
# Samples: 5 of event 'stackdemo:hit', 5 with a call stack
#
# Overhead  Symbol
# ........  ......
#
    100.00%  sd_leaf
            |
            ---sd_leaf
               |
               |--40.00%--sd_inner
               |          sd_middle
               |          sd_outer
               |          sd_chain
               |          main
               |          [libc.so.6]+ADDR
               |          __libc_start_main
               |          _start
               |
               |--20.00%--sd_on_signal
               |          [libc.so.6]+ADDR
               |          [libc.so.6]+ADDR
               |          raise
               |          sd_raise
               |          main
               |          [libc.so.6]+ADDR
               |          __libc_start_main
               |          _start
               |
               |--20.00%--sddl_inner
               |          sddl_outer
               |          main
               |          [libc.so.6]+ADDR
               |          __libc_start_main
               |          _start
               |
               |--20.00%--sdlib_inner
                          sdlib_outer
                          main
                          [libc.so.6]+ADDR
                          __libc_start_main
                          _start


W
check "report -g: the tree of callers of sd_leaf, exactly, as perf report --no-children" bash -c '
	"$0" report -g -i "$1/r.dat" > "$1/got" 2> "$1/err" &&
	sed -E "s/0x[0-9a-f]+/ADDR/" "$1/got" > "$1/got.n" && diff -u "$1/want" "$1/got.n" >&2' \
	"$UTRACE" "$TMP"
check "report -g -e: an event the file does not have selects nothing (exit 1, said)" bash -c '
	! "$0" report -g -e nosuch:ev -i "$1/r.dat" > /dev/null 2> "$1/err" &&
	grep -q "no call stacks" "$1/err"' "$UTRACE" "$TMP"
check "report -g on a recording without stacks: one line, exit 1" bash -c '
	printf "chain\nquit\n" > "$1/ff" & "$0" record -o "$1/p.dat" -- "$2" "$1/ff" "$1/out" "$3" \
		> /dev/null 2>&1
	! "$0" report -g -i "$1/p.dat" > /dev/null 2> "$1/err" &&
	[ "$(wc -l < "$1/err")" = 1 ] && grep -q "has no call stacks" "$1/err"' \
	"$UTRACE" "$TMP" "$UTRACE_BUILD/tests/stack-demo-O2" "$UTRACE_BUILD/tests/libstack-dl.so"
done_testing
