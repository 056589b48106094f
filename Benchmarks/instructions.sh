#!/usr/bin/env bash
# Instructions per request, counted rather than timed: a release `trellis run` and the C relay of `make bench`
# (Benchmarks/baseline/relay.c) each answer plant requests one at a time under valgrind's callgrind, which counts
# every instruction the process executes while the measured requests run (none of the warm-up). Unlike a CPU
# time, the count does not move with what else the shared machine runs: two runs of the same build agree to a
# fraction of a percent, so a change of a few hundred instructions per request shows. It leaves out what the
# instructions cost (cache misses, the kernel's system calls), which a timed run (`make bench`, profile.sh) shows.
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/instructions.sh [REQUESTS] [QOS] [TRELLIS FLAGS…]
# Needs valgrind (Debian's `valgrind` package). Prints both counts and their ratio, then Trellis's own cost per
# request grouped by what it is (reference counting, the concurrency runtime, …) and its costliest functions.
# With TRELLIS=PATH it measures another build; with KEEP=DIR it leaves callgrind's files in DIR for
# callgrind_annotate; with INFLIGHT=N the counted requests keep N in flight instead of one (the pipelined runs of
# `make bench`; under valgrind the relay is the slowest party, so its window stays full). The callgrind run is slow (about 50× a plain run): 2,000 requests take a minute or two.
set -euo pipefail
requests=${1:-2000}
qos=${2:-0}
[[ "$requests" =~ ^[0-9]+$ && "$qos" =~ ^[012]$ ]] || { echo "usage: instructions.sh [REQUESTS] [QOS 0-2] [TRELLIS FLAGS…]" >&2; exit 2; }
inflight=${INFLIGHT:-1}
shift $(( $# > 2 ? 2 : $# ))
root=$(cd "$(dirname "$0")/.." && pwd)
trellis=${TRELLIS:-$(swift build --package-path "$root" -c release --show-bin-path)/trellis}
command -v valgrind >/dev/null || { echo "instructions.sh: needs valgrind (apt-get install valgrind)" >&2; exit 1; }
# shellcheck source=Benchmarks/relays.sh
. "$root/Benchmarks/relays.sh"
bench_setup
# valgrind cannot read the DWARF 5 debug information of a Swift build; the symbol table is enough.
objcopy --strip-debug "$trellis" "$work/trellis"

# Runs the closed loop against the relay PID under callgrind (output in $work/$NAME.*): warm-up uncounted,
# then REQUESTS counted; prints the instructions per request.
count() {
    local pid=$1 name=$2 suffix=$3 file total
    "$work/loadgen" "$port" req "$qos" 500 1 rpi "$suffix" >/dev/null
    callgrind_control -i on "$pid" >/dev/null 2>&1
    echo "load:   $("$work/loadgen" "$port" req "$qos" "$requests" "$inflight" rpi "$suffix")" >&2
    callgrind_control -i off "$pid" >/dev/null 2>&1
    callgrind_control -d "$pid" >/dev/null 2>&1 || { echo "instructions.sh: callgrind_control could not reach $pid" >&2; exit 1; }
    file=$(ls -t "$work/$name".out.* 2>/dev/null | head -1)
    local tries=0
    until [ -n "$file" ] && grep -q '^totals:' "$file" 2>/dev/null; do
        tries=$((tries + 1))
        [ "$tries" -lt 300 ] && kill -0 "$pid" 2>/dev/null || { echo "instructions.sh: no callgrind dump from $pid" >&2; exit 1; }
        sleep 0.2; file=$(ls -t "$work/$name".out.* 2>/dev/null | head -1)
    done
    total=$(awk '/^totals:/ { print $2 }' "$file")
    echo "$((total / requests))"
}
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/trellis.out" "$work/trellis" run \
    --broker "127.0.0.1:$port" --state "$work/state" --spam-limit 100000000 --plants-file "$work/plants" \
    --plant-dialect lossless --stats-interval 3600 "$@" >"$work/trellis.log" 2>&1 &
relay=$!
bench_wait_trellis "$relay" "$work/trellis.log"
bench_seed_readings rpi
mine=$(count "$relay" trellis operation:RES_plantSensorData)
kill -INT "$relay"; wait "$relay" 2>/dev/null || true
valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file="$work/baseline.out" "$work/relay" "$port" 100 \
    >"$work/relay.log" 2>&1 &
baseline=$!
bench_wait_baseline "$baseline"
theirs=$(count "$baseline" baseline operation:REQ_plantSensorData)
kill "$baseline"; wait "$baseline" 2>/dev/null || true
echo "Trellis:  $mine instructions per request"
echo "C relay:  $theirs instructions per request"
awk -v a="$mine" -v b="$theirs" 'BEGIN { printf "Trellis/C relay: %.2f×\n\n", a / b }'
file=$(ls -t "$work"/trellis.out.* | head -1)
callgrind_annotate --threshold=100 "$file" 2>/dev/null | swift demangle --simplified \
    | python3 "$root/Benchmarks/instructions-groups.py" "$requests" "${TOP:-25}"
if [ -n "${KEEP:-}" ]; then mkdir -p "$KEEP" && cp "$work"/*.out.* "$KEEP"/; fi
