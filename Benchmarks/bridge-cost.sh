#!/usr/bin/env bash
# What Trellis's bridge costs the relay per message forwarded with the uplink up (docs/bridge.md#speed): a local and
# an upstream Mosquitto on free loopback ports and Trellis bridged between them; 5,000 messages forwarded to warm
# up, then LIVE (50,000) QoS 1 messages of 100 bytes published locally as fast as the local broker takes them and
# timed until a subscriber upstream has every one. Prints the rate, the relay's CPU per message (user and system,
# all threads, from /proc/<pid>/stat in clock ticks) and its context switches per message (every thread's
# voluntary and involuntary, from /proc/<pid>/task/*/status). Counted rather than compared: run two builds in turn
# (TRELLIS=PATH) and compare the CPU and switches, which move less with the machine's load than the rate. Release
# build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/bridge-cost.sh [LIVE]
set -euo pipefail
shopt -s inherit_errexit
live=${1:-50000}
[[ "$live" =~ ^[0-9]+$ && "$live" -gt 0 ]] || { echo "usage: bridge-cost.sh [LIVE]" >&2; exit 2; }
source "$(dirname "$0")/bridge-common.sh"

up=$(free_port); local_port=$(free_port)
broker upstream "$up" </dev/null
broker local "$local_port" </dev/null
trellis_bridge "$up" "$local_port" --spam-limit 1000000

# Publishes $1 messages locally and returns once the upstream subscriber (its session made first) has them all.
forward() {
    local sub
    mosquitto_sub -h 127.0.0.1 -p "$up" -q 1 -c -i cost-checker -t site/home1/sensors/live -E
    mosquitto_sub -h 127.0.0.1 -p "$up" -q 1 -c -i cost-checker -t site/home1/sensors/live -C "$1" -W 600 >/dev/null &
    sub=$!
    publish_fast "$local_port" "$1" sensors/live
    wait "$sub"
}
cpu() { awk '{ print $14 + $15 }' "/proc/$trellis_pid/stat"; }
switches() { cat /proc/"$trellis_pid"/task/*/status | awk '/ctxt_switches/ { s += $2 } END { print s }'; }

forward 5000
cpu0=$(cpu); switches0=$(switches); start=$(now_ms)
forward "$live"
ms=$(( $(now_ms) - start )); cpu1=$(cpu); switches1=$(switches)
ticks=$(getconf CLK_TCK)
echo "forwarded live:          $live messages of 100 bytes, QoS 1, in $ms ms ($(( live * 1000 / (ms + 1) )) msg/s)"
awk -v c=$(( cpu1 - cpu0 )) -v t="$ticks" -v n="$live" \
    'BEGIN { printf "relay CPU per message:   %.1f µs (user and system, all threads)\n", c * 1e6 / t / n }'
awk -v s=$(( switches1 - switches0 )) -v n="$live" \
    'BEGIN { printf "context switches:        %.2f per message\n", s / n }'
