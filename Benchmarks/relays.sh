# The setup profile.sh, instructions.sh, syscalls.sh and compare.sh share, sourced with $root (the repository) set:
# a scratch directory, the C load generator and relay of `make bench`, a Mosquitto with broker.conf's settings on a
# free loopback port, and the bench's seven plants with a reading each.

# Makes the scratch directory $work; at exit every background job is stopped and the directory removed.
bench_scratch() {
    work=$(mktemp -d)
    trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
}

# The whole setup in a fresh scratch directory: the C programs, the broker on its port ($port) and the plants file.
bench_setup() {
    bench_scratch
    bench_compile
    bench_broker_config
    bench_start_broker
    bench_plants_file
}

# Compiles Benchmarks/baseline/loadgen.c and relay.c into $work.
bench_compile() {
    cc -O2 -o "$work/loadgen" "$root/Benchmarks/baseline/loadgen.c" -lmosquitto
    cc -O2 -o "$work/relay" "$root/Benchmarks/baseline/relay.c" -lmosquitto
}

# Picks a free loopback port ($port) and writes broker.conf's settings for it to $work/mosquitto.conf, without
# persistence; a caller may add listeners before bench_start_broker.
bench_broker_config() {
    port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    sed -e "s/^listener .*/listener $port 127.0.0.1/" -e '/^persistence/d' -e '/^password_file/d' -e '/^acl_file/d' "$root/broker.conf" > "$work/mosquitto.conf"
    grep -q "^listener $port" "$work/mosquitto.conf" || echo "listener $port 127.0.0.1" >> "$work/mosquitto.conf"
}

# Starts Mosquitto on $work/mosquitto.conf ($broker_pid is its pid) and returns once it answers; fails with its log
# when it stops first.
bench_start_broker() {
    mosquitto -c "$work/mosquitto.conf" >"$work/broker.log" 2>&1 &
    broker_pid=$!
    until mosquitto_pub -h 127.0.0.1 -p "$port" -t ping -n 2>/dev/null; do
        kill -0 "$broker_pid" 2>/dev/null || { cat "$work/broker.log" >&2; return 1; }
        sleep 0.1
    done
}

# The plants file of `trellis run --plants-file`: Plant1 to Plant7 on sensors 0x31 to 0x37.
bench_plants_file() {
    printf 'Plant%s,0x%s\n' 1 31 2 32 3 33 4 34 5 35 6 36 7 37 > "$work/plants"
}

# A reading from each plant's sensor, under the plant prefix $1, so that every plant request has an answer.
bench_seed_readings() {
    for sensor in 31 32 33 34 35 36 37; do
        mosquitto_pub -h 127.0.0.1 -p "$port" -q 1 -t "$1/sensors/0x$sensor" -m '{"moisture":5,"temperature":70.5}'
    done
}

# Returns once the Trellis of PID $1 logged that it connected, in the file $2; fails with that log when it stops first.
bench_wait_trellis() {
    until grep -q "connected to the broker" "$2"; do
        kill -0 "$1" 2>/dev/null || { cat "$2" >&2; return 1; }
        sleep 0.2
    done
}

# Returns once the C relay of PID $1 (logging to $work/relay.log) answers a request on rpi/torpi: it has subscribed.
# Fails with its log when it stops first.
bench_wait_baseline() {
    until mosquitto_rr -h 127.0.0.1 -p "$port" -t rpi/torpi -e rpi/fromrpi -W 2 \
        -m 'ID:1;sender:probe;receiver:rpi;payload:;operation:REQ_plantSensorData' >/dev/null 2>&1; do
        kill -0 "$1" 2>/dev/null || { cat "$work/relay.log" >&2; return 1; }
    done
}
