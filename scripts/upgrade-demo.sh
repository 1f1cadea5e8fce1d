#!/usr/bin/env bash
# upgrade-demo.sh [DIR]: the demo tree (examples/demo.yaml) applied by the
# worker and starter of 5b9cb0e (built from this repository's history), the
# worker replaced by this build (bin/, make build), then `starter upgrade
# --wait`: prints every worker's state, instance and restarts before and after,
# how long the upgrade took, and hello's answer. Ports 27233/28233/29090 and
# 18081 (the demo's hello) must be free; it stops what it started.
set -u
M=$(cd "$(dirname "$0")/.." && pwd); D=${1:-/tmp/steward-upgrade-demo}; rm -rf "$D"; mkdir -p $D/old/src
git -C $M archive 5b9cb0e | tar -x -C $D/old/src
(cd $D/old/src && go build -o bin/worker ./worker && go build -o bin/starter ./starter && go build -o bin/hello ./examples/hello) || exit 1
export TEMPORAL_ADDRESS=127.0.0.1:27233
# rows WHEN: each worker of the demo tree (state, instance, restarts) as
# `starter status --exact true` says now, saved in $D/WHEN.json.
rows() {
  "$M/bin/starter" status demo --exact true -o json >"$D/$1.json"
  python3 -c "
import json,sys
def walk(n):
  yield n
  for c in n['children']: yield from walk(c)
for n in walk(json.load(open(sys.argv[1]))):
  if n['kind'] != 'supervisor': print(sys.argv[2], n['path'], n['state'], n.get('instance', ''), n['restarts'], n['manualRestarts'])" "$D/$1.json" "$1"
}
$M/bin/temporal server start-dev --port 27233 --ui-port 28233 --headless --db-filename $D/t.db --log-level error \
  --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000 --dynamic-config-value history.timerProcessorMaxPollRPS=1000 \
  --dynamic-config-value 'history.timerProcessorMaxTimeShift="100ms"' \
  --dynamic-config-value matching.numTaskqueueReadPartitions=1 --dynamic-config-value matching.numTaskqueueWritePartitions=1 > $D/server.log 2>&1 &
SP=$!
sleep 8
(cd $D/old/src && exec bin/worker --metrics 127.0.0.1:29090 --state-dir $D/state > $D/old-worker.log 2>&1) &
OW=$!
sleep 3
(cd $D/old/src && bin/starter apply -f examples/demo.yaml --wait --timeout 3m) || echo "old apply failed"
sleep 5
rows before
kill $OW; wait $OW 2>/dev/null
(cd $M && exec bin/worker --metrics 127.0.0.1:29090 --state-dir $D/state > $D/new-worker.log 2>&1) &
NW=$!
s=$(date +%s.%N)
$M/bin/starter upgrade --wait -o json > $D/upgrade.json 2> $D/upgrade.err
rc=$?
e=$(date +%s.%N)
echo "upgrade rc=$rc took $(python3 -c "print(round($e-$s,1))") s: $(cat $D/upgrade.json)"
tail -3 $D/upgrade.err
rows after
curl -s http://127.0.0.1:18081/ | head -c 100; echo
$M/bin/starter delete demo >/dev/null
sleep 5
kill $NW; wait $NW 2>/dev/null; kill $SP; wait $SP 2>/dev/null
echo done
