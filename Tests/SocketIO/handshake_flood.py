"""Floods a Socket.IO endpoint with Engine.IO 3 polling handshakes that are never followed up, as
a page stuck in a reconnect loop does, from one source address (127.0.0.2 by default, so a client
on 127.0.0.1 is another address). Requests go one after another over keep-alive connections.

Prints `{"event": "started"}` after the first answer, then one summary line at the end:
  {"event": "done", "statuses": {"200": N, "429": M, ...}, "seconds": S}
Uses only the standard library.
"""
import argparse
import http.client
import json
import sys
import time
from urllib.parse import urlsplit

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True, help="the endpoint, e.g. http://127.0.0.1:3001")
parser.add_argument("--count", type=int, default=10_000)
parser.add_argument("--source", default="127.0.0.2", help="the source address of the flood")
args = parser.parse_args()

target = urlsplit(args.url)
statuses = {}


def connect():
    return http.client.HTTPConnection(target.hostname, target.port, timeout=30, source_address=(args.source, 0))


connection = connect()
started = time.monotonic()
for number in range(args.count):
    for attempt in range(3):
        try:
            connection.request("GET", f"/socket.io/?EIO=3&transport=polling&t={number}")
            response = connection.getresponse()
            response.read()
            break
        except (http.client.HTTPException, OSError):
            # The server may close a keep-alive connection; open another and ask again.
            connection.close()
            connection = connect()
    else:
        statuses["error"] = statuses.get("error", 0) + 1
        continue
    statuses[str(response.status)] = statuses.get(str(response.status), 0) + 1
    if number == 0:
        print(json.dumps({"event": "started"}), flush=True)
print(json.dumps({"event": "done", "statuses": statuses, "seconds": round(time.monotonic() - started, 2)}), flush=True)
sys.exit(0)
