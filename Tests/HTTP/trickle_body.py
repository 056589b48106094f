"""Sends one HTTP request whose body comes a byte at a time, --interval seconds apart, and reports
when the server closes the connection, for the tests of the body timeout. Uses only the standard
library.

--socketio: the request is a Socket.IO POST to a session of its own (a polling handshake first), so
  that the server reads the body; otherwise `POST --path`.
--chunked: the body is sent chunked (`Transfer-Encoding: chunked`, a chunk of one byte each time)
  instead of announced with `Content-Length: --length`.

Prints {"event": "closed", "after": S, "sent": N, "answer": "HTTP/1.1 ..." or null} once the server
closes the connection (S: seconds from the end of the head), or {"event": "timeout", ...} after
--timeout seconds, and exits 0 (1 on timeout).
"""
import argparse
import json
import socket
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--path", default="/livez")
parser.add_argument("--socketio", action="store_true")
parser.add_argument("--chunked", action="store_true")
parser.add_argument("--length", type=int, default=1000)
parser.add_argument("--interval", type=float, default=1.0)
parser.add_argument("--timeout", type=float, default=60)
args = parser.parse_args()

path = args.path
if args.socketio:
    with socket.create_connection(("127.0.0.1", args.port), timeout=10) as handshake:
        handshake.sendall(f"GET /socket.io/?EIO=4&transport=polling HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
                          "Connection: close\r\n\r\n".encode())
        answer = b""
        while chunk := handshake.recv(65536):
            answer += chunk
    body = answer.split(b"\r\n\r\n", 1)[1].decode()
    sid = json.loads(body[body.index("{"):body.index("}") + 1])["sid"]
    path = f"/socket.io/?EIO=4&transport=polling&sid={sid}"

framing = "Transfer-Encoding: chunked" if args.chunked else f"Content-Length: {args.length}"
connection = socket.create_connection(("127.0.0.1", args.port), timeout=10)
connection.sendall(f"POST {path} HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\nContent-Type: text/plain;charset=UTF-8\r\n"
                   f"{framing}\r\n\r\n".encode())
start = time.monotonic()
sent, answer = 0, b""
connection.settimeout(args.interval)
while time.monotonic() - start < args.timeout and sent < args.length:
    try:
        chunk = connection.recv(65536)
        if not chunk:
            break
        answer += chunk
        continue
    except socket.timeout:
        pass
    except OSError:
        break
    try:
        connection.sendall(b"1\r\n4\r\n" if args.chunked else b"4")
        sent += 1
    except OSError:
        break
else:
    print(json.dumps({"event": "timeout", "sent": sent}))
    sys.exit(1)
after = time.monotonic() - start
first = answer.split(b"\r\n", 1)[0].decode("utf-8", "replace") if answer else None
print(json.dumps({"event": "closed", "after": round(after, 3), "sent": sent, "answer": first}))
