"""The fault matrix: fault × store × relays, each scenario run N times, every run from scratch.

One run starts its own Mosquitto (a free loopback port, a config of its own in a temporary directory under
/dev/shm, anonymous, persistence on), its own PostgreSQL cluster when the store is postgres
(Tests/Postgres/cluster.sh), and 1 or 2 relays (`trellis run --broker … --share g` with two), waits for
their /readyz, adds three plants, then puts a steady, bounded load on them (load.py) and injects ONE fault
(faults.py) at a random moment of it, ends it after a random time, lets the load finish and checks
(checks.py) that every acknowledged press is counted once, every acknowledged request answered once,
every acknowledged log line and every plant kept, that each relay is ready again within RECOVERY_BOUND s
of the fault's end, and that each relay logged the fault and its end once.

  setup-venv.sh prints the Python to run it with (paho-mqtt 2, python-socketio 5):
  TRELLIS=.build/debug/trellis "$(Tests/Faults/setup-venv.sh)" Tests/Faults/matrix.py --short
  … matrix.py --faults pg-fast --stores postgres --relays 2 --runs 3 --seed 7

Prints a Markdown table at the end; each failure's reason and the relays' log tails go to the results
directory. Exits 1 when any run failed. Needs root (namespaces, mounts); everything it made is removed at
the end, on Ctrl-C too.
"""
from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import signal
import sys
import tempfile
import threading
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

import checks
import infra
from faults import FAULTS, KNOWN, SHORT, Fault, NotInjectable
from load import Load

RECOVERY_BOUND = 30.0  # seconds from the fault's end until every relay answers /readyz 200
LOAD_SECONDS = 15.0


@dataclass
class Outcome:
    failures: list[str] = field(default_factory=list)
    skipped: str | None = None
    recovery: float | None = None
    figures: dict = field(default_factory=dict)
    # A relay could not bind a port the matrix had found free: another process on the machine took it
    # in between. Nothing of the fault ran; the run is made again with other ports, not counted.
    port_taken: bool = False


class Run:
    """One run of one scenario: its broker, store, relays and whatever its fault needs; `ctx` of faults.py."""

    def __init__(self, binary: str, fault: Fault, store: str, relays: int, tag: str, base: Path,
                 cleanup: infra.Cleanup) -> None:
        self.fault, self.store, self.tag, self.base = fault, store, tag, base
        self.namespaces = [infra.Namespace(infra.free_namespace_number(), cleanup)
                           for _ in range(relays)] if "netns" in fault.needs else []
        (base / "broker").mkdir()
        self.broker = infra.Broker(base / "broker", cleanup, [n.host_m for n in self.namespaces])
        self.broker.start()
        self.cluster = self.proxy = self.tmpfs = None
        if store == "postgres":
            self.cluster = infra.Cluster(base / "pg", cleanup, [n.host_p for n in self.namespaces])
            self.cluster.start()
            if "proxy" in fault.needs:
                self.proxy = infra.DelayProxy("127.0.0.1", ("127.0.0.1", self.cluster.port), cleanup)
        if "tmpfs" in fault.needs:
            self.tmpfs = infra.Tmpfs(base / "tmpfs", 32, cleanup)
        self.clock_file = base / "clock"
        self.clock_file.write_text("0\n")
        if "clock" in fault.needs:
            built = infra.run("cc", "-shared", "-fPIC", "-O2", "-o", str(base / "clockshift.so"),
                              str(Path(__file__).parent / "clockshift.c"), "-ldl", check=False) \
                if shutil.which("cc") else None
            if built is None or built.returncode != 0:
                raise NotInjectable("no C compiler to build clockshift.so")
        self.token = os.urandom(12).hex()
        (base / "token").write_text(self.token + "\n")
        self.relays = [self._relay(binary, i, relays, cleanup) for i in range(relays)]

    def _relay(self, binary: str, i: int, count: int, cleanup: infra.Cleanup) -> infra.Relay:
        namespace = self.namespaces[i] if self.namespaces else None
        host = namespace.inside_m if namespace else "127.0.0.1"
        broker_host = namespace.host_m if namespace else "127.0.0.1"
        state = (self.tmpfs.path if self.tmpfs else self.base) / f"state-r{i + 1}"
        health = f"{host}:{infra.free_port() if not namespace else 20000 + i * 2}"
        sio = f"{host}:{infra.free_port() if not namespace else 20001 + i * 2}"
        args = ["--broker", f"mqtt://{broker_host}:{self.broker.port}", "--state", str(state),
                "--client-id", f"r{i + 1}", "--health", health, "--socketio", sio,
                "--socketio-press-token-file", str(self.base / "token"), "--spam-limit", "1000000"]
        if self.cluster:
            url = self.cluster.url
            if namespace:
                url = self.cluster.url_via(namespace.host_p)
            elif self.proxy:
                url = self.cluster.url_via("127.0.0.1", self.proxy.port)
            args += ["--store", url]
        if count > 1:
            args += ["--share", "g"]
        env = None
        if "clock" in self.fault.needs:
            env = {"LD_PRELOAD": str(self.base / "clockshift.so"), "CLOCKSHIFT_FILE": str(self.clock_file)}
        return infra.Relay(binary, f"r{i + 1}", args, self.base / f"r{i + 1}.log", health, sio, cleanup,
                           namespace, env)


