#!/usr/bin/env bash
# utrace --help, --version, and bad invocations.
. "$(dirname "$0")/lib.sh"

check "--help exits 0 and describes the environment" \
	bash -c '"$0" --help > "$1/out" && grep -q UTRACE_EVENTS "$1/out" && grep -q "^usage: utrace" "$1/out"' "$UTRACE" "$TMP"
check "--version prints the version" \
	bash -c '[ "$("$0" --version)" = "utrace 0.1.0" ]' "$UTRACE"
check "no arguments: usage on stderr, exit 129" \
	bash -c '"$0" > /dev/null 2> "$1/err"; [ $? -eq 129 ] && grep -q "^usage: utrace" "$1/err"' "$UTRACE" "$TMP"
check "unknown command: one clear line, exit 129" \
	bash -c '"$0" frobnicate 2> "$1/err"; [ $? -eq 129 ] && [ "$(cat "$1/err")" = "utrace: '\''frobnicate'\'' is not a utrace command; see '\''utrace --help'\''" ]' "$UTRACE" "$TMP"
done_testing
