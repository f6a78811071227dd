#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
Cut a real recording at every record boundary and inside records (a
page's header, its middle, its last byte; a record header), and check what
'utrace script' makes of each prefix:

  cut-prefixes.py UTRACE FILE TMPDIR [--exact]

  - status 0, and on stderr exactly one line: "utrace: 'P': file cut short
    at byte N (the recording did not end cleanly): printed the M events
    before it", with N the end of the last whole record and M the lines;
  - the events printed are exactly those of the whole PAGE records in the
    prefix (found here by parsing the file, not by the reader);
  - each is the full file's line for the same event (--exact: the same
    text, time included, for files in CLOCK_MONOTONIC time; else the same
    fields, and a time within 200 us of the full file's: a prefix has
    fewer calibration points than the whole file).
"""
import json
import struct
import subprocess
import sys


def fail(msg):
    print("cut-prefixes: " + msg, file=sys.stderr)
    sys.exit(1)


def records(d):
    """(offset, end, type, payload) of every record, end padded to 8."""
    off = struct.unpack_from("<I", d, 12)[0]
    out = []
    while off + 16 <= len(d):
        t, _, size = struct.unpack_from("<IIQ", d, off)
        end = off + 16 + (size + 7) // 8 * 8
        out.append((off, min(end, len(d)), t, d[off + 16:off + 16 + size]))
        off = end
    return out


def page_events(payload):
    """(tid, seq) of the rb_ev/rb_long events of a PAGE record's page."""
    tid = struct.unpack_from("<I", payload, 4)[0]
    page = payload[32:]
    commit = struct.unpack_from("<Q", page, 8)[0] & ((1 << 30) - 1)
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
            off += 8
            continue
        else:
            rec = data[off + 4:off + 4 + tl * 4]
            off += 4 + tl * 4
        out.append((tid, struct.unpack_from("<Q", rec, 8)[0]))
    return out


def script(utrace, path):
    r = subprocess.run([utrace, "script", "-i", path, "--json"], capture_output=True)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def key(line):
    j = json.loads(line)
    return (j["tid"], j["fields"]["seq"]), j


def main():
    utrace, path, tmp = sys.argv[1:4]
    exact = "--exact" in sys.argv[4:]
    d = open(path, "rb").read()
    st, out, err = script(utrace, path)
    if st != 0 or err:
        fail("the whole file: status %d, stderr %r" % (st, err))
    full = {}
    order = []
    for line in out.splitlines():
        k, j = key(line)
        full[k] = (line, j)
        order.append((k, line))
    recs = records(d)
    if not recs or recs[-1][2] != 8:
        fail("the whole file does not end with an END record")
    cuts = set()
    for i, (off, end, t, _) in enumerate(recs):
        cuts.add(off)                    # at each record boundary
        if t == 5:
            cuts.add(off + 16 + 32 + 2048)   # in the middle of each page
        if i % 5 == 0:
            cuts.add(off + 8)            # inside a record header
            cuts.add(end - 1)            # one byte short
            if t == 5:
                cuts.add(off + 16 + 20)  # inside a page's meta data
    cuts = sorted(c for c in cuts if 64 < c < recs[-1][0])
    n_pages = sum(1 for r in recs if r[2] == 5)
    for cut in cuts:
        p = "%s/cut-%d.dat" % (tmp, cut)
        with open(p, "wb") as f:
            f.write(d[:cut])
        # whole: its payload is in (a missing tail of padding is not a cut
        # of the record; the file is cut after it)
        whole = [r for r in recs if r[0] + 16 + len(r[3]) <= cut]
        last = min(whole[-1][1], cut) if whole else 64
        expect = set()
        for _, _, t, pl in whole:
            if t == 5:
                expect.update(page_events(pl))
        st, out, err = script(utrace, p)
        lines = out.splitlines()
        want = ("utrace: '%s': file cut short at byte %d (the recording did not end "
                "cleanly): printed the %d events before it\n" % (p, last, len(lines)))
        if st != 0 or err != want:
            fail("cut at %d: status %d, stderr %r, expected %r" % (cut, st, err, want))
        got = set()
        for line in lines:
            k, j = key(line)
            if k not in full:
                fail("cut at %d: an event the whole file has not: %s" % (cut, line))
            fline, fj = full[k]
            if exact:
                if line != fline:
                    fail("cut at %d: %s\n  the whole file: %s" % (cut, line, fline))
            else:
                if abs(j["time"] - fj["time"]) > 200000 or \
                   dict(j, time=0) != dict(fj, time=0):
                    fail("cut at %d: %s\n  the whole file: %s" % (cut, line, fline))
            got.add(k)
        if exact and lines != [line for k, line in order if k in expect]:
            fail("cut at %d: not the whole file's lines in its order" % cut)
        if len(got) != len(lines) or got != expect:
            fail("cut at %d: printed %d events (%d different), the whole pages hold %d; "
                 "missing %s, extra %s" % (cut, len(lines), len(got), len(expect),
                                           sorted(expect - got)[:5], sorted(got - expect)[:5]))
    print("# cut-prefixes: %d cuts of a file of %d bytes, %d pages, %d events" %
          (len(cuts), len(d), n_pages, len(full)))


main()
