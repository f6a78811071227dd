#!/usr/bin/env python3
# maxrss.py CMD...: run CMD (its stdout to /dev/null, its stderr kept),
# then print its peak resident memory in KiB (getrusage of the children)
# and exit with its status.  For the reader tests (t3101): no GNU time
# needed.
import resource
import subprocess
import sys

r = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL)
print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)
sys.exit(r.returncode)
