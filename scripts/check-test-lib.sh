#!/bin/sh
# tests/cli/lib.sh defines each shell function once, and no test script
# defines one of lib.sh's names again: a second "send" in lib.sh (the last
# definition wins) once sent every trigger test's commands to a file
# descriptor none of them had open.
cd "${1:?usage: check-test-lib.sh SOURCE_ROOT}/tests/cli" || exit 1
names() { grep -oE '^[A-Za-z_][A-Za-z0-9_]*\(\)' "$1" | sort; }
bad=0
for n in $(names lib.sh | uniq -d); do
	echo "tests/cli/lib.sh: $n defined more than once"
	bad=1
done
names lib.sh | uniq > "${TMPDIR:-/tmp}/check-test-lib.$$"
for f in t*.sh; do
	for n in $(names "$f" | comm -12 - "${TMPDIR:-/tmp}/check-test-lib.$$"); do
		echo "tests/cli/$f: $n is lib.sh's, defined again"
		bad=1
	done
done
rm -f "${TMPDIR:-/tmp}/check-test-lib.$$"
exit $bad
