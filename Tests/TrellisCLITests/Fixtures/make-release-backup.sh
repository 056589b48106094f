#!/usr/bin/env bash
# Writes release-0.1.0.backup.sqlite: a backup taken by Trellis 0.1.0's own `trellis store backup` of a
# running relay's state, for PreviousReleaseBackupTests (a backup of the previous release restores).
#
#   make-release-backup.sh TRELLIS_0_1_0_BINARY OUTPUT
#
# The binary is Trellis 0.1.0 built from the release's source (commit 62da888, `swift build --product
# trellis`). The state holds a row in every kind of table: plants with sensors and a reading, a button with
# presses, a client registered for it, a dead letter, the catalog with a like and a plant link, a device with
# its log. Everything runs on 127.0.0.1.
set -euo pipefail
trellis=$1 output=$2
work=$(mktemp -d)
trap 'kill $relay $broker 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\n' "$port" > "$work/mosquitto.conf"
/usr/sbin/mosquitto -c "$work/mosquitto.conf" > "$work/broker.log" 2>&1 & broker=$!
root=$(cd "$(dirname "$0")/../../.." && pwd)
"$trellis" catalog import "$root/catalog/usda-starter.csv" --state "$work/state" >/dev/null
"$trellis" run --broker "127.0.0.1:$port" --state "$work/state" --client-id trellis-release > "$work/relay.log" 2>&1 & relay=$!
until grep -q "connected to the broker" "$work/relay.log"; do sleep 0.2; done
pub() { mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 "$@"; }
pub -t rpi/torpi -m 'ID:1;sender:ann;receiver:Host-RPI3B+;payload:Fern--["0x36","0x37"];operation:REQ_addNewPlant'
pub -t rpi/torpi -m 'ID:2;sender:ann;receiver:Host-RPI3B+;payload:Ivy--["0x38"];operation:REQ_addNewPlant'
pub -t rpi/sensors/0x36 -m '{"moisture":7,"temperature":68.5}'
pub -t p2o/clients/phone/register -m door
for _ in 1 2 3; do pub -t p2o/buttons/door/press -n; done
pub -t rpi/torpi -m 'not a request'
pub -t devices/pump-1/status -m online
pub -t devices/pump-1/log -m '{"type":"Device","message":"booted","timestamp":"2026-11-25T10:00:00Z"}'
pub -t trellis/clients/phone/request/likes/add -m '{"symbol":"NEEX"}'
pub -t trellis/request/plants/link -m '{"plant":"Fern","symbol":"NEEX"}'
# Wait until the relay has taken the last message: its dead letter count and the device's log are in the state.
until "$trellis" store backup "$work/probe.sqlite" --state "$work/state" --force >/dev/null 2>&1 \
      && python3 - "$work/probe.sqlite" <<'PY'
import sqlite3, sys
c = sqlite3.connect(sys.argv[1])
need = ["SELECT count(*) FROM plant", "SELECT count(*) FROM button_press", "SELECT count(*) FROM device_log",
        "SELECT count(*) FROM dead_letter", "SELECT count(*) FROM catalog_like", "SELECT count(*) FROM catalog_plant_link"]
sys.exit(0 if all(c.execute(q).fetchone()[0] > 0 for q in need) else 1)
PY
do sleep 0.5; done
"$trellis" store backup "$output" --state "$work/state" --force
