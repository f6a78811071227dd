#!/usr/bin/env bash
# The stacktrace trigger (issue 28 item 9, issue 32): on tests/cli/
# stack-demo.c built -O0, -O2 with frame pointers and -O2 without, the
# stack of each known call chain (the program, a library it links with,
# a module it dlopen()s, a signal handler) begins at the traced call site
# (sd_leaf, never a frame of libutrace or of the event's generated code),
# has no 0 padding, and names each frame as the kernel's stack traces do:
# "<user stack trace>", then " => function+0xoff/0xsize" (an address no
# symbol holds: "[object]+0xoff", here libc's static functions).
. "$(dirname "$0")/lib.sh"
mount_setup
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
if ! "$UTRACE_BUILD/tests/stack-demo-O0" 2>&1 | grep -q usage; then
	skip_all "stack-demo does not run"
fi

for v in O0 O2fp O2; do
	rm -f "$TMP/ff" "$TMP/out"
	mkfifo "$TMP/ff"
	"$UTRACE_BUILD/tests/stack-demo-$v" "$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" \
		> /dev/null 2> "$TMP/demo.err" &
	P=$!
	pids+=("$P")
	k=0
	wait_traceable "$P" "$TMP/demo.err" || { check "$v: stack-demo is traceable" false; continue; }
	if ! "$UTRACE" trigger -p "$P" stackdemo:hit stacktrace 2> "$TMP/err"; then
		if grep -q "Invalid argument" "$TMP/err"; then
			echo "# this build has no libunwind: no stacktrace trigger"
			echo quit > "$TMP/ff"
			break
		fi
		check "$v: the stacktrace trigger is set" false
		continue
	fi
	"$UTRACE" enable -p "$P" stackdemo:hit > /dev/null 2>&1
	for c in chain lib dl signal; do send "$c"; done
	"$UTRACE" show -p "$P" > "$TMP/show-$v" 2> "$TMP/err"
	stack_lines "$TMP/show-$v" > "$TMP/stacks-$v"
	sed 's/^/# /' "$TMP/stacks-$v"
	check "$v: four stacks, one after each event, in the kernel's layout" bash -c '
		[ "$(grep -c "hit: where=" "$1")" = 4 ] && [ "$(grep -c " <user stack trace>$" "$1")" = 4 ] &&
		[ "$(grep -c "^ => " "$1")" -le 32 ] &&
		! grep "^ => " "$1" | grep -Evq "^ => ([A-Za-z_][A-Za-z0-9_.]*\+0x[0-9a-f]+/0x[0-9a-f]+|\[[^]/]+\]\+0x[0-9a-f]+|<[0-9a-f]{16}>)$"' \
		_ "$TMP/show-$v"
	check "$v: no padding, no libutrace frame, no frame of the event's generated code" bash -c '
		! grep -Eq "=> (0x0|<0+>)$|=> (utrace_|__traceiter_|\[libutrace)" "$1"' _ "$TMP/show-$v"
	check "$v: libc's unnamed frames as [libc.so.6]+0xoff" bash -c '
		grep -Eq "^ => \[libc\.so\.6\]\+0x[0-9a-f]+$" "$1"' _ "$TMP/show-$v"
	check "$v: the program's chain from the call site: sd_leaf sd_inner sd_middle sd_outer sd_chain main" \
		bash -c 'sed -n 1p "$1" | grep -q "^sd_leaf sd_inner sd_middle sd_outer sd_chain main "' _ "$TMP/stacks-$v"
	check "$v: through a linked library: sd_leaf sdlib_inner sdlib_outer main" \
		bash -c 'sed -n 2p "$1" | grep -q "^sd_leaf sdlib_inner sdlib_outer main "' _ "$TMP/stacks-$v"
	check "$v: through a dlopen()ed module: sd_leaf sddl_inner sddl_outer main" \
		bash -c 'sed -n 3p "$1" | grep -q "^sd_leaf sddl_inner sddl_outer main "' _ "$TMP/stacks-$v"
	check "$v: from a signal handler: sd_leaf sd_on_signal, through the signal frame to sd_raise main" \
		bash -c 'sed -n 4p "$1" | grep -Eq "^sd_leaf sd_on_signal .* sd_raise main( |$)"' _ "$TMP/stacks-$v"
	echo quit > "$TMP/ff"
	wait "$P"
done
done_testing
