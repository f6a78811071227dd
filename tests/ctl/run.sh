#!/bin/bash
# run.sh: run the ctl conformance scripts (tests/ctl/*.tc) against one or more tracefs-like
# directories and compare.
#
# usage: tests/ctl/run.sh [options] TARGET...
#   TARGET          kernel      a fresh instance instances/utrace-ctl-<pid> of this machine's
#                               tracefs (root; mounts tracefs if needed), events from kernel.env;
#                               the instance is removed at the end, also on failure or signal;
#                               instances.tc makes instances/utrace-ctl-<pid>-* beside it
#                               (removed the same way)
#                   dir:PATH    an already mounted directory (e.g. a utrace mount's DIR/<pid>/),
#                               events from the environment or --env FILE
#   --env FILE      source FILE (like kernel.env) for the dir: targets
#   --expect-dir D  compare every target's transcripts with D/<script>.out instead of with each other
#   --save-dir D    copy the transcripts to D/<target>/<script>.out
#   --test NAME     run only NAME.tc (repeatable)
#   --known FILE    known differences: before comparing, drop from both transcripts the lines
#                   matching one of FILE's extended regexes (one per line, '#' comments), with
#                   the '#   got/want' lines of a dropped 'not ok', and the TAP numbers
#   -v              print the full diff / failing TAP lines
#
# Results: one "PASS|FAIL|SKIP <what>" line per script; the last line is "N passed, N failed".
#   one target, no --expect-dir: a script passes when its own TAP checks all pass (exit 0)
#   two or more targets:         the first target is the reference; a script passes for each other
#                                target when the transcripts are identical
#   --expect-dir:                a script passes when the transcript equals the saved one
# Exit status: 0 all passed, 1 something failed, 77 everything was skipped, 2 usage error.
set -u
here=$(cd "$(dirname "$0")" && pwd)
expect_dir="" save_dir="" env_file="" known="" verbose=0 tests=() targets=()
while [ $# -gt 0 ]; do
	case $1 in
	--expect-dir) expect_dir=$(cd "$2" && pwd) || exit 2; shift 2 ;;
	--save-dir) save_dir=$2; shift 2 ;;
	--env) env_file=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	--test) tests+=("$2"); shift 2 ;;
	--known) known=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); shift 2 ;;
	-v) verbose=1; shift ;;
	-h|--help) sed -n '2,/^set -u/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	kernel|dir:*) targets+=("$1"); shift ;;
	*) echo "run.sh: unknown argument '$1' (see --help)" >&2; exit 2 ;;
	esac
