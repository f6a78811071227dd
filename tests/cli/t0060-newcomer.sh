#!/usr/bin/env bash
# What a newcomer trips over (issue 17): each check does what the newcomer
# did and expects to be told, not left guessing.
. "$(dirname "$0")/lib.sh"
cd "$TMP" || exit 1

# --- the README's tour, as printed, against the installed library ---

# The tour: from "## A tour" to the next heading ("### Running programs"
# needs a running process: t0020-control checks those commands).
tour() {
	awk '/^## A tour/ { on = 1; next } on && /^#+ / { exit } on { print }' \
		"$UTRACE_SRC/README.md"
}
# code_block N: the Nth ```c block of the tour
code_block() {
	tour | awk -v want="$1" '/^```c$/ { n++; if (n == want) { on = 1; next } }
		on && /^```$/ { exit } on { print }'
}

install_tree() {
	meson install -C "$UTRACE_BUILD" --no-rebuild --destdir "$TMP/root" --quiet \
		> "$TMP/err" 2>&1 &&
	PC=$(find "$TMP/root" -name utrace.pc | head -n 1) && [ -n "$PC" ] &&
	LIBDIR=$(dirname "$(dirname "$PC")") &&
	BINDIR=$(find "$TMP/root" -type f -name utrace -path '*/bin/*' | head -n 1) &&
	[ -n "$BINDIR" ] && BINDIR=$(dirname "$BINDIR")
}
check "meson install into a DESTDIR" install_tree

# Each "$ command" line of the tour's plain blocks runs in the tour
# directory as printed (bash -c); what follows it up to the next command
# or the block's end is what it must print, equal after the parts that
# change from run to run (pid, CPU, time) are taken out.
tour_norm() {
	# (a sanitizer build's libutrace.so brings libasan's link warnings)
	normalize "$@" | sed -E 's/pid [0-9]+ \(/pid PID (/' |
		grep -v '^/usr/bin/ld: .*/libasan\.so.*: warning: '
}
run_tour() {
	local dir=$TMP/tour cmd want got i=0 status=0
	mkdir -p "$dir" &&
	code_block 1 > "$dir/app-trace.h" && code_block 2 > "$dir/app.c" &&
	grep -q TRACE_EVENT "$dir/app-trace.h" && grep -q main "$dir/app.c" || return 1
	tour | awk '/^```$/ { on = !on; if (!on) print "@@END"; next } on { print }' \
		> "$TMP/blocks"
	# one file per command: its first line the command, then the output
	awk -v d="$TMP/cmd" '/^\$ / { n++; f = sprintf("%s.%02d", d, n) } /^@@END$/ { f = ""; next }
		f != "" { print > f }' "$TMP/blocks"
	[ -e "$TMP/cmd.01" ] || return 1
	# a sanitizer build's libutrace.so needs its runtime first
	local pre
	pre=$(ldd "$LIBDIR/libutrace.so" 2> /dev/null |
		awk '/lib(a|ub)san\.so/ { printf "%s%s", sep, $3; sep = ":" }')
	for f in "$TMP"/cmd.*; do
		i=$((i + 1))
		cmd=$(head -n 1 "$f" | cut -c3-)
		tail -n +2 "$f" | tour_norm > "$TMP/want"
		(cd "$dir" && env PATH="$BINDIR:$PATH" PKG_CONFIG_PATH="$LIBDIR/pkgconfig" \
			PKG_CONFIG_SYSROOT_DIR="$TMP/root" LD_LIBRARY_PATH="$LIBDIR" \
			${pre:+"LD_PRELOAD=$pre" ASAN_OPTIONS=detect_leaks=0:verify_asan_link_order=0} \
			bash -o pipefail -c "$cmd" > "$TMP/got" 2>&1)
		status=$?
		tour_norm "$TMP/got" > "$TMP/gotn"
		if [ "$status" -ne 0 ] && ! [[ "$cmd" == *"| head"* && "$status" -eq 141 ]]; then
			echo "# '$cmd' failed ($status):" >&2
			sed 's/^/#   /' "$TMP/got" >&2
			cp "$TMP/got" "$TMP/err"
			return 1
		fi
		if ! diff -u "$TMP/want" "$TMP/gotn" > "$TMP/err"; then
			echo "# '$cmd' printed other than the README shows" >&2
			return 1
		fi
	done
	[ "$i" -ge 4 ]
}
check "the README's tour builds and runs as printed" run_tour

# --- mistakes that passed in silence ---

record_sample() {
	"$UTRACE" record -o "$TMP/s.dat" -- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i "$TMP/s.dat" --list > "$TMP/list" 2> "$TMP/err" &&
	grep -qx 'sample-trace:foo_bar' "$TMP/list" &&
	grep -qx 'demo:demo_request' "$TMP/list" &&
	[ "$(grep -c 'sample-trace:foo_bar$' "$TMP/list")" -eq 1 ]
}
check "script --list: the events in a file, each once" record_sample

script_list_selected() {
	"$UTRACE" script -i "$TMP/s.dat" --list -e 'demo:*,!demo_tick' > "$TMP/out" 2> "$TMP/err" &&
	[ "$(cat "$TMP/out")" = "demo:demo_request" ]
}
check "script --list -e: the selected events" script_list_selected

