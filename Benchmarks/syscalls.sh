#!/usr/bin/env bash
# System calls per plant request, counted: the C relay of `make bench` (Benchmarks/baseline/relay.c) and a release
# `trellis run` on one broker, each with `strace -c -f` attached while REQUESTS requests go one at a time (after 500
# uncounted). strace slows both relays down, so the timings it prints mean nothing; the counts per call are exact.
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/syscalls.sh [REQUESTS] [QOS]
# Needs strace (Debian's `strace` package). With TRELLIS=PATH it measures another build.
set -euo pipefail
requests=${1:-3000}
qos=${2:-0}
[[ "$requests" =~ ^[0-9]+$ && "$qos" =~ ^[012]$ ]] || { echo "usage: syscalls.sh [REQUESTS] [QOS 0-2]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
trellis=${TRELLIS:-$(swift build --package-path "$root" -c release --show-bin-path)/trellis}
command -v strace >/dev/null || { echo "syscalls.sh: needs strace (apt-get install strace)" >&2; exit 1; }
# shellcheck source=Benchmarks/relays.sh
. "$root/Benchmarks/relays.sh"
bench_setup
"$work/relay" "$port" 100 >"$work/relay.log" 2>&1 &
baseline=$!
"$trellis" run --broker "127.0.0.1:$port" --state "$work/state" --spam-limit 100000000 --plants-file "$work/plants" \
    --plant-dialect lossless --stats-interval 3600 --plant-prefix trl --client-id bench-syscalls >"$work/trellis.log" 2>&1 &
relay=$!
bench_wait_trellis "$relay" "$work/trellis.log"
bench_seed_readings trl
bench_wait_baseline "$baseline"

# Counts the system calls of PID (all its threads) during REQUESTS requests on PREFIX; prints strace's table.
count() {
    local pid=$1 prefix=$2 suffix=$3 tracer
    "$work/loadgen" "$port" req "$qos" 500 1 "$prefix" "$suffix" >/dev/null
    strace -c -f -p "$pid" -o "$work/strace.out" 2>"$work/strace.log" &
    tracer=$!
    until grep -q "attached" "$work/strace.log" 2>/dev/null; do sleep 0.05; done
    echo "load:   $("$work/loadgen" "$port" req "$qos" "$requests" 1 "$prefix" "$suffix")"
    kill -INT "$tracer"; wait "$tracer" || true
    cat "$work/strace.out"
}
echo "== C relay, $requests requests at QoS $qos"
count "$baseline" rpi operation:REQ_plantSensorData
echo "== Trellis, $requests requests at QoS $qos"
count "$relay" trl operation:RES_plantSensorData
