#!/usr/bin/env bash
# The fuzz target's code, once over the corrupt corpus and valid files
# (no fuzzing): with the sanitizer builds this is where a bad read shows.
. "$UTRACE_SRC/tests/cli/lib.sh"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
REPLAY="$UTRACE_BUILD/tests/reader/fuzz-replay"
mkdir -p "$TMP/corpus"
"$MKFILE" corrupt "$TMP/corpus" && rm "$TMP/corpus/MANIFEST" &&
"$MKFILE" basic "$TMP/corpus/basic.dat" &&
"$MKFILE" sample "$TMP/corpus/sample.dat" "$TMP/sample.expected" || exit 1
# every prefix of a small valid file: cuts at every byte
head -c 2000 "$TMP/corpus/valid.dat" > "$TMP/v" || exit 1
mkdir -p "$TMP/cuts"
for cut in $(seq 0 7 2000); do head -c "$cut" "$TMP/v" > "$TMP/cuts/$cut"; done

replay() {
	"$REPLAY" "$@" > "$TMP/out" 2> "$TMP/err"
	local st=$?
	[ $st -eq 0 ] || { sed 's/^/# /' "$TMP/err" | tail -40 >&2; return 1; }
}
check "the corpus replays without a crash" replay "$TMP/corpus"
check "a valid file cut anywhere replays without a crash" replay "$TMP/cuts"
done_testing
