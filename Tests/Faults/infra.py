"""The moving parts of one fault-matrix run, each started and stopped by this process alone: a Mosquitto of
its own, a PostgreSQL cluster of its own (through Tests/Postgres/cluster.sh), the relays, network
namespaces with veth pairs, a small tmpfs, and a TCP proxy that can delay a connection.

Every resource registers its removal with a `Cleanup` as it is made, so whatever happens (a failed check,
an exception, Ctrl-C) the run's `finally` removes it: processes are killed by their own process ids,
namespaces deleted, mounts unmounted. Nothing here kills by name.
"""
from __future__ import annotations

import os
import selectors
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLUSTER_SH = REPO / "Tests" / "Postgres" / "cluster.sh"


class Cleanup:
    """A stack of undo actions, run last-in first-out; each failure is printed and the rest still run."""

    def __init__(self) -> None:
        self.actions: list[tuple[str, callable]] = []

    def push(self, what: str, action) -> None:
        self.actions.append((what, action))

    def run(self) -> None:
        while self.actions:
            what, action = self.actions.pop()
            try:
                action()
            except Exception as error:  # noqa: BLE001 - cleanup goes on whatever failed
                print(f"  cleanup of {what} failed: {error}")


def free_port(host: str = "127.0.0.1") -> int:
    """A free TCP port on `host` (another process may take it before it is bound: callers retry)."""
    with socket.socket() as s:
        s.bind((host, 0))
        return s.getsockname()[1]


def run(*args: str, check: bool = True, env: dict | None = None, timeout: float = 60) -> subprocess.CompletedProcess:
    """Runs a command, capturing its output; raises with its standard error when `check` and it fails."""
    result = subprocess.run(list(args), capture_output=True, text=True, env=env, timeout=timeout)
    if check and result.returncode != 0:
        raise RuntimeError(f"{' '.join(args)} failed ({result.returncode}): {result.stderr.strip()[-500:]}")
    return result


def wait_until(predicate, timeout: float, interval: float = 0.05) -> bool:
    """Polls `predicate` until it is true or `timeout` seconds passed; returns whether it became true."""
    deadline = time.monotonic() + timeout
    while True:
        if predicate():
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(interval)


def accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.5):
            return True
    except OSError:
        return False


def stop_process(process: subprocess.Popen | None, grace: float = 5) -> None:
    """SIGCONT (it may be paused), SIGTERM, and SIGKILL after `grace` seconds: this one process only."""
    if process is None or process.poll() is not None:
        return
    for number in (signal.SIGCONT, signal.SIGTERM):
        try:
            process.send_signal(number)
        except ProcessLookupError:
            return
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(10)


