"""The moving parts of one bridge-harness run (bridge.py): the upstream side in a network namespace, and
the two local sides whose bridges carry the same traffic up to it.

- `Upstream`: a namespace `tfm<N>` (infra.Namespace) with two upstream brokers on its loopback, one for each
  bridge, so their traffic never mixes: Mosquittos, or with `kind` "ejabberd" two ejabberd MQTT services
  (`EjabberdBroker`), another implementation of MQTT v5 than the local side's. The bridges reach them through delayproxy.py on the uplink veth
  (`m`: 10.231.N.2 inside), which is what the faults cut, make lossy (nftables) or slow (the proxy); the
  checkers read them over the other veth (`p`: 10.231.N.6), which no fault touches.
- `TrellisSide`: a local Mosquitto (infra.Broker) and `trellis run` with SQLite state and a `bridges:`
  configuration of one bridge, `cloud`, rule `sensors/#` → `site/home1/`, QoS 1.
- `MosquittoSide`: a local Mosquitto whose own bridge (`connection`, `topic sensors/# out 1 "" site/home1/`,
  `cleansession false`, persistence on, autosave every second) carries the same rule.

Everything registers its removal with the run's infra.Cleanup as it is made; processes are stopped by
their own ids.
"""
from __future__ import annotations

import os
import pwd
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import infra

UPSTREAM_PORTS = {"trellis": 18830, "mosquitto": 18831}
PREFIX = "site/home1/"
# Every client of an upstream broker logs in with a user name: ejabberd's MQTT service refuses a client
# without one, and takes any name and password when its hosts allow anonymous logins. A Mosquitto that allows
# anonymous clients takes them too. The bridges log in as UPSTREAM_USER, the checkers as CHECKER_USER.
UPSTREAM_USER, CHECKER_USER, UPSTREAM_PASSWORD = "home1", "checker", "unused"


class UpstreamBroker:
    """A Mosquitto inside the namespace on 127.0.0.1:`port` and the checkers' address, persistent (autosave
    every second), queueing up to 100,000 messages per session."""

    def __init__(self, namespace: infra.Namespace, port: int, directory: Path, cleanup: infra.Cleanup) -> None:
        self.namespace, self.port, self.directory = namespace, port, directory
        directory.mkdir()
        self.log = directory / "mosquitto.log"
        self.process: subprocess.Popen | None = None
        (directory / "mosquitto.conf").write_text("\n".join([
            "per_listener_settings false", f"listener {port} 127.0.0.1", f"listener {port} {namespace.inside_p}",
            "allow_anonymous true", "user root", "persistence true", f"persistence_location {directory}/",
            "autosave_interval 1", "max_queued_messages 100000", "max_inflight_messages 1000",
            "log_dest stderr", "log_type error", "log_type warning", "log_type notice", "log_timestamp true",
        ]) + "\n")
        cleanup.push(f"upstream broker {port}", lambda: infra.stop_process(self.process))

    def start(self) -> None:
        """Starts it (from its persistence file, if any) and waits until the checkers' address accepts."""
        with open(self.log, "a") as log:
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.namespace.name, "mosquitto", "-c", str(self.directory / "mosquitto.conf")],
                stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        if not infra.wait_until(lambda: infra.accepts(self.namespace.inside_p, self.port)
                                or self.process.poll() is not None, 15) or self.process.poll() is not None:
            raise RuntimeError(f"upstream mosquitto did not start: {self.log.read_text()[-500:]}")

    def kill(self) -> None:
        """SIGKILL: what was not yet autosaved is gone, as after a crash."""
        self.process.kill()
        self.process.wait(10)

    def bridged(self) -> bool:
        """Whether Mosquitto's bridge (its client id) has connected."""
        return "mb-bridge-cloud" in self.log.read_text(errors="replace")


