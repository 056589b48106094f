#!/usr/bin/env python3
"""Trellis's MQTT discovery, checked against a real Home Assistant.

Starts a Mosquitto broker with accounts and an ACL written by `trellis users add` (no anonymous
client; Home Assistant logs in with the Home Assistant role, which grants it no more than its
integration uses) and Home Assistant (from the venv that Tests/HomeAssistant/install.sh makes,
recorder on) in a temporary directory, onboards Home Assistant, adds its MQTT integration
through the config flow, runs Trellis, and then drives Trellis as its users do: a plant with a
reading, a button pressed twice, a fleet device online, Home Assistant's restart button pressed,
a plant deleted, Home Assistant's birth message, and Trellis stopped. After each step it waits,
with a timeout and never a fixed sleep, until Home Assistant shows the result: its entity and
device registries, its states, and what its recorder stored.

Usage: ha_check.py --trellis PATH/TO/trellis [--mosquitto PATH] [--keep]
Run it with the Home Assistant venv's Python (it needs aiohttp and paho-mqtt from there).
Exit status 0 when every check holds; 1 with the failed check and the logs' tails otherwise.
"""

import argparse
import asyncio
import json
import os
import pwd
import secrets
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

import aiohttp
import paho.mqtt.client as mqtt

TIMEOUT = 60.0
CLIENT_ID = "http://127.0.0.1/"
# The last state read of each entity, shown when a check fails.
SEEN = {}


class CheckFailed(Exception):
    pass


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def log(message):
    print(f"[ha-check {time.strftime('%H:%M:%S')}] {message}", flush=True)


async def wait_for(what, probe, timeout=TIMEOUT, interval=0.2):
    """Calls `probe` (async) until it returns something truthy; fails after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    last = None
    while True:
        try:
            last = await probe()
        except (aiohttp.ClientError, ConnectionError, OSError, sqlite3.Error) as error:
            last = error
            result = None
        else:
            result = last
        if result:
            return result
        if time.monotonic() > deadline:
            raise CheckFailed(f"timed out after {timeout:.0f} s waiting for {what} (last: {last!r})")
        await asyncio.sleep(interval)


class Broker:
    """A Mosquitto with accounts and an ACL written by `trellis users add` from Trellis's topic table, no
    anonymous client: Trellis logs in as its own account, Home Assistant with the Home Assistant role (its rights
    and no more), and the check's driver with Trellis's role (it plays the sensors, buttons, devices and an earlier
    run's leftovers)."""

    ACCOUNTS = {"trellis": "--trellis", "driver": "--trellis", "homeassistant": "--home-assistant"}

    def __init__(self, directory, binary, trellis):
        self.port = free_port()
        self.log_path = os.path.join(directory, "mosquitto.log")
        passwd, acl = os.path.join(directory, "passwd"), os.path.join(directory, "acl")
        self.passwords = {}
        for name, role in self.ACCOUNTS.items():
            self.passwords[name] = f"{name}-password-{secrets.token_hex(8)}"
            subprocess.run([trellis, "users", "add", name, role, "--password-stdin", "--password-file", passwd,
                            "--acl-file", acl, "--trellis-password-file", os.path.join(directory, f"{name}.password")],
                           input=self.passwords[name] + "\n", text=True, check=True, capture_output=True)
        self.trellis_password_file = os.path.join(directory, "trellis.password")
        conf = os.path.join(directory, "mosquitto.conf")
        with open(conf, "w") as f:
            # `user`: Mosquitto started as root otherwise becomes `mosquitto`, who cannot read the 0600 files.
            f.write(f"listener {self.port} 127.0.0.1\nallow_anonymous false\npassword_file {passwd}\n"
                    f"acl_file {acl}\npersistence false\nuser {pwd.getpwuid(os.getuid()).pw_name}\n")
        self.process = subprocess.Popen([binary, "-c", conf], stdout=open(self.log_path, "w"), stderr=subprocess.STDOUT)


class Watcher:
    """A paho client that records what it receives, for the checks on Trellis's side."""

    def __init__(self, port, username, password, client_id="ha-check-watcher"):
        self.messages = []
        self.client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id=client_id)
        self.client.username_pw_set(username, password)
        self.client.on_message = lambda _c, _u, m: self.messages.append((m.topic, m.payload, m.retain))
        self.client.connect("127.0.0.1", port)
        self.client.loop_start()

    def subscribe(self, topic):
        self.client.subscribe(topic, qos=1)

    def publish(self, topic, payload, retain=False):
        info = self.client.publish(topic, payload, qos=1, retain=retain)
        info.wait_for_publish(10)

    def received(self, topic, payload=None):
        return any(t == topic and (payload is None or p == payload) for t, p, _ in self.messages)


