#!/usr/bin/env bash
# `ps`, `-a` and the mount take the processes of the runtime directory in
# scope, root's too; the machine-wide view is asked for with --all-users
# (issue 27, item 8).
. "$(dirname "$0")/lib.sh"

[ "$(id -u)" = 0 ] || skip_all "needs root: the machine-wide view is root's"
pids=()
made=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	for d in "${made[@]}"; do rm -rf "$d"; done
	rm -rf "$TMP"
}
trap cleanup EXIT

# A root process in root's default directory (as any on the machine), and
# one in a private directory that XDG_RUNTIME_DIR points at.
unset UTRACE_RUNTIME_DIR
export XDG_RUNTIME_DIR="$TMP/xdg"
mkdir -m 700 "$XDG_RUNTIME_DIR"
[ -e /tmp/utrace-0 ] || made+=(/tmp/utrace-0)
env -u XDG_RUNTIME_DIR "$SAMPLE" --run 0 > /dev/null 2> "$TMP/out.err" &
OUT=$!
pids+=("$OUT")
"$SAMPLE" --run 0 > /dev/null 2> "$TMP/in.err" &
IN=$!
pids+=("$IN")
wait_traceable "$IN" "$TMP/in.err"
wait_for [ -S "/tmp/utrace-0/$OUT.sock" ] && wait_traceable "$OUT" "$TMP/out.err"

check "ps lists the private directory's process only" bash -c '
	"$0" ps > "$1/ps" 2> "$1/err"; cat "$1/ps" >&2
	grep -qE "^ *$2 sample " "$1/ps" && ! grep -qE "^ *$3 sample " "$1/ps"' \
	"$UTRACE" "$TMP" "$IN" "$OUT"
check "ps --all-users lists both" bash -c '
	"$0" ps --all-users > "$1/psa" 2> "$1/err"
	grep -qE "^ *$2 sample " "$1/psa" && grep -qE "^ *$3 sample " "$1/psa"' \
	"$UTRACE" "$TMP" "$IN" "$OUT"
check "a process named with -p is found wherever it listens (root)" bash -c '
	"$0" list -p "$1" | grep -qx demo:demo_tick' "$UTRACE" "$OUT"
check "enable -a switches on the private directory's process only" bash -c '
	"$0" enable -a "demo:demo_request" > /dev/null 2> "$1/err" &&
	"$0" list -p "$2" > /dev/null &&
	"$0" ps | grep -qE "^ *$2 sample +[0-9]+ +1 " &&
	"$0" ps --all-users | grep -qE "^ *$3 sample +[0-9]+ +0 " &&
	"$0" disable -a "demo:demo_request" 2>> "$1/err"' "$UTRACE" "$TMP" "$IN" "$OUT"
check "record -a attaches to the private directory's process only" bash -c '
	"$0" record -a -o "$1/a.dat" --duration 0.5 2> "$1/err"; st=$?
	cat "$1/err" >&2
	[ $st = 0 ] && grep -qE "pid $2 \(sample\)" "$1/err" && ! grep -qE "pid $3 " "$1/err"' \
	"$UTRACE" "$TMP" "$IN" "$OUT"
check "record -a --all-users takes both" bash -c '
	"$0" record --all-users -o "$1/b.dat" --duration 0.5 2> "$1/err"; st=$?
	[ $st = 0 ] && grep -qE "pid $2 \(sample\)" "$1/err" && grep -qE "pid $3 \(sample\)" "$1/err"' \
	"$UTRACE" "$TMP" "$IN" "$OUT"
check "--all-users is refused for another user, with one line" bash -c '
	setpriv --reuid=65534 --regid=65534 --clear-groups env UTRACE_RUNTIME_DIR=/nonexistent \
		"$0" ps --all-users > /dev/null 2> "$1/err"; st=$?
	cat "$1/err" >&2
	[ $st = 1 ] && grep -qx "utrace: --all-users: only root may see other users. processes" "$1/err"' \
	"$UTRACE" "$TMP"
check "--help of ps, record and top name --all-users" bash -c '
	"$0" ps --help | grep -q -- --all-users && "$0" record --help | grep -q -- --all-users &&
	"$0" top --help | grep -q -- --all-users && "$0" mount --help | grep -q -- --all-users' "$UTRACE"

if [ -c /dev/fuse ] && command -v fusermount3 > /dev/null; then
	mkdir "$TMP/mnt"
	if "$UTRACE" mount "$TMP/mnt" 2> "$TMP/err"; then
		check "the mount shows the private directory's process only" bash -c '
			ls "$0" >&2; [ -d "$0/$1" ] && [ ! -e "$0/$2" ]' "$TMP/mnt" "$IN" "$OUT"
		fusermount3 -u "$TMP/mnt"
		"$UTRACE" mount --all-users "$TMP/mnt" 2> "$TMP/err"
		check "the mount with --all-users shows both" bash -c '
			[ -d "$0/$1" ] && [ -d "$0/$2" ]' "$TMP/mnt" "$IN" "$OUT"
		fusermount3 -u "$TMP/mnt"
	else
		n=$((n + 1)); echo "ok $n # SKIP no mount here: $(head -n 1 "$TMP/err")"
	fi
else
	n=$((n + 1)); echo "ok $n # SKIP no FUSE here"
fi

done_testing