class Broker:
    """Mosquitto on a free loopback port (and on the given further addresses), anonymous, with persistence
    every second, so sessions and their queued messages survive a restart (and a SIGKILL, up to the last
    second's changes)."""

    def __init__(self, directory: Path, cleanup: Cleanup, extra_addresses: list[str] = ()) -> None:
        self.directory = directory
        self.port = free_port()
        self.addresses = ["127.0.0.1", *extra_addresses]
        self.log = directory / "mosquitto.log"
        self.process: subprocess.Popen | None = None
        config = ["per_listener_settings false"]
        config += [f"listener {self.port} {address}" for address in self.addresses]
        config += [
            "allow_anonymous true", "user root", "set_tcp_nodelay true",
            "persistence true", f"persistence_location {directory}/", "autosave_interval 1",
            "max_queued_messages 100000", "max_inflight_messages 1000", "log_dest stderr",
            "log_type error", "log_type warning", "log_type notice", "connection_messages true", "log_timestamp true",
        ]
        (directory / "mosquitto.conf").write_text("\n".join(config) + "\n")
        cleanup.push("the broker", lambda: stop_process(self.process))

    def start(self) -> None:
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(["mosquitto", "-c", str(self.directory / "mosquitto.conf")],
                                            stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not wait_until(lambda: accepts("127.0.0.1", self.port) or self.process.poll() is not None, 15) \
                or self.process.poll() is not None:
            raise RuntimeError(f"mosquitto did not start on {self.port}: {self.log.read_text()[-500:]}")

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def kill(self) -> None:
        self.process.kill()
        self.process.wait(10)

    def stop(self) -> None:
        stop_process(self.process)


class Cluster:
    """A PostgreSQL cluster of this run's own, through Tests/Postgres/cluster.sh (start, halt, crash,
    restart, stop), also listening on the namespaces' host addresses when there are any."""

    def __init__(self, directory: Path, cleanup: Cleanup, extra_addresses: list[str] = ()) -> None:
        self.directory = directory
        self.extra = list(extra_addresses)
        cleanup.push("the PostgreSQL cluster", lambda: run(str(CLUSTER_SH), "stop", str(directory), check=False))

    def start(self) -> str:
        env = dict(os.environ)
        env["PG_DURABLE_COMMITS"] = "1"  # the matrix asserts that nothing committed is lost in a crash
        if self.extra:
            env["PG_EXTRA_LISTEN"] = ",".join(self.extra)
            env["PG_EXTRA_HBA"] = "10.231.0.0/16"
        self.url = run(str(CLUSTER_SH), "start", str(self.directory), env=env, timeout=120).stdout.strip()
        return self.url

    def command(self, action: str) -> None:
        run(str(CLUSTER_SH), action, str(self.directory), timeout=120)

    def url_via(self, host: str, port: int | None = None) -> str:
        """The store URL with another host (a namespace's view of the server) and optionally another port.
        A host off loopback gets `sslmode=disable`: Trellis refuses plain text to a server off the machine
        unless told so, and this link is the test's own pair of namespaces."""
        head, tail = self.url.rsplit("@", 1)
        _, rest = tail.split(":", 1)
        old_port, database = rest.split("/", 1)
        local = host.startswith("127.") or host in ("localhost", "::1", "[::1]")
        plain = "" if local or "sslmode=" in database else ("&" if "?" in database else "?") + "sslmode=disable"
        return f"{head}@{host}:{port or old_port}/{database}{plain}"

    @property
    def port(self) -> int:
        return int(self.url.rsplit(":", 1)[1].split("/", 1)[0])


class Namespace:
    """A network namespace `tfm<N>` joined to the host by two veth pairs: `m` (10.231.N.1 host, .2 inside)
    carries the broker connection, the probes and Socket.IO; `p` (10.231.N.5 host, .6 inside) carries
    the PostgreSQL connection. So the broker's link and the store's link fail separately."""

    def __init__(self, number: int, cleanup: Cleanup) -> None:
        self.name = f"tfm{number}"
        self.host_m, self.inside_m = f"10.231.{number}.1", f"10.231.{number}.2"
        self.host_p, self.inside_p = f"10.231.{number}.5", f"10.231.{number}.6"
        self.veth_m, self.veth_p = f"tfm{number}m", f"tfm{number}p"
        cleanup.push(f"namespace {self.name}", self.remove)
        run("ip", "netns", "add", self.name)
        run("ip", "netns", "exec", self.name, "ip", "link", "set", "lo", "up")
        for veth, host, inside, inner in ((self.veth_m, self.host_m, self.inside_m, "m0"),
                                          (self.veth_p, self.host_p, self.inside_p, "p0")):
            run("ip", "link", "add", veth, "type", "veth", "peer", "name", inner, "netns", self.name)
            run("ip", "addr", "add", f"{host}/30", "dev", veth)
            run("ip", "link", "set", veth, "up")
            run("ip", "netns", "exec", self.name, "ip", "addr", "add", f"{inside}/30", "dev", inner)
            run("ip", "netns", "exec", self.name, "ip", "link", "set", inner, "up")

    def link(self, which: str, up: bool) -> None:
        run("ip", "link", "set", self.veth_m if which == "m" else self.veth_p, "up" if up else "down")

    def loss(self, percent: int | None) -> None:
        """Drops `percent` % of the packets on the store's link, both ways, with nftables inside the
        namespace (this kernel has no netem); None removes the rule."""
        run("ip", "netns", "exec", self.name, "nft", "delete", "table", "inet", "faults", check=False)
        if percent is None:
            return
        rules = (f"table inet faults {{\n"
                 f"  chain o {{ type filter hook output priority 0; oifname \"p0\" numgen random mod 100 < {percent} drop; }}\n"
                 f"  chain i {{ type filter hook input priority 0; iifname \"p0\" numgen random mod 100 < {percent} drop; }}\n"
                 f"}}\n")
        subprocess.run(["ip", "netns", "exec", self.name, "nft", "-f", "-"], input=rules, text=True, check=True)

    def remove(self) -> None:
        run("ip", "link", "del", self.veth_m, check=False)
        run("ip", "link", "del", self.veth_p, check=False)
        run("ip", "netns", "del", self.name, check=False)


def free_namespace_number() -> int:
    """A number N whose namespace tfm<N> and address range 10.231.N.0/24 nobody uses on this host."""
    used = run("ip", "-o", "addr", "show", check=False).stdout
    names = run("ip", "netns", "list", check=False).stdout.split()
    for number in range(1, 250):
        if f"10.231.{number}." not in used and f"tfm{number}" not in names:
            return number
    raise RuntimeError("no free 10.231.N.0/24 for a namespace")


class Tmpfs:
    """A tmpfs of `megabytes` on a new directory; `fill()` takes all its room with one file, `free()`
    gives it back."""

    def __init__(self, path: Path, megabytes: int, cleanup: Cleanup) -> None:
        self.path = path
        path.mkdir(parents=True)
        cleanup.push(f"tmpfs {path}", self.remove)
        run("mount", "-t", "tmpfs", "-o", f"size={megabytes}m", "tmpfs", str(path))
        self.filler = path / "filler"

    def fill(self) -> None:
        fd = os.open(self.filler, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        try:
            for size in (1 << 20, 4096, 512):  # big blocks, then the last small pieces of room
                try:
                    while True:
                        os.write(fd, b"\0" * size)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def free(self) -> None:
        self.filler.unlink(missing_ok=True)

    def remount_rw(self) -> None:
        run("mount", "-o", "remount,rw", str(self.path), check=False)

    def remove(self) -> None:
        run("umount", "-l", str(self.path), check=False)
        shutil.rmtree(self.path, ignore_errors=True)


class DelayProxy:
    """A TCP proxy from (host, port) to (target_host, target_port) that holds every chunk `delay` seconds
    in each direction, in order: the stand-in for `netem delay`, which this kernel lacks. One thread with a
    selector; `delay` may change at any time."""

    def __init__(self, host: str, target: tuple[str, int], cleanup: Cleanup) -> None:
        self.delay = 0.0
        self.target = target
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind((host, 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.stopping = False
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()
        cleanup.push("the delay proxy", self.stop)

    def stop(self) -> None:
        self.stopping = True
        self.thread.join(5)

    def _serve(self) -> None:
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ)
        pending: list[tuple[float, socket.socket, bytes]] = []  # (due, destination, data), in arrival order
        peers: dict[socket.socket, socket.socket] = {}
        while not self.stopping:
            for key, _ in selector.select(0.005):
                if key.fileobj is self.listener:
                    client, _ = self.listener.accept()
                    try:
                        upstream = socket.create_connection(self.target, timeout=5)
                    except OSError:
                        client.close()
                        continue
                    for s in (client, upstream):
                        s.setblocking(True)
                        s.settimeout(10)
                    peers[client], peers[upstream] = upstream, client
                    selector.register(client, selectors.EVENT_READ)
                    selector.register(upstream, selectors.EVENT_READ)
                    continue
                source = key.fileobj
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                destination = peers.get(source)
                if destination is None:
                    continue
                # An end of stream is passed on after the data before it, as an empty chunk.
                pending.append((time.monotonic() + self.delay, destination, data))
                if not data:
                    selector.unregister(source)
            now = time.monotonic()
            while pending and pending[0][0] <= now:
                _, destination, data = pending.pop(0)
                try:
                    if data:
                        destination.sendall(data)
                    else:
                        destination.shutdown(socket.SHUT_WR)
                except OSError:
                    pass
        for s in list(peers):
            s.close()
        self.listener.close()


def readyz(address: str, timeout: float = 1.0) -> tuple[int, str]:
    """The status and body of GET http://address/readyz (0 and the error when it cannot be asked)."""
    try:
        with urllib.request.urlopen(f"http://{address}/readyz", timeout=timeout) as response:
            return response.status, response.read().decode(errors="replace")
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode(errors="replace")
    except OSError as error:
        return 0, str(error)


class Relay:
    """One `trellis run`, optionally inside a namespace, its output appended to `log` across restarts (each
    start marked by a line of ours). Probes on `health`, Socket.IO on `socketio`, both HOST:PORT."""

    def __init__(self, binary: str, name: str, args: list[str], log: Path, health: str, socketio: str,
                 cleanup: Cleanup, namespace: Namespace | None = None, env: dict | None = None) -> None:
        self.binary, self.name, self.args, self.log = binary, name, args, log
        self.health, self.socketio, self.namespace = health, socketio, namespace
        self.env = env
        self.process: subprocess.Popen | None = None
        self.starts = 0
        cleanup.push(f"relay {name}", lambda: stop_process(self.process))

    def start(self) -> None:
        command = [self.binary, "run", *self.args]
        if self.namespace:
            # `ip netns exec` execs the command: the process id is the relay's own.
            command = ["ip", "netns", "exec", self.namespace.name, *command]
        environment = dict(os.environ)
        environment.update(self.env or {})
        self.starts += 1
        with open(self.log, "a") as log:
            log.write(f"=== fault matrix: start {self.starts} of {self.name} at {time.strftime('%H:%M:%S')}\n")
            log.flush()
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=environment,
                                            start_new_session=True)

    def ready(self) -> bool:
        return readyz(self.health)[0] == 200

    def wait_ready(self, timeout: float) -> bool:
        return wait_until(lambda: self.ready() or self.process.poll() is not None, timeout, 0.1) and self.ready()

    def signal(self, number: int) -> None:
        self.process.send_signal(number)

    def log_size(self) -> int:
        return self.log.stat().st_size if self.log.exists() else 0

    def log_since(self, offset: int) -> str:
        with open(self.log, "rb") as f:
            f.seek(offset)
            return f.read().decode(errors="replace")

    def tail(self, lines: int = 60) -> str:
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])
