#!/usr/bin/env bash
# Root's recorder and a hostile traced program (issue 27, item 4): the
# recorder reads an object's symbols only from the file the process itself
# opened, never from a name the process sent, and a file root records is
# a new one of mode 0600.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null ||
	skip_all "needs root: the recorder is root's, the program drops to another user"
FORGE="$UTRACE_BUILD/tests/forge-object"
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$TMP/run" "$TMP/secret" "$TMP/out"
# a 0700 directory holding an ELF file with a name of its own
cp "$UTRACE_BUILD/tests/libpfmt-lib.so" "$TMP/secret/lib.so"
chmod 700 "$TMP/secret/lib.so"
grep -qa pfmt_lib_fn "$TMP/secret/lib.so" || skip_all "libpfmt-lib.so has no pfmt_lib_fn"

check "a dropped process names a root-only ELF file: its symbols stay out" bash -c '
	"$0" record -o "$1/out/f.dat" -- "$2" 65534 "$1/secret/lib.so" < /bin/true \
		> /dev/null 2> "$1/err"; st=$?
	cat "$1/err" >&2
	[ $st = 0 ] && [ -s "$1/out/f.dat" ] && ! grep -qa pfmt_lib_fn "$1/out/f.dat"' \
	"$UTRACE" "$TMP" "$FORGE"
check "the program's own symbols are there (from the files it passed)" bash -c '
	"$0" script -i "$1/out/f.dat" > "$1/f.txt" 2>> "$1/err"; cat "$1/f.txt" >&2
	[ "$(grep -c "pfmt_sym: fn=main caller=main+0x0" "$1/f.txt")" = 2 ]' "$UTRACE" "$TMP"
check "root's recording is mode 0600" bash -c '
	[ "$(stat -c %a "$0/out/f.dat")" = 600 ]' "$TMP"
check "over an old 0644 file another holds open: a new file, 0600" bash -c '
	echo old > "$0/out/g.dat"; chmod 644 "$0/out/g.dat"
	exec 3< "$0/out/g.dat"
	old=$(stat -c %i "$0/out/g.dat")
	"$1" record -o "$0/out/g.dat" -- "$2" 0 /nonexistent < /dev/null > /dev/null 2>> "$0/err" &&
	[ "$(stat -c %a "$0/out/g.dat")" = 600 ] && [ "$(stat -c %i "$0/out/g.dat")" != "$old" ] &&
	[ "$(cat <&3)" = old ]' "$TMP" "$UTRACE" "$FORGE"

done_testing