def measure_recovery(relays: list[infra.Relay], since: float, timeout: float, steady: float = 2.0) -> dict[str, float | None]:
    """Seconds from `since` until each relay answers /readyz 200 for good: the start of a stretch of `steady`
    seconds of 200s (a relay just resumed may answer 200 before it notices its connection is gone).
    None: no such stretch within `timeout`."""
    ready_since: dict[str, float | None] = {r.name: None for r in relays}
    recovered: dict[str, float | None] = {r.name: None for r in relays}
    deadline = since + timeout
    while time.monotonic() < deadline and any(v is None for v in recovered.values()):
        for relay in relays:
            if recovered[relay.name] is not None:
                continue
            now = time.monotonic()
            if not relay.ready():
                ready_since[relay.name] = None
            elif ready_since[relay.name] is None:
                ready_since[relay.name] = now
            elif now - ready_since[relay.name] >= steady:
                recovered[relay.name] = ready_since[relay.name] - since
        time.sleep(0.1)
    return recovered


def one_run(binary: str, fault: Fault, store: str, relays: int, rng: random.Random, tag: str,
            load_seconds: float, cleanup: infra.Cleanup) -> tuple[Outcome, Run | None, Path]:
    """Runs one scenario once, registering everything it makes with `cleanup`, which the caller runs (after
    saving what failed) whatever happened, Ctrl-C included."""
    outcome = Outcome()
    root = Path("/dev/shm") if os.access("/dev/shm", os.W_OK) else Path(tempfile.gettempdir())
    base = Path(tempfile.mkdtemp(prefix="trellis-faults-", dir=root))
    base.chmod(0o755)  # the cluster's owner (postgres) must reach base/pg
    cleanup.push("the run's directory", lambda: shutil.rmtree(base, ignore_errors=True))
    ctx = None
    load = reader = None
    stop = threading.Event()
    try:
        try:
            ctx = Run(binary, fault, store, relays, tag, base, cleanup)
        except NotInjectable as reason:
            outcome.skipped = str(reason)
            return outcome, ctx, base
        for relay in ctx.relays:
            relay.start()
        for relay in ctx.relays:
            if not relay.wait_ready(90):
                ended = relay.process.poll()
                outcome.failures.append(f"{relay.name} not ready within 90 s of its start" if ended is None else
                                        f"{relay.name} exited ({ended}) at its start: {' | '.join(reversed(relay.tail(3).splitlines()))}")
                outcome.port_taken = ended is not None and "Address already in use" in relay.tail(20)
                return outcome, ctx, base
        load = ctx.load = Load(tag, ctx.broker.port, ctx.relays[0].socketio, ctx.token)
        cleanup.push("the load's clients", load.stop)
        load.add_plants()
        load.start_socketio()
        reader = checks.Reader(ctx.broker.port, tag)
        cleanup.push("the checker's client", reader.stop)

        at = rng.uniform(0.15, 0.6) * load_seconds
        duration = rng.uniform(*fault.duration)
        loader = threading.Thread(target=load.run, args=(load_seconds, stop), daemon=True)
        loader.start()
        stop.wait(at)
        offsets = {r.name: r.log_size() for r in ctx.relays}
        try:
            fault.inject(ctx)
        except NotInjectable as reason:
            outcome.skipped = str(reason)
            return outcome, ctx, base
        time.sleep(duration)  # the fault's random length, not an outcome
        ending = time.monotonic()
        fault.end(ctx)
        ended = time.monotonic()
        recovered = measure_recovery(ctx.relays, ended, 3 * RECOVERY_BOUND)
        known = [v for v in recovered.values() if v is not None]
        outcome.recovery = max(known) if known else None
        for name, seconds in recovered.items():
            if seconds is None or seconds > RECOVERY_BOUND:
                outcome.failures.append(f"{name} not ready within {RECOVERY_BOUND:.0f} s of the fault's end "
                                        f"({'never, in ' + str(3 * RECOVERY_BOUND) + ' s' if seconds is None else f'{seconds:.1f} s'}; "
                                        f"/readyz: {infra.readyz(next(r.health for r in ctx.relays if r.name == name))[1][:300]})")
        loader.join(load_seconds + 5)
        if not load.wait_acknowledged(60):
            outcome.failures.append("the broker did not acknowledge every publish within 60 s of the load's end")
        # A SIGKILLed broker may lose what it acknowledged since its last autosave and had not handed on.
        window = checks.kill_window(fault.name, at, ending)
        presses, figures = checks.check_presses(load, reader, settle=45, window=window)
        outcome.failures += presses
        requests, lost_requests = checks.check_requests(load, 30, reader, window)
        outcome.failures += requests
        logs, lost_logs = checks.check_logs(load, reader, window)
        outcome.failures += logs
        figures = {**figures, **lost_requests, **lost_logs}
        outcome.failures += checks.check_plants(reader)
        outcome.failures += checks.check_dead_letters(reader)
        for relay in ctx.relays:
            if relay.process.poll() is not None:
                outcome.failures.append(f"{relay.name} exited ({relay.process.returncode})")
        targets = {ctx.relays[0].name} if fault.targets == "first" else {r.name for r in ctx.relays}
        texts = {r.name: r.log_since(offsets[r.name]) for r in ctx.relays}
        # A store away for less than the relay's slow-operation threshold (2 s) is ridden over in silence when no
        # operation failed: the handling waited for the pool, as for a slow server. Only longer ones must be seen.
        must_see = fault.must_see and (fault.logs != "store" or duration >= checks.STORE_SEEN_AFTER)
        outcome.failures += checks.check_relay_logs(fault.logs, texts, targets, must_see)
        outcome.figures = {**figures, **load.counts, "fault_at_s": round(at, 1), "fault_s": round(duration, 1),
                           "recovery_s": {k: None if v is None else round(v, 1) for k, v in recovered.items()},
                           "publisher_disconnects": load.presses.disconnects + load.requests.disconnects + load.logs.disconnects}
    except Exception as error:  # noqa: BLE001 - a run that breaks is a failed run, reported with its trace
        outcome.failures.append(f"the run broke: {error!r}\n{traceback.format_exc()}")
    finally:
        stop.set()
    return outcome, ctx, base


