"""The checker of one fault-matrix run: what the relays made of the load, read back through the relays
themselves (the retained button states, the `logs/get` JSON service, `REQ_plantInfoOnStartup`), and what
they logged about the fault.

Each check returns a list of failure reasons (empty: passed). The rules:

- presses: each button's retained `total` lies between its acknowledged presses and the copies the broker may
  have taken of its acknowledged and uncertain ones (an uncertain press once more for each disconnect it was
  unacknowledged at: its publisher sent it again, and the broker takes a QoS 1 resend as a new message), so
  exactly the acknowledged count when no publisher lost its connection; the Socket.IO button's in [acknowledged, sent],
  and no Socket.IO press refused (a store outage is to be waited out, as for MQTT presses);
- requests: every acknowledged request answered, and answered once unless uncertain, and each answer is
  `RES_numPlants` with the plant count; no answer to a request never sent;
- log lines: every acknowledged line stored, once unless uncertain;
- but in a `broker-kill` run, a press, request or log line the killed broker may have lost (`lost_by_broker`)
  need not arrive; the run's figures list them;
- plants: the plants added before the load are all there;
- dead letters: none (the load is valid, so a dead letter is a refused message);
- the relay logs: see `log_expectations`.
"""
from __future__ import annotations

import json
import re
import threading
import time
import uuid
from typing import NamedTuple

from load import HOST_NAME, PLANTS, TICK_S, Load, TrackedClient

STORE_DOWN = "the state store cannot commit"
STORE_UP = "the state store commits again"
BROKER_DOWN = "lost the broker connection"
BROKER_UP = "connected to the broker"


# How much a SIGKILLed broker may lose: what it took since its last save. Mosquitto 2.0 saves when more than
# `autosave_interval` (1 s in infra.Broker) whole seconds have passed since the last save, so every 2 s, and a
# message taken just after a save waits up to 3 s for the next.
AUTOSAVE_LOSS_S = 3.0


