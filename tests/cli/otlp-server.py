#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A loopback OTLP/HTTP collector for the tests of `utrace export` (t0045).

It listens on 127.0.0.1 only, on a free port that it writes to PORT-FILE,
and appends each request it accepts to OUT as one JSON line:
{"path": ..., "encoding": ..., "type": ..., "headers": {...}, "body": ...}
with the body un-gzip'ed and parsed.  Every request it sees, accepted or
not, is a line "TIME PATH ANSWER" in OUT.attempts (TIME: monotonic s).

Modes (the first --times requests misbehave, then all are accepted):
  accept    answer 200 {}
  refuse    nothing listens for --delay seconds (connections are refused),
            then the port opens
  503       answer 503 (the first with Retry-After: 1)
  stall     read the request, sleep --stall seconds, answer 200 without
            keeping it (the client has timed out and will send it again)
  drop      read half of the request and close the connection
  always503 answer 503 to every request
  bad400    answer 400 {"code":3,"message":"..."} to every request
  partial   answer 200 with a partialSuccess of 2 rejected records
  sink      answer 200 {} and keep nothing (for measuring the client)
  429 502 504  answer that status (429 with Retry-After: --retry-after)
  stallkeep keep the request, then as stall: the client sends it again,
            and the collector has it twice (what log.record.uid is for)
  pbonly    answer 415 to JSON bodies (a receiver that takes protobuf only)

