"""A P2O button app's flow with a real python-socketio client, for the Socket.IO tests.

Works with python-socketio 4 (Engine.IO 3) and 5 (Engine.IO 4). Prints one JSON line per event:
  connect, connection-response -> emits register; register-response; button-press ...
After --presses presses it emits register again (the button now exists), prints that answer and
exits 0. With --press it emits one press of the button itself once registered, presenting --token
(in the handshake's query string with python-socketio 4, in the CONNECT's auth with 5; with
--token-header in a header of every request instead: X-Trellis-Press-Token, or Authorization:
Bearer). --origin sends that Origin header with every request, as a browser page would, and --host
that Host header (polling only: the connection still goes to --url). Exits 2 on
timeout, 3 when the connection is refused.
"""
import argparse
import json
import sys
import threading
import time

import socketio

parser = argparse.ArgumentParser()
parser.add_argument("--url", required=True)
parser.add_argument("--button", required=True)
parser.add_argument("--presses", type=int, default=1)
parser.add_argument("--press", action="store_true", help="press the button once over Socket.IO")
parser.add_argument("--token", help="the press token to present")
parser.add_argument("--token-header", choices=["x-trellis", "bearer"], help="present --token in this header instead")
parser.add_argument("--origin", help="the Origin header to send")
parser.add_argument("--host", help="the Host header to send (polling)")
parser.add_argument("--transports", default="polling,websocket")
parser.add_argument("--timeout", type=float, default=60)
args = parser.parse_args()

sio = socketio.Client(reconnection=False)
done = threading.Event()
state = {"presses": 0, "registrations": 0}
lock = threading.Lock()  # handlers run on several threads; one line per event, whole
counting = threading.Lock()


def count(key):
    """Adds one to a counter and returns the new value, atomically."""
    with counting:
        state[key] += 1
        return state[key]


def say(event, data=None):
    line = json.dumps({"event": event, "data": data, "transport": sio.transport()})
    with lock:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()


def wait_for_websocket():
    # The upgrade runs in the background after the polling handshake.
    if "websocket" not in args.transports.split(","):
        return
    deadline = time.time() + 15
    while sio.transport() != "websocket" and time.time() < deadline:
        time.sleep(0.05)


@sio.event
def connect():
    say("connect")


@sio.on("connection-response")
def connection_response(data):
    say("connection-response", data)
    if data.get("status") == "success":
        wait_for_websocket()
        sio.emit("register", args.button)


@sio.on("register-response")
def register_response(data):
    registrations = count("registrations")
    say("register-response", data)
    if registrations == 1:
        say("registered")
        if args.press:
            sio.emit("press", args.button)
    else:
        done.set()


@sio.on("press-response")
def press_response(data):
    say("press-response", data)


@sio.on("button-press")
def button_press(data):
    presses = count("presses")
    say("button-press", data)
    if presses == args.presses:
        sio.emit("register", args.button)


headers = {}
if args.origin is not None:
    headers["Origin"] = args.origin
if args.host is not None:
    headers["Host"] = args.host
transports = args.transports.split(",")
version4 = getattr(socketio, "__version__", "").startswith("4.")
# python-socketio 5 gives the server 1 s by default to answer the namespace's CONNECT, and calls a
# later answer a refusal ("Unexpected connection error"); a browser's client waits 20 s. A loaded
# machine (the suite runs tests in parallel on two cores) can take longer than 1 s.
waiting = {} if version4 else {"wait_timeout": args.timeout}
try:
    if args.token is None:
        sio.connect(args.url, transports=transports, headers=headers, **waiting)
    elif args.token_header == "x-trellis":
        sio.connect(
            args.url, transports=transports, headers={**headers, "X-Trellis-Press-Token": args.token}, **waiting)
    elif args.token_header == "bearer":
        sio.connect(
            args.url, transports=transports, headers={**headers, "Authorization": f"Bearer {args.token}"}, **waiting)
    elif version4:
        # Engine.IO 3 clients have only the query string.
        sio.connect(f"{args.url}?token={args.token}", transports=transports, headers=headers)
    else:
        sio.connect(args.url, transports=transports, headers=headers, auth={"token": args.token}, **waiting)
except socketio.exceptions.ConnectionError as error:
    if str(error) == "Unexpected connection error":
        # python-socketio 5's word for a CONNECT the server never answered within the wait: a timeout.
        say("timeout", str(error))
        sys.exit(2)
    say("refused", str(error))
    sys.exit(3)
if not done.wait(args.timeout):
    say("timeout", state)
    sio.disconnect()
    sys.exit(2)
sio.disconnect()
say("disconnected")
