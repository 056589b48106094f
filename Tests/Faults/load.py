"""The steady load of one fault-matrix run and what it learns about acknowledgements.

Four streams, paced on one clock for a bounded time (then they stop by themselves):

- QoS 1 presses on `p2o/buttons/<button>/press` (payload: a time unique to the press), from an MQTT client
  with a persistent session. A press is *acknowledged* when the publisher got its PUBACK from the broker.
- QoS 1 plant requests `REQ_numPlants` on `rpi/torpi/<sender>`, answered on `rpi/fromrpi/<sender>`, from a
  requester with a persistent session subscribed to the answers at QoS 1. *Acknowledged*: PUBACK, as above.
- QoS 1 device log lines on `devices/<device>/log` (a JSON line with a unique message). *Acknowledged*: PUBACK.
- Socket.IO `press` events (python-socketio 5, with the press token) on a button of their own, from a
  session registered for that button. *Acknowledged*: the session got the `button-press` the relay emits
  once the press is committed (an accepted press has no other answer).

A QoS 1 publisher resends what was unacknowledged when its connection dropped, and the broker cannot tell a
resend from a new message: that is MQTT's at-least-once, not the relay's doing. So every message still
unacknowledged at a disconnect of its publisher is noted as *uncertain*: it may be counted, answered or stored
twice. Everything else must be exactly once.
"""
from __future__ import annotations

import json
import logging
import re
import threading
import time
from dataclasses import dataclass, field

import paho.mqtt.client as mqtt
import socketio

# The Socket.IO client's own complaints when a fault cuts its session ("packet queue is empty, aborting")
# are expected: the checks count what it missed.
for _name in ("engineio.client", "socketio.client"):
    logging.getLogger(_name).setLevel(logging.CRITICAL)

HOST_NAME = "Host-RPI3B+"
# The load's tick: the message keyed `p<n>`, `q<n>` or `L<n>` is sent n ticks after the load's start.
TICK_S = 0.05
PLANTS = ["Fern", "Basil", "Mint"]


def published(info: mqtt.MQTTMessageInfo) -> bool:
    """Whether the broker acknowledged this QoS 1 publish. Not `info.is_published()`, which raises for a
    message published while disconnected, though paho queues it and sends it after the reconnect."""
    with info._condition:  # noqa: SLF001 - paho keeps the flag private
        return info._published  # noqa: SLF001


class TrackedClient:
    """A paho-mqtt 2 client with a persistent session that reconnects by itself, keeps every QoS 1 publish's
    MQTTMessageInfo under a key, and notes which were unacknowledged at each disconnect."""

    def __init__(self, client_id: str, port: int, subscriptions: tuple[str, ...] = (), on_message=None,
                 clean: bool = False) -> None:
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                                  protocol=mqtt.MQTTv311, clean_session=clean)
        self.client.max_inflight_messages_set(200)
        self.client.max_queued_messages_set(0)
        self.client.reconnect_delay_set(1, 2)
        self.subscriptions = subscriptions
        self.sent: dict[str, mqtt.MQTTMessageInfo] = {}
        self.uncertain: set[str] = set()
        # How many disconnects each message was unacknowledged at: the copies the broker may have
        # taken of it beyond the first (paho sends it again after each reconnect).
        self.resends: dict[str, int] = {}
        self.disconnects = 0
        self.connected = threading.Event()
        self.lock = threading.Lock()
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = self._on_disconnect
        if on_message:
            self.client.on_message = on_message
        self.client.connect("127.0.0.1", port, keepalive=20)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError(f"{client_id} could not connect to the broker")

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        for topic in self.subscriptions:
            client.subscribe(topic, qos=1)
        self.connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        self.connected.clear()
        with self.lock:
            self.disconnects += 1
            unacknowledged = [key for key, info in self.sent.items() if not published(info)]
            self.uncertain.update(unacknowledged)
            for key in unacknowledged:
                self.resends[key] = self.resends.get(key, 0) + 1

    def publish(self, key: str, topic: str, payload: str) -> None:
        info = self.client.publish(topic, payload, qos=1)
        with self.lock:
            self.sent[key] = info

    def acked(self) -> set[str]:
        with self.lock:
            return {key for key, info in self.sent.items() if published(info)}

    def unacked(self) -> int:
        with self.lock:
            return sum(1 for info in self.sent.values() if not published(info))

    def stop(self) -> None:
        self.client.loop_stop()
        self.client.disconnect()


class SocketIOPresser:
    """One python-socketio 5 session on a relay's endpoint, registered for its own button, pressing it.
    Registers again after every reconnect (each connection is a new client of the button service)."""

    def __init__(self, address: str, token: str, button: str) -> None:
        self.button = button
        self.sent = 0
        self.acked = 0
        self.refused: list[str] = []  # press-response errors: a press the relay refused
        self.registered = threading.Event()
        self.sio = socketio.Client(reconnection=True, reconnection_delay=0.5, reconnection_delay_max=2)
        self.sio.on("connect", lambda: self.sio.emit("register", button))
        self.sio.on("disconnect", lambda *_: self.registered.clear())
        self.sio.on("register-response", lambda data: self.registered.set())
        self.sio.on("button-press", self._on_press)
        self.sio.on("press-response", lambda data: self.refused.append(str(data)))
        self.sio.connect(f"http://{address}", auth={"token": token}, transports=["websocket"], wait_timeout=10)
        if not self.registered.wait(10):
            raise RuntimeError("the Socket.IO session got no register-response")

    def _on_press(self, data) -> None:
        if data == self.button:
            self.acked += 1

    def press(self) -> None:
        if not self.registered.is_set():
            return  # not sent: the session is between connections
        try:
            self.sio.emit("press", self.button)
            self.sent += 1
        except Exception:  # noqa: BLE001 - a session that just dropped: the press was not sent
            pass

    def stop(self) -> None:
        try:
            self.sio.disconnect()
        except Exception:  # noqa: BLE001
            pass