class Reader:
    """An MQTT client that reads retained states and asks the relays' read services, and watches the load: the
    broker delivers each copy of a press it took once without DUP (a redelivery after a reconnect has it), so a
    press delivered twice without DUP is one the broker took twice (a publisher's resend); and the requests and
    log lines it delivered, each with when it last did (`seen`, `press_seen`), with a persistent session as the
    relays have."""

    def __init__(self, port: int, tag: str) -> None:
        self.messages: dict[str, list[str]] = {}
        self.cond = threading.Condition()
        self.tag = tag
        # (topic, payload) of each press → deliveries without DUP.
        self.press_copies: dict[tuple[str, str], int] = {}
        # (topic, payload) of each press delivered here → when it last was (monotonic), a redelivery (DUP) included.
        self.press_seen: dict[tuple[str, str], float] = {}
        # The keys (`q<n>`, `L<n>`) of the load's requests and log lines → when the broker last delivered them here.
        self.seen: dict[str, float] = {}
        self.client = TrackedClient(f"{tag}-check-{uuid.uuid4().hex[:6]}", port,
                                    ("trellis/response/logs/get", f"rpi/fromrpi/{tag}chk", "trellis/deadletter",
                                     "p2o/buttons/+/press", "rpi/torpi/+", "devices/+/log"),
                                    self._on_message)

    def _on_message(self, client, userdata, message) -> None:
        if message.topic.startswith("p2o/buttons/") and message.topic.endswith("/press"):
            if message.topic.startswith(f"p2o/buttons/{self.tag}-"):
                key = (message.topic, message.payload.decode(errors="replace"))
                with self.cond:
                    self.press_seen[key] = time.monotonic()
                    if not message.dup:
                        self.press_copies[key] = self.press_copies.get(key, 0) + 1
            return
        if message.topic.startswith((f"rpi/torpi/{self.tag}s", f"devices/{self.tag}-")):
            text = message.payload.decode(errors="replace")
            match = re.match(r"ID:([^;]*);", text) if message.topic.startswith("rpi/") \
                else re.search(r'"message": "([^"]*)"', text)
            if match:
                with self.cond:
                    self.seen[match.group(1)] = time.monotonic()
            return
        if message.topic.startswith(("rpi/torpi/", "devices/")):
            return
        with self.cond:
            self.messages.setdefault(message.topic, []).append(message.payload.decode(errors="replace"))
            self.cond.notify_all()

    def wait_for(self, predicate, timeout: float):
        """Waits until predicate(messages) returns something other than None; returns it (or None)."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                value = predicate(self.messages)
                if value is not None or time.monotonic() >= deadline:
                    return value
                self.cond.wait(min(0.5, max(0.01, deadline - time.monotonic())))

    def retained_totals(self, buttons: list[str], timeout: float = 10) -> dict[str, int | None]:
        """The retained state of each button, read by a fresh subscription (what the broker holds now)."""
        topic_of = {b: f"p2o/buttons/{b}/state" for b in buttons}
        with self.cond:
            for topic in topic_of.values():
                self.messages.pop(topic, None)
        for topic in topic_of.values():
            self.client.client.subscribe(topic, qos=1)
        found = self.wait_for(lambda m: m if all(t in m for t in topic_of.values()) else None, timeout) or self.messages
        for topic in topic_of.values():
            self.client.client.unsubscribe(topic)
        return {b: json.loads(found[t][-1]).get("total") if t in found else None for b, t in topic_of.items()}

    def ask(self, key: str, topic: str, payload: str, reply_topic: str, match, timeout: float = 15):
        """Publishes a request and returns the first reply on reply_topic that `match` accepts."""
        self.client.publish(key, topic, payload)
        return self.wait_for(lambda m: next((r for r in m.get(reply_topic, []) if match(r)), None), timeout)

    def device_log(self, device: str) -> list[str] | None:
        transaction = uuid.uuid4().hex
        reply = self.ask(transaction, "trellis/request/logs/get",
                         json.dumps({"device": device, "limit": 200, "transaction": transaction}),
                         "trellis/response/logs/get", lambda r: transaction in r)
        if reply is None:
            return None
        body = json.loads(reply)
        if body.get("status") != "ok":
            return [f"error: {reply}"]
        return [e["message"].split(" ", 1)[0] for e in body["data"]["entries"] if e.get("type") == "Device"]

    def plants(self) -> str | None:
        sender = f"{self.tag}chk"
        ident = f"c{uuid.uuid4().hex[:8]}"
        return self.ask(ident, f"rpi/torpi/{sender}",
                        f"ID:{ident};sender:{sender};receiver:{HOST_NAME};payload:;operation:REQ_plantInfoOnStartup",
                        f"rpi/fromrpi/{sender}", lambda r: r.startswith(f"ID:{ident};"))

    def stop(self) -> None:
        self.client.stop()


class KillWindow(NamedTuple):
    """What a SIGKILLed broker may have lost: the messages sent (seconds into the load) from `first` to `last`;
    and `restarted`, the monotonic moment it was started again (what the observer got after came from it, never
    from the killed one, gone a second or more before)."""
    first: float
    last: float
    restarted: float


def kill_window(fault: str, at: float, restarted: float) -> KillWindow | None:
    """For a broker SIGKILLed `at` seconds into the load and started again at the monotonic moment `restarted`,
    the send times of the messages it may have taken, acknowledged and lost: those since its last autosave
    (AUTOSAVE_LOSS_S), with a second's slack for a load running late; None for every other fault."""
    return KillWindow(at - AUTOSAVE_LOSS_S - 1.0, at + 0.5, restarted) if fault == "broker-kill" else None


def sent_within(key: str, window: KillWindow | None) -> bool:
    """Whether the message `key` (`p<n>`, `q<n>`, `L<n>`, sent at tick n) was sent within the kill `window`."""
    return window is not None and window.first <= int(key[1:]) * TICK_S <= window.last


