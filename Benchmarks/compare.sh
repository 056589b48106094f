#!/usr/bin/env bash
# Two Trellis builds against each other and the C relay of `make bench`, one at a time (the closed loop): each round
# runs every relay's 5,000 requests in 10 interleaved slices of 500 (after 20 uncounted each), as `make bench` does,
# and prints each relay's p50 and its ratio to the C relay's. At the end: each build's median ratio and, per round,
# BUILD_B's p50 over BUILD_A's (their median, and in how many rounds B was the lower). On a shared machine a change
# of a few per cent shows only in such a paired count over many rounds, not in one run of `make bench`.
#   Benchmarks/compare.sh BUILD_A BUILD_B [ROUNDS] [QOS]
# A build is the path of a `trellis` binary (copy .build/release/trellis aside before building the other).
set -euo pipefail
[ $# -ge 2 ] && [ -x "$1" ] && [ -x "$2" ] || { echo "usage: compare.sh BUILD_A BUILD_B [ROUNDS] [QOS 0-2]" >&2; exit 2; }
builds=("$1" "$2")
rounds=${3:-21}
qos=${4:-0}
[[ "$rounds" =~ ^[1-9][0-9]*$ && "$qos" =~ ^[012]$ ]] || { echo "usage: compare.sh BUILD_A BUILD_B [ROUNDS ≥ 1] [QOS 0-2]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=Benchmarks/relays.sh
. "$root/Benchmarks/relays.sh"
bench_setup
"$work/relay" "$port" 100 >"$work/relay.log" 2>&1 &
bench_wait_baseline $!
prefixes=(rpi a b)
labels=("C relay" "build A" "build B")
suffixes=(operation:REQ_plantSensorData operation:RES_plantSensorData operation:RES_plantSensorData)
for i in 1 2; do
    "${builds[$((i - 1))]}" run --broker "127.0.0.1:$port" --state "$work/state$i" --spam-limit 100000000 \
        --plants-file "$work/plants" --plant-dialect lossless --stats-interval 3600 --plant-prefix "${prefixes[$i]}" \
        --client-id "bench-compare-$i" >"$work/trellis$i.log" 2>&1 &
    relay=$!
    bench_wait_trellis "$relay" "$work/trellis$i.log" || { echo "compare.sh: ${labels[$i]} stopped before it connected" >&2; exit 1; }
    # Measured once its start's Home Assistant announcement and retained sweep are done, as `make bench` waits.
    waited=0
    until grep -q "swept the retained topics" "$work/trellis$i.log"; do
        kill -0 "$relay" 2>/dev/null || { echo "compare.sh: ${labels[$i]} stopped:" >&2; cat "$work/trellis$i.log" >&2; exit 1; }
        waited=$((waited + 1))
        [ "$waited" -lt 300 ] || { echo "compare.sh: ${labels[$i]} did not log its retained sweep within 60 s" >&2; exit 1; }
        sleep 0.2
    done
    bench_seed_readings "${prefixes[$i]}"
done
for round in $(seq 1 "$rounds"); do
    rm -f "$work"/samples-*
    for slice in $(seq 0 9); do
        for k in 0 1 2; do
            j=$(( (k + slice) % 3 ))
            # Every request must be answered, and answered right (loadgen counts the replies it cannot match).
            if ! result=$("$work/loadgen" "$port" req "$qos" 520 1 "${prefixes[$j]}" "${suffixes[$j]}" "$work/slice"); then
                echo "compare.sh: the ${labels[$j]} stopped answering in round $round" >&2; exit 1
            fi
            [[ "$result" == *" bad=0"* ]] || { echo "compare.sh: the ${labels[$j]} answered wrongly: $result" >&2; exit 1; }
            tail -n +21 "$work/slice" >> "$work/samples-$j"
        done
    done
    python3 - "$work" "$round" <<'PY' | tee -a "$work/rounds"
import statistics, sys
work, number = sys.argv[1], sys.argv[2]
p50 = [statistics.median(float(line) for line in open(f"{work}/samples-{j}")) for j in range(3)]
print(f"round {number}: C relay {p50[0]:.1f} µs, A {p50[1]:.1f} µs ({p50[1] / p50[0]:.3f}×), "
      f"B {p50[2]:.1f} µs ({p50[2] / p50[0]:.3f}×), B/A {p50[2] / p50[1]:.3f}")
PY
done
python3 - "$work/rounds" <<'PY'
import re, statistics, sys
a, b, ba = [], [], []
for line in open(sys.argv[1]):
    ratios = re.findall(r"\(([\d.]+)×\)", line)
    a.append(float(ratios[0])); b.append(float(ratios[1])); ba.append(float(line.rsplit("B/A ", 1)[1]))
print(f"A/C relay: median {statistics.median(a):.3f}×; B/C relay: median {statistics.median(b):.3f}×")
print(f"B/A per round: median {statistics.median(ba):.3f}, B lower in {sum(r < 1 for r in ba)} of {len(ba)} rounds")
PY
