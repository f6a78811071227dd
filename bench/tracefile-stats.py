#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Where the bytes of a utrace trace file go (docs/trace-file-format.md).

usage: tracefile-stats.py FILE

Walks the record headers (not the events) and prints key/value lines:
file bytes, header bytes, records and bytes of each type, PAGE records,
the event bytes committed in their pages (commit words) and the unused
bytes at the end of pages.  bench/run.sh runs it on a recorded file before
deleting it; report.py explains the bytes per event with it.
"""
import os
import struct
import sys

NAMES = {1: "clock", 2: "process", 3: "format", 4: "thread", 5: "page",
         6: "lost", 7: "stats"}


def main():
    path = sys.argv[1]
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        hdr = f.read(64)
        if len(hdr) < 64 or hdr[:8] != b"UTRACE\n\0":
            sys.exit(f"{path}: not a utrace trace file")
        version, header_size, page_size = struct.unpack_from("<III", hdr, 8)
        off = header_size
        counts, nbytes = {}, {}
        committed = pages = 0
        while off + 16 <= size:
            f.seek(off)
            rtype, _flags, rsize = struct.unpack("<IIQ", f.read(16))
            end = off + 16 + rsize
            if end > size:
                break
            name = NAMES.get(rtype, f"type{rtype}")
            nxt = (end + 7) & ~7
            counts[name] = counts.get(name, 0) + 1
            nbytes[name] = nbytes.get(name, 0) + min(nxt, size) - off
            if rtype == 5 and rsize >= 32 + 16:
                f.seek(off + 16 + 32)
                _ts, commit = struct.unpack("<QQ", f.read(16))
                committed += commit & ((1 << 30) - 1)
                pages += 1
            off = nxt
    print(f"file_bytes {size}")
    print(f"version {version}")
    print(f"header_bytes {header_size}")
    print(f"page_size {page_size}")
    print(f"pages {pages}")
    print(f"page_committed_bytes {committed}")
    print(f"page_unused_bytes {pages * (page_size - 16) - committed}")
    for name in sorted(counts):
        print(f"records_{name} {counts[name]}")
        print(f"bytes_{name} {nbytes[name]}")


if __name__ == "__main__":
    main()
