#!/usr/bin/env bash
# The kernel's %p extensions (%ps %pS %*pbl %*pb %pI4 %pI6c %pM %pU %*phC)
# as the kernel prints them: in the program's own lines (UTRACE_PRINT)
# and from a recording (utrace record + script), the same text.
. "$(dirname "$0")/lib.sh"
DEMO="$UTRACE_BUILD/tests/pfmt-demo"

SYM='pfmt_sym: fn=pfmt_worker caller=pfmt_worker\+0x10/0x[0-9a-f]+$'
NET='pfmt_net: cpus=0,2-3,5 mask=2d ip=192.168.1.20 ip6=2001:db8::1 mac=00:1b:21:3a:4f:5e uuid=12345678-9abc-def0-0123-456789abcdef hex=c0:a8:01:14$'

printed() {
	UTRACE_EVENTS='pfmt:*' UTRACE_PRINT="$TMP/print.txt" "$DEMO" 2> "$TMP/err" &&
	grep -qE "$SYM" "$TMP/print.txt" && grep -qE "$NET" "$TMP/print.txt"
}
check "UTRACE_PRINT renders the extensions as the kernel" printed

# the size in %pS is the function's ELF size
sized() {
	local size
	size=$(nm -S "$DEMO" | awk '$4 == "pfmt_worker" { print $2 }' | sed 's/^0*//')
	grep -q "caller=pfmt_worker+0x10/0x$size\$" "$TMP/print.txt"
}
check "%pS gives the function's size" sized

# The process tells the recorder which objects it has loaded (their files
# and load biases) with its first messages, so a process that exits at
# once (this demo runs for a millisecond) still has its names: %ps/%pS
# must print them, every time.
recorded() {
	local i
	for i in 1 2 3; do
		"$UTRACE" record -e 'pfmt:*' -o "$TMP/p.dat" -- "$DEMO" > /dev/null 2> "$TMP/err" &&
		"$UTRACE" script -i "$TMP/p.dat" > "$TMP/script.txt" 2>> "$TMP/err" &&
		{ grep -qE "$SYM" "$TMP/script.txt" && grep -qE "$NET" "$TMP/script.txt"; } ||
		{ cat "$TMP/script.txt" "$TMP/err" >&2; return 1; }
	done
}
check "utrace script prints the same text from a recording, names included" recorded

same_text() {
	sed 's/.*: pfmt_/pfmt_/' "$TMP/print.txt" > "$TMP/a" &&
	sed 's/.*: pfmt_/pfmt_/' "$TMP/script.txt" > "$TMP/b" &&
	same "$TMP/b" "$TMP/a"
}
check "both paths print the same events text" same_text

# A library dlopen()ed after the start, with no events of its own: its
# functions are named in the program's lines and in the recording alike.
LIB="$UTRACE_BUILD/tests/libpfmt-lib.so"
LIBSYM='pfmt_sym: fn=pfmt_lib_fn caller=pfmt_lib_fn\+0x4/0x[0-9a-f]+$'
dlopened() {
	UTRACE_EVENTS='pfmt:*' UTRACE_PRINT="$TMP/dlprint.txt" "$DEMO" 1 "$LIB" 2> "$TMP/err" &&
	grep -qE "$LIBSYM" "$TMP/dlprint.txt" &&
	"$UTRACE" record -e 'pfmt:*' -o "$TMP/dl.dat" -- "$DEMO" 1 "$LIB" > /dev/null 2>> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/dl.dat" > "$TMP/dlscript.txt" 2>> "$TMP/err" &&
	sed 's/.*: pfmt_/pfmt_/' "$TMP/dlprint.txt" > "$TMP/a" &&
	sed 's/.*: pfmt_/pfmt_/' "$TMP/dlscript.txt" > "$TMP/b" &&
	same "$TMP/b" "$TMP/a" || { cat "$TMP/dlscript.txt" "$TMP/err" >&2; false; }
}
check "a dlopen()ed library's functions are named in a recording" dlopened

# The live readers name them too: `utrace show` (and the mount's trace,
# the same printer) reads the living process's /proc/<pid>/maps.
export UTRACE_RUNTIME_DIR="$TMP/run"
HP=
trap '[ -n "$HP" ] && kill "$HP" 2> /dev/null; rm -rf "$TMP"' EXIT
UTRACE_EVENTS='pfmt:*' "$DEMO" 1 "$LIB" hold > "$TMP/hold.out" 2> "$TMP/hold.err" &
HP=$!
shown() {
	wait_traceable "$HP" "$TMP/hold.err" &&
	wait_for grep -qx fired "$TMP/hold.out" &&
	"$UTRACE" show -p "$HP" > "$TMP/show.txt" 2> "$TMP/err" &&
	grep -v '^#' "$TMP/show.txt" | sed 's/.*: pfmt_/pfmt_/' > "$TMP/b" &&
	same "$TMP/b" "$TMP/a" || { cat "$TMP/show.txt" "$TMP/err" >&2; false; }
}
check "utrace show names %ps/%pS as UTRACE_PRINT does" shown
kill "$HP" 2> /dev/null
done_testing
