#!/usr/bin/env bash
# utrace convert -f trace.dat with call stacks (issue 32): a recording
# with --call-graph dwarf of stack-demo (the chain twice, so the second
# stack is a stack_ref to the first's definition, and the chain through a
# linked library), exported to trace.dat and read by the real trace-cmd
# report: each event is followed by its stack as the kernel's
# ftrace:user_stack, " => function" a frame, innermost first, the same
# frames utrace script prints; no stack/stack_ref records of utrace's own,
# and no event taken for trace-cmd's blktrace (the id after user_stack).
. "$(dirname "$0")/lib.sh"
command -v trace-cmd > /dev/null ||
	skip_all "trace-cmd is not installed (Debian: apt-get install trace-cmd)"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
r=$!
printf 'chain\nchain\nlib\nquit\n' > "$TMP/ff"
wait "$r"

check "convert -f trace.dat: exit 0" "$UTRACE" convert -f trace.dat -i "$TMP/r.dat" -o "$TMP/r.tdat"
check "trace-cmd report reads it" bash -c 'trace-cmd report -i "$0" > "$1/rep" 2> "$1/rep.err"' \
	"$TMP/r.tdat" "$TMP"
# one line per event: its name, then the frames of the user_stack after it
cat > "$TMP/stacks.awk" <<'AWK'
/^ *[^ \t].*\[[0-9]+\] +[0-9.]+: / {
	ev = $0; sub(/^.*\[[0-9]+\] +[0-9.]+: /, "", ev); name = ev; sub(/:.*/, "", name)
	if (name == "user_stack") { f = ev; sub(/^user_stack:[ \t]*=> /, "", f); s = s " <= " f; next }
	if (s != "") print s
	s = name; next
}
/^\t=> / { f = $0; sub(/^\t=> /, "", f); s = s " " f; next }
END { if (s != "") print s }
AWK
check "each hit followed by its whole chain, in order (the second through a stack_ref)" bash -c '
	awk -f "$0/stacks.awk" "$0/rep" | sed "s/ __libc_init_first.*//; s/+0x[0-9a-f]*//g" > "$0/got"
	printf "%s\n" "hit <= sd_leaf sd_inner sd_middle sd_outer sd_chain main" \
		"hit <= sd_leaf sd_inner sd_middle sd_outer sd_chain main" \
		"hit <= sd_leaf sdlib_inner sdlib_outer main" > "$0/want"
	diff -u "$0/want" "$0/got" >&2' "$TMP"
check "the frames and offsets are those utrace script prints" bash -c '
	"$0" script -i "$1" | awk "/<user stack trace>/ { n++ } n == 3 && /^ => / { f = \$2; sub(/\/0x.*/, \"\", f); print f }" |
		grep -v "^\[" > "$2/want3"
	awk "/user_stack:/ { n++ } n == 3 && /=>/ { sub(/.*=> /, \"\"); print }" "$2/rep" |
		grep -v __libc_init_first > "$2/got3"
	diff -u "$2/want3" "$2/got3" >&2' "$UTRACE" "$TMP/r.dat" "$TMP"
check "no stack, stack_ref or blktrace events" bash -c '! grep -E " (stack|stack_ref|blktrace): " "$0" >&2' "$TMP/rep"
check "user_stack's formats are the kernel's layout (tgid, caller[N], N %pS)" bash -c '
	trace-cmd dump --events -i "$0" > "$1/ev" 2>&1 &&
	grep -q "field:unsigned int tgid;	offset:8;	size:4;	signed:0;" "$1/ev" &&
	grep -q "field:unsigned long caller\[9\];	offset:16;	size:72;	signed:0;" "$1/ev"' \
	"$TMP/r.tdat" "$TMP"
done_testing
