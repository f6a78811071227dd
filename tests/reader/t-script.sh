#!/usr/bin/env bash
# utrace script on files of tests/reader/mkfile.c: the golden outputs,
# event selection, inputs, usage errors.
. "$UTRACE_SRC/tests/cli/lib.sh"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
G="$UTRACE_SRC/tests/reader"
"$MKFILE" basic "$TMP/basic.dat" || exit 1
"$MKFILE" sample "$TMP/sample.dat" "$TMP/sample.expected" || exit 1
LOST="utrace: '$TMP/basic.dat': at least 12 events lost (see the [LOST] lines)"

golden() {
	local name=$1
	shift
	"$UTRACE" script -i "$TMP/basic.dat" "$@" > "$TMP/out" 2> "$TMP/err" &&
	same "$TMP/out" "$G/$name" &&
	[ "$(cat "$TMP/err")" = "$LOST" ]
}
check "two processes, TSC time, lost events: basic.golden" golden basic.golden
check "--fields: basic-fields.golden" golden basic-fields.golden --fields
check "--json: basic-json.golden" golden basic-json.golden --json

json_parses() {
	command -v python3 > /dev/null || return 0
	"$UTRACE" script -i "$TMP/basic.dat" --json 2> /dev/null |
		python3 -c 'import json, sys; [json.loads(l) for l in sys.stdin]'
}
check "--json lines are JSON" json_parses

sample() {
	"$UTRACE" script -i "$TMP/sample.dat" > "$TMP/out" 2> "$TMP/err" &&
	same "$TMP/out" "$TMP/sample.expected" && [ ! -s "$TMP/err" ]
}
check "every sample and kernel-copy event prints as libutrace prints it" sample

select_one() {
	"$UTRACE" script -i "$TMP/basic.dat" -e utest:utest_cond > "$TMP/out" 2> /dev/null &&
	grep -E ': (utest_cond:|\[LOST)' "$G/basic.golden" > "$TMP/want" &&
	same "$TMP/out" "$TMP/want"
}
check "-e sys:event keeps that event (and the lost-event lines)" select_one

select_not() {
	"$UTRACE" script -i "$TMP/basic.dat" -e '!utest_fn' -e '!utest:utest_cond' \
		> "$TMP/out" 2> /dev/null &&
	grep -vE ': (utest_cond|utest_fn):' "$G/basic.golden" > "$TMP/want" &&
	same "$TMP/out" "$TMP/want"
}
check "-e '!event' leaves events out; -e repeats" select_not

select_list() {
	"$UTRACE" script -i "$TMP/basic.dat" -e 'utest:*,!utest_simple utest_fn' \
		> "$TMP/out" 2> /dev/null &&
	grep -vE ': utest_simple:' "$G/basic.golden" > "$TMP/want" &&
	same "$TMP/out" "$TMP/want"
}
check "-e takes a list, applied in order" select_list

select_none() {
	"$UTRACE" script -i "$TMP/basic.dat" -e nosuch > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 1 ] && [ ! -s "$TMP/out" ] &&
	grep -qx "utrace: no event in '$TMP/basic.dat' matches 'nosuch'" "$TMP/err"
}
check "-e matching nothing: an error, status 1" select_none

default_input() {
	cp "$TMP/basic.dat" "$TMP/utrace.dat" &&
	(cd "$TMP" && "$UTRACE" script > "$TMP/out" 2> /dev/null) &&
	same "$TMP/out" "$G/basic.golden"
}
check "the default input is utrace.dat" default_input

from_pipe() {
	cat "$TMP/basic.dat" | "$UTRACE" script -i /dev/stdin > "$TMP/out" 2> /dev/null &&
	same "$TMP/out" "$G/basic.golden"
}
check "reads a pipe" from_pipe

help() {
	"$UTRACE" script --help > "$TMP/out" 2> "$TMP/err" && [ ! -s "$TMP/err" ] &&
	grep -q '^usage: utrace script ' "$TMP/out" &&
	"$UTRACE" script -h | cmp -s - "$TMP/out"
}
check "--help and -h: usage on stdout, status 0" help

usage() {
	local want=$1
	shift
	"$UTRACE" script "$@" > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 129 ] && [ ! -s "$TMP/out" ] && [ "$(cat "$TMP/err")" = "$want" ]
}
check "unknown option: 129 and one line" usage \
	"utrace script: unknown option '--frob'; see 'utrace script --help'" --frob
check "option without its value: 129" usage \
	"utrace script: option '-i' needs a value; see 'utrace script --help'" -i
check "an argument: 129" usage \
	"utrace script: unexpected argument 'x.dat'; see 'utrace script --help'" x.dat
check "--fields with --json: 129" usage \
	"utrace script: --fields and --json do not go together; see 'utrace script --help'" \
	--fields --json
check "a bad -e: 129" usage \
	"utrace script: bad event specification in 'a,!'; see 'utrace script --help'" -e 'a,!'

missing() {
	"$UTRACE" script -i "$TMP/nope.dat" > "$TMP/out" 2> "$TMP/err"
	[ $? -eq 1 ] && [ ! -s "$TMP/out" ] &&
	[ "$(cat "$TMP/err")" = "utrace: cannot read '$TMP/nope.dat': No such file or directory" ]
}
check "a missing file: status 1, one line" missing

full_disk() {
	[ -w /dev/full ] || return 0
	"$UTRACE" script -i "$TMP/basic.dat" > /dev/full 2> "$TMP/err"
	[ $? -eq 1 ] && grep -q "^utrace: cannot write the output: " "$TMP/err"
}
check "a failed write: status 1 and a message" full_disk
done_testing
