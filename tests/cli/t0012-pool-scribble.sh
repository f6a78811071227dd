#!/usr/bin/env bash
# Someone who can open a traced program's pool (its user, root) writes
# nonsense into it: the program must not crash.  It checks what it reads
# from the shared memory, stops recording with one warning, and runs on.
. "$(dirname "$0")/lib.sh"
RB="$UTRACE_BUILD/tests/rb-stress"

# scribble PID WHAT: write nonsense into the pool memfd of process PID
scribble() {
	python3 - "$1" "$2" <<'PY'
import mmap, os, struct, sys
pid, what = int(sys.argv[1]), sys.argv[2]
fd = None
for f in os.listdir("/proc/%d/fd" % pid):
    try:
        if "memfd:utrace-pool" in os.readlink("/proc/%d/fd/%s" % (pid, f)):
            fd = os.open("/proc/%d/fd/%s" % (pid, f), os.O_RDWR)
    except OSError:
        pass
if fd is None:
    sys.exit("no pool in process %d" % pid)
m = mmap.mmap(fd, 0)
# struct utrace_pool (lib/common/pool.h): offsets of the fields used here
nr_pages, = struct.unpack_from("<I", m, 12)
nr_slots, = struct.unpack_from("<I", m, 28)
size, slots_off, descs_off, pages_off = struct.unpack_from("<QQQQ", m, 32)
cells_off, = struct.unpack_from("<Q", m, 128 + 128)   # freeq[0].cells_off
if what == "cells":
    # every queued page number out of range
    for off in range(cells_off + 8, pages_off - 8, 16):
        struct.pack_into("<Q", m, off, 0xfffffff0)
elif what == "header":
    # the layout: counts, sizes, offsets, queue masks and cells, owners
    struct.pack_into("<I", m, 76, 0)                   # nr_queues
    struct.pack_into("<II", m, 12, 0xffffffff, 7)      # nr_pages, page_size
    struct.pack_into("<I", m, 28, 0xffffffff)          # nr_slots
    struct.pack_into("<QQQQ", m, 32, 1 << 62, 1 << 61, 1 << 61, 1 << 61)
    for q in range(8):                                 # cells_off, mask
        struct.pack_into("<QQ", m, 128 + 192 * q + 128, 1 << 60, (1 << 62) - 1)
    for i in range(nr_pages):
        struct.pack_into("<I", m, descs_off + 64 * i + 4, 0xffffff00)
m.close()
PY
}

run() { # run WHAT: record a program, scribble its pool before it fires
	rm -f "$TMP/go" "$TMP/out"
	RB_WAIT_FILE="$TMP/go" "$UTRACE" record -o "$TMP/s.dat" -- "$RB" paced 3000 \
		> "$TMP/out" 2> "$TMP/err" &
	local rec=$! pid="" i
	for i in $(seq 600); do   # the program says "waiting" once its pool exists
		grep -q waiting "$TMP/out" 2> /dev/null && break
		sleep 0.05
	done
	pid=$(pgrep -P "$rec" -f "rb-stress paced") || { kill $rec; return 1; }
	scribble "$pid" "$1" >> "$TMP/err" 2>&1 || { kill $rec; return 1; }
	touch "$TMP/go"
	wait $rec || return 1
	# the program ran to its end and said what it fired
	grep -q "^fired [0-9]* 3000$" "$TMP/out" || return 1
	case $1 in
	cells)  # one warning; every event lost and counted
		[ "$(grep -c "^utrace: the event pool of process .* was changed from outside" "$TMP/err")" -eq 1 ] &&
		grep -q "^utrace record: pid .* stopped recording: its event pool was changed from outside" "$TMP/err" &&
		grep -q "^utrace record: 0 events written, 3000 lost" "$TMP/err" &&
		! grep -q "came faster than the recorder" "$TMP/err" ;;
	header) # the program and the recorder use their own copies of the
		# layout: nothing they read is wrong, every event is kept
		grep -q "^utrace record: 3000 events written, 0 lost" "$TMP/err" ;;
	esac
}
check "page numbers out of range in the queues: recording stops, the program runs on" run cells
check "the header's layout and the pages' owners overwritten: recording goes on" run header
done_testing
