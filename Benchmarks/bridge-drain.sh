#!/usr/bin/env bash
# A bridge's backlog drained, Trellis's against Mosquitto's own bridge, on this machine (docs/bridge.md#speed).
# Each contender: a local Mosquitto and an upstream Mosquitto on free loopback ports, the upstream one stopped while
# MESSAGES QoS 1 messages of 100 bytes are published locally on sensors/<n> (they wait in the bridge's queue), then
# started: the time until a subscriber upstream has every one is the drain; messages a second is the throughput.
# For Trellis, plant requests are timed one at a time (mosquitto_rr) while idle and while the backlog drains.
# Before the backlog, with the uplink up, LIVE messages (MESSAGES / 5) are published locally and timed until the
# upstream subscriber has every one: the forwarding throughput with the uplink up, also for the publisher alone
# (to the local broker with no bridge, the rate the others cannot beat).
# Prints both contenders' live and drain times, the throughput ratios, and the plant request p50 idle and during the
# drain. WINDOW sets the Trellis bridge's `window` (64). Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/bridge-drain.sh [MESSAGES] [REQUESTS]
set -euo pipefail
# A failure inside $(…) (a subscriber that timed out) stops the script rather than printing a time.
shopt -s inherit_errexit
messages=${1:-100000}
requests=${2:-300}
live=${LIVE:-$(( messages / 5 ))}
source "$(dirname "$0")/bridge-common.sh"

# Publishes the backlog locally on port $1: $2 messages (or $messages) on $3 (or sensors/bench).
publish() { publish_fast "$1" "${2:-$messages}" "${3:-sensors/bench}"; }

# The upstream broker $2 on port $1, with the checker's persistent session made, then stopped: what the bridge
# sends once it is back is kept for the checker.
upstream_down() {
    broker "$2" "$1" </dev/null
    mosquitto_sub -h 127.0.0.1 -p "$1" -q 1 -c -i checker -t 'site/home1/#' -E
    stop_broker "$2"
}

# Starts the upstream broker $2 again on port $1 and prints the milliseconds until the checker has every message.
drain() {
    local start sub
    start=$(now_ms)
    broker "$2" "$1" </dev/null
    mosquitto_sub -h 127.0.0.1 -p "$1" -q 1 -c -i checker -t 'site/home1/#' -C "$messages" -W 600 \
        > "$work/$2/received" &
    sub=$!
    wait "$sub"
    echo $(( $(now_ms) - start ))
}

# Publishes $live messages locally on port $1 and prints the milliseconds until a subscriber on port $2 has every
# one on $3 (site/home1/sensors/live: with the upstream broker's port, through a bridge). Its persistent session is
# made first, so nothing published before it reads is lost to it.
forward_live() {
    local start sub topic=${3:-site/home1/sensors/live}
    mosquitto_sub -h 127.0.0.1 -p "$2" -q 1 -c -i live-checker -t "$topic" -E
    start=$(now_ms)
    mosquitto_sub -h 127.0.0.1 -p "$2" -q 1 -c -i live-checker -t "$topic" -C "$live" -W 600 > /dev/null &
    sub=$!
    publish "$1" "$live" sensors/live
    wait "$sub"
    echo $(( $(now_ms) - start ))
}

ask() {
    local start end
    start=$(date +%s%N)
    mosquitto_rr -h 127.0.0.1 -p "$1" -t rpi/torpi/bench -e rpi/fromrpi/bench -W 30 \
        -m "ID:$2;sender:bench;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants" >/dev/null
    end=$(date +%s%N)
    echo $(( (end - start) / 1000 ))
}
p50() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f", NR ? v[int(NR*0.5)+1]/1000 : 0 }'; }

# The publisher alone: a broker without a bridge, the subscriber on it.
plain=$(free_port)
broker plain "$plain" </dev/null
plain_ms=$(forward_live "$plain" "$plain" sensors/live)
stop_broker plain

# Mosquitto's bridge: the local broker queues the backlog in its own session for the bridge.
up=$(free_port); local_port=$(free_port)
broker mosquitto-upstream "$up" </dev/null
mosquitto_bridge mosquitto-local "$local_port" "$up" <<< "cleansession false"
mosquitto_live_ms=$(forward_live "$local_port" "$up")
stop_broker mosquitto-upstream
upstream_down "$up" mosquitto-upstream
publish "$local_port"
mosquitto_ms=$(drain "$up" mosquitto-upstream)
mosquitto_got=$(wc -l < "$work/mosquitto-upstream/received")
stop_broker mosquitto-upstream; stop_broker mosquitto-local

# Trellis's bridge: the backlog waits in its state.
up=$(free_port); local_port=$(free_port)
broker trellis-upstream "$up" </dev/null
broker trellis-local "$local_port" </dev/null
trellis_bridge "$up" "$local_port" --spam-limit 1000000
idle=$(for i in $(seq 1 "$requests"); do ask "$local_port" "$i"; done | p50)
trellis_live_ms=$(forward_live "$local_port" "$up")
stop_broker trellis-upstream
upstream_down "$up" trellis-upstream
publish "$local_port"
queued() {
    "$trellis" bridge status --json --config "$work/trellis.yaml" --state "$work/state" 2>/dev/null \
        | python3 -c 'import json, sys; print(json.loads(sys.stdin.readline())["queued"])'
}
waited=0
until [ "$(queued)" = "$messages" ]; do
    waited=$((waited + 1))
    [ "$waited" -lt 1500 ] || { echo "bridge-drain.sh: the queue did not reach $messages within 300 s" >&2; exit 1; }
    sleep 0.2
done
( for i in $(seq 1 "$requests"); do ask "$local_port" "d$i"; done > "$work/during" ) &
asking=$!
trellis_ms=$(drain "$up" trellis-upstream)
wait "$asking"
trellis_got=$(wc -l < "$work/trellis-upstream/received")
stop_broker trellis-upstream

rate() { echo $(( $1 * 1000 / ($2 + 1) )); }
echo "uplink up:               $live messages of 100 bytes, QoS 1, published and received"
echo "  the publisher alone:   $plain_ms ms ($(rate "$live" "$plain_ms") msg/s, no bridge)"
echo "  Mosquitto's bridge:    $mosquitto_live_ms ms ($(rate "$live" "$mosquitto_live_ms") msg/s)"
echo "  Trellis's bridge:      $trellis_live_ms ms ($(rate "$live" "$trellis_live_ms") msg/s)"
awk -v t="$trellis_live_ms" -v m="$mosquitto_live_ms" \
    'BEGIN { printf "  throughput, Trellis / Mosquitto: %.2f\n", m / t }'
echo "backlog:                 $messages of 100 bytes, QoS 1"
echo "Mosquitto's bridge:      $mosquitto_got received in $mosquitto_ms ms ($(( mosquitto_got * 1000 / (mosquitto_ms + 1) )) msg/s)"
echo "Trellis's bridge:        $trellis_got received in $trellis_ms ms ($(( trellis_got * 1000 / (trellis_ms + 1) )) msg/s)"
awk -v t="$trellis_ms" -v m="$mosquitto_ms" 'BEGIN { printf "throughput, Trellis / Mosquitto: %.2f\n", m / t }'
during=$(p50 < "$work/during")
echo "plant request p50:       idle $idle ms, during the drain $during ms"
awk -v d="$during" -v i="$idle" 'BEGIN { if (i > 0) printf "p50 during / idle:       %.2f\n", d / i }'
