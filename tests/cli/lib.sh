# SPDX-License-Identifier: MIT
# Shared helpers of the end-to-end tests (after git's t/test-lib.sh).
# Each tNNNN-*.sh sources this, runs checks with 'check', and ends with
# 'done_testing'.  UTRACE_BUILD and UTRACE_SRC come from meson.
set -u
: "${UTRACE_BUILD:?run through meson test}"
: "${UTRACE_SRC:?run through meson test}"
UTRACE="$UTRACE_BUILD/tools/utrace/utrace"
SAMPLE="$UTRACE_BUILD/samples/sample"
TMP=$(mktemp -d "${TMPDIR:-/tmp}/utrace-cli.XXXXXX")
trap 'rm -rf "$TMP"' EXIT
unset UTRACE_EVENTS UTRACE_PRINT UTRACE_FILTER
n=0
failed=0

check() {
	local name=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $name"
	else
		echo "not ok $n - $name"
		# what the failing step said, for the log
		[ -s "$TMP/err" ] && sed 's/^/# /' "$TMP/err" | tail -n 30
		failed=$((failed + 1))
	fi
}

# same FILE EXPECTED-FILE: compare, showing the difference
same() {
	if ! diff -u "$2" "$1" >&2; then
		return 1
	fi
}

# Trace lines without the parts that change from run to run: pid, CPU and
# timestamp ("            comm-pid     [cpu] ..... sec.usec: rest").
normalize() {
	sed -E 's/^ *([^ ]+)-[0-9]+ +\[[0-9]{3}\] (.....) +[0-9]+\.[0-9]{6}: /\1-PID [CPU] \2 TIME: /' "$@"
}

