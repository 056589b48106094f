"""The traffic of the bridge harness (bridge.py) and what the upstream side makes of it.

- `Publisher`: one paho client per local broker (load.TrackedClient: persistent session, QoS 1, the
  publisher's own resends noted as *uncertain*), publishing the same sequence on both: `rate` messages a
  second, round robin over `sensors/0` … `sensors/<topics-1>`, each payload `<topic> <seq>` padded to
  PAYLOAD bytes, for a bounded time. A message is *sent* when the local broker acknowledged it.
- `Checker`: an MQTT v5 client with a persistent session (QoS 1) on an upstream broker, over the link no
  fault touches, recording each arrival: its topic, sequence number and `trellis-id` user property.
- `analyze`: lost, duplicated (before and after keeping one copy per `trellis-id`), out of order per topic.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import paho.mqtt.client as mqtt
from paho.mqtt.packettypes import PacketTypes
from paho.mqtt.properties import Properties

from bridge_sides import CHECKER_USER, UPSTREAM_PASSWORD
from load import TrackedClient

PAYLOAD = 100  # bytes; the queue bound's arithmetic (max_bytes / PAYLOAD messages) relies on it


class Publisher:
    """Publishes the same numbered messages to each local broker; `run` returns after `seconds`."""

    def __init__(self, ports: dict[str, int], rate: int, topics: int) -> None:
        self.rate, self.topics = rate, topics
        self.clients = {side: TrackedClient(f"pub-{side}", port) for side, port in ports.items()}
        self.sent_at: dict[str, float] = {}  # key "k:seq" -> when it was published
        self.count = 0

    def run(self, seconds: float, stop: threading.Event) -> None:
        """Publishes at `rate` a second for `seconds` (or until `stop`), paced on one clock; bounded."""
        start = time.monotonic()
        total = int(seconds * self.rate)
        for n in range(total):
            if stop.is_set():
                break
            due = start + n / self.rate
            delay = due - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            k, seq = n % self.topics, n // self.topics
            topic = f"sensors/{k}"
            payload = f"{topic} {seq} ".ljust(PAYLOAD, "x")
            key = f"{k}:{seq}"
            self.sent_at[key] = time.monotonic()
            for client in self.clients.values():
                client.publish(key, topic, payload)
            self.count = n + 1

    def acked(self, side: str) -> set[str]:
        """The keys `side`'s local broker acknowledged."""
        return self.clients[side].acked()

    def settled(self, side: str) -> bool:
        """Whether `side`'s local broker has answered every message published to it: until then a
        message acknowledged a moment later would count as lost if the check ran now."""
        return self.clients[side].unacked() == 0

    def uncertain(self, side: str) -> set[str]:
        """The keys unacknowledged at a disconnect of `side`'s publisher: they may have been sent twice."""
        return set(self.clients[side].uncertain)

    def stop(self) -> None:
        """Disconnects the publishers."""
        for client in self.clients.values():
            client.stop()


@dataclass
class Arrival:
    """One copy of a message as it arrived upstream."""

    at: float
    key: str  # "k:seq"
    trellis_id: str | None


class Checker:
    """Everything that arrives on `site/home1/sensors/#` of one upstream broker, in arrival order."""

    def __init__(self, name: str, address: tuple[str, int]) -> None:
        self.arrivals: list[Arrival] = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=f"checker-{name}",
                                  protocol=mqtt.MQTTv5)
        self.client.reconnect_delay_set(0.2, 1)
        self.client.on_connect = self._on_connect
        self.client.on_disconnect = lambda *args: self.connected.clear()
        self.client.on_message = self._on_message
        self.client.username_pw_set(CHECKER_USER, UPSTREAM_PASSWORD)
        properties = Properties(PacketTypes.CONNECT)
        properties.SessionExpiryInterval = 3600
        self.client.connect(address[0], address[1], keepalive=10, clean_start=False, properties=properties)
        self.client.loop_start()
        if not self.connected.wait(10):
            raise RuntimeError(f"the checker could not connect to {address}")

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        """Subscribes again on each connection (the session keeps the subscription; this costs nothing)."""
        client.subscribe("site/home1/sensors/#", qos=1)
        self.connected.set()

    def _on_message(self, client, userdata, message) -> None:
        """Records the arrival: its key `k:seq` from the topic and payload, and its trellis-id if any."""
        topic = message.topic.removeprefix("site/home1/sensors/")
        seq = message.payload.split(b" ", 2)[1].decode()
        ids = [v for k, v in getattr(message.properties, "UserProperty", None) or [] if k == "trellis-id"]
        with self.lock:
            self.arrivals.append(Arrival(time.monotonic(), f"{topic}:{seq}", ids[0] if ids else None))

    def keys(self) -> set[str]:
        """The distinct messages arrived so far."""
        with self.lock:
            return {a.key for a in self.arrivals}

    def snapshot(self) -> list[Arrival]:
        """Every arrival so far, in order."""
        with self.lock:
            return list(self.arrivals)

    def stop(self) -> None:
        """Disconnects the checker."""
        self.client.loop_stop()
        self.client.disconnect()


@dataclass
class Result:
    """What `analyze` found for one bridge in one run."""

    sent: int = 0
    received: int = 0
    lost: list[str] = field(default_factory=list)
    duplicates: int = 0
    duplicates_by_id: int | None = None  # None: the copies carry no trellis-id
    out_of_order: list[str] = field(default_factory=list)


def analyze(sent: set[str], uncertain: set[str], arrivals: list[Arrival]) -> Result:
    """Compares what the local broker acknowledged (`sent`) with what arrived upstream. A key the publisher
    resent after its own disconnect (`uncertain`) may legitimately arrive twice, so its copies are not
    counted as duplicates. Out of order: a first copy whose sequence number is below one already seen on
    its topic."""
    result = Result(sent=len(sent), received=len(arrivals))
    seen: set[str] = set()
    seen_ids: set[str] = set()
    highest: dict[str, int] = {}
    after_ids = 0
    for arrival in arrivals:
        if arrival.key in seen:
            if arrival.key not in uncertain:
                result.duplicates += 1
                if arrival.trellis_id is None or arrival.trellis_id not in seen_ids:
                    after_ids += 1
        else:
            seen.add(arrival.key)
            topic, seq = arrival.key.split(":")
            if int(seq) < highest.get(topic, -1):
                result.out_of_order.append(f"sensors/{topic} #{seq} after #{highest[topic]}")
            highest[topic] = max(highest.get(topic, -1), int(seq))
        if arrival.trellis_id:
            seen_ids.add(arrival.trellis_id)
    if any(a.trellis_id for a in arrivals):
        result.duplicates_by_id = after_ids
    result.lost = sorted(sent - seen, key=lambda key: (int(key.split(":")[0]), int(key.split(":")[1])))
    return result


def ranges(keys: list[str]) -> str:
    """`sensors/0 #3-7, sensors/1 #4`: lost keys grouped by topic into runs of sequence numbers."""
    by_topic: dict[str, list[int]] = {}
    for key in keys:
        topic, seq = key.split(":")
        by_topic.setdefault(topic, []).append(int(seq))
    parts = []
    for topic, seqs in sorted(by_topic.items(), key=lambda item: int(item[0])):
        runs, start, last = [], None, None
        for seq in sorted(seqs):
            if start is None:
                start = last = seq
            elif seq == last + 1:
                last = seq
            else:
                runs.append((start, last))
                start = last = seq
        runs.append((start, last))
        parts.append(f"sensors/{topic} " + ",".join(f"#{a}" if a == b else f"#{a}-{b}" for a, b in runs))
    return "; ".join(parts)