class EjabberdBroker:
    """ejabberd's MQTT service (mod_mqtt, Debian's ejabberd) inside the namespace on 127.0.0.1:`port` and the
    checkers' address, anonymous logins, a session kept an hour and up to 100,000 messages queued per session.
    ejabberd keeps MQTT sessions in memory: a SIGKILL forgets them and their subscriptions (bridge.py leaves
    `upstream-kill` out for it). It runs as the user ejabberd, switched to by setpriv (not su, which would put
    the Erlang machine in a session of its own, out of reach of `kill`), in a directory of its own made before
    it is handed over; the run's directory is opened to it for passage only. Its Erlang port mapper binds the
    namespace's loopback only, and dies with the namespace (Upstream's clean-up)."""

    def __init__(self, namespace: infra.Namespace, port: int, directory: Path, cleanup: infra.Cleanup) -> None:
        self.namespace, self.port, self.directory = namespace, port, directory
        account = pwd.getpwnam("ejabberd")
        self.uid, self.gid = account.pw_uid, account.pw_gid
        directory.mkdir(mode=0o700)
        os.chmod(directory.parent, 0o711)
        self.log = directory / "ejabberd.log"
        self.console = directory / "console.log"
        self.process: subprocess.Popen | None = None
        (directory / "ejabberd.yml").write_text("\n".join([
            "hosts: [localhost]", "loglevel: info", "auth_method: [anonymous]", "anonymous_protocol: login_anon",
            "listen:",
            *[f"  - {{port: {port}, ip: \"{ip}\", module: mod_mqtt, backlog: 1000}}"
              for ip in ("127.0.0.1", namespace.inside_p)],
            "modules:", "  mod_mqtt: {session_expiry: 3600, max_queue: 100000}",
        ]) + "\n")
        (directory / "ejabberdctl.cfg").write_text("INET_DIST_INTERFACE=127.0.0.1\n")
        for path in (directory, *directory.iterdir()):
            os.chown(path, self.uid, self.gid)
        cleanup.push(f"upstream ejabberd {port}", self.kill)

    def start(self) -> None:
        """Starts it and waits until the checkers' address accepts."""
        directory = str(self.directory)
        with open(self.console, "a") as console:
            self.process = subprocess.Popen(
                ["ip", "netns", "exec", self.namespace.name,
                 "setpriv", f"--reuid={self.uid}", f"--regid={self.gid}", "--init-groups",
                 "env", f"HOME={directory}", "ERL_EPMD_ADDRESS=127.0.0.1",
                 "/usr/sbin/ejabberdctl", "--config-dir", directory, "--config", directory + "/ejabberd.yml",
                 "--ctl-config", directory + "/ejabberdctl.cfg", "--logs", directory, "--spool", directory,
                 "--node", f"up{self.port}@localhost", "foreground"],
                stdout=console, stderr=subprocess.STDOUT, start_new_session=True, cwd=directory)
        if not infra.wait_until(lambda: infra.accepts(self.namespace.inside_p, self.port)
                                or self.process.poll() is not None, 60) or self.process.poll() is not None:
            raise RuntimeError(f"upstream ejabberd did not start: {self.console.read_text(errors='replace')[-500:]}")

    def kill(self) -> None:
        """SIGKILL to its process group (the script and the Erlang machine), as after a crash."""
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(10)

    def bridged(self) -> bool:
        """Whether a bridge (its user name; the checkers log in with another) has opened its session."""
        return self.log.exists() and f"Opened MQTT session for {UPSTREAM_USER}@" in self.log.read_text(errors="replace")