def lost_by_broker(key: str, window: KillWindow | None, last_seen: float | None) -> bool:
    """Whether the acknowledged message `key` (`p<n>`, `q<n>`, `L<n>`) may have been lost by a SIGKILLed broker
    rather than by a relay: sent within `window` and not delivered to the observer (`last_seen`: when it last
    was) by the broker started again. Mosquitto acknowledges a message when it takes it and keeps it only in
    memory until its next autosave: killed before it handed the message on, the copy queued for a relay is gone,
    even if the observer got its own before the kill. The observer subscribes with a persistent session as the
    relays do, so a copy the restarted broker delivers to it came from a save that held the relays' copies too
    (or the relay had acknowledged its copy by then): such a message must not be missing."""
    return sent_within(key, window) and (last_seen is None or last_seen < window.restarted)


def answered_twice_by_broker(key: str, window: KillWindow | None, arrivals: list[float]) -> bool:
    """Whether the request `key` (`q<n>`), answered twice (at the monotonic moments `arrivals`), may have been
    answered twice by a SIGKILLed broker rather than by a relay: sent within `window`, one answer delivered by
    the killed broker and the other by the broker started again. What Mosquitto did since its last autosave is
    forgotten with the kill, its deliveries too: started again, it delivers once more the answer it had handed
    on (the subscriber's acknowledgement was lost), or takes as new the answer the relay sends again on its
    resumed session (the broker's acknowledgement was lost). A second answer both before or both after the
    kill, or a third, is a relay's."""
    return sent_within(key, window) and len(arrivals) == 2 and min(arrivals) < window.restarted <= max(arrivals)


def check_presses(load: Load, reader: Reader, settle: float,
                  window: KillWindow | None = None) -> tuple[list[str], dict]:
    """Waits (at most `settle` s) for every button's total to reach what was acknowledged, and then for the
    retained states to be quiet, then compares. With a kill `window`, an acknowledged press the broker may have
    lost (lost_by_broker) need not be counted."""
    failures: list[str] = []
    acked = load.presses.acked()
    uncertain = load.presses.uncertain
    expected = {b: (0, 0) for b in load.buttons}
    acknowledged = {b: 0 for b in load.buttons}
    with reader.cond:
        last_seen = {k: reader.press_seen.get((f"p2o/buttons/{load.press_button(k)}/press", stamp))
                     for k, stamp in load.press_stamps.items()}
    broker_lost = {k for k in acked if lost_by_broker(k, window, last_seen.get(k))}
    for key in load.presses.sent:
        button = load.press_button(key)
        low, high = expected[button]
        copies = 1 + load.presses.resends.get(key, 0) if key in acked or key in uncertain else 0
        expected[button] = (low + (key in acked and key not in broker_lost), high + copies)
        acknowledged[button] += key in acked
    buttons = [*load.buttons, load.sio_button]
    deadline = time.monotonic() + settle
    totals: dict = {}
    while time.monotonic() < deadline:
        totals = reader.retained_totals(buttons, timeout=min(5, max(0.5, deadline - time.monotonic())))
        if all((totals[b] or 0) >= expected[b][0] for b in load.buttons) \
                and (totals[load.sio_button] or 0) >= load.sio.acked:
            break
        time.sleep(0.5)
    time.sleep(1.5)  # a late double count, or the share group's reconciling republish, would show now
    totals = reader.retained_totals(buttons)
    with reader.cond:
        observed = sum(reader.press_copies.values())
        doubled = {b: sum(1 for (topic, _), n in reader.press_copies.items()
                          if topic == f"p2o/buttons/{b}/press" and n > 1) for b in load.buttons}
    for b in load.buttons:
        low, high = expected[b]
        if totals[b] is None or not low <= totals[b] <= high:
            failures.append(f"button {b}: total {totals[b]}, expected {low}" + (f"..{high}" if high != low else "")
                            + f" (acknowledged presses{'' if high == low else ' .. + their copies and the uncertain ones'}"
                            + f"; an observer saw {doubled[b]} of its presses taken twice by the broker)")
    sio_total = totals[load.sio_button] or 0
    if not load.sio.acked <= sio_total <= load.sio.sent:
        failures.append(f"Socket.IO button: total {sio_total}, expected {load.sio.acked}..{load.sio.sent} "
                        f"(acknowledged .. sent)")
    if load.sio.refused:
        failures.append(f"{len(load.sio.refused)} Socket.IO presses refused (press-response), e.g. {load.sio.refused[0]}")
    figures = {"presses_acked": len(acked), "presses_uncertain": len(uncertain & set(load.presses.sent)),
               "presses_observed": observed, "presses_taken_twice": sum(doubled.values()),
               # How far the totals fell short of the acknowledged presses, within what the killed broker may have
               # lost (a shortfall past that failed above); 0 but in a broker-kill run.
               "presses_maybe_lost_by_broker": sum(max(0, acknowledged[b] - (totals[b] or 0)) for b in load.buttons)
               if window else 0,
               "sio_sent": load.sio.sent, "sio_acked": load.sio.acked, "totals": totals}
    return failures, figures


