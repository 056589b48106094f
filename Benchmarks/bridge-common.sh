# Sourced by bridge-drain.sh and bridge-latency.sh, with $work set to the run's directory: free loopback ports, a
# Mosquitto per side, and Mosquitto's own bridge to compare with.

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A Mosquitto in $work/$1 on port $2, with persistence, and its extra configuration lines on standard input.
broker() {
    mkdir -p "$work/$1"
    { printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 0\nmax_queued_messages 0\n' "$2"
      printf 'persistence true\npersistence_location %s/\n' "$work/$1"; cat; } > "$work/$1/mosquitto.conf"
    mosquitto -c "$work/$1/mosquitto.conf" >"$work/$1/log" 2>&1 &
    echo $! > "$work/$1/pid"
    until mosquitto_pub -h 127.0.0.1 -p "$2" -t ping -n 2>/dev/null; do sleep 0.05; done
}
stop_broker() { kill "$(cat "$work/$1/pid")"; wait "$(cat "$work/$1/pid")" 2>/dev/null || true; }

# A local Mosquitto $1 on port $2 whose own bridge carries sensors/# at QoS 1 to 127.0.0.1:$3 as site/home1/sensors/#,
# with more bridge lines on standard input; returns once the bridge is connecting.
mosquitto_bridge() {
    { printf 'connection cloud\naddress 127.0.0.1:%s\ntopic sensors/# out 1 "" site/home1/\nrestart_timeout 1\n' "$3"
      cat; } | broker "$1" "$2"
    until grep -q "Connecting bridge" "$work/$1/log"; do sleep 0.1; done
}
