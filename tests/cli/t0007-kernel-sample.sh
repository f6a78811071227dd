#!/usr/bin/env bash
# The kernel's own tutorial header, samples/trace_events/trace-events-sample.h
# (from Debian's linux-source), built unchanged with gcc and clang by a
# program that gives it the kernel types it uses (tests/compile/kernel-sample.c),
# every event printed by the program (UTRACE_PRINT) and, recorded, by
# utrace script, with the same text.
. "$(dirname "$0")/lib.sh"

kernel_source samples/trace_events
H=$KSRC/samples/trace_events
LIBDIR=$UTRACE_BUILD/lib
CFLAGS=(-std=gnu17 -O2 -Wall -Werror -I "$UTRACE_SRC/include" -I "$UTRACE_SRC/include/utrace/compat" -I "$H")

for cc in gcc clang; do
	if ! command -v $cc > /dev/null; then
		echo "# $cc is not installed"
		continue
	fi
	check "$cc builds trace-events-sample.h unchanged (-Wall -Werror)" \
		$cc "${CFLAGS[@]}" "$UTRACE_SRC/tests/compile/kernel-sample.c" -L "$LIBDIR" -lutrace \
		-o "$TMP/ks-$cc"
done
[ -x "$TMP/ks-gcc" ] || { done_testing; exit; }
export LD_LIBRARY_PATH=$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}

# Printed by the program and recorded at once: each event goes to both.
UTRACE_PRINT="$TMP/print.txt" "$UTRACE" record -e 'sample-trace:*' -o "$TMP/ks.dat" \
	-- "$TMP/ks-gcc" 20 > "$TMP/out" 2> "$TMP/rec.err"
"$UTRACE" script -i "$TMP/ks.dat" > "$TMP/script.txt" 2> "$TMP/script.err"
text() { sed -E 's/^ *[^ ]+-[0-9]+ +\[[0-9]+\] [^ ]+ +[0-9]+\.[0-9]+: //' "$1"; }
export -f text

check "every event of the header fires and prints (UTRACE_PRINT)" bash -c '
	for e in foo_bar foo_bar_with_cond foo_bar_with_fn foo_with_template_simple \
		 foo_with_template_cond foo_with_template_fn foo_with_template_print foo_rel_loc; do
		grep -q " $e: " "$1/print.txt" || { echo "# no $e" >&2; exit 1; }
	done
	grep -qx "fired 20 rounds, 2 registered" "$1/out"' _ "$TMP"
check "TP_printk as the kernel prints it: __print_symbolic, __print_flags, arrays, bitmask, cpumask, __rel_*" bash -c '
	grep -q " foo_bar: foo hello 3 0x3 BIT1|BIT2 {0x1,0x2,0x3} {0x1,0x2,0x3} dddd h (00000000,00000005) (00000000,00000005) iter=3 \[8\] 0,2$" "$1/print.txt" &&
	grep -q " foo_with_template_print: bar I have to be different 7$" "$1/print.txt" &&
	grep -q " foo_rel_loc: foo_rel_loc Hello __rel_loc, 2, 00000000,deadbeef, 00000000,00000005$" "$1/print.txt"' _ "$TMP"
# libtraceevent 1.7.1 cannot parse foo_bar'\''s print fmt (__print_dynamic_array,
# %pV): utrace script leaves it out and says so; every other line is the same.
check "utrace script prints the recording as the program printed it" bash -c '
	grep -q "libtraceevent cannot use the format of .sample-trace:foo_bar." "$1/script.err" &&
	diff <(text "$1/print.txt" | grep -v "^foo_bar: ") <(text "$1/script.txt") >&2' _ "$TMP"

done_testing