def check_requests(load: Load, settle: float, reader: Reader,
                   window: KillWindow | None = None) -> tuple[list[str], dict]:
    """Every acknowledged request answered once, rightly; with a kill `window`, but for those the broker may
    have lost (lost_by_broker) or answered twice (answered_twice_by_broker)."""
    acked = {k for k in load.requests.acked() if k.startswith("q")}
    deadline = time.monotonic() + settle
    while time.monotonic() < deadline:
        with load.reply_lock:
            if all(k in load.replies for k in acked):
                break
        time.sleep(0.1)
    time.sleep(1.0)  # a late second answer would show now
    failures = []
    with load.reply_lock:
        replies = {k: list(v) for k, v in load.replies.items()}
        arrivals = {k: list(v) for k, v in load.reply_times.items()}
    with reader.cond:
        seen = dict(reader.seen)
    broker_lost = sorted(k for k in acked if k not in replies and lost_by_broker(k, window, seen.get(k)))
    missing = sorted(k for k in acked if k not in replies and k not in broker_lost)
    if missing:
        failures.append(f"{len(missing)} of {len(acked)} acknowledged requests unanswered: {', '.join(missing[:10])}")
    doubled = sorted(k for k, v in replies.items() if k.startswith("q") and len(v) > 1 and k not in load.requests.uncertain)
    broker_twice = [k for k in doubled if answered_twice_by_broker(k, window, arrivals[k])]
    twice = [k for k in doubled if k not in broker_twice]
    if twice:
        failures.append(f"{len(twice)} requests answered more than once: {', '.join(f'{k}×{len(replies[k])}' for k in twice[:10])}")
    unknown = sorted(k for k in replies if not (k in load.requests.sent))
    if unknown:
        failures.append(f"answers to requests never sent: {', '.join(unknown[:10])}")
    wrong = sorted(k for k, v in replies.items() if k.startswith("q")
                   and any(not r.endswith(f";payload:{len(PLANTS)};operation:RES_numPlants") for r in v))
    if wrong:
        failures.append(f"{len(wrong)} wrong answers, e.g. {replies[wrong[0]][0]}")
    return failures, {"requests_maybe_lost_by_broker": broker_lost, "requests_answered_twice_by_broker": broker_twice}


def check_logs(load: Load, reader: Reader, window: KillWindow | None = None) -> tuple[list[str], dict]:
    """Every acknowledged log line stored once; with a kill `window`, but for those the broker may have lost
    (lost_by_broker)."""
    acked = load.logs.acked()
    failures = []
    with reader.cond:
        seen = dict(reader.seen)
    broker_lost: list[str] = []
    for device in load.devices:
        stored = reader.device_log(device)
        if stored is None:
            failures.append(f"logs/get for {device} unanswered")
            continue
        if stored and stored[0].startswith("error:"):
            failures.append(f"logs/get for {device}: {stored[0]}")
            continue
        mine = {k for k in load.logs.sent if load.log_device(k) == device}
        unstored = sorted(k for k in mine & acked if k not in stored)
        broker_lost += [k for k in unstored if lost_by_broker(k, window, seen.get(k))]
        lost = [k for k in unstored if k not in broker_lost]
        twice = sorted({m for m in stored if stored.count(m) > 1 and m not in load.logs.uncertain})
        if lost:
            failures.append(f"{device}: {len(lost)} acknowledged log lines lost: {', '.join(lost[:10])}")
        if twice:
            failures.append(f"{device}: log lines stored twice: {', '.join(twice[:10])}")
    return failures, {"logs_maybe_lost_by_broker": sorted(broker_lost)}