@dataclass
class Load:
    """The four streams against one broker (port) and one relay's Socket.IO endpoint."""

    tag: str
    port: int
    socketio_address: str
    token: str
    buttons: list[str] = field(default_factory=list)
    devices: list[str] = field(default_factory=list)
    replies: dict[str, list[str]] = field(default_factory=dict)
    # When each reply arrived (time.monotonic()), in the order of `replies`.
    reply_times: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.buttons = [f"{self.tag}-b{k}" for k in range(3)]
        self.sio_button = f"{self.tag}-sio"
        self.devices = [f"{self.tag}-d{k}" for k in range(8)]
        self.senders = [f"{self.tag}s{k}" for k in range(10)]
        self.reply_lock = threading.Lock()
        self.presses = TrackedClient(f"{self.tag}-press", self.port)
        self.requests = TrackedClient(f"{self.tag}-req", self.port, ("rpi/fromrpi/+",), self._on_reply)
        self.logs = TrackedClient(f"{self.tag}-log", self.port)
        self.sio: SocketIOPresser | None = None
        self.counts = {"presses": 0, "requests": 0, "logs": 0}
        # Each press's payload (its unique time), by its key.
        self.press_stamps: dict[str, str] = {}

    def _on_reply(self, client, userdata, message) -> None:
        text = message.payload.decode(errors="replace")
        match = re.match(r"ID:([^;]*);", text)
        key = match.group(1) if match else "?"
        with self.reply_lock:
            self.replies.setdefault(key, []).append(text)
            self.reply_times.setdefault(key, []).append(time.monotonic())

    def add_plants(self, timeout: float = 30) -> None:
        """Adds PLANTS through the relay (committed before the load and the fault) and waits for the answers."""
        for k, name in enumerate(PLANTS):
            self.requests.publish(f"add{k}", f"rpi/torpi/{self.senders[0]}",
                                  f"ID:add{k};sender:{self.senders[0]};receiver:{HOST_NAME};"
                                  f"payload:{name},0x{0x36 + k:02x};operation:REQ_addNewPlant")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self.reply_lock:
                if all(f"add{k}" in self.replies for k in range(len(PLANTS))):
                    answers = [self.replies[f"add{k}"][0] for k in range(len(PLANTS))]
                    if not all("operation:RES_addNewPlant" in a for a in answers):
                        raise RuntimeError(f"adding the plants failed: {answers}")
                    return
            time.sleep(0.05)
        raise RuntimeError("the plants were not added in time")

    def start_socketio(self) -> None:
        self.sio = SocketIOPresser(self.socketio_address, self.token, self.sio_button)

    def run(self, seconds: float, stop: threading.Event) -> None:
        """The paced load: per 50 ms tick (TICK_S) a press, every 2nd tick a request and a log line, every 4th a
        Socket.IO press; `seconds` long (or until `stop`)."""
        start = time.monotonic()
        tick = 0
        while not stop.is_set() and time.monotonic() - start < seconds:
            n = tick
            button = self.buttons[n % len(self.buttons)]
            # A unique press time per press, so no two presses are the same message.
            stamp = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(1767225600 + n // 1000)) + f".{n % 1000:03d}Z"
            self.press_stamps[f"p{n}"] = stamp
            self.presses.publish(f"p{n}", f"p2o/buttons/{button}/press", stamp)
            self.counts["presses"] += 1
            if tick % 2 == 0:
                sender = self.senders[(n // 2) % len(self.senders)]
                self.requests.publish(f"q{n}", f"rpi/torpi/{sender}",
                                      f"ID:q{n};sender:{sender};receiver:{HOST_NAME};payload:;operation:REQ_numPlants")
                device = self.devices[(n // 2) % len(self.devices)]
                self.logs.publish(f"L{n}", f"devices/{device}/log", json.dumps({"type": "Device", "message": f"L{n}"}))
                self.counts["requests"] += 1
                self.counts["logs"] += 1
            if tick % 4 == 0 and self.sio:
                self.sio.press()
            tick += 1
            next_at = start + tick * TICK_S
            delay = next_at - time.monotonic()
            if delay > 0:
                stop.wait(delay)

    def press_button(self, key: str) -> str:
        """The button a press key (`p<n>`) went to."""
        return self.buttons[int(key[1:]) % len(self.buttons)]

    def log_device(self, key: str) -> str:
        return self.devices[(int(key[1:]) // 2) % len(self.devices)]

    def wait_acknowledged(self, timeout: float) -> bool:
        """Waits until the broker acknowledged every publish of the three MQTT streams."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not any(c.unacked() for c in (self.presses, self.requests, self.logs)):
                return True
            time.sleep(0.1)
        return False

    def stop(self) -> None:
        if self.sio:
            self.sio.stop()
        for client in (self.presses, self.requests, self.logs):
            try:
                client.stop()
            except Exception:  # noqa: BLE001
                pass