# A check that depends on timing is made deterministic, never retried: it
# waits for what it needs (a file, a line, a count) instead of sleeping a
# guessed time.  wait_for CMD...: run CMD every 0.05 s until it succeeds
# (status 0), or give up with status 1 after 30 s, a deadline far beyond
# what a loaded machine or a sanitizer build needs.  Exported, for the
# checks that run in 'bash -c'.
wait_for() {
	local end=$((SECONDS + 30))
	until "$@"; do
		[ "$SECONDS" -ge "$end" ] && return 1
		sleep 0.05
	done
}
# catches PID SIGNUM: PID runs its own program and catches signal SIGNUM.
# (Not yet the shell's fork of a background command: until its exec that
# child catches most signals, SIGUSR1 too, and the program it becomes
# starts with none caught: t3085's agent died of a SIGUSR1 sent then.)
catches() {
	local m
	[ "$(readlink /proc/$1/exe 2> /dev/null)" != "$(readlink -f "$BASH")" ] &&
	m=$(awk '/^SigCgt:/ {print $2}' /proc/$1/status 2> /dev/null) && [ -n "$m" ] &&
	[ $(( (0x$m >> ($2 - 1)) & 1 )) = 1 ]
}
# has_lines FILE N [PATTERN]: FILE has at least N lines (matching PATTERN)
has_lines() {
	[ -e "$1" ] && [ "$(grep -c -- "${3:-}" "$1")" -ge "$2" ]
}
# log_lines FILE: the number of lines of the sample's --log FILE so far
# (each is a demo_request the program has fired)
log_lines() {
	if [ -e "$1" ]; then wc -l < "$1"; else echo 0; fi
}
# traceable PID: the agent of PID answers (its socket file appears once it
# listens, so the file alone would do; asking is surer)
traceable() {
	"$UTRACE" list -p "$1" > /dev/null 2>&1
}
# wait_traceable PID [STDERR-FILE]: wait_for traceable PID; if it never
# becomes traceable, say on stderr all that might tell why (is it alive,
# its threads and where they wait, the runtime directory, what `utrace
# list` answers, the program's own stderr), then fail
wait_traceable() {
	wait_for traceable "$1" && return 0
	{
		echo "# process $1 did not become traceable in 30 s"
		if [ -d "/proc/$1" ]; then
			local t
			echo "# alive, $(ls "/proc/$1/task" | wc -l) threads:"
			for t in /proc/"$1"/task/*; do
				echo "#   $(cat "$t/comm" 2> /dev/null) state $(cut -d" " -f3 "$t/stat" 2> /dev/null) wchan $(cat "$t/wchan" 2> /dev/null)"
			done
		else
			echo "# it is gone"
		fi
		echo "# runtime directory ${UTRACE_RUNTIME_DIR:-(default)}:"
		ls -la "${UTRACE_RUNTIME_DIR:-/tmp/utrace-$(id -u)}" 2>&1 | sed 's/^/#   /'
		"$UTRACE" list -p "$1" 2>&1 | sed 's/^/# list: /'
		[ -n "${2:-}" ] && [ -e "$2" ] && sed 's/^/# its stderr: /' "$2"
	} >&2
	return 1
}
export UTRACE
export -f wait_for has_lines log_lines traceable wait_traceable catches

# skip_all REASON: the whole test is skipped, saying why (TAP)
skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}
# need_fuse: skip unless this user can mount FUSE filesystems
need_fuse() {
	[ -c /dev/fuse ] && [ -r /dev/fuse ] && [ -w /dev/fuse ] ||
		skip_all "no usable /dev/fuse (FUSE is not available here)"
	command -v fusermount3 > /dev/null ||
		skip_all "fusermount3 is missing (Debian: apt-get install fuse3)"
}

# tmux_unusable: why a test cannot drive a terminal through tmux (on
# stdout), or fail when it can
tmux_unusable() {
	if ! command -v tmux > /dev/null; then
		echo "tmux is not installed"
	elif ! { tmux -S "$TMP/probe.sock" -f /dev/null new-session -d -s probe 'sleep 60' 2> /dev/null &&
		 tmux -S "$TMP/probe.sock" kill-server 2> /dev/null; }; then
		echo "tmux cannot run here"
	else
		return 1
	fi
}

# mount_setup: a runtime directory of the test's own (only its own
# processes are seen), $MNT to mount on, and an exit trap that kills the
# processes the test adds to pids, unmounts $MNT and removes $TMP
mount_setup() {
	export UTRACE_RUNTIME_DIR="$TMP/run"
	MNT="$TMP/mnt"
	mkdir -p "$MNT"
	pids=()
	trap mount_cleanup EXIT
}
# mount_demo PROGRAM ARGS...: start PROGRAM (its stderr in $TMP/demo.err)
# under mount_setup, wait until it is traceable, mount the tree (skip
# without), and set P (its pid), D (its directory), E (D/events)
mount_demo() {
	need_fuse
	mount_setup
	mkdir -m 700 "$UTRACE_RUNTIME_DIR"
	"$@" > /dev/null 2> "$TMP/demo.err" &
	P=$!
	pids+=("$P")
	wait_traceable "$P" "$TMP/demo.err"
	"$UTRACE" mount "$MNT" 2> "$TMP/err" || skip_all "no mount here ($(head -n 1 "$TMP/err"))"
	D="$MNT/$P"
	E="$D/events"
}
mount_cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null
	done
	if grep -q " $MNT fuse" /proc/self/mounts 2> /dev/null; then
		fusermount3 -u "$MNT" 2> /dev/null || umount -l "$MNT" 2> /dev/null
	fi
	rm -rf "$TMP"
}

# trigger_demo: start tests/cli/trigger-demo.c under mount_setup (its
# commands through the FIFO $TMP/ff, its "done K" lines in $TMP/out, its
# stderr in $TMP/demo.err), wait until it is traceable, set P (its pid)
# and k (the commands sent so far).  send CMD: have it run CMD and wait
# until it has.  trig EVENT [COMMAND]: utrace trigger -p $P, its stderr
# in $TMP/err.
trigger_demo() {
	mount_setup
	mkdir -m 700 "$UTRACE_RUNTIME_DIR"
	mkfifo "$TMP/ff"
	"$UTRACE_BUILD/tests/trigger-demo" "$TMP/ff" "$TMP/out" > /dev/null 2> "$TMP/demo.err" &
	P=$!
	pids+=("$P")
	wait_traceable "$P" "$TMP/demo.err"
	k=0
}
send() {
	echo "$1" > "$TMP/ff"
	k=$((k + 1))
	wait_for grep -qx "done $k" "$TMP/out"
}
trig() {
	"$UTRACE" trigger -p "$P" "$@" 2> "$TMP/err"
}

# stack_lines TEXT: one line per call stack of a `utrace script` or
# `utrace show` text, its frames' function names ('?' for an address
# without one, MISSING for a stack whose definition the recording lacks);
# stacks FILE: stack_lines of `utrace script -i FILE`
stack_lines() {
	awk '/<user stack trace>$/ { if (s != "") print s; s = "="; next }
	     s != "" && /^ => / { f = $2; if (f ~ /^</) f = "?"; else if (f ~ /^\[stack/) f = "MISSING"; else sub(/\+0x.*/, "", f); s = s " " f; next }
	     s != "" { print s; s = "" }
	     END { if (s != "") print s }' "$1" | sed 's/^= //'
}
stacks() {
	"$UTRACE" script -i "$1" | stack_lines /dev/stdin
}
export -f stack_lines stacks

# kernel_source PATH...: set KSRC to a directory holding PATH... of the kernel's
# source tree, taken once per build directory out of Debian's linux-source
# tarball (scripts/setup-debian.sh --tests installs it); skip the whole
# test when there is none
kernel_source() {
	local tarball dir=$UTRACE_BUILD/kernel-source p missing=
	for p in "$@"; do [ -e "$dir/$p" ] || missing=1; done
	if [ -n "$missing" ]; then
		tarball=$(ls /usr/src/linux-source-*.tar.xz 2> /dev/null | sort -V | tail -n 1)
		[ -n "$tarball" ] || skip_all "no kernel source here (Debian: apt-get install linux-source; scripts/setup-debian.sh --tests installs it)"
		rm -rf "$dir.new" && mkdir -p "$dir.new" || skip_all "cannot make $dir.new"
		for p in "$@"; do
			tar -xJf "$tarball" -C "$dir.new" --strip-components=1 --wildcards "*/$p" ||
				skip_all "no $p in $tarball"
		done
		mkdir -p "$dir" && cp -a "$dir.new"/. "$dir"/ && rm -rf "$dir.new"
	fi
	KSRC=$dir
}

