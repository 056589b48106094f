"""The faults of the bridge harness (bridge.py). Each is a function `(ctx, rng, seconds)` that makes the fault
on the uplink (or the processes) shared by both bridges, lasts `seconds` and ends it: both bridges meet the
same fault at the same moment. `ctx` is bridge.Run: ctx.upstream (bridge_sides.Upstream) and ctx.sides.

`LENGTHS` gives each fault's duration, short and full, in seconds (a (low, high) range drawn from the run's
seed); `BOUND` is the fault whose run bounds both queues (a small `max_bytes` for Trellis and the same count
as `max_queued_messages` for Mosquitto).
"""
from __future__ import annotations

import random
import threading
import time


def _pause(seconds: float, stop: threading.Event) -> None:
    """Waits `seconds`, or less when the run is being stopped."""
    stop.wait(max(0.0, seconds))


def cut(ctx, rng: random.Random, seconds: float) -> None:
    """The uplink's veth down for `seconds`, then up."""
    ctx.upstream.link(False)
    _pause(seconds, ctx.stopping)
    ctx.upstream.link(True)


def lossy(ctx, rng: random.Random, seconds: float) -> None:
    """30 % of the uplink's packets dropped both ways and 500 ms added to each chunk each way, for `seconds`."""
    ctx.upstream.loss(30)
    ctx.upstream.delay(0.5)
    _pause(seconds, ctx.stopping)
    ctx.upstream.loss(None)
    ctx.upstream.delay(0.0)


def flap(ctx, rng: random.Random, seconds: float) -> None:
    """The uplink down 1–3 s and up 2–4 s, again and again, for `seconds`; up at the end."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and not ctx.stopping.is_set():
        ctx.upstream.link(False)
        _pause(min(rng.uniform(1, 3), end - time.monotonic()), ctx.stopping)
        ctx.upstream.link(True)
        _pause(min(rng.uniform(2, 4), end - time.monotonic()), ctx.stopping)
    ctx.upstream.link(True)


def upstream_kill(ctx, rng: random.Random, seconds: float) -> None:
    """Both upstream Mosquittos SIGKILLed, started again `seconds` later from their persistence files (saved
    every second)."""
    for broker in ctx.upstream.brokers.values():
        broker.kill()
    _pause(seconds, ctx.stopping)
    for broker in ctx.upstream.brokers.values():
        broker.start()


def holder_kill(ctx, rng: random.Random, seconds: float) -> None:
    """The uplink cut; halfway through the cut, with a backlog queued, the process holding each bridge's
    queue SIGKILLed (the Trellis relay; the local Mosquitto whose bridge it is) and started again; then the
    uplink restored."""
    ctx.upstream.link(False)
    _pause(seconds / 2, ctx.stopping)
    for side in ctx.sides.values():
        side.kill()
    for side in ctx.sides.values():
        side.start()
    _pause(seconds / 2, ctx.stopping)
    ctx.upstream.link(True)


BOUND = "queue-bound"

FAULTS = {
    "cut": cut,
    "lossy": lossy,
    "flap": flap,
    "upstream-kill": upstream_kill,
    "holder-kill": holder_kill,
    BOUND: cut,
}

WHAT = {
    "cut": "the uplink cut (veth down), then restored",
    "lossy": "30 % packet loss both ways (nftables) and 500 ms each way (a proxy in the namespace)",
    "flap": "the uplink down 1–3 s, up 2–4 s, repeatedly",
    "upstream-kill": "the upstream Mosquitto SIGKILLed, restarted from its persistence (autosave 1 s)",
    "holder-kill": "uplink cut; midway the queue's holder SIGKILLed (Trellis; the bridging Mosquitto), restarted",
    BOUND: "the uplink cut with a queue bound of 2 s of traffic (max_bytes; max_queued_messages)",
}

# (short, full) duration ranges in seconds
LENGTHS = {
    "cut": ((6, 8), (60, 120)),
    "lossy": ((8, 10), (60, 90)),
    "flap": ((10, 12), (60, 90)),
    "upstream-kill": ((1, 3), (2, 5)),
    "holder-kill": ((8, 10), (40, 60)),
    BOUND: ((6, 8), (30, 60)),
}