def check_dead_letters(reader: Reader) -> list[str]:
    """The load sends only valid messages: any dead letter is a message refused, e.g. a Socket.IO press
    refused with `store_error` during a store outage that should have been waited out."""
    with reader.cond:
        letters = list(reader.messages.get("trellis/deadletter", []))
    if not letters:
        return []
    reasons: dict[str, int] = {}
    for letter in letters:
        try:
            record = json.loads(letter)
            key = f"{record.get('reason')} on {re.sub(r'/f[0-9]+-', '/…-', record.get('topic', '?'))}"
        except ValueError:
            key = "unreadable"
        reasons[key] = reasons.get(key, 0) + 1
    return [f"{len(letters)} messages dead-lettered (refused): " + ", ".join(f"{n}× {k}" for k, n in reasons.items())]


def check_plants(reader: Reader) -> list[str]:
    answer = reader.plants()
    if answer is None:
        return ["REQ_plantInfoOnStartup unanswered"]
    missing = [p for p in PLANTS if f'"name"%3A"{p}"' not in answer]
    return [f"plants lost: {missing} (answer {answer})"] if missing else []


def count(text: str, phrase: str) -> int:
    return sum(1 for line in text.splitlines() if phrase in line)


def store_causes(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"cause=(\S+)", "\n".join(l for l in text.splitlines() if STORE_DOWN in l))]


# Seconds a store fault must last for the relays to be required to log it: the relay's slow-operation threshold
# (BufferedCommits.slowAfter, 2 s), its watch's tick (0.5 s) and the server's start.
STORE_SEEN_AFTER = 3.0


def check_relay_logs(kind: str, texts: dict[str, str], targets: set[str], must_see: bool) -> list[str]:
    """`texts`: each relay's log from the fault's start on. `kind`: which lines the fault should cause.

    - store: a relay that logged "cannot commit" logs "commits again" exactly once, and no cause twice;
      with `must_see`, at least one relay saw the outage.
    - broker: each target relay logs "lost the broker connection" once and "connected to the broker" once;
      the others neither.
    - restart: each target relay (started again) logs "connected to the broker" once; the others nothing
      of the broker.
    - none: no relay logs a store outage or a lost broker connection."""
    failures = []
    seen = 0
    for name, text in texts.items():
        down, up = count(text, STORE_DOWN), count(text, STORE_UP)
        lost, connected = count(text, BROKER_DOWN), count(text, BROKER_UP)
        if kind == "store":
            if down:
                seen += 1
                causes = store_causes(text)
                if up != 1:
                    failures.append(f"{name}: '{STORE_UP}' logged {up} times after the outage (expected once)")
                if len(causes) != len(set(causes)):
                    failures.append(f"{name}: an outage cause logged more than once: {causes}")
            elif up:
                failures.append(f"{name}: '{STORE_UP}' logged without an outage")
        elif kind == "broker":
            want = (1, 1) if name in targets else (0, 0)
            if (lost, connected) != want:
                failures.append(f"{name}: '{BROKER_DOWN}' ×{lost}, '{BROKER_UP}' ×{connected}, expected ×{want[0]} each")
        elif kind == "restart":
            want = 1 if name in targets else 0
            if connected != want or lost:
                failures.append(f"{name}: '{BROKER_UP}' ×{connected} (expected ×{want}), '{BROKER_DOWN}' ×{lost} (expected none)")
        elif kind == "none":
            if down or lost:
                failures.append(f"{name}: '{STORE_DOWN}' ×{down}, '{BROKER_DOWN}' ×{lost}: expected neither")
    if kind == "store" and must_see and not seen:
        failures.append(f"no relay logged '{STORE_DOWN}': the fault was not seen")
    return failures
