#!/usr/bin/env bash
# Importing a ~100 MB packet capture: `trellis capture import` against `tshark -T fields` on the same file,
# each with its time and peak memory (/usr/bin/time -v). docs/benchmark.md holds the figures.
#   Benchmarks/wire-import.sh TRELLIS_BINARY [MEGABYTES]     (default 100)
# The capture is real traffic: tcpdump on lo around a Mosquitto of its own (port 18999) while
# mosquitto_pub publishes 150,000 plant requests at QoS 1 and mosquitto_sub receives them, then that file
# repeated (client ports shifted, times moved on) up to the size asked for. Needs root for tcpdump.
set -euo pipefail
trellis="$1"
megabytes="${2:-100}"
work="$(mktemp -d)"
trap 'kill "${broker:-}" "${sub:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
printf 'listener 18999 127.0.0.1\nallow_anonymous true\nuser root\n' > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" 2> "$work/mosquitto.log" & broker=$!
tcpdump -i lo -B 65536 --immediate-mode -U -s 0 -w "$work/real.pcap" 'tcp port 18999' 2> "$work/tcpdump.log" & dump=$!
until grep -q "listening on" "$work/tcpdump.log"; do sleep 0.1; done
until mosquitto_pub -p 18999 -t probe -n 2>/dev/null; do sleep 0.1; done
mosquitto_sub -p 18999 -q 1 -i bench-watcher -t 'bench/#' > /dev/null & sub=$!
python3 -c '
for i in range(150000):
    print("ID:%d;sender:Bob iPhone;receiver:Host-RPI3B+;payload:{\"moisture\":%d,\"temperature\":%d};operation:REQ_plantSensorData" % (i, i % 10, 60 + i % 30))
' | mosquitto_pub -p 18999 -q 1 -i bench-publisher -t bench/sensors -l
kill -INT "$dump"; wait "$dump" || true
python3 - "$work/real.pcap" "$work/big.pcap" "$((megabytes * 1000000))" 18999 <<'PY'
import struct, sys
src, dst, target, port = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
data = open(src, "rb").read()
records, off = [], 24
while off + 16 <= len(data):
    sec, usec, incl, orig = struct.unpack("<IIII", data[off:off + 16])
    records.append((sec * 1000000 + usec, data[off + 16:off + 16 + incl], orig))
    off += 16 + incl
span = records[-1][0] - records[0][0] + 1000
with open(dst, "wb") as out:
    out.write(data[:24])
    written, copy = 24, 0
    while written < target:
        for t, frame, orig in records:
            f = bytearray(frame)
            for at in (34, 36):  # Ethernet + IPv4 without options: the TCP ports
                p = struct.unpack(">H", f[at:at + 2])[0]
                if p != port:
                    f[at:at + 2] = struct.pack(">H", (p + copy * 7) % 50000 + 10000)
            t2 = t + copy * span
            out.write(struct.pack("<IIII", t2 // 1000000, t2 % 1000000, len(f), orig) + f)
            written += 16 + len(f)
        copy += 1
PY
ls -l "$work/big.pcap"
echo "== trellis capture import"
/usr/bin/time -v "$trellis" capture import "$work/big.pcap" --port 18999 -o "$work/out.jsonl" --expected "$work/expected.jsonl" \
    2>&1 | grep -E "trellis:|Elapsed|Maximum resident"
echo "== tshark -T fields"
/usr/bin/time -v tshark -r "$work/big.pcap" -d tcp.port==18999,mqtt -Y mqtt.msgtype==3 -T fields -e mqtt.topic -e mqtt.msg -e mqtt.qos \
    2> "$work/tshark.err" > "$work/tshark.out"; grep -E "Elapsed|Maximum resident" "$work/tshark.err"
echo "publishes: trellis $(($(wc -l < "$work/out.jsonl") + $(wc -l < "$work/expected.jsonl"))) lines, tshark $(tr ',' '\n' < "$work/tshark.out" | grep -c .) fields"
