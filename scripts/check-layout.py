#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The source layout (docs/design-notes.md, "Three libraries"; issue 29):
one folder under lib/ is exactly one link unit, built by its own
meson.build from its own files.  Prints TAP; run by `meson test --suite
layout` (and suite docs).

Usage: check-layout.py [--strict] [SOURCE_ROOT]

Checks that fail today:
  lib-sources     every lib/<dir>/*.c is listed by lib/<dir>/meson.build
                  and by no other meson.build of the tree
  lib-one-unit    every lib/<dir> has a meson.build that defines exactly
                  one library target, and lists files of its own folder only
  tools-sources   the same for tools/utrace and each folder under it
  no-dotdot       no #include "../..." under lib/ and tools/
Checks of issue 29's second half, which count since it made them true
(STRICT below; a name taken out of it is reported as TODO, its offenders
listed, unless --strict or LAYOUT_STRICT=1):
  no-print-exec   nothing under lib/ prints to stderr, forks or execs
                  (ALLOW: the runtime's one-line warnings and UTRACE_PRINT)
  own-headers     a file includes only its own folder's headers and the
                  public headers of the folders below it (DEPS); never
                  another folder's internal.h or *-internal.h; no lib/
                  meson.build reaches into another folder ('../')
"""
import os
import re
import sys

# The checks of the second half that count (names as above).
STRICT = {'no-print-exec', 'own-headers'}

# Which folders a folder's files may include headers of (issue 29's map,
# ARCHITECTURE.md): tools/ may use every folder of lib/.
DEPS = {
    'lib/common': set(),
    'lib/probe': {'lib/common'},
    'lib/runtime': {'lib/common', 'lib/probe'},
    'lib/reader': {'lib/common'},
    'lib/analyze': {'lib/common', 'lib/reader'},
    'lib/export': {'lib/common', 'lib/reader'},
}

# Printing and processes under lib/ that stay (file: why).
ALLOW = {
    'lib/common/log.c': "utrace__warn(): libutrace's one line on stderr when it "
                        "cannot trace (ARCHITECTURE.md: the program runs on untraced "
                        "and says so once)",
    'lib/runtime/event.c': 'UTRACE_PRINT=stderr: the events printed where the user asked',
    'lib/reader/formats.c': "the parse sandbox: a fork without exec, so that libtraceevent "
                            "crashing on a hostile format kills a child, not the program "
                            "reading the file (the reader library's users have it too)",
}

PRINT_EXEC = re.compile(
    r'\b(?:v?fprintf|fputs|fputc|putc)\s*\([^;]*\bstderr\b'
    r'|\bperror\s*\('
    r'|\bwrite\s*\(\s*(?:2|STDERR_FILENO)\s*,'
    r'|\b(?:fork|vfork|execl|execlp|execle|execv|execvp|execvpe|execve|fexecve'
    r'|posix_spawn|posix_spawnp|system|popen)\s*\(')
LIB_TARGET = re.compile(r'\b(?:static_library|shared_library|both_libraries|library'
                        r'|shared_module)\s*\(')
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def strip_c_comments(text):
    """The text without comments and string literals' contents, line
    numbers kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            i = j
        elif c == '"' or c == "'":
            j = i + 1
            while j < n and text[j] != c and text[j] != '\n':
                j += 2 if text[j] == '\\' else 1
            out.append(c + ' ' * max(0, j - i - 1) + (c if j < n else ''))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def strip_meson_comments(text):
    return '\n'.join(re.sub(r"#(?=(?:[^']*'[^']*')*[^']*$).*", '', line)
                     for line in text.split('\n'))


class Tap:
    def __init__(self, strict):
        self.n = 0
        self.failed = 0
        self.strict = strict

    def result(self, name, problems, todo=None):
        self.n += 1
        ok = not problems
        line = '%s %d - %s' % ('ok' if ok else 'not ok', self.n, name)
        if todo and not self.strict and name.split(':')[0] not in STRICT:
            line += ' # TODO ' + todo
        elif not ok:
            self.failed += 1
        print(line)
        for p in problems:
            print('#   ' + p)


def rel(root, path):
    return os.path.relpath(path, root)


def main(argv):
    strict = os.environ.get('LAYOUT_STRICT') == '1'
    args = [a for a in argv[1:] if a != '--strict']
    strict = strict or len(args) < len(argv) - 1
    root = os.path.abspath(args[0] if args else os.path.join(os.path.dirname(__file__), '..'))
    tap = Tap(strict)

    def read(path):
        with open(os.path.join(root, path), encoding='utf-8', errors='replace') as f:
            return f.read()

    def listdir(path):
        full = os.path.join(root, path)
        return sorted(os.listdir(full)) if os.path.isdir(full) else []

    # Every meson.build of the tree (build directories left out: they have
    # a meson-private/ or build.ninja, and the checked-in tree never does).
    mesons = []
    for top in ['.', 'lib', 'tools', 'tests', 'bench', 'samples']:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if not x.startswith('.') and
                             not os.path.exists(os.path.join(d, x, 'build.ninja')))
            if top == '.':
                dirs[:] = []
            if 'meson.build' in files:
                mesons.append(rel(root, os.path.join(d, 'meson.build')))
    mesons = sorted(set(mesons))
    # The .c files each meson.build lists (quoted names, relative to it).
    listed = {}
    for m in mesons:
        d = os.path.dirname(m)
        names = re.findall(r"'([^'\s]+\.c)'", strip_meson_comments(read(m)))
        listed[m] = [os.path.normpath(os.path.join(d, x)) for x in names]

    def sources_check(folders, name):
        problems = []
        for d in folders:
            own = os.path.join(d, 'meson.build')
            for f in listdir(d):
                if not f.endswith('.c'):
                    continue
                path = os.path.join(d, f)
                by = [m for m in mesons if path in listed[m]]
                if own not in by:
                    problems.append('%s is not listed by %s' % (path, own))
                for m in by:
                    if m != own:
                        problems.append('%s is listed by %s, not its folder\'s' % (path, m))
        tap.result(name, problems)

    lib_dirs = [os.path.join('lib', x) for x in listdir('lib')
                if os.path.isdir(os.path.join(root, 'lib', x))]
    tool_dirs = []
    for d, dirs, files in os.walk(os.path.join(root, 'tools')):
        dirs[:] = sorted(x for x in dirs
                         if not os.path.exists(os.path.join(d, x, 'build.ninja')))
        if any(f.endswith('.c') for f in files):
            tool_dirs.append(rel(root, d))
    sources_check(lib_dirs, 'lib-sources: each lib/<dir>/*.c is built by its own folder only')

    problems = []
    for d in lib_dirs:
        m = os.path.join(d, 'meson.build')
        if m not in mesons:
            problems.append('%s has no meson.build' % d)
            continue
        targets = len(LIB_TARGET.findall(strip_meson_comments(read(m))))
        if targets != 1:
            problems.append('%s defines %d library targets, not one' % (m, targets))
        for path in listed[m]:
            if os.path.dirname(path) != d:
                problems.append('%s lists %s, of another folder' % (m, path))
    tap.result('lib-one-unit: each lib/<dir>/meson.build builds one library of its files',
               problems)
    sources_check(tool_dirs, 'tools-sources: each tools/ .c is listed by its own folder only')

    # The C files and headers under lib/ and tools/.
    cfiles = []
    for top in ['lib', 'tools']:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs
                             if not os.path.exists(os.path.join(d, x, 'build.ninja')))
            cfiles += [rel(root, os.path.join(d, f)) for f in sorted(files)
                       if f.endswith('.c') or f.endswith('.h')]
    texts = {f: read(f) for f in cfiles}
    problems = []
    for f in cfiles:
        for m in re.finditer(r'^\s*#\s*include\s*"\.\./[^"]*"', texts[f], re.M):
            line = texts[f].count('\n', 0, m.start()) + 1
            problems.append('%s:%d: %s' % (f, line, m.group(0).strip()))
    tap.result('no-dotdot: no #include "../" under lib/ and tools/', problems)

    # The second half's checks.
    problems = []
    for f in cfiles:
        if not f.startswith('lib/') or f in ALLOW:
            continue
        code = strip_c_comments(texts[f])
        for m in PRINT_EXEC.finditer(code):
            line = code.count('\n', 0, m.start()) + 1
            problems.append('%s:%d: %s' % (f, line, texts[f].split('\n')[line - 1].strip()[:90]))
    tap.result('no-print-exec: nothing under lib/ prints to stderr, forks or execs', problems,
               todo="issue 29's second half")

    owner = {}
    for f in cfiles:
        if f.endswith('.h'):
            owner.setdefault(os.path.basename(f), []).append(os.path.dirname(f))

    def folder(path):
        d = os.path.dirname(path)
        return 'tools' if d.startswith('tools') else d

    problems = []
    for f in cfiles:
        me = folder(f)
        for m in INCLUDE.finditer(strip_c_comments_keep_includes(texts[f])):
            h = m.group(1)
            if os.path.exists(os.path.join(root, os.path.dirname(f), h)):
                continue   # its own folder's
            dirs = owner.get(os.path.basename(h), [])
            if not dirs:
                continue   # a public (include/) or generated header
            if len(dirs) > 1:
                problems.append('%s: "%s" is in %s: which one?' % (f, h, ', '.join(dirs)))
                continue
            there = folder(os.path.join(dirs[0], h))
            if there == me:
                continue
            line = texts[f].count('\n', 0, m.start()) + 1
            private = h == 'internal.h' or h.endswith('-internal.h')
            if private:
                problems.append('%s:%d: "%s" is private to %s' % (f, line, h, dirs[0]))
            elif me != 'tools' and there not in DEPS.get(me, set()):
                problems.append('%s:%d: "%s" of %s, which %s does not build on'
                                % (f, line, h, dirs[0], me))
    for d in lib_dirs:
        m = os.path.join(d, 'meson.build')
        if m in mesons:
            text = strip_meson_comments(read(m))
            for x in re.finditer(r"include_directories\s*\(\s*'(\.\./[^']*)'", text):
                line = text.count('\n', 0, x.start()) + 1
                problems.append('%s:%d: include_directories(\'%s\')' % (m, line, x.group(1)))
    tap.result('own-headers: no include of another folder\'s private header', problems,
               todo="issue 29's second half")

    print('1..%d' % tap.n)
    return 1 if tap.failed else 0


def strip_c_comments_keep_includes(text):
    """Comments blanked, string literals kept (an include's name is one)."""
    return re.sub(r'/\*.*?\*/', lambda m: re.sub(r'[^\n]', ' ', m.group(0)), text, flags=re.S)


if __name__ == '__main__':
    sys.exit(main(sys.argv))
