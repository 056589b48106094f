"""The bridge harness: Trellis's bridge and Mosquitto's own bridge carrying the same traffic through the
same network faults to an upstream Mosquitto in a network namespace (docs/bridge.md, "Proven against real
faults"). Each run starts everything from scratch (bridge_sides.py), publishes `--rate` QoS 1 messages a
second on `sensors/<k>` to both local sides for a bounded time (bridge_traffic.py), makes ONE fault
(bridge_faults.py) at a random moment drawn from the seed, lets the backlog drain and compares what each
upstream broker received with what each local broker acknowledged.

  TRELLIS=.build/debug/trellis "$(Tests/Faults/setup-venv.sh)" Tests/Faults/bridge.py --short
  … bridge.py --faults cut,flap --runs 3 --rate 100 --seed 7
  … bridge.py --short --upstream ejabberd     (ejabberd's MQTT service upstream instead of Mosquitto)

Prints a Markdown table, one Trellis row and one Mosquitto-bridge row per run and per fault; logs and
evidence go to .build/bridge-faults/<time>/. Exits 1 when the Trellis bridge lost, reordered or duplicated
(after keeping one copy per trellis-id) anything it was not made to drop by its bound. Needs root.
"""
from __future__ import annotations

import argparse
import os
import random
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import bridge_faults
import infra
from bridge_sides import MosquittoSide, TrellisSide, Upstream
from bridge_traffic import PAYLOAD, Checker, Publisher, analyze, ranges

TOPICS = 10


class Run:
    """One run: the upstream namespace, both local sides, the checkers and the publisher."""

    def __init__(self, binary: str, base: Path, bound: int | None, window: int | None, cleanup: infra.Cleanup,
                 upstream: str = "mosquitto") -> None:
        self.stopping = threading.Event()
        self.upstream = Upstream(base, cleanup, upstream)
        self.sides = {
            "trellis": TrellisSide(binary, base, self.upstream.uplink["trellis"], bound and bound * PAYLOAD,
                                   window, cleanup),
            "mosquitto": MosquittoSide(base, self.upstream.uplink["mosquitto"], bound, cleanup, upstream),
        }
        self.sides["trellis"].start()
        self.checkers = {name: Checker(name, address) for name, address in self.upstream.checker_address.items()}
        cleanup.push("the checkers", lambda: [c.stop() for c in self.checkers.values()])

    def wait_linked(self, timeout: float) -> None:
        """Waits until both bridges are connected upstream (Trellis's /readyz; the upstream log for Mosquitto)."""
        trellis = self.sides["trellis"].relay
        if not infra.wait_until(lambda: '"out":{"connected":true}' in infra.readyz(trellis.health)[1], timeout, 0.2):
            raise RuntimeError(f"the Trellis bridge did not connect:\n{trellis.tail()}")
        if not infra.wait_until(self.upstream.brokers["mosquitto"].bridged, timeout, 0.2):
            raise RuntimeError("the Mosquitto bridge did not connect")


def drain(run: Run, publisher: Publisher, quiet: float, cap: float) -> float:
    """Waits until each local broker has answered every message published to it and each upstream broker
    has every acknowledged message, or nothing new arrived for `quiet` seconds, at most `cap` seconds;
    returns how long it waited. Without the first condition, the last messages, acknowledged locally
    just after a look found everything else upstream, counted as lost while they were on their way."""
    start = time.monotonic()
    counts = {name: -1 for name in run.checkers}
    last_change = start
    while time.monotonic() - start < cap:
        complete = all(publisher.settled(name) and publisher.acked(name) <= checker.keys()
                       for name, checker in run.checkers.items())
        now_counts = {name: len(checker.arrivals) for name, checker in run.checkers.items()}
        if now_counts != counts:
            counts, last_change = now_counts, time.monotonic()
        if complete or time.monotonic() - last_change > quiet:
            break
        time.sleep(0.2)
    return time.monotonic() - start


