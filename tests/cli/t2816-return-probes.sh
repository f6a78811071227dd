#!/usr/bin/env bash
# Issue 28 item 16: return probes as the kernel's uprobes give them.  At a
# return probe the kernel's registers are those after the return: %ip is
# the return address (utrace read the ret instruction's), %sp is one word
# up, $stack0 the word above the return address; an immediate string
# (\"hello") prints (fault) in the kernel, whose uprobes read their own
# copy as user memory (utrace printed "hello").  Compared with this
# machine's kernel when it can be (root, tracefs, uprobe_events), both
# runs without address randomization (setarch -R): the same addresses in
# the program.  And reference counters (REFCTR), which work, are not said
# to be refused in the docs.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/probe-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
cp "$PROG" prog
NORAND=
setarch -R true 2> /dev/null && NORAND="setarch -R"

DEFS=('r:grp/addr add ip=%ip sp=%sp s0=$stack0 ret=$retval s=\"hello":string'
      'p:grp/adde add ip=%ip sp=%sp s0=$stack0 s=\"hello":string')
$NORAND "$UTRACE" record -o r.dat --probe "${DEFS[0]}" --probe "${DEFS[1]}" -- ./prog 2 \
	> /dev/null 2> "$TMP/err"
"$UTRACE" script -i r.dat | sed -n 's/^.* \(add[er]\): /\1: /p' > utrace.txt 2>> "$TMP/err"
check "recorded: an entry and a return per call" test "$(wc -l < utrace.txt)" = 4

# kernel_like FILE: the lines hold what the kernel gives (checked on its
# own output below): at the return, ip is the return address printed
# before "<-", sp the entry's sp + 8, $stack0 not the return address; the
# immediate string is (fault)
kernel_like() {
	python3 - "$1" <<'EOF'
import re, sys
lines = open(sys.argv[1]).read().split('\n')[:-1]
ent = None
for l in lines:
    f = dict(re.findall(r'(\w+)=(\S+)', l))
    if f.get('s') != '(fault)':
        print('# the immediate string is not (fault): ' + l); sys.exit(1)
    if l.startswith('adde:'):
        ent = f
        continue
    m = re.match(r'addr: \((0x[0-9a-f]+) <- (0x[0-9a-f]+)\)', l)
    if not m or ent is None:
        print('# not a return line after an entry: ' + l); sys.exit(1)
    if f['ip'] != m.group(1):
        print('# ip %s is not the return address %s' % (f['ip'], m.group(1))); sys.exit(1)
    if int(f['sp'], 16) != int(ent['sp'], 16) + 8:
        print('# sp %s is not the entry sp %s + 8' % (f['sp'], ent['sp'])); sys.exit(1)
    if f['s0'] == m.group(1) or ent['s0'] != m.group(1):
        print('# $stack0: %s at the return, %s at the entry' % (f['s0'], ent['s0'])); sys.exit(1)
EOF
}
check "utrace: ip is the return address, sp and \$stack0 after the return, the string (fault)" \
	kernel_like utrace.txt

# the same definitions through the kernel's uprobe_events, in an instance
T=/sys/kernel/tracing
if [ "$(id -u)" != 0 ] || [ ! -w "$T/uprobe_events" ] || [ -z "$NORAND" ]; then
	n=$((n + 1)); echo "ok $n # SKIP the kernel's uprobes need root, tracefs and setarch -R"
	n=$((n + 1)); echo "ok $n # SKIP (the same)"
else
	G=t2816_$$
	I="$T/instances/$G"
	kclean() {
		[ -d "$I" ] && echo 0 > "$I/events/$G/enable" 2> /dev/null && rmdir "$I"
		echo "-:$G/addr" >> "$T/uprobe_events" 2> /dev/null
		echo "-:$G/adde" >> "$T/uprobe_events" 2> /dev/null
		rm -rf "$TMP"
	}
	trap kclean EXIT
	off=$(nm prog | awk '$3 == "add" { print $1 }')
	for d in "${DEFS[@]}"; do
		echo "${d/grp\//$G/}" | sed "s|add |$TMP/prog:0x$off |" >> "$T/uprobe_events"
	done 2> "$TMP/err"
	mkdir "$I" && echo 1 > "$I/events/$G/enable" 2>> "$TMP/err"
	$NORAND ./prog 2 > /dev/null
	echo 0 > "$I/events/$G/enable"
	sed -n 's/^.* \(add[er]\): /\1: /p' "$I/trace" > kernel.txt
	check "the kernel's uprobes give the same" kernel_like kernel.txt
	# the addresses in the program are the same in both runs
	check "... the same ip values as utrace's" bash -c '
		diff <(grep -o "ip=0x[0-9a-f]*" kernel.txt) <(grep -o "ip=0x[0-9a-f]*" utrace.txt) >&2 &&
		diff <(grep -o "^add[er]: ([^)]*)" kernel.txt) <(grep -o "^add[er]: ([^)]*)" utrace.txt) >&2'
fi

# reference counters work (t0086 counts one); the docs do not say they
# are refused
check "(REFCTR) is taken, and no document says it is refused" bash -c '
	"$UTRACE" probe "p:grp/add $1/prog:0x$(nm "$1/prog" | awk "\$3 == \"add\" { print \$1 }")(0x3000)" \
		> /dev/null 2> "$1/err" &&
	! grep -rniE "reference counters? \(.*(not supported|EINVAL)" "$2/docs" "$2/README.md" >&2' \
	_ "$TMP" "$UTRACE_SRC"

done_testing
