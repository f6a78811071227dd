#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The markdown section of bench/fastpath.sh (before/after of the writer's
fast path).  Reads the RESULT and CG lines it wrote; prints markdown."""
import glob
import os
import re
import statistics
import sys


def calibration(p, res, med, mm, ratio, pi, raw, ci, craw):
    """What the raw store is made of, and what the 1.15x target allows."""
    pads = [(k, med(('-', 'pad%d' % k, 'int'))) for k in (16, 32, 48, 64)]
    pads = [(k, v) for k, v in pads if v is not None]
    if not raw or len(pads) < 2:
        return
    p('### The floor: what the raw store is made of\n')
    p('The raw store with K independent one-cycle instructions (moves of '
      'constants into four registers) added to each event, and with the loop '
      'counter stored instead of the time (no `rdtsc`), in the same rounds '
      '(`BENCH_RAW_PAD=K`, `BENCH_RAW_TSC=0` of `bench-record-raw`):\n')
    p('| case | ns/event | vs raw store |')
    p('|---|---:|---:|')
    p('| raw store | %s | 1.00x |' % mm(('-', 'raw', 'int')))
    for k, v in pads:
        p('| raw store + %d instructions | %s | %s |'
          % (k, mm(('-', 'pad%d' % k, 'int')), ratio(v, raw)))
    nt = med(('-', 'notsc', 'int'))
    if nt is not None:
        p('| raw store without its `rdtsc` | %s | %s |'
          % (mm(('-', 'notsc', 'int')), ratio(nt, raw)))
    p('')
    xs = [0] + [k for k, _ in pads]
    ys = [raw] + [v for _, v in pads]
    mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
    sxx = sum((x - mx) ** 2 for x in xs)
    slope = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    icpt = my - slope * mx
    ss = sum((y - my) ** 2 for y in ys)
    r2 = 1 - sum((y - (icpt + slope * x)) ** 2 for x, y in zip(xs, ys)) / ss if ss else 1
    p('- Each instruction added beside the `rdtsc` costs %.3f ns (least squares '
      'over K = 0 to %d, R² %.3f): the time adds up, nothing hides under the '
      '`rdtsc`.' % (slope, xs[-1], r2))
    if nt is not None:
        p('- Without its `rdtsc` the raw store takes %.2f ns, bounded by its '
          'stores streaming into a 240 MB array; with it, %.2f ns.  The stores '
          'drain while the `rdtsc` runs; the instructions around it do not '
          'overlap it.  The floor is the timestamp.' % (nt, raw))
    if slope > 0:
        budget = 0.15 * raw
        p('- The target "the writer alone at most 1.15x the raw store" leaves '
          '%.2f ns beside the `rdtsc`: %.0f such instructions at most, for every '
          'check, store and commit the writer makes beyond the raw store\'s %s.'
          % (budget, budget / slope, '%.0f' % craw if craw else 'few'))
        if pi and ci and craw:
            extra = pi - raw
            p('- The writer alone takes %.2f ns more than the raw store for its '
              '%.1f more instructions (callgrind): %.3f ns each, %.1fx an '
              'independent one-cycle instruction (they are loads, stores and '
              'compares that depend on each other).  At the calibrated cost it '
              'would need %.0f instructions in all; it has %.1f.'
              % (extra, ci - craw, extra / (ci - craw), extra / (ci - craw) / slope,
                 craw + budget / slope, ci))
    p('')


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
    calibration(p, res, med, mm, ratio, pi, raw, ci, cg.get(('raw', 'int')))
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