def one_run(args, fault: str, number: int, rng: random.Random, results: Path) -> list[dict]:
    """Makes one run of `fault` and returns a row per bridge."""
    short_range, full_range = bridge_faults.LENGTHS[fault]
    seconds = rng.uniform(*(short_range if args.short else full_range))
    load = max(args.load, seconds + 10)
    at = rng.uniform(2, max(2.5, load - seconds - 3))
    bound = 2 * args.rate if fault == bridge_faults.BOUND else None
    cleanup = infra.Cleanup()
    base = Path(tempfile.mkdtemp(prefix="bridge-faults.", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    try:
        run = Run(args.binary, base, bound, args.window, cleanup, args.upstream)
        run.wait_linked(30)
        publisher = Publisher({name: side.port for name, side in run.sides.items()}, args.rate, TOPICS)
        cleanup.push("the publisher", publisher.stop)
        sender = threading.Thread(target=publisher.run, args=(load, run.stopping), daemon=True)
        started = time.monotonic()
        sender.start()
        run.stopping.wait(at)
        fault_start = time.monotonic()
        bridge_faults.FAULTS[fault](run, rng, seconds)
        fault_end = time.monotonic()
        sender.join(load + 60)
        waited = drain(run, publisher, args.quiet, args.drain)
        rows = []
        for name, side in run.sides.items():
            arrivals = run.checkers[name].snapshot()
            acked = publisher.acked(name)
            result = analyze(acked, publisher.uncertain(name), arrivals)
            row = {"fault": fault, "run": number, "bridge": name, "at": round(at, 1), "seconds": round(seconds, 1),
                   "sent": result.sent, "lost": len(result.lost), "dup": result.duplicates,
                   "dup_id": result.duplicates_by_id, "order": len(result.out_of_order),
                   "reported": side.dropped(), "required": None, "drain": round(waited, 1),
                   "catchup": catch_up(publisher, arrivals, fault_start, fault_end)}
            if bound:
                resumed = min((a.at for a in arrivals if a.at > fault_end), default=time.monotonic())
                backlog = sum(1 for key, t in publisher.sent_at.items() if fault_start <= t <= resumed and key in acked)
                row["required"] = max(0, backlog - bound)
            rows.append(row)
            evidence(results, row, result, side, started)
        return rows
    finally:
        keep = results / f"{fault}-{number}"
        keep.mkdir(parents=True, exist_ok=True)
        for log in [*base.glob("*.log"), *base.glob("*/mosquitto.log"),
                    *(log for name in ("ejabberd", "error", "console") for log in base.glob(f"*/{name}.log"))]:
            shutil.copy(log, keep / f"{log.parent.name}-{log.name}")
        cleanup.run()
        shutil.rmtree(base, ignore_errors=True)


def catch_up(publisher: Publisher, arrivals: list, fault_start: float, fault_end: float) -> float | None:
    """Seconds from the fault's end until the last message published during the fault arrived upstream
    (its first copy); None when none of them arrived."""
    during = {key for key, t in publisher.sent_at.items() if fault_start <= t <= fault_end}
    times = [a.at for a in arrivals if a.key in during]
    return round(max(times) - fault_end, 1) if times else None


def evidence(results: Path, row: dict, result, side, started: float) -> None:
    """Writes what was lost, duplicated or reordered, and the side's relevant log lines, beside the logs."""
    if not (result.lost or result.out_of_order or row["dup"]):
        return
    lines = [f"{row['bridge']} {row['fault']} run {row['run']}: fault at {row['at']} s for {row['seconds']} s",
             f"lost {len(result.lost)}: {ranges(result.lost)}",
             f"out of order {len(result.out_of_order)}: {result.out_of_order[:50]}",
             f"duplicates {row['dup']} (after trellis-id: {row['dup_id']})"]
    # Whether what is missing still waits in the relay's queue (queued, oldest age) or left it (forwarded).
    lines += side.bridge_metrics() or []
    words = "bridge" if row["bridge"] == "trellis" else "cloud"
    lines += side.log_lines(words)[-80:]
    path = results / f"{row['fault']}-{row['run']}-{row['bridge']}.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n")


def table(rows: list[dict]) -> str:
    """The Markdown table: per fault and bridge, summed over the runs."""
    out = ["| fault | bridge | runs | sent | lost | duplicates | dup. after trellis-id | out of order | "
           "dropped / required by the bound (reported) | caught up, s after the fault (max) |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for fault in dict.fromkeys(r["fault"] for r in rows):
        for bridge in ("trellis", "mosquitto"):
            group = [r for r in rows if r["fault"] == fault and r["bridge"] == bridge]
            if not group:
                continue
            total = {key: sum(r[key] for r in group) for key in ("sent", "lost", "dup", "order")}
            dup_id = "—" if any(r["dup_id"] is None for r in group) else sum(r["dup_id"] for r in group)
            if fault == bridge_faults.BOUND:
                reported = [r["reported"] for r in group]
                shown = "—" if None in reported else sum(reported)
                dropped = f"{total['lost']} / {sum(r['required'] for r in group)} ({shown})"
                lost = "—"
            else:
                dropped, lost = "—", total["lost"]
            out.append(f"| {fault} | {bridge} | {len(group)} | {total['sent']} | {lost} | {total['dup']} | {dup_id} | "
                       f"{total['order']} | {dropped} | {max((r['catchup'] or 0) for r in group)} |")
    return "\n".join(out)


def main() -> int:
    """Parses the options, makes the runs and prints the table; exits 1 when the Trellis row fails."""
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--faults", default=",".join(bridge_faults.FAULTS))
    parser.add_argument("--runs", type=int, default=None, help="runs of each fault (3; 1 with --short)")
    parser.add_argument("--rate", type=int, default=100, help="messages a second, each bridge")
    parser.add_argument("--load", type=float, default=150, help="seconds of traffic at least")
    parser.add_argument("--short", action="store_true", help="short faults, 50 msg/s, 15 s of traffic")
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--window", type=int, default=None, help="the Trellis bridge's window (default: its own)")
    parser.add_argument("--quiet", type=float, default=20, help="drain: seconds without arrivals that end it")
    parser.add_argument("--drain", type=float, default=300, help="drain: seconds at most")
    parser.add_argument("--upstream", choices=("mosquitto", "ejabberd"), default="mosquitto",
                        help="the upstream brokers: Mosquitto, or ejabberd's MQTT service (Debian's ejabberd), which "
                             "keeps sessions in memory, so upstream-kill is left out for it")
    args = parser.parse_args()
    if args.upstream == "ejabberd":
        if not os.access("/usr/sbin/ejabberdctl", os.X_OK):
            parser.error("--upstream ejabberd needs Debian's ejabberd: apt-get install --no-install-recommends "
                         "ejabberd. On a machine with systemd the package starts its own ejabberd, listening on every "
                         "address; stop it (systemctl disable --now ejabberd): the harness starts its own")
        faults = [f for f in args.faults.split(",") if f != "upstream-kill"]
        if not faults:
            parser.error("ejabberd forgets its sessions when killed: upstream-kill has nothing to show with it")
        args.faults = ",".join(faults)
    args.binary = os.environ.get("TRELLIS", str(infra.REPO / ".build" / "debug" / "trellis"))
    if args.short:
        args.rate, args.load, args.quiet, args.drain = 50, 15, 10, 60
    args.runs = args.runs or (1 if args.short else 3)
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(1 << 30)
    print(f"seed {seed} (--seed {seed} repeats the moments and lengths), trellis {args.binary}, "
          f"upstream {args.upstream}", flush=True)
    results = infra.REPO / ".build" / "bridge-faults" / time.strftime("%Y%m%d-%H%M%S")
    rng = random.Random(seed)
    rows, began = [], time.monotonic()
    for fault in args.faults.split(","):
        for number in range(1, args.runs + 1):
            run_began = time.monotonic()
            got = one_run(args, fault, number, rng, results)
            rows += got
            for r in got:
                print(f"{fault} #{number} {r['bridge']}: fault at {r['at']} s for {r['seconds']} s; sent {r['sent']}, "
                      f"lost {r['lost']}, dup {r['dup']} ({r['dup_id']} after id), out of order {r['order']}, "
                      f"dropped reported {r['reported']}, required {r['required']}, "
                      f"caught up {r['catchup']} s after the fault, drained {r['drain']} s after the traffic", flush=True)
            print(f"  ({time.monotonic() - run_began:.0f} s)", flush=True)
    print(f"\n{table(rows)}\n\nseed {seed}, {time.monotonic() - began:.0f} s; logs in {results}")
    # Trellis's row: nothing lost but what the bound required, and under the bound exactly what it reported.
    bad = [r for r in rows if r["bridge"] == "trellis" and (r["order"] or r["dup_id"] or (
        r["lost"] > (r["required"] or 0) or r["lost"] != r["reported"]
        if r["fault"] == bridge_faults.BOUND else r["lost"]))]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
