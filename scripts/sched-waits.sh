#!/usr/bin/env bash
# How long the worker's goroutines wait to run once runnable, under the
# bench's rollout restarts (docs/benchmarks.md, "The workflow task's p99,
# task by task"): runs the bench's throughput step with the worker serving
# its profiles, takes a Go execution trace of the worker (3 s) once the
# rollouts run, and summarizes it by kind of goroutine (scripts/schedwaits).
#
#   scripts/sched-waits.sh [more bench flags]
#
# Needs bin/temporal (make temporal-cli) and python3 (a free port). A
# diagnostic, not part of make run or make test; writes under a temporary
# directory and prints its path.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/temporal ] || { echo "sched-waits: bin/temporal missing: make temporal-cli" >&2; exit 1; }
make -s build
work=$(mktemp -d /tmp/steward-schedwaits.XXXXXX)
(cd scripts/schedwaits && go build -o "$work/schedwaits" .)
pprof=127.0.0.1:$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
go run ./bench -temporal bin/temporal -worker bin/worker -starter bin/starter -out "$work/results" \
  -only throughput -worker-args "--pprof $pprof" "$@" > "$work/bench.log" 2>&1 &
bench=$!
# The rollouts begin once the worker has run a RolloutWorkflow's task.
metrics=""
for _ in $(seq 1 600); do
  if [ -z "$metrics" ]; then
    # the worker the bench started, found by its own --pprof address
    pid=$(pgrep -f -- "^bin/worker .*--pprof $pprof" | head -1 || true)
    if [ -n "$pid" ]; then
      metrics=$(tr '\0' '\n' < "/proc/$pid/cmdline" | grep -A1 -x -- --metrics | tail -1 || true)
    fi
  elif curl -sf -o "$work/metrics.txt" "http://$metrics/metrics" &&
    grep -q 'execution_latency_seconds_count{[^}]*RolloutWorkflow' "$work/metrics.txt"; then
    break
  fi
  sleep 0.5
done
curl -sf -o "$work/trace.out" "http://$pprof/debug/pprof/trace?seconds=3"
wait "$bench" || { tail -20 "$work/bench.log" >&2; exit 1; }
"$work/schedwaits" "$work/trace.out"
echo "(trace, log and result: $work)"
