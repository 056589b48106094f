#!/usr/bin/env bash
# How plant requests fare while a relay compacts a large history of readings (docs/plant-tracker.md#history).
# Starts a Mosquitto and a relay on free loopback ports; writes DAYS days of readings at one a minute up to now for
# SENSORS sensors into the state's raw history, so the relay's first compaction, at start, folds every reading older
# than history.raw_days (14) into its hour in one transaction; then times plant requests one at a time
# (mosquitto_rr) from the relay's start until the compaction is logged as done ("during"), and REQUESTS more after
# it ("alone"). Prints the round trips' percentiles of each part, their ratio, the compaction's own figures, and the
# state's size after it: with DAYS=365 and SENSORS=50, the file a year of readings keeps.
# Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/compaction-pause.sh [REQUESTS] [SENSORS] [DAYS]
set -euo pipefail
requests=${1:-1000}
sensors=${2:-50}
days=${3:-30}
# shellcheck source=Benchmarks/broker.sh
. "$(dirname "$0")/broker.sh"
run_trellis() {
    "$trellis" run --broker "127.0.0.1:$port" --state "$work/state" --spam-limit 1000000 >"$work/trellis.log" 2>&1 &
    trellis_pid=$!
}

# A first run makes the state; it is stopped before the history is written behind its back.
run_trellis
until grep -q "connected to the broker" "$work/trellis.log"; do sleep 0.1; done
kill -TERM "$trellis_pid"; wait "$trellis_pid" || true

echo "writing $((sensors * days * 1440)) readings: $sensors sensors, $days days at one a minute up to now"
python3 - "$work/state/trellis.sqlite" "$sensors" "$days" <<'EOF'
import sqlite3, sys, time
path, sensors, days = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
end = (int(time.time()) // 60) * 60_000
db = sqlite3.connect(path)
rows = ((f"0x{s:02x}", 1 + (m + s) % 10, 60 + (m % 240) / 10, end - m * 60_000)
        for s in range(sensors) for m in range(days * 1440))
db.executemany("INSERT INTO reading_raw (sensor, moisture, temperature, at) VALUES (?, ?, ?, ?)", rows)
db.commit()
EOF

p50() { sort -n | awk '{ v[NR] = $1 } END { print (NR ? v[int(NR*0.5)+1] : 0) }'; }

run_trellis
until grep -q "connected to the broker" "$work/trellis.log"; do sleep 0.01; done
: > "$work/during"
i=0
until grep -q "compacted the history" "$work/trellis.log"; do
    i=$((i + 1)); ask bench "$i" >> "$work/during"
done
for _ in $(seq 1 "$requests"); do i=$((i + 1)); ask bench "$i" >> "$work/alone"; done
echo "during compaction: $(summary < "$work/during")"
echo "alone:             $(summary < "$work/alone")"
during=$(p50 < "$work/during"); alone=$(p50 < "$work/alone")
awk -v d="$during" -v a="$alone" 'BEGIN { if (a > 0 && d > 0) printf "p50 during / alone: %.2f\n", d / a }'
echo "compaction:        $(grep "compacted the history" "$work/trellis.log" | head -1)"
kill -TERM "$trellis_pid"; wait "$trellis_pid" || true
python3 - "$work/state/trellis.sqlite" <<'EOF'
import os, sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.execute("VACUUM")
raw, = db.execute("SELECT COUNT(*) FROM reading_raw").fetchone()
hourly, = db.execute("SELECT COUNT(*) FROM reading_hourly").fetchone()
print(f"state after the compaction: {os.path.getsize(sys.argv[1]) / 2**20:.1f} MiB ({raw} raw readings, {hourly} hours)")
EOF