def save_failure(results: Path, label: str, outcome: Outcome, ctx: Run | None, base: Path) -> Path:
    """The reason and the last lines of every log of a failed run, under results/<label>/."""
    directory = results / label
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "reason.txt").write_text("\n".join(outcome.failures) + "\n\n" + repr(outcome.figures) + "\n")
    for log in [*base.glob("r*.log"), base / "broker" / "mosquitto.log", base / "pg" / "log"]:
        if log.exists():
            lines = log.read_text(errors="replace").splitlines()
            (directory / f"{log.parent.name if log.name == 'log' else ''}{log.name}.tail").write_text("\n".join(lines[-200:]) + "\n")
    return directory


# The figures a journal line keeps: when the fault struck and how long, and what the checker excused as a killed
# broker's, so that a failure or an excuse can be weighed again later without the run's logs.
JOURNALED_FIGURES = ("fault_at_s", "fault_s", "requests_answered_twice_by_broker", "requests_maybe_lost_by_broker",
                     "logs_maybe_lost_by_broker", "presses_maybe_lost_by_broker")


def journal_run(path: str, fault: str, store: str, relays: int, label: str, seed: int, version: str, status: str,
                recovery: float | None, started: float, reasons: list[str], figures: dict | None = None) -> None:
    """Appends one run to the journal: a JSON line the table of several journals is made from."""
    record = {"fault": fault, "store": store, "relays": relays, "run": label, "seed": seed, "binary": version,
              "status": status, "recovery_s": recovery, "seconds": round(time.monotonic() - started, 1),
              "failures": reasons, "at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    record.update({key: figures[key] for key in JOURNALED_FIGURES if figures and figures.get(key) not in (None, [])})
    with open(path, "a") as journal:
        journal.write(json.dumps(record) + "\n")


def print_table(table: dict[tuple[str, str, int], dict]) -> None:
    """The Markdown table of fault × store × relays: runs, failures, known failures, worst recovery."""
    print("| fault | store | relays | runs | failures | known | worst recovery s |")
    print("|---|---|---|---|---|---|---|")
    for (name, store, relays), row in table.items():
        if row["skipped"] and not row["runs"]:
            print(f"| {name} | {store} | {relays} | 0 | skipped | — | — |")
            continue
        worst = "—" if row["worst"] is None else f"{row['worst']:.1f}"
        known = f"{row['known']} (see below)" if row["known"] else "—"
        print(f"| {name} | {store} | {relays} | {row['runs']} | {row['failures']} | {known} | {worst} |")
    for key, row in table.items():
        if row["known"]:
            print(f"\n{key[0]} ({key[1]}, {key[2]}): {row['known']} known failure(s), not counted: {KNOWN.get(key, '')}")


def print_journals(paths: list[Path]) -> int:
    """The table of every run in the journals, in the matrix's scenario order; each failure listed with its run,
    seed and first reason. Exits 1 when any run failed."""
    order = {(f.name, s, r): i for i, (f, s, r) in enumerate(
        (f, s, r) for f in FAULTS.values() for s in f.stores for r in ((1,) if s == "sqlite" else (1, 2)))}
    records = [json.loads(line) for path in paths for line in path.read_text().splitlines() if line.strip()]
    table: dict[tuple[str, str, int], dict] = {}
    for key in sorted({(r["fault"], r["store"], r["relays"]) for r in records}, key=lambda k: order.get(k, len(order))):
        table[key] = {"runs": 0, "failures": 0, "known": 0, "worst": None, "skipped": None}
    failed = []
    for record in records:
        row = table[(record["fault"], record["store"], record["relays"])]
        if record["status"] == "skipped":
            row["skipped"] = "; ".join(record["failures"])
            continue
        row["runs"] += 1
        if record["recovery_s"] is not None:
            row["worst"] = max(row["worst"] or 0, record["recovery_s"])
        if record["status"] == "known failure":
            row["known"] += 1
        elif record["status"] != "ok":
            row["failures"] += 1
            failed.append(record)
    seeds = sorted({r["seed"] for r in records})
    print(f"## Fault matrix: {len(records)} runs from {len(paths)} journal(s), seeds {', '.join(map(str, seeds))}\n")
    print_table(table)
    for (name, store, relays), row in table.items():
        if row["skipped"]:
            print(f"\n{name} ({store}, {relays}): skipped: {row['skipped']}")
    for record in failed:
        print(f"\n{record['run']} (seed {record['seed']}, {record['at']}): {'; '.join(record['failures'])}")
    return 1 if failed else 0


def scenarios(args) -> list[tuple[str, str, int]]:
    faults = args.faults.split(",") if args.faults else None
    stores = args.stores.split(",") if args.stores else None
    relays = [int(r) for r in args.relays.split(",")] if args.relays else None
    for name in faults or []:
        if name not in FAULTS:
            sys.exit(f"unknown fault {name}; the faults are {', '.join(FAULTS)}")
    if args.short:
        chosen = SHORT
    else:
        chosen = [(f.name, s, r) for f in FAULTS.values() for s in f.stores for r in ((1,) if s == "sqlite" else (1, 2))]
    return [(f, s, r) for f, s, r in chosen
            if (faults is None or f in faults) and (stores is None or s in stores) and (relays is None or r in relays)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, help="runs of each scenario (default 20, or 2 with --short)")
    parser.add_argument("--faults", help=f"comma-separated faults (default all): {', '.join(FAULTS)}")
    parser.add_argument("--stores", help="sqlite,postgres (default both)")
    parser.add_argument("--relays", help="1,2 (default both; sqlite runs 1 only)")
    parser.add_argument("--seed", type=int, help="random seed of fault moments and lengths (default: from the clock)")
    parser.add_argument("--short", action="store_true", help="the short list of faults.SHORT (make faults-short)")
    parser.add_argument("--load-seconds", type=float, default=LOAD_SECONDS)
    parser.add_argument("--results", help="directory for failures' reasons and logs (default .build/faults/<time>)")
    parser.add_argument("--verbose", action="store_true", help="print each run's figures, and keep the logs of passing runs too")
    parser.add_argument("--list", action="store_true", help="print the scenarios and the faults, then exit")
    parser.add_argument("--journal", help="append each finished run to this file, one JSON line (seed, scenario, "
                                          "outcome), so the long form can be run in parts and tabled together")
    parser.add_argument("--table", nargs="+", metavar="JOURNAL",
                        help="print the table of the runs in these journals (no runs made), then exit")
    args = parser.parse_args()
    if args.table:
        return print_journals([Path(p) for p in args.table])
    chosen = scenarios(args)
    if args.list:
        for name, fault in FAULTS.items():
            print(f"{name:17} {fault.what}")
        print(*(f"{f} {s} {r}" for f, s, r in chosen), sep="\n")
        return 0
    binary = os.environ.get("TRELLIS") or next((str(p) for p in (infra.REPO / ".build/release/trellis",
                                                                   infra.REPO / ".build/debug/trellis") if p.exists()), "")
    if not binary or not os.access(binary, os.X_OK):
        sys.exit("no trellis binary: set TRELLIS or build one (swift build --product trellis)")
    if os.geteuid() != 0:
        sys.exit("the fault matrix needs root (network namespaces, mounts)")
    runs = args.runs or (2 if args.short else 20)
    seed = args.seed if args.seed is not None else int(time.time())
    rng = random.Random(seed)
    results = Path(args.results) if args.results else infra.REPO / ".build" / "faults" / time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    version = infra.run(binary, "--version", check=False).stdout.strip()
    print(f"fault matrix: {len(chosen)} scenarios × {runs} runs, seed {seed}, binary {binary} ({version}), results {results}", flush=True)

    # One binary for the whole matrix, even if a build replaces TRELLIS meanwhile (a relay started again by a
    # fault would otherwise run another build than its peer).
    pinned = Path(tempfile.mkdtemp(prefix="trellis-faults-bin-", dir="/dev/shm" if os.access("/dev/shm", os.W_OK) else None))
    shutil.copy2(binary, pinned / "trellis")
    binary = str(pinned / "trellis")
    table: dict[tuple[str, str, int], dict] = {}
    failed_runs: list[tuple[str, Path, list[str]]] = []
    started = time.monotonic()
    interrupted = False
    try:
        for number in range(runs):
            for name, store, relays in chosen:
                key = (name, store, relays)
                row = table.setdefault(key, {"runs": 0, "failures": 0, "known": 0, "worst": None, "skipped": None})
                label = f"{name}-{store}-{relays}-run{number + 1}"
                tag = f"f{number}{rng.randrange(1000):03d}"
                t0 = time.monotonic()
                attempts = 0
                while True:
                    attempts += 1
                    cleanup = infra.Cleanup()
                    try:
                        outcome, ctx, base = one_run(binary, FAULTS[name], store, relays, rng, tag, args.load_seconds,
                                                     cleanup)
                    except BaseException:
                        cleanup.run()
                        raise
                    if not outcome.port_taken or attempts == 3:
                        break
                    cleanup.run()
                    print(f"{label}: a relay's port was taken by another process before it bound it; run again",
                          flush=True)
                try:
                    if outcome.skipped:
                        row["skipped"] = outcome.skipped
                        print(f"{label}: skipped: {outcome.skipped}", flush=True)
                        if args.journal:
                            journal_run(args.journal, name, store, relays, label, seed, version, "skipped",
                                        None, t0, [outcome.skipped])
                        continue
                    row["runs"] += 1
                    if outcome.recovery is not None:
                        row["worst"] = max(row["worst"] or 0, outcome.recovery)
                    known = KNOWN.get(key)
                    status = "ok" if not outcome.failures else ("known failure" if known else "FAILED")
                    if args.journal:
                        journal_run(args.journal, name, store, relays, label, seed, version, status,
                                    outcome.recovery, t0, [f.splitlines()[0] for f in outcome.failures],
                                    outcome.figures)
                    print(f"{label}: {status} in {time.monotonic() - t0:.0f} s, recovery {outcome.recovery if outcome.recovery is None else round(outcome.recovery, 1)} s, "
                          f"{outcome.figures.get('presses_acked')} presses, {outcome.figures.get('sio_acked')} Socket.IO", flush=True)
                    if args.verbose:
                        print(f"    {outcome.figures}", flush=True)
                        if not outcome.failures:
                            save_failure(results, label, outcome, ctx, base)
                    if outcome.failures and known:
                        row["known"] += 1
                        save_failure(results, label, outcome, ctx, base)
                    elif outcome.failures:
                        row["failures"] += 1
                        directory = save_failure(results, label, outcome, ctx, base)
                        failed_runs.append((label, directory, outcome.failures))
                        for reason in outcome.failures:
                            print(f"    {reason.splitlines()[0]}", flush=True)
                finally:
                    cleanup.run()
    except KeyboardInterrupt:
        interrupted = True
        print("\ninterrupted: cleaned up; the table holds the runs that finished")
    finally:
        shutil.rmtree(pinned, ignore_errors=True)

    print(f"\n## Fault matrix (seed {seed}, {time.monotonic() - started:.0f} s)\n")
    print_table(table)
    for (name, store, relays), row in table.items():
        if row["skipped"]:
            print(f"\n{name} ({store}, {relays}): skipped: {row['skipped']}")
    for label, directory, reasons in failed_runs:
        print(f"\n{label} ({directory}):")
        for reason in reasons:
            print(f"  - {reason.splitlines()[0]}")
    return 1 if failed_runs or interrupted else 0


if __name__ == "__main__":
    sys.exit(main())