class Upstream:
    """The namespace, its two brokers (`kind`: mosquitto or ejabberd) and the proxy in front of them on the
    uplink."""

    def __init__(self, base: Path, cleanup: infra.Cleanup, kind: str = "mosquitto") -> None:
        self.namespace = infra.Namespace(infra.free_namespace_number(), cleanup)
        # What runs in the namespace (an Erlang port mapper ejabberd left) ends before the namespace goes.
        cleanup.push("the namespace's processes", lambda: infra.run(
            "sh", "-c", f"ip netns pids {self.namespace.name} | xargs -r kill -9", check=False))
        broker = EjabberdBroker if kind == "ejabberd" else UpstreamBroker
        self.brokers = {side: broker(self.namespace, port, base / f"up-{side}", cleanup)
                        for side, port in UPSTREAM_PORTS.items()}
        for broker in self.brokers.values():
            broker.start()
        targets = [f"127.0.0.1:{port}" for port in UPSTREAM_PORTS.values()]
        self.proxy = subprocess.Popen(
            ["ip", "netns", "exec", self.namespace.name, sys.executable, str(Path(__file__).parent / "delayproxy.py"),
             self.namespace.inside_m, *targets], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        cleanup.push("the uplink proxy", self._stop_proxy)
        ports = self.proxy.stdout.readline().split()
        if len(ports) != len(targets):
            raise RuntimeError("the uplink proxy did not start")
        self.uplink = {side: f"{self.namespace.inside_m}:{port}" for side, port in zip(UPSTREAM_PORTS, ports)}
        self.checker_address = {side: (self.namespace.inside_p, port) for side, port in UPSTREAM_PORTS.items()}

    def _stop_proxy(self) -> None:
        """Ends the proxy by closing its standard input; SIGKILL if it does not end."""
        if self.proxy.poll() is None:
            self.proxy.stdin.close()
            try:
                self.proxy.wait(10)
            except subprocess.TimeoutExpired:
                self.proxy.kill()

    def link(self, up: bool) -> None:
        """Cuts or restores the uplink: the host end of its veth down or up."""
        self.namespace.link("m", up)

    def delay(self, seconds: float) -> None:
        """Holds each chunk `seconds` each way in the proxy."""
        self.proxy.stdin.write(f"{seconds}\n")
        self.proxy.stdin.flush()

    def loss(self, percent: int | None) -> None:
        """Drops `percent` % of the uplink's packets both ways (nftables in the namespace); None stops it."""
        name = self.namespace.name
        infra.run("ip", "netns", "exec", name, "nft", "delete", "table", "inet", "uplink", check=False)
        if percent is None:
            return
        rules = (f"table inet uplink {{\n"
                 f"  chain o {{ type filter hook output priority 0; oifname \"m0\" numgen random mod 100 < {percent} drop; }}\n"
                 f"  chain i {{ type filter hook input priority 0; iifname \"m0\" numgen random mod 100 < {percent} drop; }}\n"
                 f"}}\n")
        subprocess.run(["ip", "netns", "exec", name, "nft", "-f", "-"], input=rules, text=True, check=True)


class TrellisSide:
    """A local Mosquitto and a Trellis relay bridging it to the upstream broker, its queue bounded by
    `max_bytes`, at most `window` messages unacknowledged (None: the defaults)."""

    name = "trellis"

    def __init__(self, binary: str, base: Path, uplink: str, max_bytes: int | None, window: int | None,
                 cleanup: infra.Cleanup) -> None:
        (base / "local-trellis").mkdir()
        self.broker = infra.Broker(base / "local-trellis", cleanup)
        self.broker.start()
        bound = f"    max_bytes: {max_bytes}\n" if max_bytes else ""
        bound += f"    window: {window}\n" if window else ""
        config = base / "trellis.yaml"
        password = base / "upstream.password"
        password.write_text(UPSTREAM_PASSWORD + "\n")
        password.chmod(0o600)
        config.write_text(f"bridges:\n  cloud:\n    url: mqtt://{uplink}\n    username: {UPSTREAM_USER}\n"
                          f"    password_file: {password}\n{bound}    out:\n"
                          f"      - topic: \"sensors/#\"\n        prefix: \"{PREFIX}\"\n        qos: 1\n")
        self.metrics = f"127.0.0.1:{infra.free_port()}"
        args = ["--broker", f"mqtt://127.0.0.1:{self.broker.port}", "--state", str(base / "state"),
                "--client-id", "rb", "--metrics", self.metrics, "--socketio", "", "--config", str(config)]
        self.relay = infra.Relay(binary, "trellis", args, base / "trellis.log", self.metrics, "", cleanup)

    @property
    def port(self) -> int:
        """The local broker's port, the publisher's."""
        return self.broker.port

    def start(self) -> None:
        """Starts the relay and waits for its /readyz."""
        self.relay.start()
        if not self.relay.wait_ready(60):
            raise RuntimeError(f"trellis did not become ready:\n{self.relay.tail()}")

    def kill(self) -> None:
        """SIGKILLs the relay, the process that holds the queue."""
        self.relay.signal(signal.SIGKILL)
        self.relay.process.wait(20)

    def bridge_metrics(self) -> list[str] | None:
        """The relay's `trellis_bridge_*` samples (queued, forwarded, dropped, refused, …); None when it cannot
        be asked."""
        try:
            with urllib.request.urlopen(f"http://{self.metrics}/metrics", timeout=5) as response:
                text = response.read().decode()
        except OSError:
            return None
        return [line for line in text.splitlines() if line.startswith("trellis_bridge_")]

    def dropped(self) -> int | None:
        """What the relay says it dropped to hold its queue to its bounds (trellis_bridge_dropped_total)."""
        samples = self.bridge_metrics()
        if samples is None:
            return None
        return int(sum(float(line.rsplit(" ", 1)[1]) for line in samples
                       if line.startswith("trellis_bridge_dropped_total")))

    def log_lines(self, words: str) -> list[str]:
        """The relay's log lines that contain `words`."""
        return [line for line in self.relay.log.read_text(errors="replace").splitlines() if words in line]


class MosquittoSide:
    """A local Mosquitto with its own bridge to the upstream broker, its queue bounded by
    `max_queued_messages` (a count: the harness gives it the count the Trellis side's bytes hold)."""

    name = "mosquitto"

    def __init__(self, base: Path, uplink: str, max_queued: int | None, cleanup: infra.Cleanup,
                 upstream: str = "mosquitto") -> None:
        (base / "local-mosquitto").mkdir()
        self.broker = infra.Broker(base / "local-mosquitto", cleanup)
        host, port = uplink.rsplit(":", 1)
        # Mosquitto's default of 20 messages in flight (the shared broker configuration has 1,000), so that
        # max_queued_messages bounds nearly all of what it holds, as max_bytes does Trellis's queue.
        lines = ["max_inflight_messages 20", "queue_qos0_messages true", "connection cloud", f"address {host}:{port}",
                 f"topic sensors/# out 1 \"\" {PREFIX}", "cleansession false", "remote_clientid mb-bridge-cloud",
                 f"remote_username {UPSTREAM_USER}", f"remote_password {UPSTREAM_PASSWORD}", "notifications false"]
        if max_queued:
            lines.insert(0, f"max_queued_messages {max_queued}")
        if upstream != "mosquitto":
            # Its CONNECT's protocol version with the bridge bit set (0x84), which only a Mosquitto takes: another
            # broker refuses it ("unacceptable protocol version") and the bridge never connects.
            lines.append("try_private false")
        config = self.broker.directory / "mosquitto.conf"
        config.write_text(config.read_text() + "\n".join(lines) + "\n")
        self.broker.start()

    @property
    def port(self) -> int:
        """The local broker's port, the publisher's."""
        return self.broker.port

    def start(self) -> None:
        """Starts the local broker (and so its bridge) from its persistence file."""
        self.broker.start()

    def kill(self) -> None:
        """SIGKILLs the local broker, the process that holds its bridge's queue."""
        self.broker.kill()

    def dropped(self) -> int | None:
        """Mosquitto logs that it drops, not how many."""
        return None

    def bridge_metrics(self) -> list[str] | None:
        """Mosquitto's bridge has no such figures."""
        return None

    def log_lines(self, words: str) -> list[str]:
        """The local broker's log lines that contain `words`."""
        return [line for line in self.broker.log.read_text(errors="replace").splitlines() if words in line]
