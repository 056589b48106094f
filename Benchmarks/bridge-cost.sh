#!/usr/bin/env bash
# What each bridge costs per message forwarded with the uplink up (docs/bridge.md#speed), Mosquitto's own bridge and
# Trellis's in turn: for each, a local and an upstream Mosquitto on free loopback ports; 5,000 messages forwarded to
# warm up, then LIVE (50,000) QoS 1 messages of 100 bytes published locally as fast as the local broker takes them
# and timed until a subscriber upstream has every one. Prints, for each, the rate and the CPU per message (user and
# system, all threads, in clock ticks from /proc) of each process on the path: the local broker, the relay (Trellis
# only) and the upstream broker, and of the whole machine (/proc/stat: the publisher and the subscriber too); for
# Trellis also its context switches per message (every thread's, from /proc/<pid>/task/*/status). On a machine
# whose cores the publisher, the brokers and the relay share, the machine's CPU per message is what bounds the
# rate. Counted rather than compared: the CPU figures move less with the machine's load than the rates. With PERF set
# to a file, `perf record -g` samples the relay while the LIVE messages pass (read it with `perf report -i FILE`).
# Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/bridge-cost.sh [LIVE]
set -euo pipefail
shopt -s inherit_errexit
live=${1:-50000}
[[ "$live" =~ ^[0-9]+$ && "$live" -gt 0 ]] || { echo "usage: bridge-cost.sh [LIVE]" >&2; exit 2; }
source "$(dirname "$0")/bridge-common.sh"
ticks=$(getconf CLK_TCK)

# Publishes $2 messages on the local broker at port $1 and returns once the subscriber on the upstream broker at
# port $3 (its session made first) has them all.
forward() {
    local sub
    mosquitto_sub -h 127.0.0.1 -p "$3" -q 1 -c -i cost-checker -t site/home1/sensors/live -E
    mosquitto_sub -h 127.0.0.1 -p "$3" -q 1 -c -i cost-checker -t site/home1/sensors/live -C "$2" -W 600 >/dev/null &
    sub=$!
    publish_fast "$1" "$2" sensors/live
    wait "$sub"
}
# Clock ticks a process has run (user and system), and the whole machine's busy ticks.
ticks_of() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }
machine() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 }' /proc/stat; }
switches() { cat /proc/"$1"/task/*/status | awk '/ctxt_switches/ { s += $2 } END { print s }'; }
per_message() { awk -v w="$1:" -v c="$2" -v t="$ticks" -v n="$live" 'BEGIN { printf "  %-22s %6.1f µs\n", w, c * 1e6 / t / n }'; }

# Forwards LIVE messages from port $1 to port $2 after a warm-up and prints the rate and the CPU per message of the
# processes named in the pairs that follow (a name, then a process id), and of the machine; with RELAY set to a
# process id, also that process's context switches per message.
measure() {
    local local_port=$1 up=$2 names=() pids=() before=() ms machine0 switches0=0 i
    shift 2
    while [ $# -gt 0 ]; do names+=("$1"); pids+=("$2"); shift 2; done
    forward "$local_port" 5000 "$up"
    for i in "${!pids[@]}"; do before[i]=$(ticks_of "${pids[i]}"); done
    [ -z "${RELAY:-}" ] || switches0=$(switches "$RELAY")
    machine0=$(machine); start=$(now_ms)
    [ -z "${RELAY:-}" ] || [ -z "${PERF:-}" ] || { perf record -q -F 999 -g -p "$RELAY" -o "$PERF" & perf_pid=$!; }
    forward "$local_port" "$live" "$up"
    ms=$(( $(now_ms) - start ))
    [ -z "${perf_pid:-}" ] || { kill -INT "$perf_pid"; wait "$perf_pid" || true; }
    echo "  $live messages in $ms ms ($(( live * 1000 / (ms + 1) )) msg/s); CPU per message:"
    for i in "${!pids[@]}"; do per_message "${names[i]}" $(( $(ticks_of "${pids[i]}") - before[i] )); done
    per_message "the whole machine" $(( $(machine) - machine0 ))
    [ -z "${RELAY:-}" ] || awk -v s=$(( $(switches "$RELAY") - switches0 )) -v n="$live" \
        'BEGIN { printf "  relay context switches: %.2f per message\n", s / n }'
}

echo "Mosquitto's bridge, 100-byte QoS 1 messages forwarded live:"
up=$(free_port); local_port=$(free_port)
broker mosquitto-upstream "$up" </dev/null
mosquitto_bridge mosquitto-local "$local_port" "$up" </dev/null
for _ in $(seq 1 300); do grep -q "New bridge connected" "$work/mosquitto-upstream/log" && break; sleep 0.1; done
grep -q "New bridge connected" "$work/mosquitto-upstream/log" || { echo "bridge-cost.sh: Mosquitto's bridge did not connect" >&2; exit 1; }
measure "$local_port" "$up" "local broker" "$(cat "$work/mosquitto-local/pid")" \
    "upstream broker" "$(cat "$work/mosquitto-upstream/pid")"
stop_broker mosquitto-local; stop_broker mosquitto-upstream

echo "Trellis's bridge:"
up=$(free_port); local_port=$(free_port)
broker trellis-upstream "$up" </dev/null
broker trellis-local "$local_port" </dev/null
trellis_bridge "$up" "$local_port" --spam-limit 1000000
RELAY=$trellis_pid measure "$local_port" "$up" "local broker" "$(cat "$work/trellis-local/pid")" "relay" "$trellis_pid" \
    "upstream broker" "$(cat "$work/trellis-upstream/pid")"
