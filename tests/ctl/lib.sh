# lib.sh: shared helpers of the ctl conformance scripts (tests/ctl/*.tc). Sourced, bash only.
#
# A .tc script runs with cwd = a tracefs instance directory (a kernel instances/<name>/ or a
# utrace mount's DIR/<pid>/). It prints
#   * a NORMALISED transcript: lines starting with "# " in which the concrete names from the
#     environment are replaced by placeholders ($SYS, $EV1, ...) and timestamps, pids, CPU numbers
#     and event payloads are stripped, so that the transcripts of two targets compare textually;
#   * TAP lines "ok N - ..." / "not ok N - ..." for the target-independent (kernel-semantics)
#     invariants it checks, and the plan "1..N" at the end.
# It exits 0 when every check passed, 1 otherwise.
#
# Environment (see kernel.env and README.md):
#   SYS EV1 EV2      a subsystem and two of its events
#   NUM_FIELD        a signed 4-byte numeric field of EV1 (EV2 must not have it)
#   NUM_VALUE        a value of NUM_FIELD that TRIGGER produces (not for every EV1 event)
#   STR_FIELD        a string field of EV1 (char[N] or __data_loc char[]; EV2 must not have it)
#   STR_PREFIX       a prefix of STR_FIELD values that TRIGGER produces (not for every EV1 event)
#   SYS2 EV3         a second subsystem and one of its events
#   TRIGGER          a shell command (eval'ed) that makes EV1 and EV2 fire a few times
#   AVAIL            path of the available_events file (default: ./available_events, else
#                    ../../available_events as for a kernel instance)
#   CTL_WR           the compiled wr helper (compiled from wr.c into a temp dir when unset)

set -u
export LC_ALL=C
CTL_DIR=${CTL_DIR:-$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)}

for _v in SYS EV1 EV2 NUM_FIELD NUM_VALUE STR_FIELD STR_PREFIX SYS2 EV3 TRIGGER; do
	if [ -z "${!_v:-}" ]; then
		echo "Bail out! environment variable $_v is not set (see tests/ctl/README.md)"
		exit 2
	fi
done
export SYS SYS2 EV1 EV2 EV3 NUM_FIELD STR_FIELD STR_PREFIX

if [ -z "${AVAIL:-}" ]; then
	if [ -e available_events ]; then AVAIL=$PWD/available_events; else AVAIL=$PWD/../../available_events; fi
fi
if [ ! -r "$AVAIL" ]; then
	echo "Bail out! available_events not found (set AVAIL)"
	exit 2
fi

if [ -z "${CTL_WR:-}" ] || [ ! -x "$CTL_WR" ]; then
	_ctl_tmp=$(mktemp -d)
	trap 'rm -rf "$_ctl_tmp"' EXIT
	cc -std=c17 -O2 -o "$_ctl_tmp/wr" "$CTL_DIR/wr.c" || { echo "Bail out! cannot compile wr.c"; exit 2; }
	CTL_WR=$_ctl_tmp/wr
fi
WR=$CTL_WR

# ---------------------------------------------------------------- normalisation
# norm: replace the concrete names by placeholders (longest value first, whole words only;
# a "word" is made of [A-Za-z0-9_-]).
NORM_PL='our @NK = map { [ $_, qr/(?<![A-Za-z0-9_\-])\Q$ENV{$_}\E(?![A-Za-z0-9_\-])/ ] }
	sort { length($ENV{$b}) <=> length($ENV{$a}) }
	grep { defined $ENV{$_} && length $ENV{$_} } qw(SYS SYS2 EV1 EV2 EV3 NUM_FIELD STR_FIELD STR_PREFIX);
sub norm { my $s = shift; for my $k (@NK) { $s =~ s/$k->[1]/\$$k->[0]/g; } return $s; }'
# normstr STRING: the same substitution in pure bash (no process), for single lines
_NK=$(for _k in SYS SYS2 EV1 EV2 EV3 NUM_FIELD STR_FIELD STR_PREFIX; do
	[ -n "${!_k:-}" ] && printf '%06d %s\n' "$(printf '%s' "${!_k}" | wc -c)" "$_k"
done | sort -r | cut -d' ' -f2)
declare -A _NQ
for _k in $_NK; do _NQ[$_k]=$(printf '%s' "${!_k}" | sed 's/[]\.*^$[+?(){}|]/\\&/g'); done
normstr() {
	local s=$1 k re
	for k in $_NK; do
		re="(^|[^A-Za-z0-9_-])(${_NQ[$k]})([^A-Za-z0-9_-]|\$)"
		while [[ $s =~ $re ]]; do
			s=${s/"${BASH_REMATCH[0]}"/"${BASH_REMATCH[1]}"'$'"$k${BASH_REMATCH[3]}"}
		done
	done
	printf '%s\n' "$s"
}
norm() { perl -e "$NORM_PL"' while (<STDIN>) { print norm($_) }'; }
# strip the "[  123.456789]" timestamps of error_log entries
norm_ts() { sed -E 's/^(\| )?\[ *[0-9]+\.[0-9]+\] /\1[<ts>] /'; }
# a trace/trace_pipe event line -> "<task>-<pid> [<cpu>] <flags> <ts>: <event>: <payload>"
# (lines that do not have the kernel's layout are printed as "BADLINE: ...")
TRACE_RE='^(.{16})-([0-9]+) *\[([0-9]{3})\] (.{5}) +([0-9]+\.[0-9]{6}): ([^ :]+):( (.*))?$'
norm_line() {
	perl -ne 'chomp; if (/^(.{16})-(\d+)( *)\[(\d{3})\] (.{5}) +(\d+\.\d{6}): ([^ :]+):( .*)?$/ && length($2.$3) >= 7) {
	             print "<task>-<pid> [<cpu>] <flags> <ts>: $7:", (defined $8 ? " <payload>" : ""), "\n" }
	          else { print "BADLINE: $_\n" }' | norm
}

