#!/usr/bin/env bash
# How long a running relay's answers pause while `trellis store backup` copies its state.
# Starts a Mosquitto and a relay on free loopback ports, grows the state (device log lines), then
# times plant requests one at a time (mosquitto_rr) twice: alone, and while backups run back to back.
# Prints the round-trip percentiles of each run and the backups' own times. Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/backup-pause.sh [REQUESTS] [LOG_LINES]
set -euo pipefail
requests=${1:-500}
lines=${2:-20000}
# shellcheck source=Benchmarks/broker.sh
. "$(dirname "$0")/broker.sh"
"$trellis" run --broker "127.0.0.1:$port" --state "$work/state" --spam-limit 1000000 >"$work/trellis.log" 2>&1 &
until grep -q "connected to the broker" "$work/trellis.log"; do sleep 0.1; done

echo "growing the state: $lines device log lines"
for i in $(seq 1 "$lines"); do echo "{\"type\":\"Device\",\"message\":\"line $i $(printf 'x%.0s' {1..200})\"}"; done \
    | mosquitto_pub -h 127.0.0.1 -p "$port" -t devices/node1/log -q 1 -l
mosquitto_rr -h 127.0.0.1 -p "$port" -t rpi/torpi/warm -e rpi/fromrpi/warm -W 30 \
    -m "ID:0;sender:warm;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants" >/dev/null

# Prints the microseconds of each of $requests round trips of client b$1.
times() {
    for i in $(seq 1 "$requests"); do ask "b$1" "$i"; done
}
echo "alone:            $(times a | summary)"
( while true; do
    s=$(date +%s%N); "$trellis" store backup "$work/backup.sqlite" --state "$work/state" --force >/dev/null
    e=$(date +%s%N); echo $(( (e - s) / 1000 )) >> "$work/backups"
  done ) &
backups=$!
echo "during backups:   $(times c | summary)"
kill "$backups"; wait "$backups" 2>/dev/null || true
echo "backups:          $(summary < "$work/backups" | sed 's/requests/backups/'), $(stat -c %s "$work/backup.sqlite") bytes each"
