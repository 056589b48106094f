#!/usr/bin/env bash
# One PostgreSQL outage under load, as an operator would cause it: two relays on one PostgreSQL store in a share
# group, 600 QoS 1 presses and 300 QoS 1 REQ_numPlants over 15 s, `pg_ctl -m fast` 3 s in, started again 8 s later on
# the same port. Prints one line: when the counts settled (seconds after the restart), the presses counted and the
# replies seen (600 and 300 when nothing was lost or doubled), and each relay's first /readyz 200 after the restart
# (NEVER within 30 s). A run that misses keeps the relays' and the broker's logs under .build/faults/pg-outage/.
# Run it many times: `for i in $(seq 50); do Tests/Faults/pg-outage.sh; done` (the fault matrix's pg-fast covers the
# same fault at random moments: make faults ARGS='--faults pg-fast --relays 2 --runs 50').
#   TRELLIS=path/to/trellis Tests/Faults/pg-outage.sh        (default: the debug build)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TRELLIS=${TRELLIS:-$ROOT/.build/debug/trellis}
W=$(mktemp -d /dev/shm/repro.XXXXXX); chmod 755 $W
port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
BP=$(port); H1=$(port); H2=$(port)
cleanup() { kill $(jobs -p) 2>/dev/null; pkill -f "$W" 2>/dev/null; $ROOT/Tests/Postgres/cluster.sh stop $W/pg >/dev/null 2>&1; sleep 0.5; rm -rf $W; }
trap cleanup EXIT
mkdir -p $W/pg $W/b $W/s1 $W/s2
cat > $W/b/m.conf <<C
listener $BP 127.0.0.1
allow_anonymous true
user root
persistence true
persistence_location $W/b/
max_queued_messages 100000
max_inflight_messages 1000
log_dest file $W/b/log
C
mosquitto -c $W/b/m.conf & 
URL=$($ROOT/Tests/Postgres/cluster.sh start $W/pg)
for i in 1 2; do
  eval hp=\$H$i
  TRELLIS_STATE_STORE=$URL $TRELLIS run --broker mqtt://127.0.0.1:$BP --share g --client-id r$i --state $W/s$i --health 127.0.0.1:$hp --log-level info > $W/r$i.log 2>&1 &
done
for i in $(seq 1 120); do
  a=$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$H1/readyz); b=$(curl -s -o /dev/null -w '%{http_code}' 127.0.0.1:$H2/readyz)
  [ "$a$b" = 200200 ] && break; sleep 0.5
done
echo "ready: $a $b"
mosquitto_sub -p $BP -q 1 -i phones -c -t 'rpi/fromrpi/#' -t rpi/fromrpi -v > $W/replies &
sleep 1
# load: 600 presses and 300 REQ_numPlants over 15 s
python3 - $BP <<'P' | mosquitto_pub -p $BP -q 1 -l -t p2o/buttons/door/press -i presser &
import sys,time
for i in range(600):
    print(""); sys.stdout.flush(); time.sleep(0.025)
P
python3 -c '
import sys,time
for i in range(300):
    print("ID:%d;sender:c%d;receiver:rpi;payload:;operation:REQ_numPlants" % (i, i % 30)); sys.stdout.flush(); time.sleep(0.05)
' | mosquitto_pub -p $BP -q 1 -l -t rpi/torpi -i requester &
sleep 3
$ROOT/Tests/Postgres/cluster.sh halt $W/pg >/dev/null
echo "pg halted $(date +%T)"
sleep 8
$ROOT/Tests/Postgres/cluster.sh start $W/pg >/dev/null
t0=$(date +%s.%N); echo "pg started $(date +%T)"
ok1=""; ok2=""
for i in $(seq 1 60); do
  [ -z "$ok1" ] && [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' 127.0.0.1:$H1/readyz)" = 200 ] && ok1=$(python3 -c "import time;print(round(time.time()-$t0,1))")
  [ -z "$ok2" ] && [ "$(curl -s -m 2 -o /dev/null -w '%{http_code}' 127.0.0.1:$H2/readyz)" = 200 ] && ok2=$(python3 -c "import time;print(round(time.time()-$t0,1))")
  [ -n "$ok1" ] && [ -n "$ok2" ] && break
  sleep 0.5
done
echo "ready after restart: r1=${ok1:-NEVER} r2=${ok2:-NEVER}"
# Wait (up to 90 s) for the counts to settle at what was sent.
for i in $(seq 1 90); do
  total=$(mosquitto_sub -p $BP -t p2o/buttons/door/state -C 1 -W 3 | python3 -c 'import sys,json; print(json.load(sys.stdin)["total"])' 2>/dev/null)
  replies=$(wc -l < $W/replies)
  [ "$total" = 600 ] && [ "$replies" -ge 300 ] && break
  sleep 1
done
settle=$(python3 -c "import time;print(round(time.time()-$t0,1))")
echo "RESULT settled_after=${settle}s presses=$total replies=$replies r1=${ok1:-NEVER} r2=${ok2:-NEVER}"
if [ -z "$ok1" ] || [ -z "$ok2" ] || [ "$total" != 600 ] || [ "$replies" != 300 ]; then
  d=$ROOT/.build/faults/pg-outage/$(date +%Y%m%dT%H%M%S); mkdir -p $d; cp $W/r1.log $W/r2.log $W/b/log $d/ 2>/dev/null; echo "logs in $d"
fi
