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
done_testing
