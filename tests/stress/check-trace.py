#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
An independent reader of utrace trace files for the buffer tests: parses
the file (docs/trace-file-format.md) and the pages (the kernel ring-buffer
layout) itself, then reconciles what the traced program says it fired
("fired TID COUNT" lines) with what is in the file and what was reported
lost:  fired = in file + lost, per process, and per thread.

  check-trace.py FILE FIRED-FILE [--expect-loss | --expect-no-loss | --cut]

--cut: FILE is a prefix of a recording (the recorder was killed, the disk
was full, or the file was cut): its tail may be a partial record and it
has no END or STATS records, so in file + lost <= fired; and every page
of a TSC process must have two CLOCK records before it.

The rbstress:rb_ev and rb_long events carry a per-thread sequence number,
so the checker also sees that each thread's events are in order, that none
is duplicated, and that every missing number is accounted for as lost.
"""
import struct
import sys


def fail(msg):
    print("check-trace: " + msg, file=sys.stderr)
    sys.exit(1)


def parse(path, cut):
    d = open(path, "rb").read()
    if d[:8] != b"UTRACE\n\0":
        fail("%s: bad magic" % path)
    version, hsize, page_size, order, _, flags = struct.unpack_from("<IIIIII", d, 8)
    if version != 1 or order != 0x01020304:
        fail("%s: bad header" % path)
    off = hsize
    recs = []
    while off + 16 <= len(d):
        t, _, size = struct.unpack_from("<IIQ", d, off)
        if off + 16 + size > len(d):
            if cut:
                break
            fail("%s: record at %d runs past the end" % (path, off))
        recs.append((t, d[off + 16:off + 16 + size]))
        off += 16 + (size + 7) // 8 * 8
    if not cut and (flags & 1) and (not recs or recs[-1][0] != 8):
        fail("%s: no END record at the end" % path)
    return page_size, recs


def events_of_page(page):
    ts, commit = struct.unpack_from("<QQ", page, 0)
    commit &= (1 << 27) - 1
    data = page[16:16 + commit]
    off = 0
    out = []
    while off + 4 <= len(data):
        w, = struct.unpack_from("<I", data, off)
        tl, delta = w & 31, w >> 5
        if tl == 0:
            ln, = struct.unpack_from("<I", data, off + 4)
            rec = data[off + 8:off + 8 + ln - 4]
            off += 4 + (ln + 3) // 4 * 4
        elif tl == 29:
            if delta == 0:
                break
            ln, = struct.unpack_from("<I", data, off + 4)
            off += 4 + ln
            continue
        elif tl in (30, 31):
            hi, = struct.unpack_from("<I", data, off + 4)
            ts += (hi << 27) + delta
            off += 8
            continue
        else:
            rec = data[off + 4:off + 4 + tl * 4]
            off += 4 + tl * 4
        ts += delta
        out.append((ts, rec))
    if off != len(data):
        fail("page data does not end on an event boundary (%d of %d)" % (off, len(data)))
    return out


def main():
    path, fired_path = sys.argv[1], sys.argv[2]
    expect = sys.argv[3] if len(sys.argv) > 3 else ""
    cut = expect == "--cut"
    page_size, recs = parse(path, cut)
    fired = {}
    for line in open(fired_path):
        p = line.split()
        if len(p) == 3 and p[0] == "fired":
            fired[int(p[1])] = fired.get(int(p[1]), 0) + int(p[2])
    formats = {}
    clocks = [struct.unpack_from("<QQ", pl) for t, pl in recs if t == 1]
    proc_clock = {}
    event_times = {}
    in_file = {}
    lost_pages = {}
    lost_rec = {}
    seqs = {}
    stats_written = stats_lost = 0
    pages = {}      # (pid, image, tid): [(seq, payload, clock)]
    image = {}      # a pid's PROCESS records so far: exec starts a new image
    # Formats first, each with the image it belongs to: the format doc lets
    # a FORMAT come after pages that use it.
    for t, pl in recs:
        if t == 2:
            pid, = struct.unpack_from("<I", pl)
            image[pid] = image.get(pid, 0) + 1
        elif t == 3:
            pid, eid = struct.unpack_from("<II", pl)
            sysname, fmt = pl[8:].split(b"\0")[:2]
            name = fmt.split(b"\n")[0].split(b": ")[1].decode()
            formats[(pid, image.get(pid), eid)] = name
    image = {}
    nr_clock = 0
    for t, pl in recs:
        if t == 1:
            nr_clock += 1
        elif t == 2:
            pid, _, clock = struct.unpack_from("<III", pl)
            image[pid] = image.get(pid, 0) + 1
            proc_clock[pid] = clock
        elif t == 5:
            # A thread's pages may come in any order (pages written on
            # different CPUs go through different queues): the format
            # orders them by seq, which must not repeat.
            pid, tid, cpu, _, seq, lost = struct.unpack_from("<IIIIQQ", pl)
            key = (pid, image.get(pid), tid)
            if proc_clock.get(pid) == 1 and nr_clock < 2:
                fail("page %d of thread %d (TSC time) has %d CLOCK records before it, "
                     "not 2" % (seq, tid, nr_clock))
            pages.setdefault(key, []).append((seq, pl, proc_clock.get(pid)))
        elif t == 6:
            pid, tid, count = struct.unpack_from("<IIQ", pl)
            lost_rec[pid] = lost_rec.get(pid, 0) + count
        elif t == 7:
            pid, _, w, l = struct.unpack_from("<IIQQ", pl)
            stats_written += w
            stats_lost += l
    for (pid, img, tid), plist in pages.items():
        plist.sort(key=lambda x: x[0])
        for (a, _, _), (b, _, _) in zip(plist, plist[1:]):
            if a == b:
                fail("thread %d: page %d twice" % (tid, a))
        for seq, pl, clock in plist:
            _, _, cpu, _, _, lost = struct.unpack_from("<IIIIQQ", pl)
            lost_pages[tid] = lost_pages.get(tid, 0) + lost
            prev_ts = 0
            for ts, rec in events_of_page(pl[32:32 + page_size]):
                if ts < prev_ts:
                    fail("thread %d: time goes back in page %d" % (tid, seq))
                prev_ts = ts
                etype, _, _, rpid = struct.unpack_from("<HBBi", rec)
                if rpid != tid:
                    fail("record of pid %d in a page of thread %d" % (rpid, tid))
                name = formats.get((pid, img, etype))
                if name is None:
                    fail("event id %d of pid %d has no format" % (etype, pid))
                in_file[tid] = in_file.get(tid, 0) + 1
                if name in ("rb_ev", "rb_long"):
                    s, = struct.unpack_from("<Q", rec, 8)
                    kind = struct.unpack_from("<I", rec, 20)[0] if name == "rb_ev" else 0
                    # (a tid the kernel gave again to a later thread of the
                    # process numbers its pages in a range of their own:
                    # the high 32 bits of the page's seq)
                    seqs.setdefault((tid, img, seq >> 32), []).append((s, kind))
                if name == "rb_ev":
                    s, rt, kind = struct.unpack_from("<QII", rec, 8)
                    event_times[s] = (clock, ts)
                    if rt != tid or kind > 1:
                        fail("thread %d: corrupt record %r" % (tid, rec))
    total_fired = sum(fired.values())
    total_file = sum(in_file.get(t, 0) for t in fired)
    if cut:
        if total_file + sum(lost_pages.values()) > total_fired:
            fail("fired %d, in file %d + lost in pages %d" %
                 (total_fired, total_file, sum(lost_pages.values())))
        stats_lost = sum(lost_pages.values()) + sum(lost_rec.values())
    elif stats_written != sum(in_file.values()):
        fail("STATS say %d written, the pages hold %d" % (stats_written, sum(in_file.values())))
    if not cut and total_file + stats_lost != total_fired:
        # where the difference is: the threads short of what they fired
        # by more than their pages say was lost (LOST records are per
        # process), and the processes' LOST records
        short = [(t, n, in_file.get(t, 0), lost_pages.get(t, 0)) for t, n in fired.items()
                 if in_file.get(t, 0) + lost_pages.get(t, 0) < n]
        for t, n, f, lp in sorted(short, key=lambda x: x[2] + x[3] - x[1])[:12]:
            print("check-trace: thread %d fired %d, in file %d, lost in its pages %d" %
                  (t, n, f, lp), file=sys.stderr)
        print("check-trace: %d threads short; LOST records by pid: %r" %
              (len(short), lost_rec), file=sys.stderr)
        fail("fired %d, in file %d + lost %d = %d" % (total_fired, total_file, stats_lost,
                                                     total_file + stats_lost))
    if not cut and stats_lost != sum(lost_pages.values()) + sum(lost_rec.values()):
        fail("STATS lost %d, pages say %d + LOST records %d" %
             (stats_lost, sum(lost_pages.values()), sum(lost_rec.values())))
    for tid, n in fired.items():
        total_span = 0
        for (stid, img, _), s in seqs.items():
            if stid != tid:
                continue
            # A signal handler's event (kind 1) may take its number before
            # the event it interrupted reserves its place, so order is
            # checked per kind; numbers must be unique.
            for kind in (0, 1):
                k = [q for q, kd in s if kd == kind]
                if any(b <= a for a, b in zip(k, k[1:])):
                    fail("thread %d: kind %d sequence numbers out of order" % (tid, kind))
            s = sorted(q for q, kd in s)
            if any(b == a for a, b in zip(s, s[1:])):
                fail("thread %d: a sequence number appears twice" % tid)
            total_span += s[-1] + 1 if s else 0
        if total_span > n:
            fail("thread %d: sequence numbers up to %d but only %d fired" % (tid, total_span, n))
        if in_file.get(tid, 0) + lost_pages.get(tid, 0) > n:
            fail("thread %d: %d in file + %d lost in pages > %d fired" %
                 (tid, in_file.get(tid, 0), lost_pages.get(tid, 0), n))
    if expect == "--clock":
        # every event's time, converted as readers do, lies between the
        # two CLOCK_MONOTONIC readings the program took around it
        (t0, n0), (t1, n1) = clocks[0], clocks[-1]
        checked = 0
        for line in open(fired_path):
            p = line.split()
            if len(p) != 4 or p[0] != "mono":
                continue
            s, before, after = int(p[1]), int(p[2]), int(p[3])
            clock, ts = event_times[s]
            ns = ts if clock == 0 else n0 + (ts - t0) * (n1 - n0) // (t1 - t0)
            slack = 0 if clock == 0 else 20000
            if not before - slack <= ns <= after + slack:
                fail("event %d at %d ns, outside [%d, %d] (clock %d)" % (s, ns, before, after, clock))
            checked += 1
        if checked != 20:
            fail("checked %d events' times, expected 20" % checked)
    if expect == "--expect-loss" and stats_lost == 0:
        fail("expected some loss with this buffer size, saw none")
    if expect == "--expect-no-loss" and stats_lost != 0:
        fail("expected no loss, saw %d" % stats_lost)
    print("# check-trace: fired %d = in file %d + lost %d; %d threads" %
          (total_fired, total_file, stats_lost, len(fired)))


main()