script_one_bogus() {
	! "$UTRACE" script -i "$TMP/s.dat" -e 'foo_bar,bogus' > "$TMP/out" 2> "$TMP/err" &&
	grep -qx "utrace: no event in '$TMP/s.dat' matches 'bogus'" "$TMP/err" &&
	grep -q "utrace script --list -i '$TMP/s.dat'" "$TMP/err" &&
	! grep -q "matches 'foo_bar'" "$TMP/err" &&
	[ ! -s "$TMP/out" ]
}
check "script -e 'request,bogus': bogus is an error, with how to list" script_one_bogus

script_no_such() {
	"$UTRACE" script -i "$TMP/s.dat" -e no_such_event > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 1 ] &&
	grep -qx "utrace: no event in '$TMP/s.dat' matches 'no_such_event'" "$TMP/err" &&
	grep -q "utrace script --list" "$TMP/err"
}
check "script -e no_such_event: exit status 1" script_no_such

record_typo() {
	"$UTRACE" record -o "$TMP/t.dat" -e 'sample-trace:*,fo_bar' -- "$SAMPLE" \
		> /dev/null 2> "$TMP/err" &&
	grep -Eqx "utrace record: no event of pid [0-9]+ \(sample\) matches 'fo_bar'" "$TMP/err" &&
	! grep -q "matches 'sample-trace:\*'" "$TMP/err" &&
	grep -q "utrace script --list -i '$TMP/t.dat'" "$TMP/err" &&
	[ "$(grep -c "^utrace record: .*matches" "$TMP/err")" -eq 1 ]
}
check "record -e with a typo: which entry matched nothing, where, how to list" record_typo

record_all_typo() {
	# nothing -e asked for could be recorded: status 1 (t2804)
	"$UTRACE" record -o "$TMP/t.dat" -e 'nosuch' -- "$SAMPLE" > /dev/null 2> "$TMP/err"
	[ $? = 1 ] && grep -q "utrace record: 0 events written" "$TMP/err" &&
	# after the summary, where it is seen
	sed -n '/0 events written/,$p' "$TMP/err" | grep -Eq "no event of pid [0-9]+ \(sample\) matches 'nosuch'"
}
check "record -e matching nothing: said after the summary, status 1" record_all_typo

record_no_libutrace() {
	"$UTRACE" record -o "$TMP/ls.dat" -- ls > /dev/null 2> "$TMP/err" &&
	[ "$(tail -n 1 "$TMP/err")" = "utrace record: 'ls' has no utrace events (it does not use libutrace)" ]
}
check "record -- ls: 'ls' has no utrace events" record_no_libutrace

record_fine_quiet() {
	"$UTRACE" record -o "$TMP/f.dat" -e 'sample-trace:*' -- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	! grep -q "matches\|no utrace events" "$TMP/err"
}
check "record with good entries: no such hint" record_fine_quiet

# --- a long recording shows how it goes, on a terminal only ---

status_not_tty() {
	"$UTRACE" record -o "$TMP/n.dat" -- bash -c 'sleep 1.3' > /dev/null 2> "$TMP/err" &&
	! grep -q $'\r' "$TMP/err" && ! grep -q ' s, .* events, .* MB' "$TMP/err"
}
check "no status line when stderr is not a terminal" status_not_tty

TMUX_SOCK="$TMP/tmux.sock"
pane() { tmux -S "$TMUX_SOCK" capture-pane -p -t t0060 2> /dev/null; }
pane_has() { pane | grep -Eq -- "$1"; }
export -f pane pane_has
export TMUX_SOCK
status_tty() {
	# the command waits for a line from a FIFO: the test says when it
	# ends, after it saw the status line
	mkfifo "$TMP/go" &&
	tmux -S "$TMUX_SOCK" -f /dev/null new-session -d -s t0060 -x 150 -y 20 \
		"cd '$TMP' && '$UTRACE' record -o tty.dat -- bash -c 'read x < go'; echo RECORD-DONE; sleep 600" ||
		return 1
	wait_for pane_has 'utrace record: [0-9]+ s, [0-9]+ events, [0-9.]+ MB, [0-9]+ lost' ||
		{ pane > "$TMP/err"; return 1; }
	# rewritten in place: still one such line after another second
	wait_for pane_has 'utrace record: [2-9] s, ' &&
	pane > "$TMP/err" &&
	[ "$(grep -c 'utrace record: [0-9]* s, ' "$TMP/err")" -le 1 ] &&
	echo go > "$TMP/go" &&
	wait_for pane_has RECORD-DONE &&
	pane > "$TMP/err" &&
	# erased before the summary, which starts its own line
	! grep -q 'utrace record: [0-9]* s, ' "$TMP/err" &&
	grep -q "^utrace record: 0 events written" "$TMP/err"
}
if why=$(tmux_unusable); then
	n=$((n + 1)); echo "ok $n # SKIP the status line on a terminal: $why"
else
	trap 'tmux -S "$TMUX_SOCK" kill-server 2> /dev/null; rm -rf "$TMP"' EXIT
	check "a status line once a second on a terminal, erased at the end" status_tty
	tmux -S "$TMUX_SOCK" kill-server 2> /dev/null
fi

done_testing
