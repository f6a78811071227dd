#!/usr/bin/env bash
# utrace convert --format html: one page that holds everything (no link
# outside it), that python's html.parser reads, whose data decodes into
# the events `utrace script` prints, line by line, and the --slice pairs;
# then the page in headless Chromium (it draws, and says what it drew in
# the DOM; the screenshot has the events' colours in the timeline), and
# the trace.dat export in KernelShark under Xvfb.  The browser and
# KernelShark checks skip, saying why, where those are not installed
# (scripts/setup-debian.sh --tests installs them).
. "$(dirname "$0")/lib.sh"
CHECK="$UTRACE_SRC/tests/cli/html-check.py"
MKFILE="$UTRACE_BUILD/tests/reader/reader-mkfile"
SLICE=demo_tick.count:demo:demo_request.id

# skip NAME REASON: a check that cannot run here (TAP's SKIP)
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}

# html NAME FILE [ARGS]: convert FILE to FILE.html, script it to FILE.script
html() {
	local f=$1
	shift
	"$UTRACE" convert -i "$f" -o "$f.html" --format html "$@" 2> "$TMP/err" &&
	"$UTRACE" script -i "$f" > "$f.script" 2>> "$TMP/err"
}

check "sample, every event type: converted" bash -c '
	"$0" record -o "$2/s.dat" -- "$1" > /dev/null 2> "$2/err"' "$UTRACE" "$SAMPLE" "$TMP"
check "  ... html" html "$TMP/s.dat"
check "  ... one page, nothing outside it; its events are script's, line by line" \
	python3 "$CHECK" "$TMP/s.dat.html" "$TMP/s.dat.script"

# Kernel events recorded with the sample's (root and tracefs; else not
# checked): each is on its task's row, the traced threads' own when the
# task is one of them.
if kernel_tracing; then
	check "kernel events with the sample's" record_kernel_sample "$TMP/kr.dat"
	check "  ... html: every kernel and user event, script's line by line" bash -c '
		"$0" convert -i "$1/kr.dat" -o "$1/kr.dat.html" --format html 2> "$1/err" &&
		"$0" script -i "$1/kr.dat" > "$1/kr.dat.script" 2>> "$1/err" &&
		python3 "$2" "$1/kr.dat.html" "$1/kr.dat.script"' "$UTRACE" "$TMP" "$CHECK"
else
	echo "# kernel events not checked: they need root and tracefs instances"
fi

check "sample --run 0.3, demo events" bash -c '
	"$0" record -e "demo:*" -o "$2/r.dat" -- "$1" --run 0.3 > /dev/null 2> "$2/err"' \
	"$UTRACE" "$SAMPLE" "$TMP"
check "  ... html with --slice $SLICE" html "$TMP/r.dat" --slice "$SLICE"
# every demo_request id=k closes the demo_tick count=k before it
nreq() { grep -c ' demo_request: ' "$TMP/r.dat.script"; }
check "  ... the events, and a slice per request: keys equal, end after begin" bash -c '
	python3 "$0" "$1/r.dat.html" "$1/r.dat.script" --slices "$2" 2> "$1/err"' \
	"$CHECK" "$TMP" "$(nreq)"

check "a bad --slice: one line naming it, exit 1, no page" bash -c '
	! "$0" convert -i "$1/r.dat" -o "$1/x.html" --format html --slice demo_tick 2> "$1/err" &&
	[ "$(wc -l < "$1/err")" -eq 1 ] && grep -q "bad --slice '\''demo_tick'\''" "$1/err" &&
	! "$0" convert -i "$1/r.dat" -o "$1/x.html" --format html --slice a.b:c.d 2> "$1/err" &&
	grep -q "no event '\''a'\'' in the file" "$1/err" &&
	! "$0" convert -i "$1/r.dat" -o "$1/x.html" --format html \
		--slice demo_tick.stage:demo_request.id 2> "$1/err" &&
	grep -q "has no number field '\''stage'\''" "$1/err" && [ ! -e "$1/x.html" ]' "$UTRACE" "$TMP"
check "--slice without --format html: exit 129" bash -c '
	"$0" convert -i "$1/r.dat" -o "$1/x.dat" --slice "$2" 2> "$1/err"; [ $? -eq 129 ]' \
	"$UTRACE" "$TMP" "$SLICE"
check "a write error names the output file, leaves no page" bash -c '
	! "$0" convert -i "$1/r.dat" -o /dev/full --format html 2> "$1/err" &&
	[ "$(cat "$1/err")" = "utrace: cannot write '\''/dev/full'\'': No space left on device" ]' \
	"$UTRACE" "$TMP"

