#!/usr/bin/env bash
# UTRACE_EVENTS: the kernel's set_event forms, exclusions, and one warning
# line per bad entry while the program runs on.
. "$(dirname "$0")/lib.sh"

events() { # events SPEC: the event names printed with UTRACE_EVENTS=SPEC
	UTRACE_EVENTS="$1" UTRACE_PRINT=stderr "$SAMPLE" 2>&1 >/dev/null |
		grep -v '^utrace:' | sed -E 's/.*: ([a-z_]+): .*/\1/' | sort -u | tr '\n' ' '
}

check "sys:event" bash -c '[ "$0" = "foo_bar_with_fn " ]' "$(events sample-trace:foo_bar_with_fn)"
check "bare event name" bash -c '[ "$0" = "foo_bar_with_fn " ]' "$(events foo_bar_with_fn)"
check "*:event" bash -c '[ "$0" = "foo_bar_with_cond " ]' "$(events '*:foo_bar_with_cond')"
check ":event" bash -c '[ "$0" = "foo_bar_with_cond " ]' "$(events ':foo_bar_with_cond')"
check "sys: and exclusion with !" bash -c '[ "$0" = "foo_with_template_print " ]' \
	"$(events 'sample-trace:,!foo_bar,!foo_bar_with_cond,!foo_bar_with_fn,!foo_with_template_simple,!foo_with_template_cond,!foo_with_template_fn')"
check "*:* with spaces as separators" bash -c '[ "$(echo $0 | wc -w)" -eq 7 ]' "$(events '  *:*   !nothing ')"

warnings() {
	UTRACE_EVENTS='nosuch:event,a:b:c,sample*,!,foo_bar_with_fn' UTRACE_PRINT=stderr \
		"$SAMPLE" > "$TMP/out" 2> "$TMP/err" || return 1
	grep '^utrace:' "$TMP/err" > "$TMP/warn"
	cat > "$TMP/want" <<'W'
utrace: UTRACE_EVENTS: malformed entry 'a:b:c'
utrace: UTRACE_EVENTS: malformed entry 'sample*'
utrace: UTRACE_EVENTS: malformed entry '!'
utrace: UTRACE_EVENTS: no event matches 'nosuch:event'
W
	same "$TMP/warn" "$TMP/want" &&
	# the good entry still works and the program's own output is intact
	[ "$(grep -c 'foo_bar_with_fn:' "$TMP/err")" -eq 4 ] &&
	grep -q "plain probe saw 10" "$TMP/out"
}
check "bad entries: one line each, the rest applies" warnings
flood() {
	# a value near the kernel's 128 KiB limit for one variable
	UTRACE_EVENTS="$(seq -f 'bad::x%g' 1 10000 | tr '\n' ' ') nosuch:a nosuch:b nosuch:c nosuch:d nosuch:e nosuch:f" \
		"$SAMPLE" > "$TMP/out" 2> "$TMP/err" || return 1
	[ "$(grep -c "^utrace: UTRACE_EVENTS: malformed entry" "$TMP/err")" -eq 5 ] &&
	grep -qx "utrace: UTRACE_EVENTS: 9995 more malformed entries" "$TMP/err" &&
	[ "$(grep -c "^utrace: UTRACE_EVENTS: no event matches" "$TMP/err")" -eq 5 ] &&
	grep -qx "utrace: UTRACE_EVENTS: 1 more entries match no event" "$TMP/err" &&
	[ "$(wc -l < "$TMP/err")" -eq 12 ] && grep -q "plain probe saw 10" "$TMP/out"
}
check "10,000 bad entries: five warnings of each kind, then a count" flood

print_stdout() {
	UTRACE_EVENTS=foo_bar_with_fn UTRACE_PRINT=stdout "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ "$(grep -c 'foo_bar_with_fn:' "$TMP/out")" -eq 4 ] && [ ! -e stdout ] && [ ! -s "$TMP/err" ]
}
check "UTRACE_PRINT=stdout prints to standard output, not to a file" print_stdout

print_symlink() {
	echo precious > "$TMP/victim"
	ln -s "$TMP/victim" "$TMP/planted"
	UTRACE_EVENTS=foo_bar_with_fn UTRACE_PRINT="$TMP/planted" "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ "$(cat "$TMP/victim")" = precious ] &&
	grep -qx "utrace: UTRACE_PRINT: cannot open '$TMP/planted': it is a symbolic link; events are not printed" "$TMP/err" &&
	grep -q "plain probe saw 10" "$TMP/out"
}
check "UTRACE_PRINT refuses a planted symbolic link" print_symlink

print_fifo() {
	mkfifo "$TMP/fifo"
	UTRACE_EVENTS=foo_bar_with_fn UTRACE_PRINT="$TMP/fifo" timeout 10 "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	grep -q "a FIFO that nobody reads" "$TMP/err" && grep -q "plain probe saw 10" "$TMP/out"
}
check "UTRACE_PRINT to a FIFO nobody reads does not block the program" print_fifo

print_other_user() {
	[ "$(id -u)" -eq 0 ] || { echo "# SKIP needs root to make a file of another user"; return 0; }
	: > "$TMP/theirs"
	chown 65534 "$TMP/theirs"
	UTRACE_EVENTS=foo_bar_with_fn UTRACE_PRINT="$TMP/theirs" "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ ! -s "$TMP/theirs" ] &&
	grep -q "refusing '$TMP/theirs': the file belongs to another user" "$TMP/err"
}
check "UTRACE_PRINT refuses a file another user made" print_other_user
done_testing
