# Sourced by the benchmark scripts that time one relay: the release `trellis` ($TRELLIS to name another), a
# scratch directory $work removed at exit with every process the script started, and a Mosquitto of their own on
# a free loopback port $port, accepting anyone (it listens on 127.0.0.1 only), started and answering.
trellis=${TRELLIS:-$(swift build -c release --show-bin-path)/trellis}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
printf 'listener %s 127.0.0.1\nallow_anonymous true\nmax_inflight_messages 0\n' "$port" > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" >/dev/null 2>&1 &
until mosquitto_pub -h 127.0.0.1 -p "$port" -t ping -n 2>/dev/null; do sleep 0.1; done

# Prints the microseconds of one plant request's round trip: client $1, request id $2.
ask() {
    local start end
    start=$(date +%s%N)
    mosquitto_rr -h 127.0.0.1 -p "$port" -t "rpi/torpi/$1" -e "rpi/fromrpi/$1" -W 30 \
        -m "ID:$2;sender:$1;receiver:Host-RPI3B+;payload:;operation:REQ_numPlants" >/dev/null
    end=$(date +%s%N)
    echo $(( (end - start) / 1000 ))
}

# The percentiles of the microseconds on standard input, in milliseconds.
summary() {
    sort -n | awk '{ v[NR] = $1 } END { if (NR == 0) { print "no requests"; exit }
        printf "p50 %.1f ms  p99 %.1f ms  max %.1f ms  (%d requests)\n", v[int(NR*0.5)+1]/1000, v[int(NR*0.99)+1]/1000, v[NR]/1000, NR }'
}
