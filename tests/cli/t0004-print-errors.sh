#!/usr/bin/env bash
# The traced program comes first: a bad UTRACE_PRINT, or a reader that went
# away, never stops it.
. "$(dirname "$0")/lib.sh"

bad_path() {
	UTRACE_EVENTS='*:*' UTRACE_PRINT=/nonexistent/dir/trace.txt "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ "$(cat "$TMP/err")" = "utrace: UTRACE_PRINT: cannot open '/nonexistent/dir/trace.txt': No such file or directory; events are not printed" ] &&
	grep -q "plain probe saw 10" "$TMP/out"
}
check "unopenable UTRACE_PRINT: one warning, program runs" bad_path

closed_pipe() {
	python3 - "$SAMPLE" <<'PY'
import os, subprocess, sys
r, w = os.pipe()
os.close(r)                     # nobody will ever read: writes get EPIPE
env = dict(os.environ, UTRACE_EVENTS="*:*", UTRACE_PRINT="stderr")
p = subprocess.run([sys.argv[1]], stderr=w, stdout=subprocess.PIPE, env=env)
sys.exit(0 if p.returncode == 0 and b"plain probe saw 10" in p.stdout else 1)
PY
}
check "stderr is a pipe without reader: no SIGPIPE, exit 0" closed_pipe

full_disk() {
	[ -w /dev/full ] || return 0
	UTRACE_EVENTS='*:*' UTRACE_PRINT=/dev/full "$SAMPLE" > "$TMP/out" 2> "$TMP/err" &&
	[ "$(grep -c '^utrace: cannot write to' "$TMP/err")" -eq 1 ] &&
	grep -q "No space left on device; event printing stopped" "$TMP/err" &&
	grep -q "plain probe saw 10" "$TMP/out"
}
check "write errors: said once, printing stops, program runs" full_disk
done_testing
