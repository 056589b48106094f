# Sourced by bridge-drain.sh, bridge-latency.sh and bridge-cost.sh: sets $trellis (TRELLIS, or the release build),
# $work (the run's directory, removed at exit once every background job is stopped) and $python (the fault matrix's
# environment); gives free loopback ports, a Mosquitto per side, Mosquitto's own bridge to compare with, Trellis
# bridged between two of them, and a publisher as fast as the local broker acknowledges.
trellis=${TRELLIS:-$(swift build -c release --show-bin-path)/trellis}
work=$(mktemp -d)
# Every broker too, by the pid file it wrote: one started in a subshell (a command substitution) is no job of this one.
trap 'kill $(jobs -p) $(cat "$work"/*/pid 2>/dev/null) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
python=$(Tests/Faults/setup-venv.sh)
now_ms() { date +%s%3N; }

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# A Mosquitto in $work/$1 on port $2, with persistence, and its extra configuration lines on standard input. It runs
# as whoever runs this (`user`): started by root it would otherwise turn to the user mosquitto, who cannot write its
# persistence file in $work, and a session made before a stop (the drain's checker's) would be gone after it.
broker() {
    mkdir -p "$work/$1"
    { printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 0\nmax_queued_messages 0\n' "$2"
      printf 'persistence true\npersistence_location %s/\nuser %s\n' "$work/$1" "$(id -un)"; cat; } \
        > "$work/$1/mosquitto.conf"
    mosquitto -c "$work/$1/mosquitto.conf" >"$work/$1/log" 2>&1 &
    echo $! > "$work/$1/pid"
    until mosquitto_pub -h 127.0.0.1 -p "$2" -t ping -n 2>/dev/null; do sleep 0.05; done
}
stop_broker() {
    kill "$(cat "$work/$1/pid")"; wait "$(cat "$work/$1/pid")" 2>/dev/null || true
    rm -f "$work/$1/pid"  # stopped: not to be killed again at exit (its process id may be another's by then)
}

# A local Mosquitto $1 on port $2 whose own bridge carries sensors/# at QoS 1 to 127.0.0.1:$3 as site/home1/sensors/#,
# with more bridge lines on standard input; returns once the bridge is connecting.
mosquitto_bridge() {
    { printf 'connection cloud\naddress 127.0.0.1:%s\ntopic sensors/# out 1 "" site/home1/\nrestart_timeout 1\n' "$3"
      cat; } > "$work/$1.bridge"
    # Not through a pipe: in a pipeline's subshell the broker would not be this script's job, not waited for by
    # stop_broker nor stopped at exit.
    broker "$1" "$2" < "$work/$1.bridge"
    until grep -q "Connecting bridge" "$work/$1/log"; do sleep 0.1; done
}

# Publishes $2 QoS 1 messages of 100 bytes on port $1's topic $3, as fast as the broker acknowledges them (paho-mqtt
# from the fault matrix's environment, 100 in flight; mosquitto_pub -l gives up what it has not sent at the end of
# its input).
publish_fast() {
    "$python" - "$1" "$2" "$3" <<'EOF'
import sys
import paho.mqtt.client as mqtt
port, count, topic = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
client = mqtt.Client(mqtt.CallbackAPIVersion.VERSION2, client_id="bench-publisher")
client.max_inflight_messages_set(100)
client.connect("127.0.0.1", port)
client.loop_start()
pending = []
for i in range(count):
    while True:
        info = client.publish(topic, f"{i:010d}".encode() + b"x" * 90, qos=1)
        if info.rc == mqtt.MQTT_ERR_SUCCESS:
            break
        pending.pop(0).wait_for_publish(60) if pending else client.reconnect()
    pending.append(info)
    if len(pending) >= 1000:
        pending.pop(0).wait_for_publish(60)
for info in pending:
    info.wait_for_publish(60)
client.disconnect()
client.loop_stop()
EOF
}

# Trellis bridged from the local broker on port $2 to the upstream one on port $1 (rule sensors/# under site/home1/,
# `window` ${WINDOW:-64}), with the flags of `trellis run` after them, its state in $work/state and its log in
# $work/trellis.log; returns once it is connected to both brokers, with its process id in $trellis_pid.
trellis_bridge() {
    printf 'bridges:\n  cloud:\n    url: mqtt://127.0.0.1:%s\n    window: %s\n    out:\n      - topic: "sensors/#"\n        prefix: "site/home1/"\n        qos: 1\n' \
        "$1" "${WINDOW:-64}" > "$work/trellis.yaml"
    "$trellis" run --config "$work/trellis.yaml" --broker "127.0.0.1:$2" --state "$work/state" \
        "${@:3}" >"$work/trellis.log" 2>&1 &
    trellis_pid=$!
    until grep -q "connected to the broker" "$work/trellis.log" && grep -q "forwarding to the upstream broker" \
        "$work/trellis.log"; do sleep 0.05; done
}
