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
      "LTTng-UST `tracepoint()`.  Written by `bench/run.sh`; do not edit "
      "by hand.")
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
      "`BENCH_LTTNG_ON_CG_N`, `BENCH_NO_LTTNG_ON=1` (see the top of run.sh).")
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
      f"lttng-tools: {first_line(sh('lttng', '--version')) if shutil.which('lttng') else '(not installed)'}")
    w(f"- utrace: commit {commit}"
      + (" with uncommitted changes in lib/ or include/" if dirty else ""))
    w(f"- bench/run.sh took {params.get('seconds', '?')} s")
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
    with open(results, "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
