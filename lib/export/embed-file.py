#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""embed-file.py IN OUT NAME: write OUT, a C file holding the bytes of IN
as 'const char NAME[]' (NUL-terminated) and 'const size_t NAME_len', both
hidden from the library's exports.  Run by meson (lib/meson.build) for the
html export's page template (export-html.html)."""
import sys

src, out, name = sys.argv[1:4]
data = open(src, 'rb').read()
if b'\0' in data:
    sys.exit('embed-file.py: %s holds a NUL byte' % src)
lines = []
for i in range(0, len(data), 16):
    lines.append(''.join('%d,' % b for b in data[i:i + 16]))
with open(out, 'w') as f:
    f.write('/* Generated from %s by lib/reader/embed-file.py: do not edit. */\n'
            % src.rsplit('/', 1)[-1])
    f.write('#include <stddef.h>\n\n')
    f.write('__attribute__((visibility("hidden"))) extern const char %s[];\n' % name)
    f.write('__attribute__((visibility("hidden"))) extern const size_t %s_len;\n' % name)
    f.write('const char %s[] = {\n' % name)
    for l in lines:
        f.write('\t' + l + '\n')
    f.write('\t0\n};\n')
    f.write('const size_t %s_len = %d;\n' % (name, len(data)))
