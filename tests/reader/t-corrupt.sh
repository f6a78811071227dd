#!/usr/bin/env bash
# The corrupt-file corpus (mkfile corrupt): each file gives its status (1,
# or 0 for what a reader skips), an error naming the file on one line and
# saying what is wrong, never a crash.  The corpus is left in
# $UTRACE_BUILD/tests/data/corrupt for a look, and as the fuzzer's seeds.
. "$UTRACE_SRC/tests/cli/lib.sh"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
DIR="$UTRACE_BUILD/tests/data/corrupt"
rm -rf "$DIR"
mkdir -p "$UTRACE_BUILD/tests/data"
"$MKFILE" corrupt "$DIR" || exit 1
"$UTRACE" script -i "$DIR/valid.dat" > "$TMP/valid.out" 2> /dev/null || exit 1

one() {
	local name=$1 want=$2 words=$3 f="$DIR/$1" st
	"$UTRACE" script -i "$f" > "$TMP/out" 2> "$TMP/err"
	st=$?
	if [ "$st" -ne "$want" ]; then
		echo "# $name: status $st, expected $want" >&2
		sed 's/^/# /' "$TMP/err" >&2
		return 1
	fi
	if [ "$words" != "-" ] && ! grep -qF -- "$words" "$TMP/err"; then
		echo "# $name: no '$words' in:" >&2
		sed 's/^/# /' "$TMP/err" >&2
		return 1
	fi
	if [ "$want" -eq 1 ]; then
		# one line, naming the file
		[ "$(grep -cv ' events lost (see the \[LOST\] lines)$' "$TMP/err")" -eq 1 ] &&
		head -1 "$TMP/err" | grep -qF "utrace: '$f': " || {
			echo "# $name: not one line naming the file:" >&2
			sed 's/^/# /' "$TMP/err" >&2
			return 1
		}
	elif grep -v -e ' events lost (see the \[LOST\] lines)$' \
		     -e ' events were lost (see the \[LOST\] lines)$' \
		     -e ': file cut short' "$TMP/err" | grep -q .; then
		echo "# $name: unexpected messages:" >&2
		sed 's/^/# /' "$TMP/err" >&2
		return 1
	fi
}

while read -r name status words; do
	check "$name: status $status${words:+, '$words'}" one "$name" "$status" "$words"
done < "$DIR/MANIFEST"

same_as_valid() {
	"$UTRACE" script -i "$DIR/$1" > "$TMP/out" 2> /dev/null &&
	same "$TMP/out" "$TMP/valid.out"
}
check "an unknown record type is skipped: the output is the valid file's" \
	same_as_valid unknown-record-type.dat
check "extra payload bytes are ignored" same_as_valid extra-payload-bytes.dat

cut_short() {
	"$UTRACE" script -i "$DIR/cut-short-in-page.dat" > "$TMP/out" 2> /dev/null &&
	[ ! -s "$TMP/out" ] &&
	"$UTRACE" script -i "$DIR/cut-short-in-record-header.dat" > "$TMP/out" 2> /dev/null &&
	same "$TMP/out" "$TMP/valid.out"
}
check "a file cut short: what is complete is read" cut_short

lost_lines() {
	"$UTRACE" script -i "$DIR/lost-record-of-thread-0.dat" > "$TMP/out" 2> /dev/null &&
	grep -qE '^ +victim-0 +\[000\] \.\.\.\.\. +5\.000003: \[LOST 17 EVENTS\]$' "$TMP/out" &&
	"$UTRACE" script -i "$DIR/missed-events-without-count.dat" > "$TMP/out" 2> /dev/null &&
	head -1 "$TMP/out" | grep -qE ': \[LOST EVENTS\]$' &&
	"$UTRACE" script -i "$DIR/lost-before-first-page.dat" > "$TMP/out" 2> /dev/null &&
	head -1 "$TMP/out" | grep -qE '5\.000001: \[LOST 3 EVENTS\]$'
}
check "lost-event lines: a LOST record of thread 0, an unknown count, before a page" lost_lines

kernel_merged() {
	"$UTRACE" script -i "$DIR/kernel-valid.dat" > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/err" ] &&
	cat > "$TMP/want" <<'EOF' &&
          victim-100     [000] .....     5.000001: utest_simple: a=1 b=2
     kworker/1:2-4242    [001] .....     5.000002: kev_switch: next_pid=7
          victim-100     [000] .....     5.000002: utest_fn: s=strings mode=A
     kworker/1:2-4242    [001] .....     5.000003: kev_switch: next_pid=8
          victim-100     [000] .....     5.000003: utest_cond: v=3
EOF
	same "$TMP/out" "$TMP/want" &&
	"$UTRACE" script -i "$DIR/kernel-valid.dat" --json 2> /dev/null |
		grep -q '"name":"sched:kev_switch".*"pid":4240,"tid":4242,"cpu":1,"comm":"kworker/1:2"'
}
check "kernel events (KFORMAT, KPAGE, KTASK) merge with the threads' in time order" \
	kernel_merged

kernel_lost() {
	"$UTRACE" script -i "$DIR/kernel-missed-stored.dat" > "$TMP/out" 2> /dev/null &&
	grep -qE '^ +kernel-0 +\[001\] \.\.\.\.\. +5\.000002: \[LOST 5 EVENTS\]$' "$TMP/out" &&
	"$UTRACE" script -i "$DIR/kpage-stored-count-past-page.dat" > "$TMP/out" 2> /dev/null &&
	grep -qE '5\.000002: \[LOST EVENTS\]$' "$TMP/out"
}
check "a kernel page's stored count of lost events, and one past the page" kernel_lost
done_testing
