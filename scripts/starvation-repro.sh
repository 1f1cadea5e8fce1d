#!/usr/bin/env bash
# starvation-repro.sh DIR [worker flags...]: the measurement of
# docs/scale-and-health.md. A dev server with make run's settings (state in
# DIR), one worker (--pool-size 20 and the flags given), a 100-worker tree
# applied and rolled out twice, then `starter apply --wait` of 40 x 100 stub
# workers while `starter status` runs every 30 s. Prints how long the apply
# took and how each status call ended; stops what it started (by PID).
#   scripts/starvation-repro.sh /tmp/after
#   WORKER=/path/to/older/worker STARTER=/path/to/older/starter scripts/starvation-repro.sh /tmp/before
#   scripts/starvation-repro.sh /tmp/fixed --workflow-poller-scaling fixed --workflow-pollers 2
# Ports: STEWARD_REPRO_PORT (17233), +1000 for the UI, STEWARD_REPRO_METRICS (19090).
set -u
dir=${1:?usage: starvation-repro.sh DIR [worker flags...]}; shift
root=$(cd "$(dirname "$0")/.." && pwd)
bin=$root/bin
worker=${WORKER:-$bin/worker}; starter=${STARTER:-$bin/starter}
port=${STEWARD_REPRO_PORT:-17233}; metrics=${STEWARD_REPRO_METRICS:-127.0.0.1:19090}
mkdir -p "$dir" && rm -rf "${dir:?}"/*
fleet() { # NAME GROUPS PER
  echo "name: $1"; echo "children:"
  for ((g = 0; g < $2; g++)); do printf '  - name: g%02d\n    children:\n' "$g"
    for ((w = 0; w < $3; w++)); do printf '      - {name: w%02d, kind: stub, stub: {delay: 0s}, observe: {interval: 1h}}\n' "$w"; done; done
}
fleet hsmall 1 100 >"$dir/small.yaml"; fleet hbig 40 100 >"$dir/big.yaml"
"$bin/temporal" server start-dev --port "$port" --ui-port $((port + 1000)) --headless --db-filename "$dir/t.db" --log-level error \
  --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
  --dynamic-config-value history.timerProcessorMaxPollRPS=1000 \
  --dynamic-config-value 'history.timerProcessorMaxTimeShift="100ms"' \
  --dynamic-config-value matching.numTaskqueueReadPartitions=1 \
  --dynamic-config-value matching.numTaskqueueWritePartitions=1 >"$dir/server.log" 2>&1 &
server=$!
export TEMPORAL_ADDRESS=127.0.0.1:$port
for _ in $(seq 60); do "$bin/temporal" operator cluster health --address "$TEMPORAL_ADDRESS" >/dev/null 2>&1 && break; sleep 1; done
"$worker" --pool-size 20 --metrics "$metrics" --state-dir "$dir/state" "$@" >"$dir/worker.log" 2>&1 &
wpid=$!
trap 'kill $loop $wpid 2>/dev/null; sleep 2; kill $server 2>/dev/null' EXIT
sleep 3
"$starter" apply -f "$dir/small.yaml" --wait >/dev/null
"$starter" rollout restart hsmall --chunk 20 -o json >/dev/null
"$starter" rollout restart hsmall --chunk 20 -o json >/dev/null
(for i in $(seq 1 30); do sleep 30; s=$(date +%s)
  timeout 60 "$starter" status hbig >"$dir/status.$i.out" 2>&1
  echo "status $i: exit $?, $(($(date +%s) - s)) s, $(tail -1 "$dir/status.$i.out" | cut -c1-120)"; done) &
loop=$!
s=$(date +%s)
"$starter" apply -f "$dir/big.yaml" --wait --timeout "${TIMEOUT:-600s}" >"$dir/apply.log" 2>&1
echo "apply --wait of 4000: exit $?, $(($(date +%s) - s)) s"
kill $loop 2>/dev/null
