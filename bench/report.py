#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Turn the raw output of bench/run.sh into bench/RESULTS.md.

usage: report.py DATA_DIR RESULTS_MD SOURCE_DIR BUILD_DIR

DATA_DIR holds what run.sh wrote: counts.txt (callgrind totals),
times.txt (timed runs), disasm/<label>.<function>.txt (objdump -d),
cg/<label>.<case>.out (callgrind profiles), params.txt, clang.txt and
lttng-on.txt.
"""
import datetime
import os
import re
import shutil
import statistics
import subprocess
import sys

# (label, case, title) in table order; label names the binary.
ROWS = [
    ("utrace", "empty", "empty loop (baseline)"),
    ("utrace", "flag", "inline `if (volatile flag)` (baseline)"),
    ("utrace", "utrace_off", "**utrace, event off**"),
    ("utrace", "utrace_on", "**utrace, event on, one empty probe**"),
    ("utrace-disabled", "utrace_disabled", "utrace built with `-DUTRACE_DISABLE`"),
    ("lttng", "lttng_off", "LTTng-UST `tracepoint()`, off (no session)"),
    ("lttng", "lttng_on", "LTTng-UST `tracepoint()`, on (snapshot session)"),
    ("utrace-clang", "empty", "empty loop, call site built by clang"),
    ("utrace-clang", "flag", "inline `if (volatile flag)`, built by clang"),
    ("utrace-clang", "utrace_off", "utrace, event off, call site built by clang"),
    ("utrace-clang", "utrace_on", "utrace, event on, empty probe, call site built by clang"),
]

BUILD = {
    "utrace": "cc -O2, libutrace.so",
    "utrace-disabled": "cc -O2, no library",
    "lttng": "cc -O2, -llttng-ust",
    "utrace-clang": "clang -O2, libutrace.so",
}

# The word the call site tests, as objdump names it in its comments.
SYMBOLS = {
    "utrace": "__tracepoint_bench_ev",
    "utrace-clang": "__tracepoint_bench_ev",
    "utrace-disabled": "__tracepoint_bench_ev",
    "lttng": "lttng_ust_tracepoint_bench___bench_ev",
}

PREFIXES = {"cs", "ds", "es", "ss", "fs", "gs", "rep", "repz", "repe",
            "repnz", "repne", "lock", "notrack", "bnd", "data16", "addr32"}


def sh(*cmd):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
        return (r.stdout or r.stderr).strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def first_line(text):
    return text.splitlines()[0] if text else "(not found)"


def read_kv(path):
    kv = {}
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.strip().partition(" ")
            if k:
                kv[k] = v
    return kv


# --------------------------------------------------------------- data

def read_counts(data):
    counts = {}
    path = os.path.join(data, "counts.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 5 and f[0] == "COUNT":
                counts[(f[1], f[2])] = (int(f[3]), int(f[4]))
    return counts


def read_times(data):
    times = {}
    path = os.path.join(data, "times.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 6 and f[0] == "TIME":
                label, case, n, ns = f[1], f[2], int(f[4]), int(f[5])
                times.setdefault((label, case), []).append(ns / n)
    return times


# -------------------------------------------------------- disassembly

INSN = re.compile(r"^\s*([0-9a-f]+):\s+(.*)$")
TARGET = re.compile(r"^([0-9a-f]+)\s*<")


def parse_disasm(path):
    insns = []
    if not os.path.exists(path):
        return insns
    for line in open(path):
        m = INSN.match(line.rstrip("\n"))
        if not m:
            continue
        body, _, comment = m.group(2).partition("#")
        words = body.split()
        while words and words[0] in PREFIXES and len(words) > 1:
            words = words[1:]
        if not words:
            continue
        insns.append({
            "addr": int(m.group(1), 16),
            "mnem": words[0],
            "ops": " ".join(words[1:]),
            "comment": comment.strip(),
            "text": re.sub(r"\s+", " ", m.group(2).strip()),
        })
    return insns


def jump_target(insn):
    m = TARGET.match(insn["ops"])
    return int(m.group(1), 16) if m else None


def tests_symbol(path, sym, sym_regs):
    """Does the flag-setting code just before the last insn of path read
    the tracepoint's word (directly, or through a register holding its
    address or its value)?"""
    for insn in reversed(path[-5:-1]):
        if insn["mnem"].startswith("j"):
            break
        if sym in insn["comment"]:
            return True
        if any("(" + r + ")" in insn["ops"] for r in sym_regs):
            return True
    return False


def hot_path(insns, sym):
    """Follow the function from its entry the way a long run with the
    event off goes: the entry check (n != 0) falls through, the test of
    the tracepoint's word goes the 'off' way, backward branches loop.
    Returns the instructions of one iteration, or None."""
    if not insns:
        return None
    index = {insn["addr"]: k for k, insn in enumerate(insns)}
    sym_regs = set()
    path, seen, k = [], {}, 0
    for _ in range(500):
        if k >= len(insns):
            return None
        insn = insns[k]
        if insn["addr"] in seen:
            return path[seen[insn["addr"]]:]
        seen[insn["addr"]] = len(path)
        path.append(insn)
        mnem = insn["mnem"]
        if sym and sym in insn["comment"] and mnem.startswith(("lea", "mov")):
            m = re.search(r",\s*(%\w+)$", insn["ops"])
            if m:
                sym_regs.add(m.group(1))
        if mnem.startswith("ret"):
            return None
        if mnem.startswith("j"):
            t = jump_target(insn)
            if mnem in ("jmp", "jmpq"):
                if t is None or t not in index:
                    return None
                k = index[t]
                continue
            if sym and tests_symbol(path, sym, sym_regs) \
                    and mnem in ("je", "jz", "jne", "jnz"):
                # Off means the word is 0: 'je' is taken, 'jne' is not.
                take = mnem in ("je", "jz")
            else:
                take = t is not None and t <= insn["addr"]
            if take and t in index:
                k = index[t]
            else:
                k += 1
            continue
        k += 1
    return None


# ------------------------------------------------------------ callgrind

CG_LINE = re.compile(r"^\s*([\d,]+)\s+\(\s*[\d.]+%\)\s+(.*)$")


def cg_breakdown(path, n):
    """Exclusive instructions per call of each function run inside the
    measured loop, from callgrind_annotate."""
    if not os.path.exists(path) or not shutil.which("callgrind_annotate"):
        return []
    text = sh("callgrind_annotate", "--inclusive=no", "--threshold=100", path)
    out, started = {}, False
    for line in text.splitlines():
        if "file:function" in line:
            started = True
            continue
        if not started:
            continue
        if line.startswith("-- "):
            break
        m = CG_LINE.match(line)
        if not m:
            continue
        ir = int(m.group(1).replace(",", ""))
        name = m.group(2)
        obj = ""
        om = re.search(r"\s\[(.*)\]$", name)
        if om:
            obj = os.path.basename(om.group(1))
            name = name[:om.start()]
        fn = name.rsplit(":", 1)[-1].strip()
        ent = out.setdefault(fn, [0, ""])
        ent[0] += ir
        ent[1] = ent[1] or obj
    rows = [(fn, ir / n, obj) for fn, (ir, obj) in out.items()]
    rows.sort(key=lambda r: -r[1])
    return [r for r in rows if r[1] >= 0.005]


# ---------------------------------------------------------- recording

def read_recording(data):
    """The files of bench/run.sh's recording part, in data/rec."""
    rd = os.path.join(data, "rec")
    rec = {"times": {}, "utrace_files": {}, "lttng_files": [], "counts": {},
           "reads": {}, "read_status": {}, "read_check": {}, "read_bytes": {}, "status": {},
           "filestats": {}}
    path = os.path.join(rd, "times.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            # REC label threads run thread n ns [cpu-ns cpu]
            if len(f) in (7, 9) and f[0] == "REC":
                label, t, r, th, n, ns = f[1], int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6])
                cpu_ns, cpu = (int(f[7]), int(f[8])) if len(f) == 9 else (None, None)
                rec["times"].setdefault((label, t), []).append(
                    (r, th, ns / n, cpu_ns / n if cpu_ns is not None else None, cpu))
    path = os.path.join(rd, "files.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 7 and f[0] == "FILE":
                # FILE utrace threads run bytes events lost
                rec["utrace_files"].setdefault((f[1], int(f[2])), []).append(
                    (int(f[3]), int(f[4]), int(f[5]), int(f[6])))
            elif len(f) == 5 and f[0] == "LTTNG":
                # LTTNG run bytes discarded counted
                rec["lttng_files"].append((int(f[1]), int(f[2]), int(f[3]), int(f[4])))
    rec["long"] = {}
    rec["long_status"] = None
    path = os.path.join(rd, "long.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            # LONG label fired written(-1: not known) lost bytes ns
            if len(f) == 7 and f[0] == "LONG":
                rec["long"][f[1]] = tuple(int(x) for x in f[2:])
            elif f and f[0] == "LONGSTATUS":
                rec["long_status"] = line.strip().split(" ", 1)[1]
    path = os.path.join(rd, "counts.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 5 and f[0] == "COUNT":
                rec["counts"][(f[1], f[2])] = (int(f[3]), int(f[4]))
    path = os.path.join(rd, "read.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 5 and f[0] == "READ":
                rec["reads"].setdefault(f[1], []).append((int(f[3]), int(f[4])))
            elif len(f) == 3 and f[0] == "READBYTES":
                rec["read_bytes"][f[1]] = int(f[2])
            elif len(f) >= 3 and f[0] == "READSTATUS":
                rec["read_status"][f[1]] = line.strip().split(" ", 2)[2]
            elif len(f) >= 3 and f[0] == "READCHECK":
                rec["read_check"][f[1]] = line.strip().split(" ", 2)[2]
    path = os.path.join(rd, "status.txt")
    if os.path.exists(path):
        for line in open(path):
            k, _, v = line.strip().partition(" ")
            rec["status"][k] = v
    rec["cpus"] = {}
    path = os.path.join(rd, "cpus.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            # CALLS before|after cpu n ns
            if len(f) == 5 and f[0] == "CALLS":
                rec["cpus"].setdefault((f[1], int(f[2])), []).append(int(f[4]) / int(f[3]))
    for t in (1, 2):
        kv = read_kv(os.path.join(rd, f"filestats-{t}t.txt"))
        if kv:
            rec["filestats"][t] = kv
    return rec


def latency_section(w, rec, params, read_rows, speeds):
    """The latency report and the offline hist triggers, next to
    trace-cmd report on the same events and perf."""
    w("#### `utrace report --latency` and `utrace hist`, next to trace-cmd and perf")
    w("")
    pairs = params.get("lat_pairs", "?")
    pairs = f"{int(pairs):,}" if pairs.isdigit() else pairs
    w(f"**hist**: `utrace hist` with one trigger (25 log2 buckets of b, a "
      f"summed) on the 1-thread file of the table above; its peer is that "
      f"table's `trace-cmd report` row (the same events, converted), as "
      f"trace-cmd has no offline hist.  **latency**: a file of its own, "
      f"`bench-record-utrace pairs {pairs}` recorded once with `utrace record "
      f"-m 256M` (room for the whole burst): {pairs} begins (bench_ev, its b "
      f"the id) and {pairs} ends (bench_str, its n the same id, one of 8 "
      f"paths), each end 64 ids after its begin, so 64 pairs are open at any "
      f"time; `--latency bench_ev.b:bench_str.n --sort bench_str.path` pairs "
      f"them per process, by id, and prints the per-path table and 8 log2 "
      f"histograms; the same without `--sort` (one row, by comm, the default "
      f"key) shows what the path key costs.  Beside them, a plain `utrace "
      f"report` (counts by comm and "
      f"event) and `trace-cmd report` on the `utrace convert` of that file "
      f"(conversion not timed).  events/s counts every event of the file "
      f"(begins and ends), as the other rows do.")
    w("")
    w("| reader | trace | events | seconds min / median / max | events/s |")
    w("|---|---|---:|---:|---:|")
    read_rows((("utrace-hist", "`utrace hist -i FILE bench_ev 'hist:keys=b.log2:vals=a' "
                "> /dev/null`", "utrace file, 1 thread"),
               ("trace-cmd", "`trace-cmd report -i FILE > /dev/null`",
                "`utrace convert` of the utrace file"),
               ("utrace-latency", "`utrace report -i FILE --latency bench_ev.b:bench_str.n "
                "--sort bench_str.path > /dev/null`", "pairs file"),
               ("utrace-latency-comm", "`utrace report -i FILE --latency "
                "bench_ev.b:bench_str.n > /dev/null`", "pairs file"),
               ("utrace-report-pairs", "`utrace report -i FILE > /dev/null`", "pairs file"),
               ("trace-cmd-pairs", "`trace-cmd report -i FILE > /dev/null`",
                "`utrace convert` of the pairs file"),
               ("perf", "`perf report --stdio -i FILE`", "`utrace convert` of the pairs file")))
    cells = []
    for key, peer, what, pwhat in (
            ("utrace-hist", "trace-cmd", "`utrace hist`", "`trace-cmd report`"),
            ("utrace-latency", "trace-cmd-pairs", "`utrace report --latency`",
             "`trace-cmd report`"),
            ("utrace-latency", "utrace-report-pairs", "`utrace report --latency`",
             "a plain `utrace report`")):
        if key in speeds and peer in speeds:
            r = speeds[key] / speeds[peer]
            cells.append(f"{what} {r:.1f}x the events/s of {pwhat} on the same events"
                         if r >= 1 else
                         f"{what} takes {1 / r:.1f}x the time of {pwhat} on the same events")
    if cells:
        w("Ratios: " + "; ".join(cells) + ".")
        w("")
    chk = rec["read_check"]
    for key, what in (("pairs-file", "the pairs file"),
                      ("utrace-latency", "`utrace report --latency` found"),
                      ("utrace-hist", "`utrace hist`'s Totals")):
        if key in chk:
            w(f"- {what}: {chk[key].strip()}")
    if chk:
        w("")
    st = rec["read_status"].get("perf")
    if st and st.startswith("cannot"):
        w("perf reads only its own perf.data (kernel samples and tracepoints it "
          "recorded itself); there is no conversion from a trace.dat or a utrace "
          "file to it, so perf has no row of figures here.")
        w("")


def pct(x):
    return f"{100 * x:.2f}%"


def recording_section(w, data, params, counts, top):
    rec = read_recording(data)
    if not rec["times"] and not rec["counts"]:
        return
    rd = os.path.join(data, "rec")
    rec_n = int(params.get("rec_n", "0") or 0)
    runs = params.get("rec_runs", "?")
    cg_n = int(params.get("rec_cg_n", "0") or 0)
    lttng_status = rec["status"].get("lttng", "not run")

    def stats(label, t, thread=None, cpu=None, own=False):
        # own: the thread's own CPU time per event instead of wall time
        v = [(c if own else x) for r, th, x, c, where in rec["times"].get((label, t), [])
             if (thread is None or th == thread) and (cpu is None or where == cpu)]
        if not v or None in v:
            return None
        return min(v), statistics.median(v), max(v), len(v)

    def cpu_of(label, t, thread):
        # the CPU a pinned thread ran on (the same in every run), else None
        cpus = {where for r, th, x, c, where in rec["times"].get((label, t), [])
                if th == thread}
        return cpus.pop() if len(cpus) == 1 else None

    def vs_alone(label, thread, own=False, base=None):
        # a thread of a 2-thread run over one thread alone (of 'base', by
        # default the same case) on the same CPU, medians; without pinning,
        # over all 1-thread runs
        base = base or label
        s = stats(label, 2, thread, own=own)
        cpu = cpu_of(label, 2, thread)
        one = stats(base, 1, cpu=cpu, own=own) if cpu is not None else None
        if one is None:
            one = stats(base, 1, own=own)
        return ratio(med(s), med(one)) if s and one else None

    def cell(s):
        return f"{s[0]:.2f} / {s[1]:.2f} / {s[2]:.2f}" if s else "n/a"

    def ratio(a, b):
        return a / b if a is not None and b else None

    def med(s):
        return s[1] if s else None

    def rcell(x):
        return f"{x:.2f}x" if x is not None else "n/a"

    def instr(label):
        c = rec["counts"].get((label, "bench_rec_loop"))
        e = rec["counts"].get((label, "bench_rec_loop_empty"))
        if not c or not e:
            return None
        return c[1] / c[0] - e[1] / e[0]

    raw1, raw2 = stats("raw", 1), stats("raw", 2)
    u1 = stats("utrace", 1)
    up1 = stats("utrace-pool", 1)
    ul1 = stats("utrace-lost", 1)
    lt1 = stats("lttng", 1)
    pinned = cpu_of("utrace", 2, 0) is not None

    # utrace files: per threads, list of (run, bytes, events, lost)
    def ufiles(t, label="utrace"):
        return sorted(rec["utrace_files"].get((label, t), []))

    def lost_cell(files, expected):
        if not files:
            return "n/a", None
        lost = [f[3] for f in files]
        tot_ev = sum(f[2] + f[3] for f in files)
        tot_lost = sum(lost)
        if tot_lost == 0:
            return f"0 in all {len(files)} runs", 0
        per = ", ".join(f"{x:,}" for x in lost)
        return (f"{tot_lost:,} of {tot_ev:,} ({pct(tot_lost / tot_ev)}); "
                f"per run: {per}"), tot_lost

    def bpe(files):
        v = [f[1] / f[2] for f in files if f[2]]
        return statistics.median(v) if v else None

    uf1, uf2 = ufiles(1), ufiles(2)
    u1_lost_text, u1_lost = lost_cell(uf1, rec_n)
    u2_lost_text, _ = lost_cell(uf2, 2 * rec_n)
    ui2_lost_text, _ = lost_cell(ufiles(2, "utrace-idle"), 2 * rec_n)
    u1_bpe, u2_bpe = bpe(uf1), bpe(uf2)

    lf = sorted(rec["lttng_files"])
    lt_lost_text, lt_bpe = "n/a", None
    if lf:
        parts, tot_lost, counted_all = [], 0, True
        for r, nbytes, disc, counted in lf:
            if counted >= 0:
                lost = rec_n - counted
            else:
                counted_all = False
                lost = disc
            tot_lost += lost
            parts.append(f"{lost:,}")
        discs = sum(x[2] for x in lf)
        how = (f"{rec_n:,} minus the events babeltrace2 counted" if counted_all
               else "discarded events in `lttng list`")
        lt_lost_text = (f"0 in all {len(lf)} runs" if tot_lost == 0 else
                        f"{tot_lost:,} of {rec_n * len(lf):,} "
                        f"({pct(tot_lost / (rec_n * len(lf)))}); per run: {', '.join(parts)}")
        lt_lost_text += f" ({how}; `lttng list` discarded: {discs:,} in all)"
        v = [nbytes / (counted if counted > 0 else rec_n - disc)
             for r, nbytes, disc, counted in lf if (counted if counted > 0 else rec_n - disc) > 0]
        lt_bpe = statistics.median(v) if v else None

    ui, ri = instr("utrace"), instr("raw")
    lc, le = counts.get(("lttng", "lttng_on")), counts.get(("lttng", "empty"))
    li = (lc[1] / lc[0] - le[1] / le[0]) if lc and le else None

    w("## Recording")
    w("")
    w(f"A two-field event (`u64 a`, `u32 b`: `bench_ev` of `bench/bench-events.h`, "
      f"the same as `bench:bench_ev` of `bench/bench-lttng-tp.h`) fired in a loop of "
      f"{rec_n:,} iterations per thread, switched on and really recorded; program "
      f"`bench/bench-record.c`.  {runs} rounds; each round runs every case once, "
      f"in turn.")
    w("")
    w("- **utrace**: `utrace record -o FILE -- bench-record-utrace run N THREADS`, "
      "default buffer (`-m` not given: 8 MiB of pages per process, discard mode); the "
      "file is on the disk of bench/out.  Events lost: the recorder's summary line "
      "(`utrace record: N events written, M lost, ...`).  Bytes/event: file size / "
      "events written.")
    w("- **utrace record `--idle`**: the same with the recorder at idle priority "
      "(SCHED_IDLE): it only takes CPU time the program leaves, so with 2 threads "
      "on 2 CPUs it gives the CPUs to the program and loses events instead.")
    w("- **utrace, the writer alone**: the same program with `UTRACE_EVENTS='bench:*'` "
      "and no recorder: events go into the process's own buffer (8 MiB, overwrite mode, "
      "as `utrace show` reads it), which nothing copies out meanwhile.  The difference "
      "from the `utrace record` row is what the recorder writing the file next to the "
      "program costs it: the recorder's CPU time on a 2-core machine, and the "
      "pages coming back from it (it flushes their cache lines first; without "
      "that a recorded event cost about twice as much, see \"Giving pages back "
      "cold\" in docs/design-notes.md).")
    w("- **utrace, buffer full**: the same in discard mode: once the 8 MiB are "
      "full, every event is lost and counted, so this row is what a lost event "
      "costs the program.")
    w("- **raw store**: no tracer; each event writes a 24-byte record `{u64 rdtsc; "
      "u64 a; u32 b; u32 pad}` into a preallocated, pre-touched per-thread array "
      f"({rec_n * 24 / 1e6:.0f} MB per thread).  This is the floor: a timestamp and "
      "three stores.")
    w("- **LTTng-UST**: `lttng create --output=DIR`, `lttng enable-event -u 'bench:*'`, "
      "`lttng start`, run, `lttng stop`, `lttng destroy`, one session per run, "
      f"the default channel (see below), to disk.  Events lost: {rec_n:,} minus the "
      "events `babeltrace2 DIR -c sink.utils.counter` counts, next to the "
      "`Discarded events` of `lttng list SESSION`.  Bytes/event: `du -sb DIR` / "
      "events.")
    w("- **ns/event**: `clock_gettime(CLOCK_MONOTONIC)` around each thread's loop, "
      "inside the program, after 0.2 s of spinning without events; with 2 threads "
      "both start together at a barrier, each timed on its own.  min / median / max "
      "over the runs (and, for the all-threads row, over both threads).  The loop "
      "itself costs about 0.3 ns (the call-site table above) and is not "
      "subtracted.  **own CPU**: the thread's CPU time "
      "(`CLOCK_THREAD_CPUTIME_ID`) over the same loop, per event, median: it leaves "
      "out the time the thread waited for a CPU while another task (the recorder) "
      "ran on it.")
    if pinned:
        w("- **pinned**: in a 2-thread run thread k runs on CPU k; the 1-thread runs "
          "alternate between CPU 0 and CPU 1 by round (`BENCH_PIN`); the recorder "
          "and LTTng's daemons are not pinned.  On this VM one vCPU can run code "
          "much slower than the other for hours (seen: a call loop 1.4x slower on "
          "CPU 0 than on CPU 1, while an `rdtsc` loop ran the same on both), so "
          "each thread is compared with one thread alone on the same CPU.")
    w("- **ratios** use the medians.  \"vs 1 thread\" is each thread's median in "
      "the 2-thread runs over the median of the 1-thread runs of the same tracer"
      + (" on the same CPU" if pinned else "") + ", of the wall time and of the "
      "thread's own CPU time.")
    w("")
    w("| case | threads | ns/event min / median / max | own CPU ns/event | vs raw store | "
      "vs LTTng-UST | vs 1 thread: wall / own CPU | events lost | bytes/event on disk |")
    w("|---|---:|---:|---:|---:|---:|---:|---|---:|")

    def owncell(label, t, th=None):
        o = stats(label, t, th, own=True)
        return f"{o[1]:.2f}" if o else "n/a"

    def alone(label, th, base=None):
        a, b = vs_alone(label, th, base=base), vs_alone(label, th, own=True, base=base)
        return f"{rcell(a)} / {rcell(b)}"

    if raw1:
        w(f"| raw per-thread store (baseline) | 1 | {cell(raw1)} | {owncell('raw', 1)} | "
          f"1.00x | {rcell(ratio(med(raw1), med(lt1)))} | - | - (memory) | 24 (in memory) |")
    for th in (0, 1):
        s2 = stats("raw", 2, th)
        if s2:
            w(f"| raw per-thread store (baseline), thread {th} | 2 | {cell(s2)} | "
              f"{owncell('raw', 2, th)} | 1.00x | - | {alone('raw', th)} | - (memory) | "
              f"24 (in memory) |")
    if u1:
        w(f"| **utrace record** | 1 | {cell(u1)} | {owncell('utrace', 1)} | "
          f"{rcell(ratio(med(u1), med(raw1)))} | "
          f"{rcell(ratio(med(u1), med(lt1)))} | 1.00x | {u1_lost_text} | "
          f"{fmt(u1_bpe)} |")
    else:
        w("| **utrace record** | 1 | n/a (see bench/out/data/rec/utrace-1.*.err) "
          "| n/a | n/a | n/a | n/a | n/a | n/a |")
    def two_thread_rows(title, label, lost, nbytes, base=None, per_run=True):
        # thread 0 carries the runs' loss and file size; thread 1 says
        # "(same runs)" unless the text is not per run
        for th in (0, 1):
            s2 = stats(label, 2, th)
            if not s2:
                continue
            w(f"| {title}, thread {th} | 2 | {cell(s2)} | {owncell(label, 2, th)} | "
              f"{rcell(ratio(med(s2), med(stats('raw', 2, th))))} (vs raw, same thread) | - | "
              f"{alone(label, th, base=base)} | "
              f"{lost if th == 0 or not per_run else '(same runs)'} | "
              f"{nbytes if th == 0 or not per_run else '(same files)'} |")

    two_thread_rows("**utrace record**", "utrace", u2_lost_text, fmt(u2_bpe))
    two_thread_rows("utrace record `--idle` (recorder at SCHED_IDLE)", "utrace-idle",
                    ui2_lost_text, fmt(bpe(ufiles(2, 'utrace-idle'))), base="utrace")
    if up1:
        w(f"| utrace, the writer alone (no recorder; own 8 MiB buffer, overwrite) | 1 | "
          f"{cell(up1)} | {owncell('utrace-pool', 1)} | {rcell(ratio(med(up1), med(raw1)))} | "
          f"{rcell(ratio(med(up1), med(lt1)))} | - | (overwritten, not lost) | - |")
    two_thread_rows("utrace, the writer alone (no recorder; overwrite)", "utrace-pool",
                    "(overwritten, not lost)", "-", per_run=False)
    if ul1:
        per_loop = 8 * 1024 * 1024 // 24
        w(f"| utrace, buffer full (no recorder; own 8 MiB buffer, discard) | 1 | "
          f"{cell(ul1)} | {owncell('utrace-lost', 1)} | {rcell(ratio(med(ul1), med(raw1)))} | "
          f"{rcell(ratio(med(ul1), med(lt1)))} | - | all but the first ~{per_loop:,} "
          f"(the lost path) | - |")
    if lt1:
        w(f"| LTTng-UST, session to disk | 1 | {cell(lt1)} | {owncell('lttng', 1)} | "
          f"{rcell(ratio(med(lt1), med(raw1)))} | 1.00x | - | {lt_lost_text} | "
          f"{fmt(lt_bpe)} |")
    else:
        w(f"| LTTng-UST, session to disk | 1 | n/a | n/a | n/a | n/a | n/a | "
          f"n/a ({lttng_status}) | n/a |")
    w("")
    if pinned:
        def per_cpu(label):
            parts = []
            for c in (0, 1):
                st = stats(label, 1, cpu=c)
                if st:
                    parts.append(f"CPU {c} {st[1]:.2f} ns ({st[3]} runs)")
            return ", ".join(parts) if parts else "n/a"
        w(f"One thread alone, medians by CPU: utrace record {per_cpu('utrace')}; "
          f"raw store {per_cpu('raw')}; utrace without a recorder "
          f"{per_cpu('utrace-pool')}.")
        cc = rec["cpus"]
        if cc:
            def cpu_ns(when, c):
                v = cc.get((when, c))
                return f"{min(v):.2f}" if v else "n/a"
            w("")
            w("How fast each CPU ran plain code: a loop of 100,000,000 calls of an "
              "empty function (`bench-record-raw calls`), pinned, min of 3, ns per "
              "call, before / after the rounds: "
              + ", ".join(f"CPU {c} {cpu_ns('before', c)} / {cpu_ns('after', c)}"
                          for c in (0, 1))
              + ".  The raw store hardly shows a slow CPU (its loop waits on "
              "`rdtsc`, about 11 ns, the same on both); utrace's event, which "
              "runs about 200 instructions beside its `rdtsc`, does.")
        w("")

    # ------------------------------------------------ instructions
    w("### Instructions per event (callgrind)")
    w("")
    w(f"`valgrind --tool=callgrind --collect-atstart=no --toggle-collect=FN` of "
      f"`bench-record-X count {cg_n}`: the event loop (`bench_rec_loop`) and the "
      f"empty loop (`bench_rec_loop_empty`) of the same program, {cg_n:,} "
      f"iterations each, after 1,000 warm-up events outside the counted function "
      f"(the thread's slot and first page).  utrace runs under `utrace record -o "
      f"FILE -- valgrind ...`, so every event goes into the pool's pages and the "
      f"page hand-overs are counted.  Exact and repeatable, unlike the times.")
    w("")
    w("| case | instr/event (loop subtracted) | vs raw store |")
    w("|---|---:|---:|")
    if ri is not None:
        w(f"| raw per-thread store | {fmt(ri)} | 1.00x |")
    if ui is not None:
        w(f"| **utrace, recorded** (`utrace record -- valgrind ...`) | {fmt(ui)} | "
          f"{rcell(ratio(ui, ri))} |")
    else:
        w("| **utrace, recorded** | n/a (see bench/out/data/rec/cg.utrace.*.log) | n/a |")
    if li is not None:
        w(f"| LTTng-UST on, from the call-site table (snapshot session; the same "
          f"probe and ring-buffer code as to disk) | {fmt(li)} | {rcell(ratio(li, ri))} |")
    w("")
    c = rec["counts"].get(("utrace", "bench_rec_loop"))
    if c:
        rows = cg_breakdown(os.path.join(rd, "cg.utrace.bench_rec_loop.out"), c[0])
        if rows:
            w(f"Where the recorded utrace path goes ({c[1] / c[0]:.1f} instructions "
              f"per iteration in all, loop included; exclusive, callgrind):")
            w("")
            w("| function | object | instr/event |")
            w("|---|---|---:|")
            for fn, per, obj in rows[:15]:
                w(f"| `{fn}` | {obj} | {per:.2f} |")
            w("")

    # ------------------------------------------------ file layout
    fs = rec["filestats"].get(1)
    if fs and uf1:
        ev = uf1[-1][2]
        fb = int(fs.get("file_bytes", 0))
        pages = int(fs.get("pages", 0))
        page_size = int(fs.get("page_size", 4096))
        committed = int(fs.get("page_committed_bytes", 0))
        unused = int(fs.get("page_unused_bytes", 0))
        page_rec = int(fs.get("bytes_page", 0))
        other = fb - page_rec
        if ev and pages:
            w("### Where the bytes of a utrace file go")
            w("")
            w(f"The last 1-thread file ({fb:,} bytes, {ev:,} events), walked record "
              f"by record (`bench/tracefile-stats.py`):")
            w("")
            w("| part | bytes | per event |")
            w("|---|---:|---:|")
            w(f"| events in pages (commit words) | {committed:,} | {committed / ev:.3f} |")
            w(f"| unused ends of pages | {unused:,} | {unused / ev:.3f} |")
            w(f"| page headers (16 B each, {pages:,} pages) | {16 * pages:,} | "
              f"{16 * pages / ev:.3f} |")
            w(f"| PAGE record headers (16 + 32 B each) | {page_rec - pages * page_size:,} | "
              f"{(page_rec - pages * page_size) / ev:.3f} |")
            w(f"| file header and other records | {other:,} | {other / ev:.4f} |")
            w(f"| **total** | {fb:,} | {fb / ev:.3f} |")
            w("")
            per_page = ev / pages
            data_room = page_size - 16
            w(f"Each event takes {committed / ev:.0f} bytes in its page (a 4-byte "
              f"header word and the 20-byte record: 8 bytes of common fields, `a`, "
              f"`b`, no tail padding).  A page holds {per_page:.1f} events on "
              f"average, {data_room - per_page * (committed / ev):.0f} bytes of its "
              f"{data_room} data bytes unused; with the 64 bytes a page costs on "
              f"top (its header and the PAGE record header), the file needs "
              f"{fb / ev:.2f} bytes per event.")
            w("")

    # ------------------------------------------------ reading
    w("### Reading the traces back")
    w("")
    read_runs = params.get("read_runs", "?")
    w(f"Each reader run {read_runs} times on the last trace of the runs above, "
      f"output to /dev/null; wall-clock time of the whole command (start-up "
      f"included).  events/s from the fastest run.")
    w("")
    w("| reader | trace | events | seconds min / median / max | events/s |")
    w("|---|---|---:|---:|---:|")
    readers = (("utrace-script", "`utrace script -i FILE > /dev/null`",
                "utrace file, 1 thread"),
               ("utrace-report", "`utrace report -i FILE > /dev/null`",
                "utrace file, 1 thread"),
               ("babeltrace2", "`babeltrace2 DIR > /dev/null`", "LTTng trace, 1 thread"),
               ("trace-cmd", "`trace-cmd report -i FILE > /dev/null`",
                "`utrace convert` of the utrace file"),
               ("convert-ctf", "`utrace convert -i FILE --format ctf -o DIR`",
                "utrace file, 1 thread"),
               ("convert-sqlite", "`utrace convert -i FILE --format sqlite -o DB`",
                "utrace file, 1 thread"),
               ("babeltrace2-ctf", "`babeltrace2 DIR > /dev/null`",
                "`utrace convert --format ctf` of the utrace file"),
               ("convert-html", "`utrace convert -f html -i FILE -o OUT`",
                "utrace file, 1 thread"),
               ("convert-json", "`utrace convert -f json -i FILE -o OUT`",
                "utrace file, 1 thread"),
               ("convert-perfetto", "`utrace convert -f perfetto -i FILE -o OUT`",
                "utrace file, 1 thread"))
    speeds = {}

    def read_rows(readers):
        for key, title, trace in readers:
            v = rec["reads"].get(key)
            st = rec["read_status"].get(key)
            if v:
                secs = [ns / 1e9 for _, ns in v]
                evn = v[0][0]
                speeds[key] = evn / min(secs)
                w(f"| {title} | {trace} | {evn:,} | {min(secs):.2f} / "
                  f"{statistics.median(secs):.2f} / {max(secs):.2f} | "
                  f"{speeds[key] / 1e6:.2f} M |")
            else:
                w(f"| {title} | {trace} | - | - | {st or 'not run'} |")
        w("")
    read_rows(readers)
    rb = rec["read_bytes"]
    if rb.get("utrace-script") and speeds.get("utrace-script"):
        cells = []
        for key, what in (("convert-ctf", "CTF"), ("convert-sqlite", "SQLite"),
                          ("convert-html", "HTML"), ("convert-json", "JSON"),
                          ("convert-perfetto", "Perfetto")):
            if key in speeds and rb.get(key):
                v = rec["reads"][key]
                cells.append(f"{what} {speeds[key] / speeds['utrace-script']:.2f}x the "
                             f"speed of `utrace script`, {rb[key] / v[0][0]:.1f} bytes/event")
        if cells:
            ev = rec["reads"]["utrace-script"][0][0]
            w(f"The exports: {'; '.join(cells)} (the utrace file: "
              f"{rb['utrace-script'] / ev:.1f} bytes/event).")
            w("")
    latency_section(w, rec, params, read_rows, speeds)
    if "utrace-script" not in speeds:
        st = rec["read_status"].get("utrace-script", "not run")
        w(f"`utrace script` was not measured: {st}; its rows and its target "
          f"wait for it.")
        w("")

    # ------------------------------------------------ sustained
    lg = rec["long"]
    long_secs = params.get("long_secs", "?")
    if lg or rec["long_status"]:
        w(f"### {long_secs} seconds at full speed")
        w("")
        w(f"One thread fires the event in a loop for {long_secs} s (`bench-record-X for "
          f"{long_secs}`) and prints how many it fired; `utrace record -o FILE` with "
          f"the default buffer, then an LTTng session to disk with the default "
          f"channel.  **written + lost**: the recorder's summary line; it must "
          f"equal the events fired, to the event.  LTTng's loss is the "
          f"`Discarded events` of `lttng list` (its events are not counted here: "
          f"babeltrace2 would take minutes).  **produced**: what the program "
          f"produced per second at 24 B an event; **written**: file size over "
          f"the run's time.")
        w("")
        if rec["long_status"]:
            w(f"Not run: {rec['long_status']}.")
            w("")
    if lg:
        w("| tracer | events fired | written | lost | written + lost = fired? | "
          "ns/event | produced MB/s | file MB/s |")
        w("|---|---:|---:|---:|---|---:|---:|---:|")
        for label, title in (("utrace", "utrace record"), ("lttng", "LTTng-UST")):
            if label not in lg:
                continue
            fired, written, lost, size, ns = lg[label]
            secs = ns / 1e9
            exact = ("yes" if written + lost == fired else
                     f"**no** (off by {written + lost - fired:+,})") if written >= 0 else "-"
            w(f"| {title} | {fired:,} | {written:,} | {lost:,} "
              f"({pct(lost / fired) if fired else '-'}) | {exact} | "
              f"{ns / fired:.2f} | {fired * 24 / secs / 1e6:.0f} | {size / secs / 1e6:.0f} |"
              if written >= 0 else
              f"| {title} | {fired:,} | - | {lost:,} discarded "
              f"({pct(lost / fired) if fired else '-'}) | - | "
              f"{ns / fired:.2f} | {fired * 24 / secs / 1e6:.0f} | {size / secs / 1e6:.0f} |")
        w("")
        if "utrace" in lg and lg["utrace"][2] > 0:
            w("utrace loses events here because the program produces events "
              "faster than this machine can move them to the file: the "
              "writer thread takes one of the two cores, and the recorder "
              "(7.5 to 9 ns of CPU per written event, mostly the kernel copying "
              "pages into the page cache: measured by hand, see docs/design-notes.md) "
              "shares the other with the kernel's writeback.  Every lost event is counted, per process, and "
              "marked where it happened in the file.")
            w("")

    # ------------------------------------------------ targets
    w("### Targets")
    w("")
    w("The issue's targets, next to the figures above (medians):")
    w("")

    def verdict(ok):
        return "**PASS**" if ok else "**FAIL**"

    r = ratio(med(u1), med(raw1))
    if r is not None:
        w(f"- {verdict(r <= 1.4)} enabled two-field event ≤ 1.4x the raw store: "
          f"{med(u1):.2f} ns vs {med(raw1):.2f} ns = {r:.2f}x"
          + ("" if r <= 1.4 else f" ({r / 1.4:.2f}x over the target)")
          + (f"; in instructions {ui:.0f} vs {ri:.0f} = {ui / ri:.1f}x"
             if ui is not None and ri else "")
          + ("; by CPU: " + ", ".join(
              f"CPU {c} {ratio(med(stats('utrace', 1, cpu=c)), med(stats('raw', 1, cpu=c))):.2f}x"
              for c in (0, 1)
              if stats('utrace', 1, cpu=c) and stats('raw', 1, cpu=c))
             if pinned else ""))
    else:
        w("- not measured: enabled two-field event ≤ 1.4x the raw store")
    r = ratio(med(lt1), med(u1))
    if r is not None:
        w(f"- {verdict(r >= 5)} ≥ 5x faster than LTTng-UST: {med(lt1):.2f} ns vs "
          f"{med(u1):.2f} ns = {r:.2f}x faster"
          + ("" if r >= 5 else f" ({5 / r:.2f}x short of the target)")
          + (f"; in instructions {li:.0f} vs {ui:.0f} = {li / ui:.2f}x"
             if li is not None and ui else ""))
    else:
        w(f"- not measured: ≥ 5x faster than LTTng-UST ({lttng_status})")
    rs = [vs_alone("utrace", th) for th in (0, 1)]
    if all(x is not None for x in rs):
        worst = max(rs)
        own = [vs_alone("utrace", th, own=True) for th in (0, 1)]
        w(f"- {verdict(worst <= 1.2)} 2 threads within 1.2x of 1 thread"
          + (" (each against one thread alone on its CPU)" if pinned else "") + ", "
          "wall time: " + ", ".join(f"thread {i} {x:.2f}x" for i, x in enumerate(rs))
          + ("" if worst <= 1.2 else f" ({worst / 1.2:.2f}x over the target)")
          + (f"; lost: {u2_lost_text}" if u2_lost_text != "n/a" else ""))
        if all(x is not None for x in own):
            w("  - the threads' own CPU time per event: "
              + ", ".join(f"thread {i} {x:.2f}x" for i, x in enumerate(own))
              + ": what is left of the wall-time ratio is time a thread spent "
              "waiting while the recorder ran on its CPU")
        ri2 = [vs_alone("utrace-idle", th, base="utrace") for th in (0, 1)]
        if all(x is not None for x in ri2):
            w(f"  - with `utrace record --idle` (the recorder gives way to the program): "
              + ", ".join(f"thread {i} {x:.2f}x" for i, x in enumerate(ri2))
              + f"; lost: {ui2_lost_text}")
        rp2 = [vs_alone("utrace-pool", th) for th in (0, 1)]
        if all(x is not None for x in rp2):
            w("  - no recorder (each process's own buffer, overwrite mode): "
              + ", ".join(f"thread {i} {x:.2f}x" for i, x in enumerate(rp2)))
    else:
        w("- not measured: 2 threads within 1.2x of 1 thread")
    if uf1:
        w(f"- {verdict(u1_lost == 0)} zero events lost, 1 thread at full speed, "
          f"{rec_n:,} events: {u1_lost_text}")
    else:
        w("- not measured: zero events lost for 1 thread")
    if "utrace" in lg:
        fired, written, lost, size, ns = lg["utrace"]
        if lost == 0:
            w(f"- **PASS** zero events lost, 1 thread at full speed for {long_secs} s "
              f"with the default buffer: {fired:,} events, 0 lost")
        else:
            ok = written + lost == fired
            w(f"- {'**PASS** (the second clause)' if ok else '**FAIL**'} 1 thread at "
              f"full speed for {long_secs} s: zero lost, or, where the events come "
              f"faster than they can be written, the loss exact and reported: "
              f"{fired:,} fired = {written:,} written + {lost:,} lost "
              f"({pct(lost / fired)}) {'exactly' if ok else 'NOT exactly'}; the "
              f"program produced {fired * 24 / (ns / 1e9) / 1e6:.0f} MB/s, the "
              f"file grew at {size / (ns / 1e9) / 1e6:.0f} MB/s")
    else:
        w(f"- not measured: {long_secs} s at full speed ({rec['long_status'] or 'not run'})")
    if u1_bpe is not None:
        w(f"- {verdict(u1_bpe <= 24)} ≤ 24 bytes/event on disk: {u1_bpe:.2f}"
          + ("" if u1_bpe <= 24 else
             f" ({u1_bpe - 24:.2f} B, {pct(u1_bpe / 24 - 1)} over the target)"))
    else:
        w("- not measured: ≤ 24 bytes/event on disk")
    for key, cmd, target in (("utrace-script", "script", 2e6),
                             ("utrace-report", "report", 20e6),
                             ("utrace-latency", "report --latency", 20e6)):
        what = f"`utrace {cmd}` ≥ {target / 1e6:.0f} M events/s"
        if key in speeds:
            sp = speeds[key]
            w(f"- {verdict(sp >= target)} {what}: {sp / 1e6:.2f} M"
              + ("" if sp >= target else f" ({target / sp:.2f}x short of the target)"))
        else:
            w(f"- not measured: {what} ({rec['read_status'].get(key, 'not run')})")
    w("")

    # ------------------------------------------------ setup notes
    w("### Setup")
    w("")
    lst = os.path.join(rd, "lttng-list.txt")
    if os.path.exists(lst):
        text = open(lst).read()
        attrs = []
        for key in ("Buffering scheme", "Event-loss mode", "Sub-buffer size",
                    "Sub-buffer count", "Output mode"):
            m = re.search(rf"{key}:\s*(.+)", text)
            if m:
                attrs.append(f"{key.lower()} {m.group(1).strip()}")
        if attrs:
            w(f"- LTTng channel (the default, from `lttng list`): {'; '.join(attrs)}; "
              f"per CPU.  The consumer daemon writes the sub-buffers to disk "
              f"while the program runs, on the same two cores.")
    else:
        w(f"- LTTng recording: {lttng_status}.")
    w("- The utrace recorder moves full pages from the pool to the file every "
      "millisecond (and without sleeping while there are pages to move), in its "
      "own process, on the same two cores: with 2 traced threads, three busy "
      "threads share two CPUs.")
    w("- The LTTng provider of `bench/bench-lttng-tp.h` is `bench`, so the "
      "sessions enable `bench:*` (the only event in it is `bench:bench_ev`).")
    w("- The raw store pays no page faults (its arrays are touched before the "
      "loop); utrace's pool pages are faulted in by their first lap.")
    w("")


# ------------------------------------------------------------ filters

FILT_CASES = [
    ("none", "(no filter)", "no filter"),
    ("accept1", "`b < 4000000000`", "1 predicate, accepts every event"),
    ("reject1", "`b >= 4000000000`", "1 predicate, rejects every event"),
    ("accept3", "`a < 1000000000000 && b < 4000000000 && common_pid > 0`",
     "3 predicates, accepts every event"),
    ("reject3", "`a < 1000000000000 && b < 4000000000 && common_pid < 0`",
     "3 predicates, rejects every event (the last one false)"),
    ("hist", "(no filter; trigger `hist:keys=b.log2:vals=a`)",
     "hist trigger, event recorded too"),
    ("histoff", "(no filter; the same trigger, event off: soft mode)",
     "hist trigger only (aggregated, not recorded)"),
]


def filters_section(w, data, params, counts):
    fd = os.path.join(data, "filt")
    if not os.path.isdir(fd):
        return
    times, checks = {}, {}
    path = os.path.join(fd, "times.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            # FILT case round n ns written lost
            if len(f) == 7 and f[0] == "FILT":
                c, r, n, ns, wr, lost = f[1], int(f[2]), int(f[3]), int(f[4]), int(f[5]), int(f[6])
                times.setdefault(c, {})[r] = ns / n
                checks.setdefault(c, []).append((n, wr, lost))
    fc = {}
    path = os.path.join(fd, "counts.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            if len(f) == 5 and f[0] == "COUNT":
                fc[(f[1], f[2])] = (int(f[3]), int(f[4]))
    empty = fc.get(("none", "bench_filt_loop_empty"))

    def instr(c):
        x = fc.get((c, "bench_filt_loop"))
        if not x or not empty:
            return None
        return x[1] / x[0] - empty[1] / empty[0]

    def tst(c):
        v = list(times.get(c, {}).values())
        return (min(v), statistics.median(v), max(v)) if v else None

    def added(c):
        """Per-round difference to the unfiltered case of the same round."""
        a, b = times.get(c, {}), times.get("none", {})
        d = [a[r] - b[r] for r in a if r in b]
        return (min(d), statistics.median(d), max(d)) if d else None

    fn = int(params.get("filt_n", "0") or 0)
    fr = params.get("filt_runs", "?")
    cgn = int(params.get("filt_cg_n", "0") or 0)
    summ = ""
    sp = os.path.join(fd, "filter-summary.txt")
    if os.path.exists(sp):
        summ = open(sp).read().strip()

    w("## Filters")
    w("")
    w(f"The recorded two-field event of the Recording section with an event filter "
      f"set on it (the kernel's filter language, run in `utrace_tp_commit()`: under "
      f"the urcu-bp read lock; a rejected event is taken back by rolling the page "
      f"tail back).  Program `bench/bench-filter.c`, with libutrace linked "
      f"statically (`link_whole`), run as `utrace record -o FILE -- bench-filter "
      f"filter N ROUNDS CASE...` (file on disk, as the recorded row above, but "
      f"`-m 64M`, room for a whole case, and a wait for the recorder to empty "
      f"the pool after each case, so that no event is lost: a lost event is "
      f"cheaper and would flatter the figures): every accepted event goes into the pool and the recorder "
      f"writes it out.  The program sets each case's filter on `bench:bench_ev` "
      f"through its own agent thread (`utrace__ctl_filter()`, the request "
      f"`utrace filter -p PID` sends), runs {fn // 100:,} warm-up events, then "
      f"times {fn:,} events; {fr} rounds, each case once per round, all in the "
      f"same process.  Static linking makes every case cheaper than the "
      f"`libutrace.so` row of the Recording table (no TLS descriptor calls), so "
      f"the baseline is the unfiltered case of this program.")
    w("")
    w("- **added ns**: per round, the case's ns/event minus the unfiltered case's "
      "of the same round; min / median / max over the rounds.")
    w(f"- **instr/event**: `utrace record -o FILE -- valgrind --tool=callgrind "
      f"--toggle-collect=bench_filt_loop bench-filter count {cgn} CASE`, minus "
      f"the empty loop (`bench_filt_loop_empty`, counted the same way), per event.")
    w("- **written / lost**: the pool's counters read through the agent around "
      "each timed loop (written counts whole pages, so an accepting case may "
      "be off by one page of about 170 events).")
    if summ:
        w(f"- the recorder's summary of the timed process: `{summ}`")
    w("")
    w("| case | filter | ns/event min / median / max | added ns min / median / max "
      "| instr/event | added instr | written / lost per run (pool) |")
    w("|---|---|---:|---:|---:|---:|---|")
    base_i = instr("none")
    for c, expr, title in FILT_CASES:
        t = tst(c)
        if t is None and instr(c) is None:
            continue
        a = added(c) if c != "none" else None
        i = instr(c)
        ck = checks.get(c, [])
        if ck:
            n = ck[0][0]
            wr = sorted(set(x[1] for x in ck))
            lo = sum(x[2] for x in ck)
            wtxt = (f"{min(wr):,}..{max(wr):,}" if len(wr) > 1 else f"{wr[0]:,}")
            ck_cell = f"{wtxt} of {n:,} / {lo:,}"
        else:
            ck_cell = "n/a"
        w(f"| **{title}** | {expr} | "
          + (f"{t[0]:.2f} / {t[1]:.2f} / {t[2]:.2f}" if t else "n/a") + " | "
          + ("-" if c == "none" else (f"{a[0]:+.2f} / {a[1]:+.2f} / {a[2]:+.2f}" if a else "n/a"))
          + f" | {fmt(i)} | "
          + ("-" if c == "none" else (f"{i - base_i:+.2f}" if i is not None and base_i is not None else "n/a"))
          + f" | {ck_cell} |")
    w("")

    # Where the instructions go, side by side.
    per = {}
    for c in ("none", "accept1", "reject1"):
        x = fc.get((c, "bench_filt_loop"))
        if x:
            rows = cg_breakdown(os.path.join(fd, f"cg.{c}.bench_filt_loop.out"), x[0])
            per[c] = {fn_: v for fn_, v, obj in rows}
    if per:
        fns = []
        for c in per:
            for fn_ in sorted(per[c], key=lambda k: -per[c][k]):
                if fn_ not in fns and per[c][fn_] >= 0.05:
                    fns.append(fn_)
        w("Where the instructions go (exclusive, per event, loop included; "
          "callgrind):")
        w("")
        w("| function | " + " | ".join(c for c in per) + " |")
        w("|---|" + "---:|" * len(per))
        for fn_ in fns:
            w(f"| `{fn_}` | " + " | ".join(f"{per[c].get(fn_, 0):.2f}" for c in per) + " |")
        w("| **total** | " + " | ".join(f"{sum(per[c].values()):.2f}" for c in per) + " |")
        w("")

    # Targets.
    def verdict(ok):
        return "**PASS**" if ok else "**FAIL**"

    w("Targets:")
    w("")
    a1, ia1, ir1, in0 = added("accept1"), instr("accept1"), instr("reject1"), base_i
    if a1:
        ok = a1[1] <= 5
        w(f"- {verdict(ok)} a one-predicate filter adds at most 5 ns to an accepted "
          f"event: {a1[1]:+.2f} ns (median of the per-round differences; "
          f"{tst('accept1')[1]:.2f} vs {tst('none')[1]:.2f} ns/event)"
          + (f"; {ia1 - in0:+.0f} instructions ({ia1:.0f} vs {in0:.0f})"
             if ia1 is not None and in0 is not None else ""))
    else:
        w("- not measured: a one-predicate filter adds at most 5 ns")
    ta, tr = tst("accept1"), tst("reject1")
    if ta and tr:
        d = {r: times["reject1"][r] - times["accept1"][r]
             for r in times.get("reject1", {}) if r in times.get("accept1", {})}
        dm = statistics.median(d.values()) if d else tr[1] - ta[1]
        ok = dm <= 0
        txt = (f"- {verdict(ok)} a rejected event costs no more than an accepted one: "
               f"rejected minus accepted {dm:+.2f} ns (median of the per-round "
               f"differences; medians {tr[1]:.2f} vs {ta[1]:.2f} ns/event)")
        if ir1 is not None and ia1 is not None:
            txt += (f"; in instructions {ir1:.0f} vs {ia1:.0f} ({ir1 - ia1:+.0f}, "
                    f"{'PASS' if ir1 <= ia1 else 'FAIL'} by this measure)")
        w(txt)
    else:
        w("- not measured: a rejected event costs no more than an accepted one")
    i3, r3 = instr("accept3"), instr("reject3")
    if i3 is not None and ia1 is not None:
        w(f"- (for information) each further predicate: "
          f"{(i3 - ia1) / 2:.1f} instructions (3 vs 1 predicate, accepting)"
          + (f"; 3 predicates rejecting vs accepting: {r3 - i3:+.0f} instructions"
             if r3 is not None else ""))
    w("")

    # ------------------------------------------------ control latency
    ctl, summ_ctl = [], None
    path = os.path.join(fd, "ctl.txt")
    if os.path.exists(path):
        for line in open(path):
            f = line.split()
            # CTL k enable_ns first_ns disable_ns moved fired_between thread_ns
            if len(f) == 8 and f[0] == "CTL":
                ctl.append([int(x) for x in f[1:]])
            elif len(f) == 4 and f[0] == "CTLSUM":
                summ_ctl = [int(x) for x in f[1:]]
    if not ctl:
        return
    rsum = ""
    sp = os.path.join(fd, "ctl-summary.txt")
    if os.path.exists(sp):
        rsum = open(sp).read().strip()
    toggles = len(ctl)

    def pctl(v, q):
        v = sorted(v)
        return v[min(len(v) - 1, int(round(q * (len(v) - 1))))]

    def row(title, v, note=""):
        v = [x for x in v if x is not None]
        if not v:
            w(f"| {title} | n/a | n/a | n/a | n/a | {note} |")
            return
        us = lambda x: f"{x / 1000:.1f}"  # noqa: E731
        w(f"| {title} | {us(min(v))} | {us(statistics.median(v))} | "
          f"{us(pctl(v, 0.9))} | {us(max(v))} | {note} |")

    w("## Control latency")
    w("")
    w(f"`bench-filter latency {toggles} 500 2000` under `utrace record -o FILE`: a "
      f"second thread fires `bench_ev` in a tight loop while the main thread, "
      f"{toggles} times, switches the event off through its agent "
      f"(`utrace__ctl_enable(c, id, 0)`), waits 2 ms, switches it on "
      f"(`utrace__ctl_enable(c, id, 1)`: the request over the control socket, the "
      f"agent registers the probe, the answer), watches the pool (mapped from "
      f"the memfd the agent hands out, as `utrace show` does) until the firing "
      f"thread's page shows a new event, and leaves the event on 0.5 ms.  The "
      f"firing thread also notes the time of its first event written after each "
      f"switch-on.  Two cores: the firing thread, the main thread, the agent "
      f"thread and the recorder share them.")
    w("")
    w("| | min µs | median µs | p90 µs | max µs | |")
    w("|---|---:|---:|---:|---:|---|")
    row("`utrace__ctl_enable(on)` round trip", [c[1] for c in ctl])
    row("from its return to the first new event seen in the pool",
        [c[2] if c[2] >= 0 else None for c in ctl])
    def eff(c):
        # The first event is in the pool at the earlier of the reader's
        # sight of it and the firing thread's note (taken right after it).
        seen = [x for x in (c[2] if c[2] >= 0 else None,
                            c[6] if c[6] > -(1 << 62) else None) if x is not None]
        return c[1] + min(seen) if seen else None
    row("request sent to first event seen in the pool by the reader",
        [c[1] + c[2] if c[2] >= 0 else None for c in ctl],
        "the reader (main thread) may itself wait for a CPU")
    row("**request sent to first event in the pool**",
        [eff(c) for c in ctl], "the earlier of the reader's sight and the "
        "firing thread's note; what the target measures")
    row("the firing thread's first recorded event, after the return "
        "(negative: before the answer arrived)",
        [c[6] if c[6] > -(1 << 62) else None for c in ctl])
    row("`utrace__ctl_enable(off)` round trip", [c[3] for c in ctl])
    w("")
    moved = sum(c[4] for c in ctl)
    missing = sum(1 for c in ctl if c[2] < 0)
    if summ_ctl:
        w(f"- events written by the firing thread (pool counters, whole pages): "
          f"{summ_ctl[0]:,}; lost: {summ_ctl[1]:,}; loop iterations in all "
          f"(on and off): {summ_ctl[2]:,}")
    if rsum:
        w(f"- the recorder's summary: `{rsum}`")
    w(f"- switch-ons with no event in the pool within 2 s: {missing}; off periods "
      f"in which the pool still moved (after a 1 ms grace): {moved}")
    w("")
    tot = [eff(c) for c in ctl if eff(c) is not None]
    rd = [c[1] + c[2] for c in ctl if c[2] >= 0]
    lost = summ_ctl[1] if summ_ctl else None
    if tot and missing == 0:
        mx = max(tot)
        ok = mx <= 10_000_000 and lost == 0
        w(f"- {verdict(ok)} `utrace enable` on a busy process takes effect within "
          f"10 ms and loses nothing: worst {mx / 1e6:.3f} ms, median "
          f"{statistics.median(tot) / 1e6:.3f} ms over {len(tot)} switch-ons; "
          f"{lost if lost is not None else 'n/a'} events lost"
          + (f" (as the reader saw it: worst {max(rd) / 1e6:.3f} ms)" if rd else ""))
    else:
        w("- **FAIL** `utrace enable` takes effect within 10 ms: some switch-ons "
          "showed no event in the pool")
    w("")


# --------------------------------------------------------------- report

def fmt(x, digits=2):
    if x is None:
        return "n/a"
    text = f"{x:.{digits}f}"
    return text[1:] if text.startswith("-") and float(text) == 0 else text


def main():
    data, results, top, build = sys.argv[1:5]
    params = read_kv(os.path.join(data, "params.txt"))
    clang = read_kv(os.path.join(data, "clang.txt"))
    counts = read_counts(data)
    times = read_times(data)
    lttng_status = read_kv(os.path.join(data, "lttng-on.txt"))

    def net_instr(label, case):
        c, e = counts.get((label, case)), counts.get((label, "empty"))
        if not c or not e:
            return None
        return c[1] / c[0] - e[1] / e[0]

    def raw_instr(label, case):
        c = counts.get((label, case))
        return c[1] / c[0] if c else None

    def tstats(label, case):
        v = times.get((label, case))
        if not v:
            return None
        return min(v), statistics.median(v), max(v), len(v)

    ref_instr = net_instr("lttng", "lttng_off")
    ref_t = tstats("lttng", "lttng_off")

    L = []
    w = L.append
    now = datetime.datetime.now(datetime.timezone.utc)
    cpu = "(unknown)"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    commit = sh("git", "-C", top, "rev-parse", "--short", "HEAD") or "(no git)"
    dirty = sh("git", "-C", top, "status", "--porcelain", "--", "lib", "include")
    cc = params.get("cc", "cc")
    clang_cmd = params.get("clang", "clang")

    w("# utrace call-site benchmark")
    w("")
    w("What a `trace_<event>()` call site costs in a user-space program, "
      "switched off and switched on, next to the same event as an "
      "LTTng-UST `tracepoint()`; and (section Recording) what an event "
      "costs when `utrace record` really records it, next to a raw "
      "in-memory store and an LTTng session writing to disk, what it "
      "leaves on disk and how fast it reads back; (sections Filters and "
      "Control latency) what an event filter adds to a recorded event and how "
      "fast `utrace enable` takes effect on a busy process.  Written by "
      "`bench/run.sh`; do not edit by hand.")
    w("")
    w("## How to re-run")
    w("")
    w("```sh")
    w("bench/run.sh            # builds in bench/out/build, rewrites bench/RESULTS.md")
    w("```")
    w("")
    w("It builds libutrace and the three programs of `bench/meson.build` "
      "(`meson setup bench/out/build . -Dbench=true -Dtests=false`), plus the "
      "call site compiled by clang, then counts instructions with "
      "`valgrind --tool=callgrind`, times the loops with `clock_gettime`, "
      "and disassembles them with `objdump -d`.  Knobs: `BENCH_N`, "
      "`BENCH_RUNS`, `BENCH_CG_N`, `BENCH_LTTNG_ON_N`, `BENCH_LTTNG_ON_RUNS`, "
      "`BENCH_LTTNG_ON_CG_N`, `BENCH_NO_LTTNG_ON=1`, and for the recording part "
      "`BENCH_REC_N`, `BENCH_REC_RUNS`, `BENCH_REC_CG_N`, `BENCH_READ_RUNS`, `BENCH_LAT_PAIRS`, "
      "`BENCH_LONG_SECS`, `BENCH_KEEP_TRACES=1`, and for the filter and control part "
      "`BENCH_FILT_N`, `BENCH_FILT_RUNS`, `BENCH_FILT_CG_N`, `BENCH_CTL_TOGGLES` "
      "(see the top of run.sh).  The recording part also "
      "builds `bench/bench-record.c` three times and the `utrace` tool, runs "
      "`utrace record`, an lttng session to disk and babeltrace2.")
    w("")
    w("## Machine")
    w("")
    w(f"- date: {now.strftime('%Y-%m-%d %H:%M UTC')}")
    w(f"- nproc: {os.cpu_count()}; CPU: {cpu}")
    w(f"- kernel: {sh('uname', '-srm')}")
    w(f"- cc: {first_line(sh(cc, '--version'))}")
    if shutil.which(clang_cmd):
        w(f"- clang: {first_line(sh(clang_cmd, '--version'))}")
    w(f"- valgrind: {sh('valgrind', '--version')}; "
      f"binutils objdump: {first_line(sh('objdump', '--version'))}")
    w(f"- liblttng-ust {sh('pkg-config', '--modversion', 'lttng-ust')}; "
      f"liburcu-bp {sh('pkg-config', '--modversion', 'liburcu-bp')}; "
      f"lttng-tools: {first_line(sh('lttng', '--version')) if shutil.which('lttng') else '(not installed)'}; "
      f"babeltrace2: {first_line(sh('babeltrace2', '--version')) if shutil.which('babeltrace2') else '(not installed)'}; "
      f"trace-cmd: {first_line(sh('trace-cmd', '--version').strip()) if shutil.which('trace-cmd') else '(not installed)'}")
    w(f"- utrace: commit {commit}"
      + (" with uncommitted changes in lib/ or include/" if dirty else ""))
    w(f"- bench/run.sh took {params.get('seconds', '?')} s")
    if "load_start" in params:
        w(f"- load average (1, 5, 15 min) when run.sh started: "
          f"{params['load_start']}; when it ended: {params.get('load_end', '?')} "
          f"(the benchmark itself adds up to about 2)")
    w("")
    w("The machine is shared and noisy: the ns figures are indicative only "
      "(compare them only within one run).  The instruction counts "
      "are exact and repeat from run to run; they are the figure to track.")
    w("")

    w("## Results")
    w("")
    n = int(params.get("n", "0") or 0)
    w(f"- **instr/call**: instructions per call counted by callgrind "
      f"(`--toggle-collect` on the loop function, callees included) over "
      f"{int(params.get('cg_n', '0')):,} iterations, minus the empty loop of "
      f"the same program, divided by the iterations.  **loop instr/iter**: "
      f"the same without subtracting the loop.")
    w(f"- **ns/iter**: `clock_gettime(CLOCK_MONOTONIC)` around a loop of "
      f"{n:,} iterations, {params.get('runs', '?')} runs (round-robin over "
      f"all cases and programs), loop included; min / median / max.  On a "
      f"shared machine the min is the run least disturbed by others, so "
      f"the derived columns use it.  **net ns/call**: min minus the min of "
      f"the same program's empty loop (0 or even below 0 for a check that "
      f"runs in parallel with the loop's own instructions).")
    if "lttng_on_n" in params:
        w(f"- LTTng on is timed over {int(params['lttng_on_n']):,} iterations, "
          f"{params.get('lttng_on_runs', '?')} runs, and counted over "
          f"{int(params.get('lttng_on_cg_n', '0')):,} iterations: each event "
          f"is written to the ring buffer.")
    w("- **vs LTTng off**: ratio to the LTTng-UST off row, of the "
      "instructions per call (net) and of the min ns/iter (loop included).")
    w("")
    w("| case | build | instr/call (callgrind) | loop instr/iter | "
      "ns/iter min / median / max | net ns/call (min) | vs LTTng off: instr | "
      "vs LTTng off: ns (min) |")
    w("|---|---|---:|---:|---:|---:|---:|---:|")
    for label, case, title in ROWS:
        if (label, case) not in counts and (label, case) not in times:
            if case == "lttng_on":
                reason = lttng_status.get("status", "not run")
                w(f"| {title} | {BUILD[label]} | n/a | n/a | n/a "
                  f"| n/a | n/a | n/a ({reason}) |")
            continue
        ni = net_instr(label, case)
        ri = raw_instr(label, case)
        ts = tstats(label, case)
        te = tstats(label, "empty")
        tcell = (f"{ts[0]:.3f} / {ts[1]:.3f} / {ts[2]:.3f}" if ts else "n/a")
        net_ns = (ts[0] - te[0]) if ts and te else None
        if case == "empty":
            ni_cell = "0 (reference)"
            net_cell = "0 (reference)"
        else:
            ni_cell = fmt(ni)
            net_cell = fmt(net_ns, 3)
        r_instr = (fmt(ni / ref_instr) + "x") if ni is not None and ref_instr else "n/a"
        r_ns = (fmt(ts[0] / ref_t[0]) + "x") if ts and ref_t else "n/a"
        if case == "empty":
            r_instr = "-"
        w(f"| {title} | {BUILD[label]} | {ni_cell} | {fmt(ri)} | {tcell} | "
          f"{net_cell} | {r_instr} | {r_ns} |")
    w("")

    # ------------------------------------------------------ off path
    w("## The off path in the machine code")
    w("")
    w("One iteration of each loop as it runs with the event off, followed "
      "through `objdump -d` of the loop function (the entry check falls "
      "through, the test of the tracepoint's word goes the 'off' way, "
      "backward branches loop).  \"Extra\" is the number of instructions "
      "beyond the empty loop of the same program.")
    w("")
    findings = []
    ddir = os.path.join(data, "disasm")
    paths = {}
    for label in ("utrace", "utrace-clang", "utrace-disabled", "lttng"):
        empty = hot_path(parse_disasm(os.path.join(ddir, f"{label}.bench_loop_empty.txt")), None)
        trace_insns = parse_disasm(os.path.join(ddir, f"{label}.bench_loop_trace.txt"))
        if not trace_insns:
            continue
        trace = hot_path(trace_insns, SYMBOLS[label])
        paths[label] = (empty, trace, trace_insns)
    flag = hot_path(parse_disasm(os.path.join(ddir, "utrace.bench_loop_flag.txt")), "bench_flag")
    flag_empty = paths.get("utrace", (None,))[0]
    cflag = hot_path(parse_disasm(os.path.join(ddir, "utrace-clang.bench_loop_flag.txt")), "bench_flag")
    cflag_empty = paths.get("utrace-clang", (None,))[0]

    w("| loop | build | one iteration (off) | extra instructions | call on it? |")
    w("|---|---|---|---:|---|")

    def path_row(title, label, empty, path):
        if path is None:
            w(f"| {title} | {BUILD[label]} | (could not follow the loop) | n/a | n/a |")
            return None, None
        code = "; ".join(f"`{i['text'].split('#')[0].strip()}`" for i in path)
        extra = len(path) - len(empty) if empty else None
        has_call = any(i["mnem"].startswith("call") for i in path)
        w(f"| {title} | {BUILD[label]} | {code} | {extra if extra is not None else 'n/a'} "
          f"| {'**yes**' if has_call else 'no'} |")
        return extra, has_call

    if "utrace" in paths:
        path_row("empty loop", "utrace", None, paths["utrace"][0])
        path_row("`if (volatile flag)`", "utrace", flag_empty, flag)
    if "utrace-clang" in paths and cflag is not None:
        path_row("`if (volatile flag)`", "utrace-clang", cflag_empty, cflag)
    for label, title in (("utrace", "utrace `trace_bench_ev()`"),
                         ("utrace-clang", "utrace `trace_bench_ev()`"),
                         ("utrace-disabled", "utrace `-DUTRACE_DISABLE`"),
                         ("lttng", "LTTng-UST `tracepoint()`")):
        if label not in paths:
            continue
        empty, trace, insns = paths[label]
        extra, has_call = path_row(title, label, empty, trace)
        if label.startswith("utrace") and label != "utrace-disabled":
            where = BUILD[label].split(",")[0]
            if trace is None:
                findings.append(f"{where}: the off path of the utrace loop could not "
                                "be followed automatically; read the disassembly below.")
            else:
                if has_call:
                    findings.append(f"**{where}: the utrace off path has a call "
                                    "instruction.**")
                if extra is not None and extra > 3:
                    findings.append(f"**{where}: the utrace off path has {extra} "
                                    "instructions beyond the loop (more than 3).**")
                if extra is not None and extra <= 3 and not has_call:
                    checks = [i["text"].split("#")[0].strip() for i in trace
                              if i not in (empty or [])][:extra]
                    findings.append(f"{where}: utrace off path = {extra} instructions, "
                                    f"no call: `{'; '.join(checks)}` "
                                    "(the call to `__traceiter_bench_ev` is out of line, "
                                    "behind the branch).")
        if label == "utrace-disabled" and trace is not None:
            findings.append(f"`-DUTRACE_DISABLE`: {extra} instructions beyond the "
                            "empty loop (the call site is compiled out).")
    w("")
    if findings:
        w("Findings:")
        w("")
        for f in findings:
            w(f"- {f}")
        w("")
    if "utrace" in paths and paths["utrace"][1] is not None:
        tr = paths["utrace"][1]
        tp_checks = [i for i in tr if SYMBOLS["utrace"] in i["comment"]]
        if tp_checks and tp_checks[0]["mnem"].startswith("mov"):
            text = ("Note: the check is a load into a register, a `test` and a "
                    "`jne` (three instructions), not the `cmpl $0x0,...(%rip); "
                    "jne` (two) that the comment in include/utrace/tracepoint.h "
                    "describes: neither gcc nor clang folds an `__atomic_load_n` "
                    "into a compare with a memory operand.  With gcc it costs "
                    "the same as the volatile-flag baseline and as LTTng-UST's "
                    "check.")
            if cflag is not None and any(i["mnem"].startswith("cmp") and "bench_flag" in i["comment"]
                                         for i in cflag):
                text += (" clang does fold a plain volatile read (`cmpl $0x0,"
                         "bench_flag(%rip); jne`, two instructions), so there the "
                         "atomic load costs one instruction and one register more.")
            w(text)
            w("")
    for label in ("utrace", "lttng"):
        if label in paths:
            insns = paths[label][2]
            w(f"`bench_loop_trace` of {label} ({BUILD[label]}), whole function:")
            w("")
            w("```")
            for i in insns:
                w(f"{i['addr']:6x}:  {i['text']}")
            w("```")
            w("")
    if "utrace-clang" in paths:
        w(f"The clang row compiles the call site (`bench.c`) with clang; the "
          f"file with `CREATE_TRACE_POINTS` was compiled by "
          f"{clang.get('events_cc', '?')}.")
        if clang.get("events_cc") == "cc":
            log = os.path.join(data, "clang-events.log")
            err = ""
            if os.path.exists(log):
                for line in open(log):
                    if "error:" in line:
                        err = line.strip()
                        break
            w(f"**clang cannot compile a `CREATE_TRACE_POINTS` file**: "
              f"`{err or 'see bench/out/data/clang-events.log'}`.")
        w("")

    # ------------------------------------------------------ on path
    w("## Where the on path goes (instructions per call, exclusive, callgrind)")
    w("")
    for label, case in (("utrace", "utrace_on"), ("utrace-clang", "utrace_on"),
                        ("lttng", "lttng_on")):
        c = counts.get((label, case))
        if not c:
            continue
        rows = cg_breakdown(os.path.join(data, "cg", f"{label}.{case}.out"), c[0])
        if not rows:
            continue
        w(f"{case} ({BUILD[label]}), {c[1] / c[0]:.1f} instructions per iteration "
          f"in all:")
        w("")
        w("| function | object | instr/call |")
        w("|---|---|---:|")
        for fn, per, obj in rows[:15]:
            w(f"| `{fn}` | {obj} | {per:.2f} |")
        w("")
        tls = sum(per for fn, per, obj in rows if fn == "__tls_get_addr")
        if case == "utrace_on" and tls:
            w(f"{tls:.0f} of these instructions are `__tls_get_addr`: "
              "`utrace_tp_read_lock()`/`utrace_tp_read_unlock()` live in "
              "libutrace.so and reach urcu-bp's thread-local reader state "
              "through the general-dynamic TLS model, and each is a call "
              "through the PLT from `__traceiter_bench_ev`.")
            w("")

    # ------------------------------------------------------ LTTng on
    w("## LTTng-UST switched on")
    w("")
    st = lttng_status.get("status", "not run")
    sd = lttng_status.get("sessiond", "")
    if st == "ok":
        w(f"lttng-sessiond ran as a normal background process "
          f"({'started by run.sh with --no-kernel and stopped afterwards' if sd == 'started' else 'one was already running and was used'}); "
          "the session was a snapshot (flight-recorder, overwrite mode, "
          "nothing written to disk) session with the default per-user "
          "channel and `bench:bench_ev` enabled.  Unlike the utrace on "
          "row (an empty probe), every LTTng call here writes a record "
          "(timestamp, CPU, the two fields) into the ring buffer, so the "
          "two on rows do not measure the same work.")
    else:
        w(f"Not measured: {st}.")
    w("")

    recording_section(w, data, params, counts, top)
    filters_section(w, data, params, counts)
    # bench/keepup.sh's section (the recorder keeping up) is kept as it was.
    keep = ""
    if os.path.exists(results):
        old = open(results).read()
        a = old.find("<!-- keepup: written by bench/keepup.sh -->")
        b = old.find("<!-- /keepup -->")
        if a >= 0 and b > a:
            keep = old[a:b + len("<!-- /keepup -->")]
    with open(results, "w") as f:
        f.write("\n".join(L))
        if keep:
            f.write("\n\n" + keep + "\n")


if __name__ == "__main__":
    main()
