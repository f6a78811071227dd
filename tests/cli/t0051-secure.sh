#!/usr/bin/env bash
# A set-user-ID or set-group-ID program linked with libutrace, run by an
# ordinary user (issue 27, item 3): it ignores every UTRACE_* variable and
# the runtime directory's variables of its caller (AT_SECURE), says so once,
# and only root may control it.
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] && command -v setpriv > /dev/null ||
	skip_all "needs root to make set-user-ID copies and run them as another user"
SECURE="$UTRACE_BUILD/tests/sample-secure"
# LeakSanitizer stops the world with ptrace, which a set-user-ID process
# (not dumpable) refuses: it would only say so at each exit
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
pids=()
made=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	for d in "${made[@]}"; do rm -rf "$d"; done
	rm -rf "$TMP"
}
trap cleanup EXIT
as_nobody() { exec setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }  # in ( ) or &

# The copies: set-user-ID root, set-group-ID to a group nobody is not in,
# and a plain one (what the caller may do anyway, to compare with).
chmod 755 "$TMP"
mkdir -m 755 "$TMP/bin" "$TMP/rootdir"
mkdir -m 1777 "$TMP/pub"
cp "$SECURE" "$TMP/bin/suid" && chown 0:0 "$TMP/bin/suid" && chmod 4755 "$TMP/bin/suid"
cp "$SECURE" "$TMP/bin/sgid" && chown 0:4246 "$TMP/bin/sgid" && chmod 2755 "$TMP/bin/sgid"
cp "$SECURE" "$TMP/bin/plain" && chmod 755 "$TMP/bin/plain"
# the caller's own runtime directory
mkdir -m 700 "$TMP/nrun" && chown 65534:65534 "$TMP/nrun"
export UTRACE_RUNTIME_DIR="$TMP/nrun"
unset XDG_RUNTIME_DIR

# Does this filesystem honour the bits (not mounted nosuid)?
(as_nobody "$TMP/bin/suid" --run 5) > /dev/null 2>&1 &
p=$!
pids+=("$p")
wait_for grep -qx suid "/proc/$p/comm"     # (setpriv first, root)
uids=$(awk '/^Uid:/ { print $2, $3 }' "/proc/$p/status")
kill $p; wait $p 2> /dev/null
[ "$uids" = "65534 0" ] || skip_all "set-user-ID is not honoured under $TMP (Uid: $uids)"

echo "a root-only line" > "$TMP/rootdir/secret"
chmod 600 "$TMP/rootdir/secret"
cp "$TMP/rootdir/secret" "$TMP/secret.before"

check "UTRACE_PRINT makes no file where the caller cannot; one line says why" bash -c '
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_EVENTS="sample-trace:*" \
		UTRACE_PRINT="$0/rootdir/made" "$0/bin/suid" > /dev/null 2> "$0/e1"
	cat "$0/e1" >&2
	[ ! -e "$0/rootdir/made" ] &&
	[ "$(grep -c "set-user-ID or set-group-ID program: the UTRACE_\* variables are ignored, and only root may control it" "$0/e1")" = 1 ] &&
	[ "$(wc -l < "$0/e1")" = 1 ]' "$TMP"

check "UTRACE_PRINT appends nothing to a root-only file" bash -c '
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_EVENTS="sample-trace:*" \
		UTRACE_PRINT="$0/rootdir/secret" "$0/bin/suid" > /dev/null 2> /dev/null
	cmp "$0/rootdir/secret" "$0/secret.before"' "$TMP"

check "set-group-ID too: UTRACE_PRINT=stderr prints no event" bash -c '
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_EVENTS="sample-trace:*" \
		UTRACE_PRINT=stderr "$0/bin/sgid" > /dev/null 2> "$0/e2"
	cat "$0/e2" >&2
	! grep -q "foo_bar:" "$0/e2" && grep -q "set-user-ID or set-group-ID" "$0/e2"' "$TMP"

check "UTRACE_PROBES is ignored (the plain copy, as the caller may, fires the probe)" bash -c '
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_EVENTS="sec:*" \
		UTRACE_PROBES="p:sec/snooze libc.so.6:nanosleep" UTRACE_PRINT=stderr \
		"$0/bin/plain" --run 0.2 > /dev/null 2> "$0/e3"
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_EVENTS="sec:*" \
		UTRACE_PROBES="p:sec/snooze libc.so.6:nanosleep" UTRACE_PRINT=stderr \
		"$0/bin/suid" --run 0.2 > /dev/null 2> "$0/e4"
	grep -c " snooze: " "$0/e3" >&2; head -3 "$0/e4" >&2
	grep -q " snooze: " "$0/e3" && ! grep -q " snooze: " "$0/e4"' "$TMP"

check "the caller's recorder (UTRACE_RECORD) gets nothing from either" bash -c '
	for p in suid sgid; do
		setpriv --reuid=65534 --regid=65534 --clear-groups "$1" record -o "$0/pub/r.dat" \
			-- "$0/bin/$p" --run 0.2 > /dev/null 2> "$0/e5"
		cat "$0/e5" >&2
		grep -q ", 0 processes," "$0/e5" &&
		grep -q "has no utrace events (it does not use libutrace)" "$0/e5" || exit 1
	done' "$TMP" "$UTRACE"

# Control: the caller's runtime directory is not used; the process listens
# in its effective user's default one, and answers root only.
for d in /tmp/utrace-0 /tmp/utrace-65534; do
	[ -e "$d" ] || made+=("$d")
done
(as_nobody "$TMP/bin/sgid" --run 0) > /dev/null 2> "$TMP/sgid.err" &
G=$!
pids+=("$G")
(as_nobody "$TMP/bin/suid" --run 0) > /dev/null 2> "$TMP/suid.err" &
U=$!
pids+=("$U")
check "root controls both (its own lookup finds them)" \
	wait_for bash -c '"$0" list -p "$1" > /dev/null 2>&1 && "$0" list -p "$2" > /dev/null 2>&1' \
	"$UTRACE" "$G" "$U"
check "neither listens in the caller's runtime directory" bash -c '
	ls -la "$0" >&2; [ -z "$(find "$0" -type s)" ]' "$TMP/nrun"
check "the caller cannot control the set-group-ID one, which runs as the caller" bash -c '
	: > "$2/e6"
	for unset in "" "-u UTRACE_RUNTIME_DIR"; do
		setpriv --reuid=65534 --regid=65534 --clear-groups env $unset \
			"$0" list -p "$1" > "$2/l1" 2>> "$2/e6" && exit 1
		setpriv --reuid=65534 --regid=65534 --clear-groups env $unset \
			"$0" enable -p "$1" "demo:*" > /dev/null 2>> "$2/e6" && exit 1
		[ ! -s "$2/l1" ] || exit 1
	done
	cat "$2/e6" >&2' "$UTRACE" "$G" "$TMP"
check "the set-group-ID one said once why, and that it refused the caller" bash -c '
	cat "$0" >&2
	[ "$(grep -c "set-user-ID or set-group-ID program" "$0")" = 1 ] &&
	grep -q "control: refused a connection from pid [0-9]*, uid 65534" "$0"' "$TMP/sgid.err"

done_testing
