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

# The recorder reads the process's symbols from /proc/<pid>/maps when
# the process joins; a process that has already exited by then (this
# demo runs for a millisecond) leaves none, and %ps/%pS print the raw
# address, as the kernel does for an address it cannot name.  Either is
# accepted here; the names, when present, must be the kernel's text.
RAW='pfmt_sym: fn=0x[0-9a-f]+ caller=0x[0-9a-f]+$'
recorded() {
	"$UTRACE" record -e 'pfmt:*' -o "$TMP/p.dat" -- "$DEMO" > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/p.dat" > "$TMP/script.txt" 2>> "$TMP/err" &&
	{ grep -qE "$SYM|$RAW" "$TMP/script.txt" && grep -qE "$NET" "$TMP/script.txt"; } ||
	{ cat "$TMP/script.txt" >&2; false; }
}
check "utrace script prints the same text from a recording" recorded

same_text() {
	sed 's/.*: pfmt_/pfmt_/' "$TMP/print.txt" > "$TMP/a" &&
	sed 's/.*: pfmt_/pfmt_/' "$TMP/script.txt" > "$TMP/b" &&
	if grep -qE "$RAW" "$TMP/b"; then
		grep pfmt_net "$TMP/a" > "$TMP/a2" && grep pfmt_net "$TMP/b" > "$TMP/b2" &&
		same "$TMP/b2" "$TMP/a2"
	else
		same "$TMP/b" "$TMP/a"
	fi
}
check "both paths print the same events text" same_text
done_testing
