#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read what `utrace convert --format json|perfetto` wrote, for t0041, t0042.

usage: export-decode.py wire FILE     decode the protobuf bytes itself
       export-decode.py text FILE     read `protoc --decode=perfetto.protos.Trace`
                                      output (tests/data/perfetto-subset.proto)
       export-decode.py json FILE     read the JSON export
       export-decode.py script FILE   read `utrace script --json` output

Each prints the events, one JSON object a line, in one form:
  {"ts":T,"pid":P,"tid":T,"type":"instant|begin|end","name":"sys:name",
   "args":{...}}        (no "name" for an end: Perfetto takes the begin's)
  {"ts":T,"pid":P,"tid":T,"type":"lost","count":N|null}
  {"ts":T,"pid":P,"type":"counter","track":"NAME","value":V}
so that the two Perfetto decoders can be compared with each other, and
each export with `utrace script --json`.  'wire' also checks the
structure and exits 1 with a message when it is wrong: the sequence and
its flags, the clock, interned ids defined before their use and once,
tracks described before their events, times in order, slices that end
only what is open, strings that are UTF-8.  'json' checks that the file
is strict JSON in UTF-8 (no raw control bytes in strings), every ts in
microseconds with three decimals, B and E nested on each thread, and the
process_name / thread_name metadata (printed as "meta" lines).
"""
import decimal
import json
import re
import sys

TYPES = {1: "begin", 2: "end", 3: "instant", 4: "counter"}


def fail(msg):
    print("perfetto-decode: " + msg, file=sys.stderr)
    sys.exit(1)


# ------------------------------------------------------------- the wire

def varint(b, i):
    v = shift = 0
    while True:
        if i >= len(b):
            fail("varint runs past the end at byte %d" % i)
        c = b[i]
        i += 1
        v |= (c & 0x7F) << shift
        shift += 7
        if not c & 0x80:
            return v, i
        if shift >= 70:
            fail("varint longer than 10 bytes at byte %d" % i)


def fields(b):
    """[(number, wire type, value)] of a message: an int, or bytes for LEN."""
    out, i = [], 0
    while i < len(b):
        key, i = varint(b, i)
        num, wt = key >> 3, key & 7
        if num == 0:
            fail("field number 0")
        if wt == 0:
            v, i = varint(b, i)
        elif wt == 1:
            if i + 8 > len(b):
                fail("fixed64 past the end")
            v, i = int.from_bytes(b[i:i + 8], "little"), i + 8
        elif wt == 2:
            n, i = varint(b, i)
            if i + n > len(b):
                fail("length %d runs past the end of its message" % n)
            v, i = b[i:i + n], i + n
        else:
            fail("wire type %d (field %d) not written by utrace" % (wt, num))
        out.append((num, wt, v))
    return out


def one(fs, num, default=None):
    v = [x for n, _, x in fs if n == num]
    if len(v) > 1:
        fail("field %d more than once" % num)
    return v[0] if v else default


def text_of(b):
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        fail("a string is not UTF-8: %r" % b)


def signed(v):
    return v - (1 << 64) if v >= 1 << 63 else v


def wire(path):
    data = open(path, "rb").read()
    names, cats, anames = {}, {}, {}
    funcs, frames, callstacks = {}, {}, {}
    tracks, counters = {}, {}
    open_slices = {}
    last_ts = 0
    out = []
    for k, (n, wt, pkt) in enumerate(fields(data)):
        if n != 1 or wt != 2:
            fail("Trace has field %d (only packet = 1)" % n)
        p = fields(pkt)
        if one(p, 10) != 1:
            fail("a packet without trusted_packet_sequence_id 1")
        flags = one(p, 13, 0)
        if k == 0:
            if not flags & 1 or one(p, 6) is None:
                fail("the first packet does not clear the incremental state "
                     "with the clock snapshot")
            cs = fields(one(p, 6))
            if one(cs, 2) != 3:
                fail("primary_trace_clock is not MONOTONIC (3)")
            clocks = {one(fields(c), 1): one(fields(c), 2) for m, _, c in cs if m == 1}
            if 3 not in clocks:
                fail("no CLOCK_MONOTONIC in the clock snapshot")
            if one(fields(one(p, 59)), 58) != 3:
                fail("the packet defaults' timestamp_clock_id is not 3")
            continue
        if flags & 1 or one(p, 6) is not None:
            fail("the incremental state is cleared again")
        idata = one(p, 12)
        if idata is not None:
            if not flags & 2:
                fail("interned data without SEQ_NEEDS_INCREMENTAL_STATE")
            for k, _, e in fields(idata):
                table = {1: cats, 2: names, 3: anames, 5: funcs, 6: frames,
                         7: callstacks}.get(k)
                if table is None:
                    fail("interned data has field %d" % k)
                ef = fields(e)
                iid = one(ef, 1)
                if not iid or iid in table:
                    fail("iid %r of kind %d defined twice (or 0)" % (iid, k))
                if k == 6:       # Frame: its function name's iid
                    table[iid] = one(ef, 2)
                elif k == 7:     # Callstack: frame iids, outermost first
                    table[iid] = [x for n, w, x in ef if n == 2 and w == 0]
                    if len(table[iid]) != len([n for n, _, _ in ef if n == 2]):
                        fail("callstack %d has packed frame_ids" % iid)
                else:
                    table[iid] = text_of(one(ef, 2))
        td = one(p, 60)
        if td is not None:
            t = fields(td)
            uuid = one(t, 1)
            if uuid in tracks:
                fail("track %d described twice" % uuid)
            if one(t, 3) is not None:
                pr = fields(one(t, 3))
                tracks[uuid] = ("process", one(pr, 1), None)
            elif one(t, 4) is not None:
                th = fields(one(t, 4))
                tracks[uuid] = ("thread", one(th, 1), one(th, 2))
                if one(th, 5) is not None:
                    text_of(one(th, 5))
            elif one(t, 8) is not None:
                parent = one(t, 5)
                if tracks.get(parent, ("",))[0] != "process":
                    fail("counter track %d is not under a process track" % uuid)
                tracks[uuid] = ("counter", tracks[parent][1], text_of(one(t, 2)))
            else:
                fail("track %d is neither process, thread nor counter" % uuid)
            continue
        te = one(p, 11)
        if te is None:
            fail("a packet that is neither track, event nor clock")
        ts = one(p, 8)
        if ts is None or ts < last_ts:
            fail("event time %r before %d" % (ts, last_ts))
        last_ts = ts
        e = fields(te)
        typ = TYPES.get(one(e, 9))
        track = tracks.get(one(e, 11))
        if typ is None or track is None:
            fail("an event of type %r on an unknown track %r" % (one(e, 9), one(e, 11)))
        if typ == "counter":
            if track[0] != "counter":
                fail("a counter value on a %s track" % track[0])
            v = one(e, 30)
            value = signed(v) if v is not None else None
            if v is None:
                import struct
                value = int(struct.unpack("<d", one(e, 44).to_bytes(8, "little"))[0])
            out.append({"ts": ts, "pid": track[1], "type": "counter",
                        "track": track[2], "value": value})
            continue
        if track[0] != "thread":
            fail("an event on a %s track" % track[0])
        ev = {"ts": ts, "pid": track[1], "tid": track[2], "type": typ}
        if one(e, 23) is not None:           # lost_events: plain strings
            if text_of(one(e, 23)) != "lost_events" or \
               [text_of(x) for k, _, x in e if k == 22] != ["utrace"]:
                fail("an event named by string that is not lost_events")
            ev["type"] = "lost"
            ev["count"] = None
            for k, _, da in e:
                if k == 4:
                    d = fields(da)
                    if text_of(one(d, 10)) != "count":
                        fail("lost_events has an annotation other than count")
                    ev["count"] = one(d, 3)
            out.append(ev)
            continue
        if (flags & 2) == 0:
            fail("an event with interned names without SEQ_NEEDS_INCREMENTAL_STATE")
        stack = open_slices.setdefault(one(e, 11), [])
        if typ == "end":
            if one(e, 10) is not None:
                fail("a slice end with a name")
            if not stack:
                fail("a slice end on track %d with no slice open" % one(e, 11))
            stack.pop()
        else:
            cat = [x for k, _, x in e if k == 3]
            if len(cat) != 1 or cat[0] not in cats or one(e, 10) not in names:
                fail("category %r or name %r not interned" % (cat, one(e, 10)))
            ev["name"] = cats[cat[0]] + ":" + names[one(e, 10)]
            if typ == "begin":
                stack.append(ev["name"])
        args = {}
        for k, _, da in e:
            if k != 4:
                continue
            d = fields(da)
            iid = one(d, 1)
            if iid not in anames:
                fail("annotation name %r not interned" % iid)
            args[anames[iid]] = annotation_value(d)
        ev["args"] = args
        cs = one(e, 56)
        if cs is not None:
            if cs not in callstacks:
                fail("callstack %r not interned" % cs)
            chain = []
            for fr in callstacks[cs]:
                if fr not in frames or frames[fr] not in funcs:
                    fail("frame %r of callstack %d not interned" % (fr, cs))
                chain.append(funcs[frames[fr]])
            ev["stack"] = chain[::-1]    # innermost first, as utrace script
        out.append(ev)
    return out


def annotation_value(d):
    arr = [x for k, _, x in d if k == 12]
    if arr:
        return [annotation_value(fields(x)) for x in arr]
    if one(d, 3) is not None:
        return one(d, 3)
    if one(d, 4) is not None:
        return signed(one(d, 4))
    if one(d, 6) is not None:
        return text_of(one(d, 6))
    if any(k in (3, 4, 6, 12) for k, _, _ in d) or len(d) == 1:
        return []                               # an empty array
    fail("an annotation without a value: %r" % d)


# ------------------------------------------------------ protoc's text

TOKEN = re.compile(r'\s*(?:(\w+)\s*\{|(\w+):\s*("(?:[^"\\]|\\.)*"|\S+)|(\}))')


def unescape(s):
    out, i = bytearray(), 1
    while i < len(s) - 1:
        c = s[i]
        if c != "\\":
            out += c.encode("utf-8")
            i += 1
            continue
        n = s[i + 1]
        if n in "01234567":
            j = i + 1
            while j < i + 4 and s[j] in "01234567":
                j += 1
            out.append(int(s[i + 1:j], 8))
            i = j
        elif n == "x":
            j = i + 2
            while j < i + 4 and s[j] in "0123456789abcdefABCDEF":
                j += 1
            out.append(int(s[i + 2:j], 16))
            i = j
        else:
            out += {"n": b"\n", "t": b"\t", "r": b"\r", '"': b'"', "'": b"'",
                    "\\": b"\\", "a": b"\a", "b": b"\b", "f": b"\f",
                    "v": b"\v"}[n]
            i += 2
    return bytes(out).decode("utf-8")


def parse_text(s):
    """protoc's text format into {name: [values]} (a message: a dict)."""
    stack = [{}]
    pos = 0
    while pos < len(s):
        m = TOKEN.match(s, pos)
        if not m:
            if s[pos:].strip() == "":
                break
            fail("cannot read protoc output at: %r" % s[pos:pos + 40])
        pos = m.end()
        if m.group(1):
            msg = {}
            stack[-1].setdefault(m.group(1), []).append(msg)
            stack.append(msg)
        elif m.group(4):
            stack.pop()
        else:
            v = m.group(3)
            if v.startswith('"'):
                v = unescape(v)
            elif re.fullmatch(r"-?\d+", v):
                v = int(v)
            elif v in ("true", "false"):
                v = v == "true"
            stack[-1].setdefault(m.group(2), []).append(v)
    if re.search(r"^\s*\d+\s*[:{]", s, re.M):
        fail("protoc found fields that perfetto-subset.proto does not name")
    return stack[0]


def g(m, k, default=None):
    return m.get(k, [default])[0]


def text_value(d):
    if "array_values" in d:
        return [text_value(x) for x in d["array_values"]]
    for k in ("uint_value", "int_value", "string_value"):
        if k in d:
            return d[k][0]
    return []


def text(path):
    t = parse_text(open(path, "rb").read().decode("utf-8"))
    names, cats, anames, tracks, out = {}, {}, {}, {}, []
    for p in t.get("packet", []):
        for idata in p.get("interned_data", []):
            for k, table in (("event_categories", cats), ("event_names", names),
                             ("debug_annotation_names", anames)):
                for e in idata.get(k, []):
                    table[g(e, "iid")] = g(e, "name")
        td = g(p, "track_descriptor")
        if td:
            if "process" in td:
                tracks[g(td, "uuid")] = (g(td["process"][0], "pid"), None, None)
            elif "thread" in td:
                th = td["thread"][0]
                tracks[g(td, "uuid")] = (g(th, "pid"), g(th, "tid"), None)
            else:
                tracks[g(td, "uuid")] = (tracks[g(td, "parent_uuid")][0], None, g(td, "name"))
        te = g(p, "track_event")
        if not te:
            continue
        pid, tid, cname = tracks[g(te, "track_uuid")]
        typ = {"TYPE_SLICE_BEGIN": "begin", "TYPE_SLICE_END": "end",
               "TYPE_INSTANT": "instant", "TYPE_COUNTER": "counter"}[g(te, "type")]
        ts = g(p, "timestamp")
        if typ == "counter":
            v = g(te, "counter_value")
            if v is None:
                v = int(float(g(te, "double_counter_value")))
            out.append({"ts": ts, "pid": pid, "type": "counter", "track": cname, "value": v})
            continue
        ev = {"ts": ts, "pid": pid, "tid": tid, "type": typ}
        if g(te, "name") == "lost_events":
            ev["type"] = "lost"
            ev["count"] = None
            for d in te.get("debug_annotations", []):
                ev["count"] = g(d, "uint_value")
            out.append(ev)
            continue
        if typ != "end":
            ev["name"] = cats[g(te, "category_iids")] + ":" + names[g(te, "name_iid")]
        ev["args"] = {anames[g(d, "name_iid")]: text_value(d)
                      for d in te.get("debug_annotations", [])}
        out.append(ev)
    return out


# ------------------------------------------------------ utrace script

def script(path):
    out = []
    for line in open(path, encoding="utf-8"):
        j = json.loads(line)
        if "lost" in j:
            out.append({"ts": j["time"], "pid": j["pid"], "tid": j["tid"] or j["pid"],
                        "type": "lost", "count": j["lost"]})
        else:
            out.append({"ts": j["time"], "pid": j["pid"], "tid": j["tid"] or j["pid"],
                        "type": "instant", "name": j["name"], "args": j["fields"]})
    return out


# ------------------------------------------------------ the JSON export

def chrome_json(path):
    raw = open(path, "rb").read()
    try:
        doc = json.loads(raw.decode("utf-8"), parse_float=decimal.Decimal)
    except (UnicodeDecodeError, ValueError) as e:
        fail("not strict JSON in UTF-8: %s" % e)
    for m in re.finditer(rb'"ts":([^,}]*)', raw):
        if not re.fullmatch(rb"\d+\.\d{3}", m.group(1)):
            fail("ts %r is not microseconds with three decimals" % m.group(1))
    if set(doc) != {"traceEvents", "displayTimeUnit", "otherData"}:
        fail("top-level keys %r" % sorted(doc))
    out, stacks = [], {}
    for e in doc["traceEvents"]:
        ph = e["ph"]
        if ph == "M":
            out.append({"type": "meta", "what": e["name"], "pid": e["pid"],
                        "tid": e["tid"], "name": e["args"]["name"]})
            continue
        ts = int(e["ts"] * 1000)
        if ph == "C":
            (field, value), = e["args"].items()
            if not e["name"].endswith("." + field):
                fail("counter %r has the value of %r" % (e["name"], field))
            out.append({"ts": ts, "pid": e["pid"], "type": "counter",
                        "track": e["name"], "value": value})
            continue
        ev = {"ts": ts, "pid": e["pid"], "tid": e["tid"]}
        name = e["cat"] + ":" + e["name"]
        if name == "utrace:lost_events":
            ev.update(type="lost", count=e["args"]["count"])
            out.append(ev)
            continue
        stack = stacks.setdefault((e["pid"], e["tid"]), [])
        if ph == "i":
            if e.get("s") != "t":
                fail("an instant that is not thread-scoped")
            ev.update(type="instant", name=name)
        elif ph == "B":
            ev.update(type="begin", name=name)
            stack.append(name)
        elif ph == "E":
            if not stack:
                fail("an E with no B open on %r" % ((e["pid"], e["tid"]),))
            stack.pop()
            ev["type"] = "end"
        else:
            fail("phase %r" % ph)
        ev["args"] = e["args"]
        out.append(ev)
    return out


def main():
    modes = {"wire": wire, "text": text, "json": chrome_json, "script": script}
    if len(sys.argv) != 3 or sys.argv[1] not in modes:
        fail(__doc__.split("\n\n")[1])
    evs = modes[sys.argv[1]](sys.argv[2])
    for e in evs:
        print(json.dumps(e, sort_keys=True, ensure_ascii=True))


main()