done
[ ${#targets[@]} -gt 0 ] || { echo "usage: run.sh [--expect-dir D] [--save-dir D] [--env F] [--test NAME] kernel|dir:PATH..." >&2; exit 2; }
if [ ${#tests[@]} -eq 0 ]; then
	for f in "$here"/*.tc; do tests+=("$(basename "$f" .tc)"); done
fi

tmp=$(mktemp -d /tmp/utrace-ctl.XXXXXX)
inst="" mounted="" subinst=""
# rm_subinst: remove the instances instances.tc made in the kernel's instances/ (the names
# $subinst*), if a failure or a signal left some
rm_subinst() {
	local d
	[ -n "$subinst" ] || return 0
	for d in "$subinst"*; do
		[ -d "$d" ] || continue
		( cd "$d" && echo 0 > events/enable; : > set_event; echo 0 > tracing_on ) 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$d" 2>/dev/null && break; sleep 0.3; done
		[ -d "$d" ] && echo "run.sh: WARNING: could not remove $d" >&2
	done
}
cleanup() {
	rm_subinst
	if [ -n "$inst" ] && [ -d "$inst" ]; then
		( cd "$inst" && echo 0 > events/enable; : > set_event; echo 0 > tracing_on ) 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$inst" 2>/dev/null && break; sleep 0.3; done
		[ -d "$inst" ] && echo "run.sh: WARNING: could not remove $inst" >&2
	fi
	inst=""
	if [ -n "$mounted" ]; then umount "$mounted" 2>/dev/null; mounted=""; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'echo "run.sh: interrupted" >&2; exit 130' INT TERM HUP

if ! cc -std=c17 -O2 -Wall -o "$tmp/wr" "$here/wr.c"; then
	echo "run.sh: cannot compile wr.c"; echo "0 passed, 1 failed"; exit 1
fi
export CTL_WR=$tmp/wr CTL_DIR=$here

# run_scripts LABEL DIR ENVFILE: run every script in DIR with ENVFILE sourced; outputs in $tmp/LABEL
run_scripts() {
	local label=$1 dir=$2 envf=$3 t
	mkdir -p "$tmp/$label"
	for t in "${tests[@]}"; do
		local t0=$EPOCHREALTIME
		(
			if [ -n "$envf" ]; then set -a; . "$envf"; set +a; fi
			[ -n "${4:-}" ] && export AVAIL=$4
			cd "$dir" && exec timeout 120 bash "$here/$t.tc"
		) > "$tmp/$label/$t.out" 2> "$tmp/$label/$t.err"
		echo $? > "$tmp/$label/$t.rc"
		awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN { printf "%.1f s", b - a }' > "$tmp/$label/$t.time"
	done
}

labels=() skipped=()
ndir=0
for tg in "${targets[@]}"; do
	case $tg in
	kernel)
		label=kernel reason=""
		if [ "$(id -u)" != 0 ]; then reason="not root"
		else
			T=$(awk '$3 == "tracefs" { print $2; exit }' /proc/mounts)
			if [ -z "$T" ]; then
				if mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
					T=/sys/kernel/tracing mounted=$T
				else reason="tracefs is not mounted and cannot be mounted (no CONFIG_TRACING?)"; fi
			fi
			if [ -z "$reason" ] && [ ! -d "$T/instances" ]; then reason="$T has no instances/ directory"; fi
			if [ -z "$reason" ] && [ ! -r "$T/available_events" ]; then reason="$T has no available_events (no event tracing)"; fi
		fi
		if [ -n "$reason" ]; then
			echo "SKIP kernel: $reason"; skipped+=(kernel); continue
		fi
		inst=$T/instances/utrace-ctl-$$
		if ! mkdir "$inst"; then echo "SKIP kernel: cannot create $inst"; inst=""; skipped+=(kernel); continue; fi
		# instances.tc makes its instances beside this one (a kernel instance has no
		# instances/ of its own), with names of this run only
		subinst=$T/instances/utrace-ctl-$$-
		export CTL_INSTANCES=$T/instances CTL_INST_PREFIX=utrace-ctl-$$-
		run_scripts kernel "$inst" "$here/kernel.env" "$T/available_events"
		unset CTL_INSTANCES CTL_INST_PREFIX
		rm_subinst; subinst=""
		( cd "$inst" && echo 0 > events/enable; : > set_event ) 2>/dev/null
		for _ in 1 2 3 4 5 6 7 8 9 10; do rmdir "$inst" 2>/dev/null && break; sleep 0.3; done
		if [ -d "$inst" ]; then echo "run.sh: WARNING: could not remove $inst" >&2; else inst=""; fi
		;;
	dir:*)
		p=${tg#dir:}
		ndir=$((ndir + 1)); label=dir; [ $ndir -gt 1 ] && label=dir$ndir
		if [ ! -d "$p" ]; then echo "SKIP $tg: not a directory"; skipped+=("$label"); continue; fi
		run_scripts "$label" "$(cd "$p" && pwd)" "$env_file"
		;;
	esac
	labels+=("$label")
	if [ -n "$save_dir" ]; then mkdir -p "$save_dir/$label" && cp "$tmp/$label"/*.out "$save_dir/$label/"; fi
done

pass=0 fail=0
result() { # result PASS|FAIL TEXT [DETAILFILE]
	echo "$1 $2"
	if [ "$1" = PASS ]; then pass=$((pass + 1)); else
		fail=$((fail + 1))
		if [ -n "${3:-}" ] && [ -s "$3" ]; then
			if [ $verbose = 1 ]; then sed 's/^/    /' "$3"; else head -n 15 "$3" | sed 's/^/    /'; fi
		fi
	fi
}
# known_filter FILE: FILE without the known differences (see --known), to stdout
known_filter() {
	if [ -z "$known" ]; then cat "$1"; return; fi
	awk -v kf="$known" '
		BEGIN { while ((getline l < kf) > 0) if (l !~ /^[ \t]*(#|$)/) re[n++] = l }
		skip && /^#   (got|want):/ { next }
		{ skip = 0 }
		{ for (i = 0; i < n; i++) if ($0 ~ re[i]) { if ($0 ~ /^not ok /) skip = 1; next } }
		{ sub(/^ok [0-9]+ /, "ok "); sub(/^not ok [0-9]+ /, "not ok "); sub(/^1\.\.[0-9]+$/, "1..N"); print }' "$1"
}
selfcheck() { # selfcheck LABEL T: summary of a script's own checks
	local d=$tmp/$1 t=$2
	local nok nbad; nok=$(grep -c '^ok ' "$d/$t.out"); nbad=$(grep -c '^not ok ' "$d/$t.out")
	printf '%s ok, %s not ok, exit %s, %s' "$nok" "$nbad" "$(cat "$d/$t.rc")" "$(cat "$d/$t.time")"
}
for t in "${tests[@]}"; do
	if [ -n "$expect_dir" ]; then
		for l in "${labels[@]}"; do
			if [ ! -f "$expect_dir/$t.out" ]; then result FAIL "$t [$l]: no $expect_dir/$t.out"; continue; fi
			if diff -u <(known_filter "$expect_dir/$t.out") <(known_filter "$tmp/$l/$t.out") > "$tmp/diff"; then
				result PASS "$t [$l = expected] ($(selfcheck "$l" "$t"))"
			else
				result FAIL "$t [$l != expected] ($(selfcheck "$l" "$t"))" "$tmp/diff"
			fi
		done
	elif [ ${#labels[@]} -ge 2 ]; then
		ref=${labels[0]}
		for l in "${labels[@]:1}"; do
			if diff -u <(known_filter "$tmp/$ref/$t.out") <(known_filter "$tmp/$l/$t.out") > "$tmp/diff"; then
				result PASS "$t [$ref = $l] ($ref: $(selfcheck "$ref" "$t"); $l: $(selfcheck "$l" "$t"))"
			else
				result FAIL "$t [$ref != $l] ($ref: $(selfcheck "$ref" "$t"); $l: $(selfcheck "$l" "$t"))" "$tmp/diff"
			fi
		done
	elif [ ${#labels[@]} -eq 1 ]; then
		l=${labels[0]}
		{ grep -E '^(not ok|Bail out)' -A2 "$tmp/$l/$t.out"; cat "$tmp/$l/$t.err"; } > "$tmp/diff"
		if [ "$(cat "$tmp/$l/$t.rc")" = 0 ]; then result PASS "$t [$l] ($(selfcheck "$l" "$t"))"
		else result FAIL "$t [$l] ($(selfcheck "$l" "$t"))" "$tmp/diff"; fi
	fi
done
if [ ${#labels[@]} -eq 0 ]; then
	echo "0 passed, 0 failed (all targets skipped: ${skipped[*]})"
	exit 77
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