# The corrupt-file corpus: a clean message and status 0 or 1, never a crash.
corpus() {
	local f st bad=0
	"$MKFILE" corrupt "$TMP/corrupt" > /dev/null || return 1
	for f in "$TMP"/corrupt/*.dat; do
		"$UTRACE" convert -i "$f" -o "$TMP/c.html" --format html > /dev/null 2> "$TMP/cerr"
		st=$?
		if [ "$st" -gt 1 ]; then
			echo "# ${f##*/}: exit status $st" >&2; bad=1
		elif [ "$st" -eq 1 ] && ! head -1 "$TMP/cerr" | grep -q "^utrace: "; then
			echo "# ${f##*/}: '$(head -1 "$TMP/cerr")'" >&2; bad=1
		fi
	done
	[ "$bad" -eq 0 ]
}
check "corrupt files: a message and status 0 or 1, never a crash" corpus

# 100000 events of 2 processes and 4 threads (reader-mkfile big)
check "100000 events: converted, the same as script" bash -c '
	"$0" big "$1/big.dat" 100000 > /dev/null &&
	"$2" convert -i "$1/big.dat" -o "$1/big.dat.html" --format html 2> "$1/err" &&
	"$2" script -i "$1/big.dat" > "$1/big.dat.script" 2>> "$1/err" &&
	python3 "$3" "$1/big.dat.html" "$1/big.dat.script" 2>> "$1/err"' \
	"$MKFILE" "$TMP" "$UTRACE" "$CHECK"

# --- Chromium ----------------------------------------------------------------
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
# a python3 with PIL (python3-pil) for the screenshots: the first python3
# of PATH may be another one than Debian's
PYPIL=
for p in python3 /usr/bin/python3; do
	if "$p" -c 'import PIL' 2> /dev/null; then PYPIL=$p; break; fi
done
# chrome FLAG... PAGE: headless, its profile in $TMP, 60 s at most
chrome() {
	HOME="$TMP/home" timeout 60 "$CHROMIUM" --headless --no-sandbox --disable-gpu \
		--user-data-dir="$TMP/chrome" --no-first-run "$@" 2>> "$TMP/chrome.log"
}
# the summary the page writes into the DOM once it has drawn
dom_summary() {
	chrome --dump-dom "file://$1" > "$1.dom" &&
	python3 - "$1.dom" "$2" "$3" <<'EOF'
import re, sys
dom, events, slices = open(sys.argv[1]).read(), int(sys.argv[2]), int(sys.argv[3])
m = re.search(r'<span id="ut-summary"([^>]*)>', dom)
if not m:
    sys.exit('# no summary in the DOM: the page did not run')
a = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1)))
if int(a.get('events', -1)) != events or int(a.get('slices', -1)) != slices or \
   int(a.get('drawn', 0)) <= 0:
    sys.exit('# summary %r, want %d events, %d slices, some drawn' % (a, events, slices))
h = re.findall(r'<div class="ut-h"([^>]*)>', dom)
if slices:
    hs = dict(re.findall(r'data-([a-z0-9]+)="([^"]*)"', h[0]))
    counts = sum(int(c) for c in re.findall(r'<tr data-log2="\d+" data-count="(\d+)"', dom))
    if int(hs['count']) != slices or counts != slices or \
       not int(hs['min']) <= int(hs['p50']) <= int(hs['p99']) <= int(hs['max']):
        sys.exit('# histogram %r, buckets hold %d, want %d' % (hs, counts, slices))
