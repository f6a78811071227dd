#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Circles of the call graph between the .c files of lib/ and tools/:
the strongly connected components of "a.c calls a function that b.c
defines", read with nm from the objects of a build (its
compile_commands.json says which object is which file).

Usage: scripts/circles.py [BUILD_DIR]   (default: build)
Prints one circle a line (its size, then its files) and their number;
exits 1 when there is one (the test suite's layout check, issue 29)."""
import json
import os
import subprocess
import sys


def objects(build):
    """{source path relative to the tree: its object}, one object a file."""
    with open(os.path.join(build, 'meson-info', 'meson-info.json')) as f:
        root = json.load(f)['directories']['source']
    with open(os.path.join(build, 'compile_commands.json')) as f:
        db = json.load(f)
    out = {}
    for e in db:
        src = os.path.normpath(os.path.join(e['directory'], e['file']))
        rel = os.path.relpath(src, root)
        if not rel.startswith(('lib/', 'tools/')) or rel in out:
            continue
        out[rel] = os.path.join(e['directory'], e['output'])
    return out


def graph(objs):
    defined, wanted = {}, {}
    for src, obj in objs.items():
        nm = subprocess.run(['nm', obj], capture_output=True, text=True).stdout
        for line in nm.splitlines():
            f = line.split()
            if len(f) == 2 and f[0] == 'U':
                wanted.setdefault(src, set()).add(f[1])
            elif len(f) == 3 and f[1] in 'TDBRV':
                defined.setdefault(f[2], set()).add(src)
    g = {src: set() for src in objs}
    for src, syms in wanted.items():
        for s in syms:
            g[src] |= defined.get(s, set()) - {src}
    return g


def circles(g):
    """Tarjan's strongly connected components of more than one file."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(g[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return found


def main(argv):
    build = argv[1] if len(argv) > 1 else 'build'
    found = circles(graph(objects(build)))
    for c in sorted(found, key=lambda c: (-len(c), c)):
        print(len(c), ' '.join(c))
    print('circles:', len(found))
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