# kernel_tracing: whether kernel events can be recorded here (root, a
# tracefs with instances and sched_switch)
kernel_tracing() {
	[ "$(id -u)" -eq 0 ] && [ -w /sys/kernel/tracing/instances ] &&
	[ -d /sys/kernel/tracing/events/sched/sched_switch ]
}
# record_kernel_sample FILE: the sample's events with kernel events
# (sched_switch, sched_process_fork) in FILE
record_kernel_sample() {
	"$UTRACE" record -e sched:sched_switch -e sched:sched_process_fork -e "sample-trace:*" \
		-o "$1" -- "$SAMPLE" > /dev/null 2> "$TMP/err" &&
	"$UTRACE" script -i "$1" 2> /dev/null | grep -q " sched_switch: "
}

# convert_corpus FORMAT OUT READER...: utrace convert --format FORMAT of
# each file of the reader's corrupt-file corpus (tests/reader/mkfile.c)
# to OUT says what the reader says (its first line names the file), exits
# 0 or 1, never crashes, and READER... OUT reads what it wrote
convert_corpus() {
	local format=$1 out=$2 f st bad=0
	shift 2
	"$UTRACE_BUILD/tests/reader/reader-mkfile" corrupt "$TMP/corrupt" > /dev/null || return 1
	for f in "$TMP"/corrupt/*.dat; do
		rm -rf "$out"
		"$UTRACE" convert -i "$f" -o "$out" --format "$format" > /dev/null 2> "$TMP/cerr"
		st=$?
		if [ "$st" -gt 1 ]; then
			echo "# ${f##*/}: convert exit status $st" >&2; bad=1; continue
		fi
		if [ "$st" -eq 1 ] && ! head -1 "$TMP/cerr" | grep -qF "utrace: '$f': "; then
			echo "# ${f##*/}: the first line does not name the file:" >&2
			sed 's/^/#   /' "$TMP/cerr" >&2; bad=1
		fi
		# (60 s: a hang is a failure, but a loaded machine is no hang)
		if [ -e "$out" ] && ! timeout 60 "$@" "$out" < /dev/null > /dev/null 2> "$TMP/cerr"; then
			echo "# ${f##*/}: '$*' cannot read the export:" >&2
			sed 's/^/#   /' "$TMP/cerr" | head -5 >&2; bad=1
		fi
	done
	return $bad
}

done_testing() {
	echo "1..$n"
	[ "$failed" -eq 0 ]
	exit $?
}

# A sanitizer build (libutrace linked with ASan's or TSan's runtime): its
# allocator's quarantine and shadow memory change resident sizes, and its
# instrumented frames what a stack walk meets.
sanitizer_build() {
	ldd "$UTRACE_BUILD/lib/libutrace.so.0" 2> /dev/null | grep -q 'libasan\|libtsan'
}

# The test OTLP collector (otlp-server.py): otlp_start NAME MODE
# [SERVER-OPTION...] starts one writing $TMP/NAME.out (each request's
# attempts in NAME.out.attempts) and sets URL; otlp_stop ends it.  Call
# otlp_stop in the test's EXIT trap.
OTLP_PID=
otlp_start() {
	local name=$1
	shift
	rm -f "$TMP/$name.port" "$TMP/$name.out" "$TMP/$name.out.attempts"
	python3 "$UTRACE_SRC/tests/cli/otlp-server.py" --port-file "$TMP/$name.port" \
		--out "$TMP/$name.out" --mode "$@" > "$TMP/$name.log" 2>&1 &
	OTLP_PID=$!
	wait_for test -s "$TMP/$name.port" || return 1
	URL="http://127.0.0.1:$(cat "$TMP/$name.port")"
	touch "$TMP/$name.out" "$TMP/$name.out.attempts"
}
otlp_stop() {
	[ -n "$OTLP_PID" ] && kill "$OTLP_PID" 2> /dev/null && wait "$OTLP_PID" 2> /dev/null
	OTLP_PID=
	return 0
}

# fifo_start PROG [ARG...]: PROG (a function tracers' program: tests/
# fprofile-prog, fgraph-prog) with libutrace preloaded, driven a line at a
# time through a FIFO: P is its pid; fsend LINE writes one and waits for
# its "ok".  After mount_setup.
fifo_start() {
	mkdir -m 700 "$UTRACE_RUNTIME_DIR"
	mkfifo "$TMP/in"
	LD_PRELOAD="$UTRACE_BUILD/lib/libutrace.so.0" "$@" \
		< "$TMP/in" > "$TMP/out" 2> "$TMP/demo.err" &
	P=$!
	pids+=("$P")
	exec 3> "$TMP/in"
	k=0
	wait_traceable "$P" "$TMP/demo.err"
}
fsend() {
	echo "$1" >&3
	k=$((k + 1))
	wait_for has_lines "$TMP/out" "$k" "^ok"
}