class HomeAssistant:
    def __init__(self, directory, python):
        self.config = os.path.join(directory, "ha-config")
        os.makedirs(self.config)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.db = os.path.join(self.config, "home-assistant_v2.db")
        with open(os.path.join(self.config, "configuration.yaml"), "w") as f:
            f.write(f"""homeassistant:
  name: Trellis check
  latitude: 0
  longitude: 0
  elevation: 0
  unit_system: us_customary
  time_zone: UTC
  country: US
  currency: USD
http:
  server_host: 127.0.0.1
  server_port: {self.port}
api:
config:
onboarding:
recorder:
  db_url: "sqlite:///{self.db}"
  commit_interval: 0
logger:
  default: warning
  logs:
    homeassistant.components.mqtt: info
""")
        self.log_path = os.path.join(directory, "home-assistant.log")
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            [python, "-m", "homeassistant", "--config", self.config, "--log-file", self.log_path, "--skip-pip"],
            stdout=open(os.path.join(directory, "home-assistant.out"), "w"), stderr=subprocess.STDOUT)
        self.token = None
        self.session = None

    def headers(self):
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def get(self, path):
        async with self.session.get(self.url + path, headers=self.headers()) as response:
            if response.status != 200:
                return None
            return await response.json()

    async def post(self, path, body, expect=200):
        async with self.session.post(self.url + path, json=body, headers=self.headers()) as response:
            text = await response.text()
            if response.status != expect:
                raise CheckFailed(f"POST {path}: HTTP {response.status}: {text}")
            return json.loads(text) if text else None

    async def onboard(self):
        """Creates the owner through onboarding and takes an access token from its auth code."""
        await wait_for("Home Assistant's HTTP API", lambda: self.get("/api/onboarding"), timeout=240)
        created = await self.post("/api/onboarding/users", {
            "client_id": CLIENT_ID, "name": "Check", "username": "check", "password": "check-password-1",
            "language": "en"})
        async with self.session.post(self.url + "/auth/token", data={
                "grant_type": "authorization_code", "code": created["auth_code"], "client_id": CLIENT_ID}) as response:
            if response.status != 200:
                raise CheckFailed(f"token: HTTP {response.status}: {await response.text()}")
            self.token = (await response.json())["access_token"]

    async def add_mqtt(self, broker_port, username, password):
        """The MQTT integration, added as a user adds it: the config flow with the broker's address and the
        account of the Home Assistant role."""
        flow = await self.post("/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        while flow.get("type") == "form":
            if flow["step_id"] != "broker":
                raise CheckFailed(f"unexpected MQTT config flow step: {flow}")
            flow = await self.post(f"/api/config/config_entries/flow/{flow['flow_id']}",
                                   {"broker": "127.0.0.1", "port": broker_port, "username": username,
                                    "password": password})
        if flow.get("type") != "create_entry":
            raise CheckFailed(f"the MQTT config flow did not create an entry: {flow}")

        async def loaded():
            entries = await self.get("/api/config/config_entries/entry")
            return entries and any(e["domain"] == "mqtt" and e["state"] == "loaded" for e in entries)
        await wait_for("the MQTT config entry to load", loaded)

    async def ws(self, message_type, **fields):
        """One command on the websocket API."""
        async with self.session.ws_connect(self.url + "/api/websocket") as ws:
            await ws.receive_json()
            await ws.send_json({"type": "auth", "access_token": self.token})
            auth = await ws.receive_json()
            if auth.get("type") != "auth_ok":
                raise CheckFailed(f"websocket auth: {auth}")
            await ws.send_json({"id": 1, "type": message_type, **fields})
            while True:
                reply = await ws.receive_json()
                if reply.get("id") == 1:
                    if not reply.get("success"):
                        raise CheckFailed(f"{message_type}: {reply}")
                    return reply["result"]

    async def entities(self):
        """unique_id → entity registry entry, for the MQTT platform."""
        return {e["unique_id"]: e for e in await self.ws("config/entity_registry/list") if e["platform"] == "mqtt"}

    async def devices(self):
        return await self.ws("config/device_registry/list")

    async def state(self, entity_id):
        return await self.get(f"/api/states/{entity_id}")

    def recorded(self, entity_id):
        """Every state the recorder stored for `entity_id`, oldest first."""
        with sqlite3.connect(f"file:{self.db}?mode=ro", uri=True) as db:
            rows = db.execute("""SELECT states.state FROM states JOIN states_meta USING (metadata_id)
                                 WHERE states_meta.entity_id = ? ORDER BY states.state_id""", (entity_id,)).fetchall()
        return [row[0] for row in rows]


def stop(process, timeout=30):
    if process and process.poll() is None:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def tail(path, lines=40):
    try:
        with open(path, errors="replace") as f:
            return "".join(f.readlines()[-lines:])
    except OSError:
        return "(no log)"


async def run(args, directory):
    timings = {}
    broker = Broker(directory, args.mosquitto, args.trellis)
    ha = HomeAssistant(directory, sys.executable)
    trellis = None
    watcher = None
    async with aiohttp.ClientSession() as session:
        ha.session = session
        try:
            await ha.onboard()
            timings["Home Assistant start (process to HTTP API)"] = time.monotonic() - ha.started
            await ha.add_mqtt(broker.port, "homeassistant", broker.passwords["homeassistant"])
            timings["Home Assistant start to MQTT loaded"] = time.monotonic() - ha.started
            log(f"Home Assistant up in {timings['Home Assistant start to MQTT loaded']:.1f} s, MQTT integration loaded")

            watcher = Watcher(broker.port, "driver", broker.passwords["driver"])
            watcher.subscribe("devices/+/command")
            watcher.subscribe("homeassistant/#")

            # A ghost: a plant's config left retained by an earlier run whose plant is gone.
            ghost = {"unique_id": "trellis_plant_7_moisture", "name": "Moisture", "state_topic": "trellis/plants/7/state",
                     "device_class": "moisture", "unit_of_measurement": "%",
                     "device": {"identifiers": ["trellis_plant_7"], "name": "Gone", "manufacturer": "Trellis", "model": "Plant"}}
            watcher.publish("homeassistant/sensor/trellis_plant_7/moisture/config", json.dumps(ghost), retain=True)
            await wait_for("the ghost plant of an earlier run in Home Assistant",
                           lambda: _present(ha, "trellis_plant_7_moisture"))

            state_dir = os.path.join(directory, "trellis-state")
            trellis_log = open(os.path.join(directory, "trellis.log"), "w")
            trellis = subprocess.Popen([args.trellis, "run", "--broker", f"127.0.0.1:{broker.port}", "--state", state_dir,
                                        "--client-id", "trellis-ha-check", "--username", "trellis",
                                        "--password-file", broker.trellis_password_file],
                                       stdout=trellis_log, stderr=subprocess.STDOUT, cwd=directory)

            async def entity_ids(*unique_ids):
                entities = await ha.entities()
                if all(u in entities for u in unique_ids):
                    return [entities[u]["entity_id"] for u in unique_ids]
                return None

            async def state_is(entity_id, expected):
                """The state when it equals `expected` (numerically, for a number), else None."""
                state = await ha.state(entity_id)
                SEEN[entity_id] = state and state["state"]
                if not state:
                    return None
                try:
                    same = float(state["state"]) == float(expected)
                except ValueError:
                    same = state["state"] == expected
                return state if same else None

            # Trellis itself.
            connectivity, handled, dead = await wait_for(
                "Trellis's own entities", lambda: entity_ids("trellis_connectivity", "trellis_messages_handled", "trellis_dead_letters"))
            await wait_for("Trellis connectivity on", lambda: state_is(connectivity, "on"))
            log(f"Trellis is a device: {connectivity} on, {handled}, {dead}")

            # The sweep at start cleared the ghost: its entity and device are gone.
            async def ghost_gone():
                devices = await ha.devices()
                return await _absent(ha, "trellis_plant_7_moisture") and not any(["mqtt", "trellis_plant_7"] in d["identifiers"] for d in devices)
            await wait_for("the ghost plant's entity and device to go", ghost_gone)
            log("the sweep at start removed the ghost plant an earlier run left")

            # Plants: Fern gets a reading, Basil is added and deleted.
            for name, sensor in (("Fern", "0x36"), ("Basil", "0x40")):
                watcher.publish("rpi/torpi", f"ID:1;sender:ha-check;receiver:Host-RPI3B+;payload:{name},{sensor};operation:REQ_addNewPlant")
            watcher.publish("rpi/sensors/0x36", json.dumps({"moisture": 5, "temperature": 70.5}))
            fern = await wait_for("Fern's entities", lambda: entity_ids(
                "trellis_plant_1_moisture", "trellis_plant_1_temperature", "trellis_plant_1_last_reading", "trellis_plant_1_needs_care"))
            basil = await wait_for("Basil's entities", lambda: entity_ids(
                "trellis_plant_2_moisture", "trellis_plant_2_temperature", "trellis_plant_2_last_reading", "trellis_plant_2_needs_care"))
            moisture = await wait_for("Fern's moisture 50 %", lambda: state_is(fern[0], "50"))
            temperature = await wait_for("Fern's temperature 70.5 °F", lambda: state_is(fern[1], "70.5"))
            if moisture["attributes"].get("unit_of_measurement") != "%" or temperature["attributes"].get("unit_of_measurement") != "°F":
                raise CheckFailed(f"units: {moisture['attributes']} {temperature['attributes']}")
            last = await wait_for("Fern's last reading", lambda: ha.state(fern[2]))
            if not last["state"].startswith("20"):
                raise CheckFailed(f"Fern's last reading is {last['state']!r}, not a time")
            log(f"plant Fern: {fern[0]} = {moisture['state']} %, {fern[1]} = {temperature['state']} °F, {fern[2]} = {last['state']}")

            # A button pressed twice.
            watcher.publish("p2o/buttons/hall/press", b"")
            event, total = await wait_for("the hall button's entities", lambda: entity_ids("trellis_button_hall_press", "trellis_button_hall_total"))
            await wait_for("the hall button's total 1", lambda: state_is(total, "1"))
            watcher.publish("p2o/buttons/hall/press", b"")
            await wait_for("the hall button's total 2", lambda: state_is(total, "2"))

            async def pressed():
                state = await ha.state(event)
                return state if state and state["attributes"].get("event_type") == "press" and state["attributes"].get("total") == 2 else None
            pressed_state = await pressed() or await wait_for("the hall button's press event", pressed)
            log(f"button hall: {total} = 2, {event} fired {pressed_state['attributes']['event_type']} at {pressed_state['state']}")

            # A fleet device comes online.
            watcher.publish("devices/pump-1/status", "online")
            watcher.publish("devices/pump-1/telemetry", json.dumps({"rssi": -61}))
            online, rssi, model, restart = await wait_for("pump-1's entities", lambda: entity_ids(
                "trellis_device_pump-1_connectivity", "trellis_device_pump-1_signal_strength", "trellis_device_pump-1_model",
                "trellis_device_pump-1_restart"))
            await wait_for("pump-1 online", lambda: state_is(online, "on"))
            signal_state = await wait_for("pump-1's signal -61 dBm", lambda: state_is(rssi, "-61"))
            if signal_state["attributes"].get("unit_of_measurement") != "dBm":
                raise CheckFailed(f"signal strength unit: {signal_state['attributes']}")
            await wait_for("pump-1's model", lambda: state_is(model, "unassigned"))
            log(f"device pump-1: {online} on, {rssi} -61 dBm, {model} unassigned")

            # Home Assistant's restart button reaches the device through Trellis's restart request.
            await ha.post("/api/services/button/press", {"entity_id": restart})
            await wait_for("Trellis's restart command to pump-1",
                           lambda: asyncio.sleep(0, watcher.received("devices/pump-1/command", b'{"op":"restart"}')))
            log(f"{restart} pressed in Home Assistant: Trellis sent pump-1 its restart command")

            # Deleting a plant removes its entities and device.
            watcher.publish("rpi/torpi", "ID:2;sender:ha-check;receiver:Host-RPI3B+;payload:Basil;operation:REQ_deletePlant")

            async def basil_gone():
                entities = await ha.entities()
                devices = await ha.devices()
                gone = not any(u.startswith("trellis_plant_2_") for u in entities)
                no_device = not any(["mqtt", "trellis_plant_2"] in d["identifiers"] for d in devices)
                states_gone = [await ha.state(e) for e in basil] == [None] * len(basil)
                return gone and no_device and states_gone
            await wait_for("Basil's entities and device to go", basil_gone)
            log("plant Basil deleted: its entities and device are gone from Home Assistant")

            # Home Assistant's birth message brings back a config the broker lost.
            watcher.publish("homeassistant/sensor/trellis_plant_1/moisture/config", b"", retain=True)
            await wait_for("Fern's moisture removed by hand", lambda: _absent(ha, "trellis_plant_1_moisture"))
            # Sent with Home Assistant's own account, as Home Assistant sends it when it starts: its role may.
            birth = Watcher(broker.port, "homeassistant", broker.passwords["homeassistant"], client_id="ha-check-birth")
            birth.publish("homeassistant/status", "online")
            birth.client.loop_stop()
            birth.client.disconnect()
            await wait_for("Fern's moisture back after the birth message", lambda: entity_ids("trellis_plant_1_moisture"))
            await wait_for("Fern's moisture state back", lambda: state_is(fern[0], "50"))
            log("birth message: Trellis published its configs again")

            # The recorder stored the states.
            async def recorded():
                return any(float(s) == 50 for s in ha.recorded(fern[0]) if s.replace(".", "").isdigit()) and "2" in ha.recorded(total) and "on" in ha.recorded(online)
            await wait_for("the recorder to store Fern's moisture, the presses and pump-1 online", recorded)
            log(f"recorder: {fern[0]} {ha.recorded(fern[0])}, {total} {ha.recorded(total)}, {online} {ha.recorded(online)}")

            # Trellis stops: every entity unavailable, its own connectivity off.
            stop(trellis)
            if trellis.returncode != 0:
                raise CheckFailed(f"trellis exited with {trellis.returncode}")
            others = [handled, dead, *fern, event, total, online, rssi, model, restart]

            async def all_unavailable():
                states = [await ha.state(e) for e in others]
                return all(s and s["state"] == "unavailable" for s in states)
            await wait_for("every Trellis entity unavailable", all_unavailable)
            await wait_for("Trellis connectivity off", lambda: state_is(connectivity, "off"))
            log(f"Trellis stopped: {len(others)} entities unavailable, {connectivity} off")

            # The registries as Home Assistant writes them when it stops.
            stop(ha.process, timeout=60)
            with open(os.path.join(ha.config, ".storage", "core.entity_registry")) as f:
                entity_registry = json.load(f)["data"]["entities"]
            with open(os.path.join(ha.config, ".storage", "core.device_registry")) as f:
                device_registry = json.load(f)["data"]["devices"]
            unique_ids = {e["unique_id"] for e in entity_registry if e["platform"] == "mqtt"}
            expected = {"trellis_connectivity", "trellis_messages_handled", "trellis_dead_letters",
                        "trellis_plant_1_moisture", "trellis_plant_1_temperature", "trellis_plant_1_last_reading",
                        "trellis_plant_1_needs_care", "trellis_button_hall_press", "trellis_button_hall_total",
                        "trellis_device_pump-1_connectivity", "trellis_device_pump-1_signal_strength",
                        "trellis_device_pump-1_model", "trellis_device_pump-1_restart"}
            if unique_ids != expected:
                raise CheckFailed(f"entity registry: missing {sorted(expected - unique_ids)}, unexpected {sorted(unique_ids - expected)}")
            names = sorted(d["name"] for d in device_registry if any(i[0] == "mqtt" for i in d["identifiers"]))
            if names != ["Button hall", "Fern", "Trellis", "pump-1"]:
                raise CheckFailed(f"device registry: {names}")
            log(f"registries on disk: {len(unique_ids)} entities, devices {names}")
        finally:
            if watcher:
                watcher.client.loop_stop()
                watcher.client.disconnect()
            stop(trellis)
            stop(ha.process, timeout=60)
            stop(broker.process)
    return timings


async def _absent(ha, unique_id):
    return unique_id not in await ha.entities()


async def _present(ha, unique_id):
    return unique_id in await ha.entities()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trellis", required=True, help="the trellis binary")
    parser.add_argument("--mosquitto", default=shutil.which("mosquitto") or "/usr/sbin/mosquitto")
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory (logs, HA config)")
    args = parser.parse_args()
    args.trellis = os.path.abspath(args.trellis)
    if not os.access(args.trellis, os.X_OK):
        parser.error(f"no trellis binary at {args.trellis}")
    directory = tempfile.mkdtemp(prefix="trellis-ha-check-")
    started = time.monotonic()
    try:
        timings = asyncio.run(run(args, directory))
    except Exception as failure:  # a failed check, or anything unexpected: show the logs either way
        print(f"\nFAILED: {failure}\nlast states read: {SEEN}\n", file=sys.stderr)
        for name in ("trellis.log", "home-assistant.log", "home-assistant.out", "mosquitto.log"):
            print(f"--- {name} (tail) ---\n{tail(os.path.join(directory, name))}", file=sys.stderr)
        print(f"(files kept in {directory})", file=sys.stderr)
        sys.exit(1)
    for what, seconds in timings.items():
        log(f"{what}: {seconds:.1f} s")
    log(f"all Home Assistant checks passed in {time.monotonic() - started:.1f} s")
    if args.keep:
        log(f"files kept in {directory}")
    else:
        shutil.rmtree(directory, ignore_errors=True)


if __name__ == "__main__":
    main()
