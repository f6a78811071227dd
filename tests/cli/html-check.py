#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""html-check.py PAGE SCRIPT-OUTPUT [--slices N]: read a page of `utrace
convert --format html` as a browser would get it (python's html.parser),
decode its data (the layout of lib/reader/export-html.c) and check it
against `utrace script` of the same file: the same events, one by one,
rebuilt into script's line (without the flags column) from the page's
columns and texts.  With --slices, also check each slice: its begin and
end are events of the slice's names whose fields hold the same key, the
end after the begin, and there are N of them.  The call stacks that
script prints after their events (record -g: "<user stack trace>" and
" => frame" lines) are no events of the page: they must be its flame
graphs (ut-stacks), each event name's stacks folded into a tree of
frames outermost first; with --stacks N there must be N of them.  Prints
what differs on stderr; exit status 0 when all agree."""
import base64, html.parser, json, re, struct, sys

page, script = sys.argv[1], sys.argv[2]
want_slices = int(sys.argv[sys.argv.index('--slices') + 1]) if '--slices' in sys.argv else None
want_stacks = int(sys.argv[sys.argv.index('--stacks') + 1]) if '--stacks' in sys.argv else None


def fail(msg):
    print('# ' + msg, file=sys.stderr)
    sys.exit(1)


class P(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.scripts, self.cur, self.stack, self.errors = [], None, [], []

    def handle_starttag(self, tag, attrs):
        if tag == 'script':
            self.cur = (dict(attrs), [])

    def handle_endtag(self, tag):
        if tag == 'script' and self.cur:
            self.scripts.append((self.cur[0], ''.join(self.cur[1])))
            self.cur = None

    def handle_data(self, data):
        if self.cur:
            self.cur[1].append(data)


text = open(page, encoding='utf-8').read()
if not text.startswith('<!DOCTYPE html>'):
    fail('no <!DOCTYPE html> first')
for bad in (r'https?://', r'\bsrc\s*=', r'<link\b', r'@import', r'url\('):
    m = re.search(bad, text, re.I)
    if m:
        fail('the page refers outside itself: %r at %d' % (m.group(0), m.start()))
p = P()
p.feed(text)
p.close()
meta = fin = stacks = None
chunks, texts, estk = [], [], []
for attrs, body in p.scripts:
    if attrs.get('id') == 'ut-meta':
        meta = json.loads(body)
    elif attrs.get('id') == 'ut-end':
        fin = json.loads(body)
    elif attrs.get('id') == 'ut-stacks':
        stacks = json.loads(body)
    elif attrs.get('class') == 'ut-chunk':
        chunks.append((attrs, base64.b64decode(body.strip(), validate=True)))
    elif attrs.get('class') == 'ut-text':
        texts.append(json.loads(body))
    elif attrs.get('class') == 'ut-estk':
        estk.append(json.loads(body))
if meta is None or fin is None or stacks is None or len(chunks) != len(texts) or \
   len(estk) != len(chunks) or len(p.scripts) != len(chunks) * 3 + 4:
    fail('scripts: meta %s, end %s, stacks %s, %d chunks, %d texts, %d in all' % (
        meta is not None, fin is not None, stacks is not None, len(chunks), len(texts),
        len(p.scripts)))

# the events: (abs ns, thread, name, text, cpu)
ev, sl = [], []
for c, (attrs, b) in enumerate(chunks):
    n, s, base = int(attrs['data-n']), int(attrs['data-s']), int(attrs['data-base'])
    if len(b) != n * 12 + s * 10:
        fail('chunk %d: %d bytes for %d events and %d slices' % (c, len(b), n, s))
    dt = struct.unpack_from('<%dI' % n, b, 0)
    th = struct.unpack_from('<%dH' % n, b, 4 * n)
    ty = struct.unpack_from('<%dH' % n, b, 6 * n)
    tx = struct.unpack_from('<%dH' % n, b, 8 * n)
    cpu = struct.unpack_from('<%dH' % n, b, 10 * n)
    sb = struct.unpack_from('<%dI' % s, b, 12 * n)
    se = struct.unpack_from('<%dI' % s, b, 12 * n + 4 * s)
    ss = struct.unpack_from('<%dH' % s, b, 12 * n + 8 * s)
    for i in range(n):
        ev.append((base + dt[i], th[i], ty[i], texts[c][tx[i]], cpu[i]))
    sl += zip(sb, se, ss)
if len(ev) != fin['events']:
    fail('%d events decoded, the end says %d' % (len(ev), fin['events']))


def line(e):
    t, th, ty, tx, cpu = e
    thr = meta['threads'][th]
    us = t // 1000 + (t % 1000 >= 500)
    head = '%16s-%-7d [%03d]  %5d.%06d: ' % (thr['comm'], thr['tid'], cpu, us // 10**6, us % 10**6)
    if ty == 0:
        return head + tx
    return head + meta['names'][ty].split(':')[-1] + ': ' + tx.split('\x1f')[0]


lines, want_tree, want_evstk = [], {}, {}


def frame_name(f):
    """script's ' => ' frame as the page names it: without the offset"""
    if f.startswith('<') and f.endswith('>'):
        return '0x%x' % int(f[1:-1], 16)
    return f if f.startswith('[') else re.sub(r'\+0x[0-9a-f]+/0x[0-9a-f]+$', '', f)


def fold(name, frames):
    node = want_tree.setdefault(name, ['all', 0, []])
    node[1] += 1
    for f in reversed(frames):
        c = [x for x in node[2] if x[0] == f]
        if not c:
            node[2].append([f, 0, []])
            c = node[2][-1:]
        node = c[0]
        node[1] += 1


stack = None         # the frames of the stack being read, and its event
for l in open(script, encoding='utf-8', errors='replace'):
    l = l.rstrip('\n')
    if l.startswith(' => ') and stack is not None:
        stack[1].append(frame_name(l[4:].split()[0]))
        continue
    if stack is not None and stack[0] is not None and stack[1]:
        fold(stack[0], stack[1])
        want_evstk[len(lines) - 1] = stack[1]
    stack = None
    if l.endswith('<user stack trace>'):
        m = re.match(r'^.*?\[\d{3}\] \S* *[\d.]+: (\S+):', lines[-1]) if lines else None
        stack = [m.group(1) if m else None, []]
        continue
    lines.append(re.sub(r'^(.*?\[\d{3}\]) \S{5} ', r'\1  ', l))
if stack is not None and stack[0] is not None and stack[1]:
    fold(stack[0], stack[1])
    want_evstk[len(lines) - 1] = stack[1]
if len(lines) != len(ev):
    fail('utrace script: %d lines, the page: %d events' % (len(lines), len(ev)))
for i, (a, e) in enumerate(zip(lines, ev)):
    b = line(e)
    if a != b and not (a.rstrip() == b.rstrip()):
        fail('event %d:\n#  script: %r\n#  page:   %r' % (i, a, b))
for i in range(1, len(ev)):
    if ev[i][0] < ev[i - 1][0]:
        fail('event %d: time goes back' % i)


def field(e, name):
    fields = e[3].split('\x1f')[-1]
    m = re.search(r'(?:^| )' + re.escape(name) + r'=(\S+)', fields)
    return m.group(1) if m else None


if want_slices is not None:
    if len(sl) != want_slices:
        fail('%d slices, want %d' % (len(sl), want_slices))
    for b, e, s in sl:
        spec = meta['slices'][s]
        m = re.match(r'^([^.]+)\.([^:]+):(.+)\.([^.]+)$', spec)
        bn, bf, en, ef = m.groups()
        B, E = ev[b], ev[e]
        if not meta['names'][B[2]].endswith(bn) or not meta['names'][E[2]].endswith(en):
            fail('slice %d-%d: events %s, %s' % (b, e, meta['names'][B[2]], meta['names'][E[2]]))
        if field(B, bf) is None or field(B, bf) != field(E, ef):
            fail('slice %d-%d: keys %r, %r' % (b, e, field(B, bf), field(E, ef)))
        if not b < e or B[0] > E[0]:
            fail('slice %d-%d: the end before the begin' % (b, e))
# the flame graphs: event names as script prints them (without the system)
got_tree = {g['name'].split(':')[-1]: g['tree'] for g in stacks}
if got_tree != want_tree:
    fail('flame graphs:\n#  script: %s\n#  page:   %s' % (json.dumps(want_tree), json.dumps(got_tree)))
for g in stacks:
    if g['stacks'] != g['tree'][1]:
        fail('%s: %d stacks, its tree holds %d' % (g['name'], g['stacks'], g['tree'][1]))
# each event's own stack (its side panel): names and stacks defined before use
fn, stk, got_evstk = [], [], {}
for d in estk:
    fn += d['f']
    stk += d['s']
    for e, st in d['e']:
        if st >= len(stk) or any(f >= len(fn) for f in stk[st]) or e in got_evstk:
            fail('ut-estk: event %d, stack %d not defined (or twice)' % (e, st))
        got_evstk[e] = [fn[f] for f in stk[st]]
if got_evstk != want_evstk:
    fail('event stacks:\n#  script: %s\n#  page:   %s' % (want_evstk, got_evstk))
if want_stacks is not None and sum(g['stacks'] for g in stacks) != want_stacks:
    fail('%d stacks, want %d' % (sum(g['stacks'] for g in stacks), want_stacks))
print('# %d events, %d chunks, %d slices, %d bytes: %.1f bytes per event' % (
    len(ev), len(chunks), len(sl), len(text.encode()), len(text.encode()) / max(1, len(ev))))
