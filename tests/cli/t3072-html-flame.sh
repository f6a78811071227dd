#!/usr/bin/env bash
# utrace convert -f html with call stacks (issue 32): a recording with
# --call-graph dwarf of stack-demo (the chain twice, the second stack a
# stack_ref, and the chain through a linked library) gives a page whose
# timeline holds the events only, a flame graph per event name (the
# stacks folded outermost first, each frame named as utrace script names
# it), and each event's own stack in its side panel.  html-check.py checks the page's data against utrace script (its
# "<user stack trace>" lines folded the same way); headless Chromium
# draws the flame graph (a box per frame, as wide as its share).
. "$(dirname "$0")/lib.sh"
CHECK="$UTRACE_SRC/tests/cli/html-check.py"
# skip NAME REASON: a check that cannot run here (TAP's SKIP)
skip() {
	n=$((n + 1))
	echo "ok $n - $1 # SKIP $2"
}
export UTRACE_RUNTIME_DIR="$TMP/run"
mkdir -m 700 "$UTRACE_RUNTIME_DIR"
mkfifo "$TMP/ff"
"$UTRACE" record --call-graph dwarf -o "$TMP/r.dat" -- "$UTRACE_BUILD/tests/stack-demo-O2" \
	"$TMP/ff" "$TMP/out" "$UTRACE_BUILD/tests/libstack-dl.so" > /dev/null 2> "$TMP/err" &
r=$!
printf 'chain\nchain\nlib\nquit\n' > "$TMP/ff"
wait "$r"

check "convert -f html: exit 0" "$UTRACE" convert -f html -i "$TMP/r.dat" -o "$TMP/r.html"
check "the page's events and flame graphs are what utrace script prints (3 stacks)" bash -c '
	"$0" script -i "$1/r.dat" > "$1/r.script" && python3 "$2" "$1/r.html" "$1/r.script" --stacks 3' \
	"$UTRACE" "$TMP" "$CHECK"
cat > "$TMP/tree.py" <<'EOF'
import json, re, sys
g = json.loads(re.search(r'<script type="application/json" id="ut-stacks">(.*?)</script>',
                         open(sys.argv[1]).read()).group(1))
if [x["name"] for x in g] != ["stackdemo:hit"] or g[0]["stacks"] != 3:
    sys.exit("graphs: %s" % [(x["name"], x["stacks"]) for x in g])
def path(n, names):
    for c in n[2]:
        if c[0] == names[0]:
            return [c[1]] + (path(c, names[1:]) if names[1:] else [])
    return None
def find(n, name):
    if n[0] == name:
        return n
    for c in n[2]:
        f = find(c, name)
        if f:
            return f
main = find(g[0]["tree"], "main")
if not main or main[1] != 3:
    sys.exit("main: %s" % main)
if path(main, ["sd_chain", "sd_outer", "sd_middle", "sd_inner", "sd_leaf"]) != [2] * 5 or \
   path(main, ["sdlib_outer", "sdlib_inner", "sd_leaf"]) != [1] * 3:
    sys.exit("under main: %s" % json.dumps(main))
EOF
check "the flame graph of hit: both chains under main, sd_leaf on top, counted" \
	python3 "$TMP/tree.py" "$TMP/r.html"
cat > "$TMP/dom.py" <<'EOF'
import re, sys
dom = open(sys.argv[1]).read()
if not re.search(r'<div class="ut-flamegraph" data-event="stackdemo:hit" data-stacks="3">', dom):
    sys.exit("no flame graph of stackdemo:hit in the DOM")
widths = []
for tag in re.findall(r'<div [^>]*title="sd_leaf: [^>]*>', dom):
    w = re.search(r'width: ([0-9.]+)%', tag)
    c = re.search(r'title="sd_leaf: (\d) of 3', tag)
    widths.append((round(float(w.group(1)), 1) if w else None, int(c.group(1))))
widths.sort()
if widths != [(33.3, 1), (66.7, 2)]:
    sys.exit("sd_leaf boxes: %s" % widths)
print("# %d frame boxes" % len(re.findall(r"data-depth=", dom)))
EOF
CHROMIUM=$(command -v chromium || command -v chromium-browser || true)
if [ -n "$CHROMIUM" ]; then
	check "Chromium draws it: a box per frame, sd_leaf's 2/3 and 1/3 wide" bash -c '
	HOME="$1/home" timeout 60 "$0" --headless --no-sandbox --disable-gpu --user-data-dir="$1/chrome" \
		--no-first-run --dump-dom "file://$1/r.html" > "$1/dom" 2>> "$1/chrome.log" &&
	python3 "$1/dom.py" "$1/dom"' "$CHROMIUM" "$TMP"
	check "Chromium: a click on the third event shows its call stack" bash -c '
	HOME="$1/home" timeout 60 "$0" --headless --no-sandbox --disable-gpu --user-data-dir="$1/chrome" \
		--no-first-run --dump-dom "file://$1/r.html#event=2" > "$1/dom2" 2>> "$1/chrome.log" &&
	python3 - "$1/dom2" <<PY
import html, re, sys
m = re.search(r"<div id=\"ut-side\">(.*?)</div>", open(sys.argv[1]).read(), re.S)
side = html.unescape(m.group(1)) if m else ""
want = "call stack:\n  sd_leaf\n  sdlib_inner\n  sdlib_outer\n  main\n"
if "hit: where=2" not in side or want not in side:
    sys.exit("side panel: %r" % side)
PY' "$CHROMIUM" "$TMP"
else
	skip "Chromium draws it" "chromium is not installed (apt-get install chromium)"
	skip "Chromium: a click shows the event's call stack" "chromium is not installed"
fi
check "a recording without stacks: no flame graph" bash -c '
	"$0" record -o "$1/n.dat" -- "$2" > /dev/null 2>&1 &&
	"$0" convert -f html -i "$1/n.dat" -o "$1/n.html" &&
	grep -q "<script type=\"application/json\" id=\"ut-stacks\">\[\]</script>" "$1/n.html"' \
	"$UTRACE" "$TMP" "$SAMPLE"
done_testing
