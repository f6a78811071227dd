#!/bin/bash
# The conformance scripts against a utrace mount of the sample program,
# compared with the kernel's transcripts of tests/ctl/expected (which the
# ctl-kernel test checks against this machine's kernel), less the known
# differences of tests/ctl/utrace.known.  Run by meson (UTRACE_BUILD).
set -u
: "${UTRACE_BUILD:?run through meson test}"
here=$(cd "$(dirname "$0")" && pwd)
U=$UTRACE_BUILD/tools/utrace/utrace
SAMPLE=$UTRACE_BUILD/samples/sample
if [ ! -e /dev/fuse ] || ! command -v fusermount3 > /dev/null; then
	echo "SKIP: no /dev/fuse or fusermount3"; exit 77
fi
tmp=$(mktemp -d /tmp/utrace-ctlm.XXXXXX)
export UTRACE_RUNTIME_DIR=$tmp/run
mkdir "$tmp/mnt"
p=""
cleanup() {
	[ -n "$p" ] && kill "$p" 2>/dev/null
	mountpoint -q "$tmp/mnt" && "$U" mount -u "$tmp/mnt"
	rm -rf "$tmp"
}
trap cleanup EXIT
# The sample logs each demo_request it fires: utrace.env's TRIGGER waits on it.
export SAMPLE_LOG=$tmp/sample.log
"$SAMPLE" --run 0 --log "$SAMPLE_LOG" > /dev/null 2> "$tmp/sample.err" &
p=$!
# ready once its agent answers (the socket file appears before listen())
for _ in $(seq 600); do "$U" list -p "$p" > /dev/null 2>&1 && break; sleep 0.05; done
if ! "$U" mount "$tmp/mnt" 2> "$tmp/mount.err"; then
	echo "SKIP: cannot mount: $(cat "$tmp/mount.err")"; exit 77
fi
"$here/run.sh" --env "$here/utrace.env" --known "$here/utrace.known" \
	--expect-dir "$here/expected" "dir:$tmp/mnt/$p"
rc=$?
if grep -E "Sanitizer|runtime error" "$tmp/sample.err"; then rc=1; fi
exit $rc
