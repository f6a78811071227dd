#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The markdown section of bench/fastpath.sh (before/after of the writer's
fast path).  Reads the RESULT and CG lines it wrote; prints markdown."""
import glob
import os
import re
import statistics
import sys


def main():
    path, base, n, runs, cg_n, data = sys.argv[1:7]
    res = {}
    cg = {}
    load = {}
    for line in open(path):
        w = line.split()
        if w[0] == 'LOAD':
            load[w[1]] = ' '.join(w[2:])
        elif w[0] == 'RESULT':
            tree, case, ev, _run, ns, bpe, lost = w[1:8]
            res.setdefault((tree, case, ev), []).append((float(ns), bpe, lost))
        elif w[0] == 'CG':
            cg[(w[1], w[2])] = float(w[3])

    def med(key):
        v = res.get(key)
        return statistics.median(x[0] for x in v) if v else None

    def mm(key):
        v = res.get(key)
        if not v:
            return '-'
        xs = sorted(x[0] for x in v)
        return '%.2f / %.2f / %.2f' % (xs[0], statistics.median(xs), xs[-1])

    def bpe(key):
        v = res.get(key)
        if not v or v[0][1] == '-':
            return '-'
        return '%.2f' % statistics.median(float(x[1]) for x in v)

    def lost(key):
        v = res.get(key)
        if not v or v[0][2] == '-':
            return '-'
        return ', '.join(x[2] for x in v)

    def ratio(a, b):
        return '%.2fx' % (a / b) if a is not None and b else '-'

    out = []
    p = out.append
    p('## Fast path: inlined writer (before / after)\n')
    p('Written by `bench/fastpath.sh`: the library and tool of commit %s ("before") '
      'and of the work tree ("after"), both with the bench programs of the work '
      'tree, measured in one run, round-robin, %s rounds of %s events on one '
      'thread (pinned to CPU round %% 2).  **record**: `utrace record -o FILE -- '
      'bench-record-utrace run N 1` (default buffer); **writer alone**: '
      '`UTRACE_EVENTS=\'bench:*\'`, no recorder (own buffer, overwrite); '
      '**raw store**: `bench-record-raw` (the string event: `strlen` and a copy '
      'into a 48-byte slot); **LTTng-UST**: a session to disk, default channel.  '
      'Events: `bench_ev` (u64, u32) and `bench_str` (u32 and a path of 7 to 28 '
      'bytes, 17.5 on average; `__string` / `ctf_string`).  ns/event: min / median '
      '/ max; ratios of medians.  instr/event: callgrind, %s events, the event loop '
      'minus the empty loop, under `utrace record` (raw: alone).\n'
      % (base[:12] if base != 'none' else '(none)', runs, '{:,}'.format(int(n)), cg_n))
    if load:
        p('Load average (1, 5, 15 min) when the timed rounds started: %s; when they '
          'ended: %s.  "lost" is the recorder\'s count per run: with other work on '
          'the two cores the recorder sometimes falls behind (issue 16 item 3).\n'
          % (load.get('start', '?'), load.get('end', '?')))
    p('| event | case | ns/event | vs raw store | vs two-int event (same case) '
      '| instr/event | bytes/event on disk | lost per run |')
    p('|---|---|---:|---:|---:|---:|---:|---|')
    names = {'int': 'two integers', 'str': 'int + path string'}
    cases = [('-', 'raw', 'raw store'), ('base', 'record', 'utrace record, before'),
             ('new', 'record', '**utrace record, after**'),
             ('base', 'pool', 'utrace writer alone, before'),
             ('new', 'pool', '**utrace writer alone, after**'),
             ('-', 'lttng', 'LTTng-UST, session to disk')]
    for ev in ('int', 'str'):
        raw = med(('-', 'raw', ev))
        for tree, case, label in cases:
            key = (tree, case, ev)
            if key not in res:
                continue
            m = med(key)
            c = cg.get((tree if tree != '-' else case, ev))
            intm = med((tree, case, 'int'))
            p('| %s | %s | %s | %s | %s | %s | %s | %s |' % (
                names[ev], label, mm(key), ratio(m, raw),
                ratio(m, intm) if ev == 'str' else '-',
                '%.2f' % c if c is not None else '-', bpe(key), lost(key)))
    p('')
    # targets
    t = []
    ri, rs = med(('new', 'record', 'int')), med(('new', 'record', 'str'))
    pi, raw = med(('new', 'pool', 'int')), med(('-', 'raw', 'int'))
    ci = cg.get(('new', 'int'))
    if ci is not None:
        t.append('- %s recorded two-integer event at most 60 instructions: %.2f'
                 % ('**PASS**' if ci <= 60 else '**FAIL**', ci))
    if pi and raw:
        t.append('- %s the writer alone at most 1.15x the raw store: %.2f vs %.2f ns = %.2fx'
                 % ('**PASS**' if pi / raw <= 1.15 else '**FAIL**', pi, raw, pi / raw))
    if ri and rs:
        t.append('- %s string event at most 1.5x the two-integer one (utrace record): '
                 '%.2f vs %.2f ns = %.2fx'
                 % ('**PASS**' if rs / ri <= 1.5 else '**FAIL**', rs, ri, rs / ri))
    ls = med(('-', 'lttng', 'str'))
    if ls and rs:
        t.append('- (information) string event vs LTTng-UST: %.2f vs %.2f ns, %.2fx faster'
                 % (rs, ls, ls / rs))
    if t:
        p('Targets (issue 16 items 2 and 4), after:\n')
        out.extend(t)
        p('')
    for f in sorted(glob.glob(os.path.join(data, 'cg-new-*.annotate'))):
        by_fn = {}
        for x in open(f):
            m = re.match(r'\s*([\d,]+)\s+(\([^)]*\)\s+)?(\S+)', x)
            if m and ':' in m.group(3):
                # one function's lines may come from several files (the
                # inlined writer is in tracepoint.h): add them up
                fn = m.group(3).rsplit(':', 1)[1]
                by_fn[fn] = by_fn.get(fn, 0) + int(m.group(1).replace(',', ''))
        rows = sorted(((v, k) for k, v in by_fn.items()), reverse=True)
        if not rows:
            continue
        p('Where the instructions go, after, `%s` (exclusive, callgrind, per event):\n'
          % os.path.basename(f)[3:-9])
        p('| function | instr/event |')
        p('|---|---:|')
        for ir, fn in rows[:12]:
            p('| `%s` | %.2f |' % (fn, ir / float(cg_n)))
        p('')
    print('\n'.join(out))


main()
