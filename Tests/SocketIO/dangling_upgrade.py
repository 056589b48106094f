"""Opens a polling session and then its WebSocket upgrade, and sends nothing more: neither the probe
nor another poll. Prints {"event": "upgraded"} once the server switched protocols, then
{"event": "closed", "after": S} when the server sends a WebSocket close or closes the connection (S
seconds after the upgrade), or {"event": "open"} if it did neither within --timeout. Exits 0.
Uses only the standard library.
"""
import argparse
import base64
import http.client
import json
import os
import socket
import sys
import time
from urllib.parse import urlsplit

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True, help="the endpoint, e.g. http://127.0.0.1:3001")
parser.add_argument("--timeout", type=float, default=30)
args = parser.parse_args()
target = urlsplit(args.url)


def say(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


polling = http.client.HTTPConnection(target.hostname, target.port, timeout=10)
polling.request("GET", "/socket.io/?EIO=4&transport=polling")
body = polling.getresponse().read().decode()
sid = json.loads(body[1:body.index("}") + 1])["sid"]

key = base64.b64encode(os.urandom(16)).decode()
request = (f"GET /socket.io/?EIO=4&transport=websocket&sid={sid} HTTP/1.1\r\nHost: {target.netloc}\r\n"
           f"Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: {key}\r\nSec-WebSocket-Version: 13\r\n\r\n")
connection = socket.create_connection((target.hostname, target.port), timeout=args.timeout)
connection.sendall(request.encode())
answer = b""
while b"\r\n\r\n" not in answer:
    chunk = connection.recv(4096)
    if not chunk:
        break
    answer += chunk
if not answer.startswith(b"HTTP/1.1 101"):
    say("refused", answer=answer.decode("latin-1")[:200])
    sys.exit(1)
upgraded = time.monotonic()
say("upgraded")
frames = answer.split(b"\r\n\r\n", 1)[1]
try:
    while True:
        # A close frame (opcode 8) from the server, or the connection's end.
        if any(byte & 0x0F == 8 for byte in frames[:1]):
            break
        chunk = connection.recv(4096)
        if not chunk:
            break
        frames = chunk
    say("closed", after=round(time.monotonic() - upgraded, 3))
except socket.timeout:
    say("open")
