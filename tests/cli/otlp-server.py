#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A loopback OTLP/HTTP collector for the tests of `utrace export` (t0045).

It listens on 127.0.0.1 only, on a free port that it writes to PORT-FILE,
and appends each request it accepts to OUT as one JSON line:
{"path": ..., "encoding": ..., "type": ..., "headers": {...}, "body": ...}
with the body un-gzip'ed and parsed.  Every request it sees, accepted or
not, is a line "PATH ANSWER" in OUT.attempts.

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
args = ap.parse_args()

lock = threading.Lock()
seen = [0]


def note(path, answer):
    with open(args.out + '.attempts', 'a') as f:
        f.write('%s %s\n' % (path, answer))


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
        body = json.loads(data)
        rec = {'path': self.path, 'encoding': enc,
               'type': self.headers.get('Content-Type', ''),
               'headers': {k.lower(): v for k, v in self.headers.items()},
               'body': body}
        with lock:
            with open(args.out, 'a') as f:
                f.write(json.dumps(rec) + '\n')
        note(self.path, '200')
        if mode == 'partial' and nth == 1:
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
