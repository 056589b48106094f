"""Opens many connections to an HTTP server from 127.0.0.1 and watches the server close them, for
the tests of the servers' connection limits. Uses only the standard library (asyncio).

--mode slow: each connection sends one byte of a request head ("G") and then nothing, the way a
  client holds a descriptor with a byte now and then.
--mode head: each connection sends a whole request head, `POST --path` announcing a body of 100,000
  bytes (`Content-Length`), and then nothing of the body.
--mode keepalive: each connection sends one whole `GET --path` request, reads the answer, and then
  stays open and silent (an idle kept-alive connection); the next is opened once the answer (or the
  server's close) came, so the server sees them one at a time.

Connections are opened one after another (at most --count, each connect bounded by 10 s). Prints:
  {"event": "opened", "open": N, "answered": A, "opening": S}  once every connection was tried and
      the number open held still for --settle seconds: how many the server holds, (keepalive) how
      many were answered, and the seconds from the first connection to the last one answered or
      closed (a server's idle timeout longer than that closed none of them meanwhile);
  {"event": "done", ...}  when every connection is closed or --timeout passed, with the lifetimes
      (seconds from connecting to the server's close) split at --early into "early" (closed at
      once: evicted or refused) and "late" (closed by a timeout), the late ones' min and max, how
      many are still open, and (keepalive) how many closed unanswered and the shortest lifetime of
      an answered one.
"""
import argparse
import asyncio
import json
import sys
import time

parser = argparse.ArgumentParser()
parser.add_argument("--port", type=int, required=True)
parser.add_argument("--count", type=int, default=2000)
parser.add_argument("--mode", choices=["slow", "keepalive", "head"], default="slow")
parser.add_argument("--path", default="/livez")
parser.add_argument("--settle", type=float, default=0.5)
parser.add_argument("--early", type=float, default=1.0, help="lifetimes below this many seconds count as closed at once")
parser.add_argument("--timeout", type=float, default=120)
args = parser.parse_args()


def say(event, **fields):
    sys.stdout.write(json.dumps({"event": event, **fields}) + "\n")
    sys.stdout.flush()


class Connection:
    def __init__(self):
        self.opened = None
        self.closed = None
        self.answered = False
        self.settled_at = None  # when it was first seen answered or closed
        self.failed = None
        self.settled = asyncio.Event()  # answered or closed


async def watch(connection, reader, writer):
    """Sends what the mode sends, then reads until the server closes the connection."""
    try:
        if args.mode == "slow":
            writer.write(b"G")
        elif args.mode == "head":
            writer.write(f"POST {args.path} HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n"
                         "Content-Type: text/plain\r\nContent-Length: 100000\r\n\r\n".encode())
        else:
            writer.write(f"GET {args.path} HTTP/1.1\r\nHost: 127.0.0.1:{args.port}\r\n\r\n".encode())
        await writer.drain()
        received = b""
        while True:
            chunk = await reader.read(65536)
            if not chunk:
                break
            received += chunk
            if received.startswith(b"HTTP/1.1 200") and b"\r\n\r\n" in received:
                connection.answered = True
                connection.settled_at = connection.settled_at or time.monotonic()
                connection.settled.set()
    except (ConnectionError, OSError):
        pass
    connection.closed = time.monotonic()
    connection.settled_at = connection.settled_at or connection.closed
    connection.settled.set()
    writer.close()


async def main():
    connections = []
    tasks = []
    for _ in range(args.count):
        connection = Connection()
        connections.append(connection)
        try:
            reader, writer = await asyncio.wait_for(asyncio.open_connection("127.0.0.1", args.port), 10)
        except (OSError, asyncio.TimeoutError) as error:
            connection.failed = str(error)
            continue
        connection.opened = time.monotonic()
        tasks.append(asyncio.ensure_future(watch(connection, reader, writer)))
        if args.mode == "keepalive":
            try:
                await asyncio.wait_for(connection.settled.wait(), 10)
            except asyncio.TimeoutError:
                pass
    # Connections the server has not accepted yet wait in its backlog, open from here; count once the
    # number has held still for --settle seconds (at most 5 s).
    opened = [c for c in connections if c.opened is not None]
    still_since, last, limit = time.monotonic(), None, time.monotonic() + 5
    while time.monotonic() < limit:
        now_open = sum(1 for c in opened if c.closed is None)
        if now_open != last:
            still_since, last = time.monotonic(), now_open
        elif time.monotonic() - still_since >= args.settle:
            break
        await asyncio.sleep(0.05)
    # A connection not answered nor closed yet counts as settling now: the opening lasted at least that long.
    now = time.monotonic()
    say("opened", open=sum(1 for c in opened if c.closed is None), answered=sum(1 for c in opened if c.answered),
        connect_failures=sum(1 for c in connections if c.failed),
        opening=round(max(c.settled_at or now for c in opened) - min(c.opened for c in opened), 3) if opened else None)
    deadline = time.monotonic() + args.timeout
    while any(c.closed is None for c in opened) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    lifetimes = [c.closed - c.opened for c in opened if c.closed is not None]
    late = [t for t in lifetimes if t >= args.early]
    # Told apart by what the server did rather than by how soon: on a starved machine a connection
    # closed at once can take longer than --early to be seen closed.
    held = [c.closed - c.opened for c in opened if c.closed is not None and c.answered]
    say("done", count=args.count, connect_failures=sum(1 for c in connections if c.failed),
        early=sum(1 for t in lifetimes if t < args.early), late=len(late),
        late_min=round(min(late), 3) if late else None, late_max=round(max(late), 3) if late else None,
        still_open=sum(1 for c in opened if c.closed is None), answered=sum(1 for c in opened if c.answered),
        unanswered_closed=sum(1 for c in opened if c.closed is not None and not c.answered),
        answered_min=round(min(held), 3) if held else None)
    for task in tasks:
        task.cancel()


asyncio.run(main())
