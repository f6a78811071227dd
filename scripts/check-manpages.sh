#!/bin/sh
# SPDX-License-Identifier: MIT
# Every function of an installed API header is in its man page:
#   include/utrace/utrace.h  -> docs/libutrace.3
#   include/utrace/reader.h  -> docs/libutrace-reader.3
# Prints the missing ones and fails; run by `meson test --suite docs`.
# Usage: check-manpages.sh [SOURCE_ROOT]
set -u
root=${1:-$(dirname "$0")/..}
status=0

# The functions a header declares: names utrace_* (not the internal
# utrace__*) followed by '(' in a declaration that starts a line, comments
# and preprocessor lines left out.
functions() {
	sed -e 's,/\*.*\*/,,g' "$1" |
	awk '/\/\*/ { c = 1 } !c && !/^#/ && /^[a-z]/ { print } /\*\// { c = 0 }' |
	grep -oE '\butrace_[a-z0-9][a-z0-9_]*[[:space:]]*\(' | tr -d '( \t' | sort -u
}

check() {
	header=$root/include/utrace/$1
	page=$root/docs/$2
	n=0
	for f in $(functions "$header"); do
		n=$((n + 1))
		if ! grep -qw -- "$f" "$page"; then
			echo "check-manpages: '$f' of utrace/$1 is not in docs/$2" >&2
			status=1
		fi
	done
	if [ "$n" -eq 0 ]; then
		echo "check-manpages: found no function in utrace/$1" >&2
		status=1
	fi
	echo "check-manpages: utrace/$1: $n functions checked against docs/$2"
}

check utrace.h libutrace.3
check reader.h libutrace-reader.3
exit $status
