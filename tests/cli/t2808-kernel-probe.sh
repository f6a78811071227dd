#!/usr/bin/env bash
# Issue 28 item 8: the kernel-uprobe fallback as the seed wrote it,
#   utrace record --kernel-probe 'p:myprobe libc.so.6:open $arg1 $arg2' -- cat FILE
# gave a bare "Invalid argument".  The kernel's uprobes have no $argN
# ("$arg* can be used only on function entry or exit"): utrace turns them
# into the System V registers at a function's entry, as --probe takes
# them; libc.so.6 without a process yet is the system's; and what the
# kernel refuses is said with its error_log entry, caret included.
. "$(dirname "$0")/lib.sh"
T=/sys/kernel/tracing
[ "$(id -u)" -eq 0 ] || skip_all "the kernel's uprobes need root (this runs as uid $(id -u))"
[ -w "$T/uprobe_events" ] || skip_all "$T/uprobe_events is missing or not writable"
[ -w "$T/instances" ] || skip_all "$T/instances is not writable (no tracing instances)"
cd "$TMP" || exit 1
echo "hello from t2808" > file.txt

"$UTRACE" record -o k.dat --kernel-probe 'p:myprobe libc.so.6:open $arg1 $arg2' \
	-- cat file.txt > out.txt 2> "$TMP/err"
rc=$?
check "the seed's command records (status 0)" bash -c '[ $1 = 0 ] && grep -qx "hello from t2808" out.txt' _ $rc
check "... \$arg1 \$arg2 went to the kernel as the registers %di %si" \
	grep -q "^utrace record: kernel uprobe p:utrace_[0-9]*/myprobe /.*libc.so.6:0x[0-9a-f]* %di %si\$" "$TMP/err"
"$UTRACE" script -i k.dat > s.txt 2> "$TMP/err"
check "... and the event holds open()'s arguments" \
	grep -q " myprobe: (0x[0-9a-f]*) arg1=0x[0-9a-f]* arg2=0x0\$" s.txt

"$UTRACE" record -o k2.dat --kernel-probe 'p:myprobe libc.so.6:open path=$arg1:string flags=$arg2:x32' \
	-- cat file.txt > /dev/null 2> "$TMP/err"
"$UTRACE" script -i k2.dat > s2.txt 2>> "$TMP/err"
check "\$arg1:string is the string it points to" \
	grep -q " myprobe: (0x[0-9a-f]*) path=\"file.txt\" flags=0x0\$" s2.txt

# what the kernel refuses: its own error_log entry, the caret under the fault
"$UTRACE" record -o k3.dat --kernel-probe 'p:myprobe libc.so.6:open %zz' -- true \
	> /dev/null 2> err3.txt
rc=$?
cp err3.txt "$TMP/err"
check "a definition the kernel refuses: status 1, its error_log entry" bash -c '
	[ $1 = 1 ] && [ ! -e k3.dat ] &&
	grep -qx "utrace record: --kernel-probe: trace_uprobe: error: Invalid register name" err3.txt &&
	cmd=$(sed -n "s/^  Command: //p" err3.txt) && [ -n "$cmd" ] &&
	caret=$(grep -x " *\\^" err3.txt) &&
	[ "${cmd:$((${#caret} - 12)):3}" = "%zz" ]' _ $rc
# $argN where the registers no longer hold the arguments: refused by utrace
"$UTRACE" record -o k4.dat --kernel-probe 'r:myprobe libc.so.6:open $arg1' -- true \
	> /dev/null 2> "$TMP/err"
check "\$argN on a return probe: refused, said why" bash -c '
	[ $1 = 1 ] && grep -q "\$arg\* can be used only on function entry" "$2/err"' _ $? "$TMP"
check "nothing left in the kernel's uprobe_events" bash -c '! grep -q "myprobe" '"$T"'/uprobe_events'

done_testing
