#!/usr/bin/env python3
"""A webhook and ntfy receiver for the notification tests: a real HTTP server on a free loopback
port that prints `listening PORT`, then one `request {json}` line per request it received (method,
path, headers, body, and whether X-Trellis-Signature is the HMAC-SHA256 of the body with the
secret, recomputed here from the documented format, and the status answered). --status answers with
that code; --status-file reads the code from that file at each request (a channel the test takes down and
brings back); --hang never answers (a server that hangs)."""
import argparse
import hashlib
import hmac
import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("--secret-file")
parser.add_argument("--status", type=int, default=200)
parser.add_argument("--status-file")
parser.add_argument("--hang", action="store_true")
args = parser.parse_args()
secret = open(args.secret_file, "rb").read().rstrip(b"\r\n") if args.secret_file else None
never = threading.Event()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(min(length, 1 << 20))
        signature = self.headers.get("X-Trellis-Signature")
        expected = "sha256=" + hmac.new(secret, body, hashlib.sha256).hexdigest() if secret is not None else None
        status = args.status
        if args.status_file:
            with open(args.status_file) as f:
                status = int(f.read().strip() or args.status)
        record = {
            "status": status,
            "method": self.command,
            "path": self.path,
            "headers": {name.lower(): value for name, value in self.headers.items()},
            "body": body.decode("utf-8", "replace"),
            "signature_ok": signature is not None and expected is not None and hmac.compare_digest(signature, expected),
        }
        print("request " + json.dumps(record, sort_keys=True), flush=True)
        if args.hang:
            never.wait(120)
            return
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *_):
        pass


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(f"listening {server.server_address[1]}", flush=True)
try:
    server.serve_forever()
except KeyboardInterrupt:
    sys.exit(0)
