#!/usr/bin/env bash
# How long a message takes through a bridge with the uplink up, at a steady pace: Trellis's bridge against Mosquitto's
# own, on this machine (docs/bridge.md#speed). Each contender: a local Mosquitto and an upstream Mosquitto on free
# loopback ports; COUNT QoS 1 messages of 100 bytes are published locally on sensors/latency at RATE a second (after
# 20 unmeasured ones), each carrying the moment it was sent, and a subscriber upstream (the same process, the same
# clock) takes the time each arrives. The publisher alone (a broker with no bridge, its subscriber on it) is the
# floor neither bridge can beat. Prints p50, p90, p99 and the worst for each, and Trellis's p50 over Mosquitto's.
# Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/bridge-latency.sh [COUNT] [RATE]
set -euo pipefail
shopt -s inherit_errexit
count=${1:-1000}
rate=${2:-50}
source "$(dirname "$0")/bridge-common.sh"

# Publishes on port $1 at the pace and prints the latencies' summary as seen on port $2's topic $3.
measure() {
    "$python" - "$1" "$2" "$3" "$count" "$rate" <<'EOF'
import sys, threading, time
import paho.mqtt.client as mqtt
local, upstream, topic, count, rate = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), float(sys.argv[5])
warmup = 20
got, done, subscribed = [], threading.Event(), threading.Event()
def on_message(client, userdata, message):
    got.append((time.monotonic_ns() - int(message.payload[:20])) / 1e6)
    if len(got) >= warmup + count:
        done.set()
subscriber = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="latency-checker")
subscriber.on_message = on_message
subscriber.on_subscribe = lambda *args: subscribed.set()
subscriber.connect("127.0.0.1", upstream)
subscriber.loop_start()
subscriber.subscribe(topic, qos=1)
if not subscribed.wait(10):
    sys.exit("bridge-latency.sh: no SUBACK upstream")
publisher = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="latency-publisher")
publisher.connect("127.0.0.1", local)
publisher.loop_start()
start = time.monotonic()
for i in range(warmup + count):
    pause = start + i / rate - time.monotonic()
    if pause > 0:
        time.sleep(pause)  # the pace, not a wait for an outcome
    publisher.publish("sensors/latency", f"{time.monotonic_ns():020d}".encode() + b"x" * 80, qos=1)
if not done.wait(60):
    sys.exit(f"bridge-latency.sh: {len(got)} of {warmup + count} arrived within 60 s")
times = sorted(got[warmup:])
pick = lambda q: times[min(len(times) - 1, int(q * len(times)))]
print(f"{pick(0.5):.2f} {pick(0.9):.2f} {pick(0.99):.2f} {times[-1]:.2f}")
publisher.disconnect(); subscriber.disconnect()
EOF
}

plain=$(free_port)
broker plain "$plain" </dev/null
read -r plain50 plain90 plain99 plainmax < <(measure "$plain" "$plain" sensors/latency)
stop_broker plain

up=$(free_port); local_port=$(free_port)
broker mosquitto-upstream "$up" </dev/null
mosquitto_bridge mosquitto-local "$local_port" "$up" </dev/null
read -r mos50 mos90 mos99 mosmax < <(measure "$local_port" "$up" site/home1/sensors/latency)
stop_broker mosquitto-upstream; stop_broker mosquitto-local

up=$(free_port); local_port=$(free_port)
broker trellis-upstream "$up" </dev/null
broker trellis-local "$local_port" </dev/null
trellis_bridge "$up" "$local_port"
read -r tr50 tr90 tr99 trmax < <(measure "$local_port" "$up" site/home1/sensors/latency)

echo "$count messages of 100 bytes, QoS 1, at $rate a second; milliseconds from publish to upstream subscriber"
printf '%-22s %8s %8s %8s %8s\n' "" p50 p90 p99 worst
printf '%-22s %8s %8s %8s %8s\n' "the publisher alone" "$plain50" "$plain90" "$plain99" "$plainmax"
printf '%-22s %8s %8s %8s %8s\n' "Mosquitto's bridge" "$mos50" "$mos90" "$mos99" "$mosmax"
printf '%-22s %8s %8s %8s %8s\n' "Trellis's bridge" "$tr50" "$tr90" "$tr99" "$trmax"
awk -v t="$tr50" -v m="$mos50" 'BEGIN { printf "p50, Trellis / Mosquitto: %.2f\n", t / m }'
