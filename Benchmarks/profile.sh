#!/usr/bin/env bash
# Where a request's time goes: a CPU profile of a release `trellis run` answering plant requests one at
# a time (the closed loop of `make bench`), with Linux perf's cpu-clock sampling (no hardware counters
# needed), and its CPU per request read from /proc. Starts its own Mosquitto and Trellis on free
# loopback ports. Release build expected:
#   swift build -c release --static-swift-stdlib --product trellis && Benchmarks/profile.sh [REQUESTS] [QOS] [TRELLIS FLAGS…]
# e.g. `Benchmarks/profile.sh 20000 0 --socketio 0` or with `TRELLIS_HOMEASSISTANT_ENABLED=false` in the
# environment, to see what one feature costs. Prints the load generator's figures and the user and system
# microseconds per request of Trellis and, measured right after on the same broker, of the C relay of
# `make bench` (Benchmarks/baseline/relay.c), then Trellis's share of samples per library and its hottest
# symbols (demangled). With COUNT=1 (as root) it also counts, with perf's uprobes, the calls per request of
# malloc, free, pthread_mutex_lock, the Swift runtime's object allocation, retain, release, task switch and
# global enqueue, the system calls and the context switches, for both relays. With TLS=1 Trellis connects to
# the broker over TLS (a throwaway CA and a second listener); the load generator and the C relay do not.
# With COUNT=1 CALLERS=FUNCTION (one of the counted functions) it also lists who calls that function. With
# INFLIGHT=N the measured runs keep N requests in flight instead of one.
set -euo pipefail
requests=${1:-20000}
# INFLIGHT=N: requests in flight in the measured runs (1, the closed loop, unless set; 64 is the bench's pipelined run).
inflight=${INFLIGHT:-1}
qos=${2:-0}
shift $(( $# > 2 ? 2 : $# ))
trellis=${TRELLIS:-$(swift build -c release --show-bin-path)/trellis}
root=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=Benchmarks/relays.sh
. "$root/Benchmarks/relays.sh"
bench_scratch
bench_compile
bench_broker_config
broker="127.0.0.1:$port"
if [ "${TLS:-}" = 1 ]; then
    # TLS=1: Trellis connects over TLS (a second listener, a throwaway CA and server certificate for 127.0.0.1),
    # the load generator and the C relay stay on the plain listener.
    tls_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=profile-ca \
        -keyout "$work/ca.key" -out "$work/ca.crt" 2>/dev/null
    openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=127.0.0.1 \
        -keyout "$work/server.key" -out "$work/server.csr" 2>/dev/null
    printf 'subjectAltName=IP:127.0.0.1\n' > "$work/san"
    openssl x509 -req -in "$work/server.csr" -CA "$work/ca.crt" -CAkey "$work/ca.key" -CAcreateserial -days 1 \
        -extfile "$work/san" -out "$work/server.crt" 2>/dev/null
    printf 'listener %s 127.0.0.1\ncafile %s\ncertfile %s\nkeyfile %s\n' "$tls_port" "$work/ca.crt" \
        "$work/server.crt" "$work/server.key" >> "$work/mosquitto.conf"
    grep -q '^per_listener_settings true' "$work/mosquitto.conf" && { echo "profile.sh: TLS=1 needs per_listener_settings false" >&2; exit 1; }
    broker="mqtts://127.0.0.1:$tls_port --tls-ca $work/ca.crt"
fi
bench_start_broker
bench_plants_file
# shellcheck disable=SC2086 # $broker holds the TLS options too
"$trellis" run --broker $broker --state "$work/state" --spam-limit 100000000 --plants-file "$work/plants" \
    --plant-dialect lossless --stats-interval 3600 "$@" \
    >"$work/trellis.log" 2>&1 &
relay=$!
until grep -q "connected to the broker" "$work/trellis.log"; do sleep 0.1; done
bench_seed_readings rpi
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
    echo "load:   $("$work/loadgen" "$port" req "$qos" "$count" "$inflight" rpi "$suffix")" >&2
    if [ -n "$perf" ]; then kill -INT "$perf"; wait "$perf" 2>/dev/null || true; fi
    read -r user1 system1 < <(awk '{ print $14, $15 }' "/proc/$pid/stat")
    awk -v u=$((user1 - user0)) -v s=$((system1 - system0)) -v n="$count" -v t="$(getconf CLK_TCK)" \
        'BEGIN { printf "%.1f %.1f\n", u / t / n * 1e6, s / t / n * 1e6 }'
}
# With COUNT=1 (root): calls per request of the functions below, counted with uprobes over a second closed
# loop of the same length, for Trellis and then the C relay. The probes are removed on exit.
probed=(libc:malloc libc:free libc:pthread_mutex_lock libswiftCore:swift_allocObject libswiftCore:swift_retain
        libswiftCore:swift_release libswift_Concurrency:swift_task_switch libswift_Concurrency:swift_task_enqueueGlobal)
# The offset in FILE of the function FN: its address (nm) less its loadable segment's address, plus that
# segment's offset in the file (readelf -l).
file_offset() {
    python3 - "$1" "$2" <<'PY'
import subprocess, sys
path, fn = sys.argv[1], sys.argv[2]
symbols = subprocess.run(["nm", "--defined-only", path], capture_output=True, text=True).stdout.splitlines()
address = next(int(line.split()[0], 16) for line in symbols if line.split()[2:] == [fn])
for line in subprocess.run(["readelf", "-lW", path], capture_output=True, text=True).stdout.splitlines():
    field = line.split()
    if field[:1] == ["LOAD"]:
        offset, vaddr, size = int(field[1], 16), int(field[2], 16), int(field[4], 16)
        if vaddr <= address < vaddr + size:
            print(hex(address - vaddr + offset))
PY
}
count_calls() {
    local pid=$1 suffix=$2 spec lib fn path events=""
    for spec in "${probed[@]}"; do
        lib=${spec%%:*} fn=${spec#*:}
        # A shared library the process maps, or, for a Swift runtime linked in statically, the binary.
        path=$(awk -v l="/$lib.so" 'index($6, l) { print $6; exit }' "/proc/$pid/maps")
        [ -n "$path" ] || path=$(readlink "/proc/$pid/exe")
        [ -f "$work/symbols.$(basename "$path")" ] ||
            { nm -D --defined-only "$path" 2>/dev/null || true; nm --defined-only "$path" 2>/dev/null || true; } \
                | awk '{ print $NF }' | sed 's/@.*//' | sort -u > "$work/symbols.$(basename "$path")"
        grep -qx "$fn" "$work/symbols.$(basename "$path")" || continue
        # A runtime linked in statically has no debug information, where perf looks a name up first: then the
        # probe goes on the function's offset in the file.
        perf probe -q -x "$path" -a "trellisprofile:$fn=$fn" 2>>"$work/probe.log" ||
            perf probe -q -x "$path" -a "trellisprofile:$fn=$(file_offset "$path" "$fn")" 2>>"$work/probe.log" ||
            { echo "  (no probe on $fn in $path: $(tail -1 "$work/probe.log"))" >&2; continue; }
        events+="${events:+,}trellisprofile:$fn"
    done
    events+="${events:+,}raw_syscalls:sys_enter,context-switches"
    perf stat -x, -e "$events" -p "$pid" -o "$work/counts" &
    local stat=$!
    sleep 0.5
    "$work/loadgen" "$port" req "$qos" "$requests" "$inflight" rpi "$suffix" >/dev/null
    kill -INT "$stat"; wait "$stat" 2>/dev/null || true
    awk -F, -v n="$requests" '$1 ~ /^[0-9]/ { sub(/^trellisprofile:/, "", $3); printf "  %-28s %8.1f per request\n", $3, $1 / n }' "$work/counts"
    if [ -n "${CALLERS:-}" ] && [[ ",$events," == *",trellisprofile:$CALLERS,"* ]]; then
        # CALLERS=FUNCTION: who calls it, from the call chains of its probe over a short closed loop.
        perf record -q -c 1 -e "trellisprofile:$CALLERS" --call-graph dwarf,16384 -p "$pid" -o "$work/callers.data" 2>/dev/null &
        local record=$!
        sleep 0.5
        "$work/loadgen" "$port" req "$qos" 200 1 rpi "$suffix" >/dev/null
        kill -INT "$record"; wait "$record" 2>/dev/null || true
        echo "  callers of $CALLERS (the two frames above it, share of calls):"
        perf script -i "$work/callers.data" -F ip,sym 2>/dev/null | awk '
            /^$/ { if (depth) { n++; seen[chain]++ } depth = 0; chain = ""; next }
            { depth++; if (depth == 2 || depth == 3) chain = chain (depth == 3 ? " <- " : "") $2 }
            END { for (c in seen) printf "%6.1f%% %s\n", 100 * seen[c] / n, c }' \
            | sort -rn | head -"${CALLER_LINES:-12}" | swift demangle --simplified | cut -c1-200 | sed 's/^/    /'
    fi
    perf probe -q -d 'trellisprofile:*' 2>/dev/null || true
}
read -r user system < <(measure "$relay" "$requests" operation:RES_plantSensorData profile)
echo "Trellis:  $user µs user, $system µs system per request; RSS $(awk '/VmHWM/ { printf "%.1f MB peak", $2 / 1024 }' "/proc/$relay/status")"
if [ "${COUNT:-}" = 1 ]; then
    trap 'perf probe -q -d "trellisprofile:*" 2>/dev/null; kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
    echo "Trellis, calls per request:"
    count_calls "$relay" operation:RES_plantSensorData
fi
kill -INT "$relay"; wait "$relay" 2>/dev/null || true
"$work/relay" "$port" 100 >"$work/relay.log" 2>&1 &
baseline=$!
sleep 0.5
"$work/loadgen" "$port" req "$qos" 2000 1 rpi operation:REQ_plantSensorData >/dev/null
read -r cuser csystem < <(measure "$baseline" "$requests" operation:REQ_plantSensorData)
if [ "${COUNT:-}" = 1 ]; then
    echo "C relay, calls per request:"
    count_calls "$baseline" operation:REQ_plantSensorData
fi
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
