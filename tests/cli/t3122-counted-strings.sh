#!/usr/bin/env bash
# String fetches (issue 30 item 4): the counted string :string[%REG] /
# :string[$argN] (utrace's; the kernel refuses it) records exactly the
# bytes a key that is not NUL-terminated has, and a NUL-terminated string
# of any length is recorded whole on the inline path (up to the inline
# writer's 112-byte record) and through record() beyond.
. "$(dirname "$0")/lib.sh"
PROG="$UTRACE_BUILD/tests/strings-prog"
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0"
cd "$TMP" || exit 1
cp "$PROG" prog
P="$TMP/prog"
K=$(nm prog | awk '$3 == "take_key" { print $1 }')

check "a counted string prints back as written" bash -c '
	[ "$("$UTRACE" probe "p:grp/key $1:take_key k=+0(%di):string[%si] l=+0(\$arg1):ustring[\$arg2]")" = \
	  "p:grp/key $1:0x$2 k=+0(%di):string[%si] l=+0(\$arg1):ustring[\$arg2]" ]' _ "$P" "$K"

# refused DEFINITION MESSAGE: exit 1 and that error line
refused() {
	"$UTRACE" probe "$1" > got.txt 2> got-err.txt
	local rc=$?
	cp got-err.txt "$TMP/err"
	[ "$rc" = 1 ] && [ ! -s got.txt ] &&
		[ "$(head -1 got-err.txt)" = "utrace probe: trace_uprobe: error: $2" ]
}
check "a string array stays refused with the kernel's text" \
	refused "p:g/e $P:take_key k=+0(%di):string[3]" "String array is not supported"
check "a register count on a number type stays the kernel's refusal" \
	refused "p:g/e $P:take_key k=+0(%di):u32[%si]" "Invalid array size"
check "a count that is not a register is refused" \
	refused "p:g/e $P:take_key k=+0(%di):string[\$stack1]" \
	"String length must be %REG or \$arg1..\$arg6"
check "a bad count register is refused" \
	refused "p:g/e $P:take_key k=+0(%di):string[%rsi]" "Invalid register name"

check "keys and strings recorded: exactly the program's bytes" bash -c '
	"$UTRACE" record -o k.dat \
		--probe "p:grp/key take_key k=+0(%di):string[%si] n=%si:u64" \
		--probe "p:grp/str take_str s=+0(%di):string" \
		-- ./prog > want.txt 2> rec-err.txt || { cat rec-err.txt >&2; exit 1; }
	"$UTRACE" script -i k.dat 2> script-err.txt |
		sed -n "s/^.* \(key\|str\): ([^)]*) /\1: /p" > got.txt &&
	[ "$(wc -l < want.txt)" -gt 300 ] && diff -u want.txt got.txt >&2'
check "the \$argN form records the same" bash -c '
	"$UTRACE" record -o a.dat \
		--probe "p:grp/key take_key k=+0(\$arg1):string[\$arg2] n=\$arg2:u64" \
		-- ./prog > /dev/null 2> rec-err.txt || { cat rec-err.txt >&2; exit 1; }
	"$UTRACE" script -i a.dat | sed -n "s/^.* key: ([^)]*) /key: /p" > got-a.txt &&
	grep "^key: " want.txt > want-a.txt && diff -u want-a.txt got-a.txt >&2'
check "numbers of every width between two strings: each field its own" bash -c '
	"$UTRACE" record -o m.dat \
		--probe "p:grp/mix take_key a=%si:u8 k=+0(%di):string[%si] b=%si:u16 s=+0(%di):string[\$arg2] c=%si:x32" \
		-- ./prog > /dev/null 2> rec-err.txt || { cat rec-err.txt >&2; exit 1; }
	"$UTRACE" script -i m.dat | sed -n "s/^.* mix: ([^)]*) //p" > got-m.txt &&
	sed -n "s/^key: k=\(.*\) n=\([0-9]*\)$/\2 \1/p" want.txt |
		while read -r n k; do
			printf "a=%d k=%s b=%d s=%s c=0x%x\n" $((n & 255)) "$k" $((n & 65535)) "$k" "$n"
		done > want-m.txt &&
	[ -s want-m.txt ] && diff -u want-m.txt got-m.txt >&2'
check "a filter on the string events (run on the record in place)" bash -c '
	"$UTRACE" record -o f.dat --filter "grp:key:n < 20 && k != \"foo\"" \
		--probe "p:grp/key take_key k=+0(%di):string[%si] n=%si:u64" \
		-- ./prog > /dev/null 2> rec-err.txt || { cat rec-err.txt >&2; exit 1; }
	"$UTRACE" script -i f.dat | sed -n "s/^.* \(key\): ([^)]*) /\1: /p" > got-f.txt &&
	awk "/^key: / { n = \$NF; sub(\"n=\", \"\", n); if (n + 0 < 20 && \$2 != \"k=\\\"foo\\\"\") print }" \
		want.txt > want-f.txt &&
	[ -s want-f.txt ] && diff -u want-f.txt got-f.txt >&2'
check "the key running into the unmapped page is the one (fault)" bash -c '
	grep -c "(fault)" got.txt | grep -qx 1'
done_testing