A protobuf body (Content-Type application/x-protobuf) is decoded into
OTLP's JSON mapping (pb_to_json), so that the tests read both encodings
alike; --raw-dir DIR keeps every accepted body, un-gzip'ed, as
DIR/N.logs.pb or DIR/N.traces.pb (N.json for JSON) for protoc --decode.
"""
import argparse
import gzip
import json
import os
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ap = argparse.ArgumentParser()
ap.add_argument('--port-file', required=True)
ap.add_argument('--out', required=True)
ap.add_argument('--mode', default='accept')
ap.add_argument('--times', type=int, default=3)
ap.add_argument('--delay', type=float, default=1.5)
ap.add_argument('--stall', type=float, default=3.0)
ap.add_argument('--raw-dir')
ap.add_argument('--retry-after', default='2')
args = ap.parse_args()

# The messages of opentelemetry-proto that utrace sends: JSON name, type
# (a message's table, or 'str', 'hex', 'b64', 'f64', 'f32', 'int', 'bool',
# 'dbl'), repeated.  (Written from the .proto files, apart from
# lib/export/otlp-pb.c; protoc checks both, t3082.)
ANY, KV = {}, {}
ANY.update({1: ('stringValue', 'str', 0), 2: ('boolValue', 'bool', 0),
            3: ('intValue', 'int', 0), 4: ('doubleValue', 'dbl', 0),
            5: ('arrayValue', {1: ('values', ANY, 1)}, 0),
            6: ('kvlistValue', {1: ('values', KV, 1)}, 0), 7: ('bytesValue', 'b64', 0)})
KV.update({1: ('key', 'str', 0), 2: ('value', ANY, 0)})
SCOPE = {1: ('name', 'str', 0), 2: ('version', 'str', 0), 3: ('attributes', KV, 1),
         4: ('droppedAttributesCount', 'int', 0)}
RESOURCE = {1: ('attributes', KV, 1), 2: ('droppedAttributesCount', 'int', 0)}
LOG = {1: ('timeUnixNano', 'f64', 0), 2: ('severityNumber', 'int', 0),
       3: ('severityText', 'str', 0), 5: ('body', ANY, 0), 6: ('attributes', KV, 1),
       7: ('droppedAttributesCount', 'int', 0), 8: ('flags', 'f32', 0),
       9: ('traceId', 'hex', 0), 10: ('spanId', 'hex', 0),
       11: ('observedTimeUnixNano', 'f64', 0), 12: ('eventName', 'str', 0)}
LOGS = {1: ('resourceLogs', {1: ('resource', RESOURCE, 0),
                             2: ('scopeLogs', {1: ('scope', SCOPE, 0),
                                               2: ('logRecords', LOG, 1),
                                               3: ('schemaUrl', 'str', 0)}, 1),
                             3: ('schemaUrl', 'str', 0)}, 1)}
SPAN = {1: ('traceId', 'hex', 0), 2: ('spanId', 'hex', 0), 3: ('traceState', 'str', 0),
        4: ('parentSpanId', 'hex', 0), 5: ('name', 'str', 0), 6: ('kind', 'int', 0),
        7: ('startTimeUnixNano', 'f64', 0), 8: ('endTimeUnixNano', 'f64', 0),
        9: ('attributes', KV, 1), 10: ('droppedAttributesCount', 'int', 0),
        16: ('flags', 'f32', 0)}
TRACES = {1: ('resourceSpans', {1: ('resource', RESOURCE, 0),
                                2: ('scopeSpans', {1: ('scope', SCOPE, 0),
                                                   2: ('spans', SPAN, 1),
                                                   3: ('schemaUrl', 'str', 0)}, 1),
                                3: ('schemaUrl', 'str', 0)}, 1)}


def varint(b, i):
    v = shift = 0
    while True:
        c = b[i]
        i += 1
        v |= (c & 0x7f) << shift
        shift += 7
        if not c & 0x80:
            return v, i


def pb_to_json(b, msg):
    import base64
    import struct
    out, i = {}, 0
    while i < len(b):
        k, i = varint(b, i)
        num, wt = k >> 3, k & 7
        if num not in msg:
            raise ValueError('field %d unknown' % num)
        name, typ, rep = msg[num]
        if wt == 0:
            v, i = varint(b, i)
            if typ == 'bool':
                v = bool(v)
            elif typ == 'int':
                if v >= 1 << 63:
                    v -= 1 << 64
                if name == 'intValue':
                    v = str(v)
        elif wt == 1:
            raw = b[i:i + 8]
            i += 8
            v = struct.unpack('<d', raw)[0] if typ == 'dbl' else str(struct.unpack('<Q', raw)[0])
        elif wt == 5:
            v = struct.unpack('<I', b[i:i + 4])[0]
            i += 4
        elif wt == 2:
            n, i = varint(b, i)
            raw = b[i:i + n]
            i += n
            if isinstance(typ, dict):
                v = pb_to_json(raw, typ)
            elif typ == 'str':
                v = raw.decode('utf-8')
            elif typ == 'hex':
                v = raw.hex()
            elif typ == 'b64':
                v = base64.b64encode(raw).decode()
            else:
                raise ValueError('field %d: length-delimited' % num)
        else:
            raise ValueError('wire type %d' % wt)
        if rep:
            out.setdefault(name, []).append(v)
        else:
            out[name] = v
    return out

lock = threading.Lock()
seen = [0]
seen_raw = [0]


def note(path, answer):
    with open(args.out + '.attempts', 'a') as f:
        f.write('%.3f %s %s\n' % (time.monotonic(), path, answer))


class Handler(BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def setup(self):
        super().setup()
        # the answer's header and body go out at once, not 40 ms apart
        # (Nagle's algorithm against the client's delayed ACK)
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, *a):
        pass

    def answer(self, code, body, extra=()):
        data = json.dumps(body).encode()
        self.send_response(code)
        self.send_header('Content-Type', 'application/json')
        self.send_header('Content-Length', str(len(data)))
        for k, v in extra:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)
        self.wfile.flush()

    def do_POST(self):
        with lock:
            seen[0] += 1
            nth = seen[0]
        bad = nth <= args.times
        mode = args.mode
        length = int(self.headers.get('Content-Length', '0'))
        if mode == 'drop' and bad:
            self.rfile.read(length // 2)
            note(self.path, 'dropped')
            self.close_connection = True
            self.connection.shutdown(socket.SHUT_RDWR)
            return
        raw = self.rfile.read(length)
        if mode == 'sink':
            self.answer(200, {})
            return
        if (mode == '503' and bad) or mode == 'always503':
            note(self.path, '503')
            extra = [('Retry-After', '1')] if nth == 1 else []
            self.answer(503, {'code': 14, 'message': 'busy'}, extra)
            return
        if mode in ('429', '502', '504') and bad:
            note(self.path, mode)
            extra = [('Retry-After', args.retry_after)] if mode == '429' else []
            self.answer(int(mode), {'code': 14, 'message': 'later'}, extra)
            return
        if mode == 'pbonly' and self.headers.get('Content-Type') != 'application/x-protobuf':
            note(self.path, '415')
            self.answer(415, {'code': 3, 'message': 'unsupported content type, protobuf only'})
            return
        if mode == 'bad400':
            note(self.path, '400')
            self.answer(400, {'code': 3, 'message': 'test collector says no: bad field'})
            return
        if mode == 'stall' and bad:
            note(self.path, 'stalled')
            time.sleep(args.stall)
            try:
                self.answer(200, {})
            except OSError:
                pass
            self.close_connection = True
            return
        enc = self.headers.get('Content-Encoding', '')
        data = gzip.decompress(raw) if enc == 'gzip' else raw
        ctype = self.headers.get('Content-Type', '')
        if ctype == 'application/x-protobuf':
            body = pb_to_json(data, LOGS if self.path.endswith('logs') else TRACES)
        else:
            body = json.loads(data)
        if args.raw_dir:
            kind = 'logs' if self.path.endswith('logs') else 'traces'
            ext = 'pb' if ctype == 'application/x-protobuf' else 'json'
            with lock:
                seen_raw[0] += 1
                name = '%s/%d.%s.%s' % (args.raw_dir, seen_raw[0], kind, ext)
            with open(name, 'wb') as f:
                f.write(data)
        rec = {'path': self.path, 'encoding': enc,
               'type': self.headers.get('Content-Type', ''),
               'headers': {k.lower(): v for k, v in self.headers.items()},
               'body': body}
        with lock:
            with open(args.out, 'a') as f:
                f.write(json.dumps(rec) + '\n')
        if mode == 'stallkeep' and bad:
            note(self.path, 'kept-stalled')
            time.sleep(args.stall)
            try:
                self.answer(200, {})
            except OSError:
                pass
            self.close_connection = True
            return
        note(self.path, '200')
        if mode == 'partial' and nth == 1 and ctype == 'application/x-protobuf':
            # ExportLogsServiceResponse{partial_success{rejected 2, message}}
            msg = b'two too old'
            inner = bytes([0x08, 2, 0x12, len(msg)]) + msg
            data = bytes([0x0a, len(inner)]) + inner
            self.send_response(200)
            self.send_header('Content-Type', 'application/x-protobuf')
            self.send_header('Content-Length', str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()
        elif mode == 'partial' and nth == 1:
            self.answer(200, {'partialSuccess': {'rejectedLogRecords': '2',
                                                 'errorMessage': 'two too old'}})
        else:
            self.answer(200, {})


def main():
    if args.mode == 'refuse':
        # a free port, closed again: refused until the server comes up
        s = socket.socket()
        s.bind(('127.0.0.1', 0))
        port = s.getsockname()[1]
        s.close()
        write_port(port)
        time.sleep(args.delay)
        srv = ThreadingHTTPServer(('127.0.0.1', port), Handler)
    else:
        srv = ThreadingHTTPServer(('127.0.0.1', 0), Handler)
        write_port(srv.server_address[1])
    srv.daemon_threads = True
    srv.serve_forever()


def write_port(port):
    tmp = args.port_file + '.tmp'
    with open(tmp, 'w') as f:
        f.write('%d\n' % port)
    os.rename(tmp, args.port_file)


if __name__ == '__main__':
    try:
        main()
    except KeyboardInterrupt:
        sys.exit(0)
