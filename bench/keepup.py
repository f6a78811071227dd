#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""
bench/keepup.py - does `utrace record` keep up with a burst?  (issue 16,
item 3; driven by bench/keepup.sh)

  keepup.py run OUT.txt ROUNDS N FILE LABEL:UTRACE:PROG ...
      ROUNDS rounds; in each, every LABEL records a burst of N events from
      one thread (PROG run N 1: the program fires at once, no warm-up)
      with the default options, first on a quiet machine, then with two
      busy loops (`while :; do :; done`) beside it.  Appends one line a
      run to OUT.txt:
        RUN label load round fired written lost rec_cpu_ns prog_cpu_ns wall_ns grew_mib
      The recorder's CPU is the CPU of `utrace record` and every process
      it reaped (wait4) less that of the traced program and of the small
      wrapper that measured the program (this script, 'wrap' mode).
  keepup.py wrap PROG ARGS...
      run PROG, print "WRAP <its CPU ns> <our own CPU ns>" on stderr.
  keepup.py report OUT.txt RESULTS.md PARAMS...
      write the table between the keepup markers of RESULTS.md.
"""
import os
import re
import resource
import signal
import statistics
import subprocess
import sys
import time

START = "<!-- keepup: written by bench/keepup.sh -->"
END = "<!-- /keepup -->"


def cpu_ns(ru):
    return int((ru.ru_utime + ru.ru_stime) * 1e9)


def wrap(argv):
    pid = os.fork()
    if pid == 0:
        try:
            os.execvp(argv[0], argv)
        finally:
            os._exit(127)
    _, st, ru = os.wait4(pid, 0)
    me = resource.getrusage(resource.RUSAGE_SELF)
    sys.stderr.write(f"WRAP {cpu_ns(ru)} {cpu_ns(me)}\n")
    sys.stderr.flush()
    return os.waitstatus_to_exitcode(st)


def busy_loops(n):
    return [subprocess.Popen(["sh", "-c", "while :; do :; done"]) for _ in range(n)]


def one(utrace, prog, n, path, err):
    if os.path.exists(path):
        os.unlink(path)     # not the truncation of the last file in the recorder's CPU
    t0 = time.monotonic_ns()
    pid = os.fork()
    if pid == 0:
        fd = os.open(err, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(fd, 2)
        out = os.open(err + ".out", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
        os.dup2(out, 1)
        os.execvp(utrace, [utrace, "record", "-o", path, "--", sys.executable,
                           os.path.abspath(__file__), "wrap", prog, "run", str(n), "1"])
    _, st, ru = os.wait4(pid, 0)
    wall = time.monotonic_ns() - t0
    text = open(err).read()
    w = re.search(r"^WRAP (\d+) (\d+)$", text, re.M)
    s = re.search(r"^utrace record: (\d+) events written, (\d+) lost,", text, re.M)
    g = re.search(r"grew from [0-9.]+ to ([0-9.]+) MiB", text)
    if not w or not s or st != 0:
        sys.stderr.write(f"keepup: a run of {utrace} failed, see {err}\n")
        return None
    rec = cpu_ns(ru) - int(w.group(1)) - int(w.group(2))
    return (n, int(s.group(1)), int(s.group(2)), rec, int(w.group(1)), wall,
            g.group(1) if g else "-")


def run(argv):
    out, rounds, n, path = argv[0], int(argv[1]), int(argv[2]), argv[3]
    cases = [c.split(":", 2) for c in argv[4:]]
    with open(out, "a") as f:
        for r in range(rounds):
            for load in ("quiet", "busy2"):
                for label, utrace, prog in cases:
                    loops = busy_loops(2) if load == "busy2" else []
                    try:
                        if loops:
                            time.sleep(0.2)     # the loops are running
                        res = one(utrace, prog, n, path, path + ".err")
                    finally:
                        for p in loops:
                            p.send_signal(signal.SIGKILL)
                            p.wait()
                    if res:
                        f.write(f"RUN {label} {load} {r} " + " ".join(map(str, res)) + "\n")
                        f.flush()
    if os.path.exists(path):
        os.unlink(path)


def mmm(v, fmt):
    if not v:
        return "-"
    return " / ".join(fmt(x) for x in (min(v), statistics.median(v), max(v)))


def report(argv):
    data, results = argv[0], argv[1]
    params = dict(a.split("=", 1) for a in argv[2:])
    rows = {}
    for line in open(data):
        p = line.split()
        if p[0] != "RUN":
            continue
        rows.setdefault((p[1], p[2]), []).append(p[4:])
    labels = []
    for (label, _) in rows:
        if label not in labels:
            labels.append(label)
    L = [START, "", "## The recorder keeps up (issue 16, item 3)", ""]
    L.append(f"A burst of {int(params.get('n', 0)):,} events (the two-field event of "
             "bench-record.c) from one thread that fires at once, no warm-up, recorded "
             "by `utrace record -o FILE -- prog` with the default options (8 MiB "
             "buffer, discard mode), on this 2-core machine: **no loops** (the machine as it is, "
             "shared with others' jobs: see the load average below), and with two "
             "busy loops (`while :; do :; done`) beside it (**2 busy loops**).  "
             f"{params.get('rounds', '?')} rounds; in each, every build in turn, without "
             "then with the loops, so that the before and after rows share the machine's "
             "moods.  Written by `bench/keepup.sh` "
             f"({params.get('date', '?')}, load average at the start "
             f"{params.get('load', '?')}).")
    L.append("")
    L.append("- **lost**: events the recorder counted lost: "
             "min / median / max over the runs, and the runs that lost "
             "none.")
    L.append("- **recorder CPU per event**: user + system CPU of `utrace record` "
             "itself (wait4 of the recorder less the traced program's own, "
             "measured by a wrapper), divided by the events it wrote; startup "
             "included.  min / median / max.")
    L.append("- **recording wall ms**: `utrace record` from start to exit (the "
             "program's startup and exit included).")
    L.append("- **grew to**: the largest the program's buffer grew to (MiB), in how "
             "many runs it grew.  **written + lost = fired**: in how many runs the "
             "recorder's counts add up to what the program fired.")
    L.append("")
    L.append("| recorder | load | runs | lost events min / median / max | lost % (max) | runs with 0 lost | recorder CPU ns / event | recording wall ms (median) | buffer grew to (MiB, runs) | written + lost = fired |")
    L.append("|---|---|---:|---:|---:|---:|---:|---:|---|---|")
    names = {"quiet": "no loops", "busy2": "2 busy loops"}
    for label in labels:
        for load in ("quiet", "busy2"):
            v = rows.get((label, load))
            if not v:
                continue
            fired = [int(x[0]) for x in v]
            written = [int(x[1]) for x in v]
            lost = [int(x[2]) for x in v]
            rec = [int(x[3]) / max(int(x[1]), 1) for x in v]
            wall = [int(x[5]) / 1e6 for x in v]
            grew = [float(x[6]) for x in v if x[6] != "-"]
            ok = sum(1 for x in lost if x == 0)
            pct = max(100.0 * lo / f for lo, f in zip(lost, fired))
            gtxt = f"{max(grew):.0f} ({len(grew)} of {len(v)})" if grew else "no"
            bad = sum(1 for w, lo, f in zip(written, lost, fired) if w + lo != f)
            L.append(f"| {label} | {names[load]} | {len(v)} | "
                     f"{mmm(lost, lambda x: f'{int(x):,}')} | {pct:.1f}% | {ok} of {len(v)} | "
                     f"{mmm(rec, lambda x: f'{x:.2f}')} | {statistics.median(wall):.0f} | {gtxt} | "
                     f"{'all' if not bad else f'{len(v) - bad} of {len(v)}'} |")
    L.append("")
    before = [lab for lab in labels if lab.startswith("before")]
    if before:
        L.append(f"`before` is commit {params.get('before', '?')} built the same way "
                 f"(bench/out/before); `after` is commit {params.get('after', '?')}.  "
                 "The analysis is in docs/design-notes.md, \"The recorder keeps up\".")
        L.append("")
    L.append(END)
    section = "\n".join(L)
    text = open(results).read() if os.path.exists(results) else ""
    if START in text and END in text:
        a = text.index(START)
        b = text.index(END) + len(END)
        text = text[:a] + section + text[b:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    with open(results, "w") as f:
        f.write(text)


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    cmd, argv = sys.argv[1], sys.argv[2:]
    if cmd == "wrap":
        sys.exit(wrap(argv))
    if cmd == "run":
        return run(argv)
    if cmd == "report":
        return report(argv)
    sys.exit(__doc__)


if __name__ == "__main__":
    main()
