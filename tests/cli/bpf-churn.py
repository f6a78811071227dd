#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Make /proc/kallsyms change all the time, as a machine where BPF programs
come and go does (t0031): load a trivial socket-filter program, free it,
again, each with a name of its own, until STOP-FILE exists.  Every JIT'd
program is a line of /proc/kallsyms while it lives (net.core.bpf_jit_kallsyms).

  bpf-churn.py --check      exit 0 when a program can be loaded here (root)
  bpf-churn.py STOP-FILE    churn; writes "ready" on stdout once going
"""
import ctypes
import os
import struct
import sys

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
NR_BPF, BPF_PROG_LOAD, SOCKET_FILTER = 321, 5, 1
# r0 = 0; exit
insns = struct.pack("<BBhi", 0xb7, 0, 0, 0) + struct.pack("<BBhi", 0x95, 0, 0, 0)
ibuf = ctypes.create_string_buffer(insns, len(insns))
lic = ctypes.create_string_buffer(b"GPL")


def load(name):
    attr = struct.pack("<IIQQIIQII16s", SOCKET_FILTER, 2, ctypes.addressof(ibuf),
                       ctypes.addressof(lic), 0, 0, 0, 0, 0, name)
    a = ctypes.create_string_buffer(attr, 128)
    fd = libc.syscall(NR_BPF, BPF_PROG_LOAD, a, 128)
    if fd < 0:
        raise OSError(ctypes.get_errno(), os.strerror(ctypes.get_errno()))
    return fd


def in_kallsyms(name):
    with open("/proc/kallsyms") as f:
        return any(name in line for line in f)


if sys.argv[1:] == ["--check"]:
    try:
        fd = load(b"utrace_chk")
    except OSError:
        sys.exit(1)
    seen = in_kallsyms("utrace_chk")
    os.close(fd)
    sys.exit(0 if seen else 1)

stop = sys.argv[1]
n = 0
held = []
while not os.path.exists(stop):
    held.append(load(b"utrace_churn%d" % (n % 1000)))
    n += 1
    if len(held) > 4:
        os.close(held.pop(0))
    if n == 1:
        print("ready", flush=True)
for fd in held:
    os.close(fd)