# ---------------------------------------------------------------- transcript and TAP
_n=0
_fail=0
say() { local l; while IFS= read -r l; do printf '# %s\n' "$(normstr "$l")"; done <<< "$*"; }
# show FILE: its content, one "# | line" per line, tabs as \t; notes a missing final newline
show() {
	if [ ! -e "$1" ]; then say "$1: (does not exist)"; return; fi
	perl -e 'local $/; my $d = <STDIN>; if ($d eq "") { print "(empty)\n"; exit }
	         my $nl = ($d =~ /\n\z/);
	         my @l = split /\n/, $d, -1; pop @l if $nl;
	         for (@l) { s/\t/\\t/g; s/([\x00-\x08\x0b-\x1f\x7f])/sprintf("\\x%02x", ord $1)/ge; print "| $_\n" }
	         print "(no newline at end)\n" unless $nl;' < "$1" | norm_ts | norm | sed 's/^/# /'
}
_tap() { normstr "$*"; }
ok() { _n=$((_n + 1)); _tap "ok $_n - $1"; }
notok() { _n=$((_n + 1)); _fail=$((_fail + 1)); _tap "not ok $_n - $1"; }
# check DESC CMD...: ok when CMD succeeds
check() { local d=$1; shift; if "$@"; then ok "$d"; else notok "$d"; fi; }
# expect DESC GOT WANT: ok when equal, else diagnostics
expect() {
	if [ "$2" = "$3" ]; then ok "$1"; else
		notok "$1"
		printf '%s\n' "got:  $2" | norm | sed 's/^/#   /'
		printf '%s\n' "want: $3" | norm | sed 's/^/#   /'
	fi
}
finish() { echo "1..$_n"; [ "$_fail" -eq 0 ] && exit 0; exit 1; }

# ---------------------------------------------------------------- writes
# w [-a|-t] FILE STRING: ONE write() through the helper. Sets WRES to
#   "all" (the whole buffer was consumed), "partial:<ret>" or the errno name ("EINVAL", ...);
#   "open:<ERRNO>" when the open failed.
w() {
	local out
	out=$("$WR" "$@")
	case $out in
	open*) WRES="open:$(printf '%s' "$out" | sed -E 's/^open\(.*\) = -1 ([A-Z0-9?]+).*/\1/')" ;;
	*'= -1 '*) WRES=$(printf '%s' "$out" | sed -E 's/.*= -1 ([A-Z0-9?]+).*/\1/') ;;
	*) local n r
	   n=$(printf '%s' "$out" | sed -E 's/^write\(([0-9]+) bytes\).*/\1/')
	   r=$(printf '%s' "$out" | sed -E 's/.*= ([0-9]+)$/\1/')
	   if [ "$n" = "$r" ]; then WRES=all; else WRES="partial:$r"; fi ;;
	esac
}
# ewr FILE STRING / eap FILE STRING: bash "echo STRING > FILE" / ">> FILE". Sets ERES to
# "rc=0" or "rc=1 (<strerror>)".
_e() {
	local err rc=0
	err=$( { if [ "$1" = '>' ]; then echo "$3" > "$2"; else echo "$3" >> "$2"; fi; } 2>&1 ) || rc=$?
	if [ "$rc" = 0 ]; then ERES="rc=0"; else
		ERES="rc=$rc ($(printf '%s' "$err" | sed -E "s/.*: //" | tail -n 1))"
	fi
}
ewr() { _e '>' "$1" "$2"; }
eap() { _e '>>' "$1" "$2"; }

# sortn WORD...: the words normalised and sorted, on one line
sortn() { [ $# -gt 0 ] || return 0; local a r=(); for a; do r+=("$(normstr "$a")"); done; printf "%s\n" "${r[@]}" | sort | tr "\n" " " | sed "s/ $//"; }
# lines FILE: number of lines; nbytes FILE: size in bytes (read, not stat)
lines() { cat "$1" | wc -l | tr -d ' '; }
nbytes() { cat "$1" | wc -c | tr -d ' '; }
# nev SYS: number of event directories of a subsystem
nev() { local n=0 d; for d in events/"$1"/*/; do [ -d "$d" ] && n=$((n + 1)); done; echo "$n"; }
# has_field SYS EV FIELD: the event's format declares FIELD
has_field() { grep -Eq "^	field:.*[ ]$3(\[[0-9]*\])?;" "events/$1/$2/format"; }
# trace_events: the event lines of the trace file (no comment lines)
trace_events() { grep -v '^#' trace || true; }
# entries: "A/B" from the trace header
entries() { sed -nE 's/^# entries-in-buffer\/entries-written: ([0-9]+)\/([0-9]+) .*/\1\/\2/p' trace; }
# fire: run the trigger
fire() { eval "$TRIGGER" >/dev/null 2>&1 || true; }
# wait_for CMD...: CMD every 0.05 s until it succeeds, or status 1 after 30 s: a check waits
# for what it needs rather than sleep a guessed time, with a deadline far beyond what a loaded
# machine needs
wait_for() { local end=$((SECONDS + 30)); until "$@"; do [ "$SECONDS" -ge "$end" ] && return 1; sleep 0.05; done; }
# asleep PID: the process is blocked (state S or D), e.g. in a read of trace_pipe
asleep() { case $(sed -E 's/^[0-9]+ \(.*\) (.).*/\1/' "/proc/$1/stat" 2>/dev/null) in S|D) ;; *) false ;; esac; }
