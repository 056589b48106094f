#!/usr/bin/env bash
# Where a request's time goes: a CPU profile of a release `trellis run` answering plant requests one at
# a time (the closed loop of `make bench`), with Linux perf's cpu-clock sampling (no hardware counters
# needed), and its CPU per request read from /proc. Starts its own Mosquitto and Trellis on free
# loopback ports. Release build expected:
#   swift build -c release --product trellis && Benchmarks/profile.sh [REQUESTS] [QOS] [TRELLIS FLAGS…]
# e.g. `Benchmarks/profile.sh 20000 0 --socketio 0` or with `TRELLIS_HOMEASSISTANT_ENABLED=false` in the
# environment, to see what one feature costs. Prints the load generator's figures and the user and system
# microseconds per request of Trellis and, measured right after on the same broker, of the C relay of
# `make bench` (Benchmarks/baseline/relay.c), then Trellis's share of samples per library and its hottest
# symbols (demangled).
set -euo pipefail
requests=${1:-20000}
qos=${2:-0}
shift $(( $# > 2 ? 2 : $# ))
trellis=${TRELLIS:-$(swift build -c release --show-bin-path)/trellis}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -o "$work/loadgen" "$root/Benchmarks/baseline/loadgen.c" -lmosquitto
cc -O2 -o "$work/relay" "$root/Benchmarks/baseline/relay.c" -lmosquitto
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
sed -e "s/^listener .*/listener $port 127.0.0.1/" -e '/^persistence/d' "$root/broker.conf" > "$work/mosquitto.conf"
grep -q "^listener $port" "$work/mosquitto.conf" || echo "listener $port 127.0.0.1" >> "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
until mosquitto_pub -h 127.0.0.1 -p "$port" -t ping -n 2>/dev/null; do sleep 0.1; done
printf 'Plant%s,0x%s\n' 1 31 2 32 3 33 4 34 5 35 6 36 7 37 > "$work/plants"
"$trellis" run --broker "127.0.0.1:$port" --state "$work/state" --spam-limit 100000000 --plants-file "$work/plants" \
    --plant-dialect lossless --stats-interval 3600 "$@" \
    >"$work/trellis.log" 2>&1 &
relay=$!
until grep -q "connected to the broker" "$work/trellis.log"; do sleep 0.1; done
for sensor in 31 32 33 34 35 36 37; do
    mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 -t "rpi/sensors/0x$sensor" -m '{"moisture":5,"temperature":70.5}'
done
"$work/loadgen" "$port" req "$qos" 2000 1 rpi operation:RES_plantSensorData >/dev/null   # warm up

# Prints "USER SYSTEM" microseconds per request of process $1 over $2 closed-loop requests whose
# replies end with $3, after the load generator's own line; $4: also profile it with perf.
measure() {
    local pid=$1 count=$2 suffix=$3 profile=${4:-} user0 system0 user1 system1 perf=""
    read -r user0 system0 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
    if [ -n "$profile" ]; then
        perf record -q -e cpu-clock -F 4000 -g -p "$pid" -o "$work/perf.data" 2>/dev/null &
        perf=$!
        sleep 0.5
    fi
    echo "load:   $("$work/loadgen" "$port" req "$qos" "$count" 1 rpi "$suffix")" >&2
    if [ -n "$perf" ]; then kill -INT "$perf"; wait "$perf" 2>/dev/null || true; fi
    read -r user1 system1 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
    awk -v u=$((user1 - user0)) -v s=$((system1 - system0)) -v n="$count" -v t="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.1f %.1f\n", u / t / n * 1e6, s / t / n * 1e6 }'
}
read -r user system < <(measure "$relay" "$requests" operation:RES_plantSensorData profile)
echo "Trellis:  $user µs user, $system µs system per request; RSS $(awk '/VmHWM/ { printf "%.1f MB peak", $2 / 1024 }' "/proc/$relay/status")"
kill -INT "$relay"; wait "$relay" 2>/dev/null || true
"$work/relay" "$port" 100 >"$work/relay.log" 2>&1 &
baseline=$!
sleep 0.5
"$work/loadgen" "$port" req "$qos" 2000 1 rpi operation:REQ_plantSensorData >/dev/null
read -r cuser csystem < <(measure "$baseline" "$requests" operation:REQ_plantSensorData)
echo "C relay:  $cuser µs user, $csystem µs system per request"
awk -v a="$user" -v b="$system" -v c="$cuser" -v d="$csystem" \
    'BEGIN { printf "Trellis/C relay, user + system CPU per request: %.2f×\n", (a + b) / (c + d) }'
echo
echo "samples by library:"
perf report -q -i "$work/perf.data" --no-children -g none --sort dso 2>/dev/null | head -12
echo
echo "hottest symbols outside the kernel (share of all samples):"
perf report -q -i "$work/perf.data" --no-children -g none --sort dso,symbol 2>/dev/null | grep -v kallsyms \
    | swift demangle --simplified | sed 's/  */ /g' | cut -c1-180 | head -${SYMBOLS:-40}