print('# the page drew %s ticks of %s events in %s ms' % (a['drawn'], a['events'], a['load-ms']))
EOF
}
# screenshot PAGE: the timeline area has pixels of the legend's colours
screenshot() {
	chrome --screenshot="$1.png" --window-size=1200,800 "file://$1" > /dev/null &&
	"$PYPIL" - "$1.png" "$1.dom" <<'EOF'
import re, sys
from PIL import Image
im = Image.open(sys.argv[1]).convert('RGB')
cols = {tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
        for c in re.findall(r'data-color="(#[0-9a-f]{6})"', open(sys.argv[2]).read())}
if not cols:
    sys.exit('# no legend colours in the DOM')
# the timeline: right of the thread names (180 px), under the axis
box = im.crop((181, 60, 800, 300))
hits = sum(1 for p in box.getdata() if p in cols)
if hits < 50:
    sys.exit('# %d pixels of the event colours %r in the timeline' % (hits, cols))
print('# %d pixels of the events colours in the timeline' % hits)
EOF
}
# pick_event K: the page opened at #event=K picks event K as a click does;
# its side panel holds script's line K (without the flags column) and the
# fields of script --fields, one a line
pick_event() {
	chrome --dump-dom "file://$TMP/s.dat.html#event=$1" > "$TMP/pick.dom" &&
	"$UTRACE" script --fields -i "$TMP/s.dat" > "$TMP/s.fields" 2> "$TMP/err" &&
	python3 - "$TMP/pick.dom" "$TMP/s.dat.script" "$TMP/s.fields" "$1" <<'EOF'
import html, re, sys
dom, script, fields, k = open(sys.argv[1]).read(), sys.argv[2], sys.argv[3], int(sys.argv[4])
m = re.search(r'<div id="ut-side">(.*?)</div>', dom, re.S)
side = html.unescape(m.group(1)).split('\n') if m else ['']
want = re.sub(r'^(.*?\[\d{3}\]) \S{5} ', r'\1  ', open(script).read().split('\n')[k])
if side[0] != want:
    sys.exit('# side panel: %r\n# script:     %r' % (side[0], want))
f = open(fields).read().split('\n')[k].split(': ', 2)[-1]
got = ' '.join(l.strip() for l in side[side.index('fields:') + 1:] if l.strip()) \
    if 'fields:' in side else None
if got != f:
    sys.exit('# side panel fields: %r\n# script --fields:   %r' % (got, f))
EOF
}
# A program that idles first (one process fires the sample's events, 2 s
# pass, another fires demo events for 0.3 s): the first view is the busy
# 0.3 s, its ticks spread over the timeline, not squeezed against its
# right edge (issue 28, item 20).  The screenshot is read as screenshot()
# reads it: where the event colours are, column by column.
record_idle() {
	[ -e "$TMP/idle.dat.html" ] && return 0
	"$UTRACE" record -o "$TMP/idle.dat" -e 'sample-trace:*' -e 'demo:*' -- \
		sh -c "\"$SAMPLE\" > /dev/null; sleep 2; \"$SAMPLE\" --run 0.3 > /dev/null" \
		> /dev/null 2> "$TMP/err" &&
	html "$TMP/idle.dat"
}
busy_span() {
	record_idle &&
	chrome --dump-dom "file://$TMP/idle.dat.html" > "$TMP/idle.dom" &&
	chrome --screenshot="$TMP/idle.png" --window-size=1200,800 "file://$TMP/idle.dat.html" \
		> /dev/null &&
	"$PYPIL" - "$TMP/idle.png" "$TMP/idle.dom" <<'EOF'
import re, sys
from PIL import Image
im = Image.open(sys.argv[1]).convert('RGB')
dom = open(sys.argv[2]).read()
cols = {tuple(int(c[i:i + 2], 16) for i in (1, 3, 5))
        for c in re.findall(r'data-color="(#[0-9a-f]{6})"', dom)}
x0, x1 = 181, 840        # the timeline, right of the thread names
box = im.crop((x0, 60, x1, 400))
xs = [x for x in range(box.width)
      if any(box.getpixel((x, y)) in cols for y in range(box.height))]
if not xs:
    sys.exit('# no event colour in the timeline')
# the columns that hold the middle 90% of the coloured ones: a few events
# before the pause (one or two columns at the left) do not count
lo, hi = xs[len(xs) // 20], xs[len(xs) - 1 - len(xs) // 20]
spread = (hi - lo) / box.width
print('# %d columns of event colours, the middle 90%% from x=%d to x=%d of %d: %.0f%%' %
      (len(xs), lo, hi, box.width, 100 * spread))
if spread < 0.6:
    sys.exit('# the events take %.0f%% of the timeline: squeezed' % (100 * spread))
EOF
}
# The page opened at #event=K shows 10 us around event K: every axis label
# differs from the next (before, they all read the same: "2.31 s").
axis_10us() {
	local k
	record_idle &&
	k=$(grep -n ' demo_tick: ' "$TMP/idle.dat.script" | sed -n '100s/:.*//p') &&
	[ -n "$k" ] &&
	chrome --dump-dom "file://$TMP/idle.dat.html#event=$((k - 1))" > "$TMP/axis.dom" &&
	python3 - "$TMP/axis.dom" <<'EOF'
import re, sys
m = re.search(r'<span id="ut-summary"([^>]*)>', open(sys.argv[1]).read())
a = dict(re.findall(r'data-([a-z-]+)="([^"]*)"', m.group(1))) if m else {}
if 'axis' not in a or 'view' not in a:
    sys.exit('# the page says nothing of its axis: %r' % a)
labels, v = a['axis'].split('|'), [int(x) for x in a['view'].split()]
print('# view %d..%d ns: %s' % (v[0], v[1], ', '.join(labels)))
if v[1] - v[0] != 10000:
    sys.exit('# not a 10 us view')
if len(labels) < 2 or any(x == y for x, y in zip(labels, labels[1:])):
    sys.exit('# labels that read alike')
EOF
}
if [ -z "$CHROMIUM" ]; then
	skip "Chromium draws the page" "chromium is not installed (apt-get install chromium)"
	skip "Chromium screenshot" "chromium is not installed"
	skip "a click shows the event" "chromium is not installed"
	skip "the page opens on the busy span" "chromium is not installed"
	skip "at 10 us, the axis labels tell each tick from the next" "chromium is not installed"
else
	mkdir -p "$TMP/home"
	check "Chromium runs the page: all events, every slice in the histogram" \
		dom_summary "$TMP/r.dat.html" "$(grep -c . "$TMP/r.dat.script")" "$(nreq)"
	if [ -n "$PYPIL" ]; then
		check "  ... and its screenshot shows the event colours in the timeline" \
			screenshot "$TMP/r.dat.html"
	else
		skip "Chromium screenshot" "python3-pil is missing (apt-get install python3-pil)"
	fi
	check "a click on an event shows its script line and its fields" pick_event 5
	if [ -n "$PYPIL" ]; then
		check "a program that idled first: the page opens on its busy span" busy_span
	else
		skip "the page opens on the busy span" "python3-pil is missing (apt-get install python3-pil)"
	fi
	check "at 10 us, the axis labels tell each tick from the next" axis_10us
	check "Chromium, 100000 events" \
		dom_summary "$TMP/big.dat.html" 100000 0
fi

# --- KernelShark -------------------------------------------------------------
# Under Xvfb: kernelshark on the trace.dat export, screenshots of the root
# window until one shows a window with a graph (not one colour), 30 s at
# most.  As root, KernelShark stops at a warning dialog: it runs in a user
# namespace, where it is not root.
kernelshark_shot() {
	"$UTRACE" convert -i "$TMP/r.dat" -o "$TMP/r.trace.dat" 2> "$TMP/err" || return 1
	mkdir -p "$TMP/kshome"
	cat > "$TMP/ks.sh" <<'EOF'
run=
[ "$(id -u)" -eq 0 ] && run="unshare -U"
HOME="$1/kshome" XDG_RUNTIME_DIR="$1/kshome" $run kernelshark -i "$1/r.trace.dat" \
	> "$1/ks.log" 2>&1 &
pid=$!
end=$((SECONDS + 30))
st=1
while [ "$SECONDS" -lt "$end" ] && kill -0 "$pid" 2> /dev/null; do
	sleep 0.5
	import -window root "$1/ks.png" 2> /dev/null || continue
	"$2" - "$1/ks.png" <<'PY' && { st=0; break; }
import sys
from PIL import Image
im = Image.open(sys.argv[1]).convert('RGB')
c = im.getcolors(1 << 24)
# the window: many colours, most of the screen not the root's black
lit = sum(n for n, p in c if p != (0, 0, 0))
sys.exit(0 if len(c) > 30 and lit > im.width * im.height // 8 else 1)
PY
done
kill "$pid" 2> /dev/null
wait "$pid" 2> /dev/null
exit $st
EOF
	timeout 90 xvfb-run -a -s "-screen 0 1200x800x24" bash "$TMP/ks.sh" "$TMP" "$PYPIL" ||
		{ sed 's/^/# kernelshark: /' "$TMP/ks.log" >&2; false; }
}
if ! command -v kernelshark > /dev/null; then
	skip "KernelShark shows the trace.dat export" "kernelshark is not installed (apt-get install kernelshark)"
elif ! command -v xvfb-run > /dev/null || ! command -v import > /dev/null; then
	skip "KernelShark shows the trace.dat export" "xvfb-run or ImageMagick's import is missing (apt-get install xvfb xauth imagemagick)"
elif [ -z "$PYPIL" ]; then
	skip "KernelShark shows the trace.dat export" "python3-pil is missing"
else
	check "KernelShark under Xvfb shows the trace.dat export (not a blank screen)" \
		kernelshark_shot
fi

done_testing
