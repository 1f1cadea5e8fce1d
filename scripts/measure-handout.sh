#!/usr/bin/env bash
# Measures a rolling update under one supervisor, as the bench's update step
# does per group, on builds side by side: for each BINDIR (holding worker
# and starter), RUNS times: a dev server, a tree of 100 stub workers under
# one group at update.maxParallel 5, then a change of all 100 (`apply
# --wait`, timed), then the group supervisor's history: its events, its
# workflow tasks, and their time from started to completed as the server
# recorded it (a local activity counts in its task). docs/benchmarks.md
# ("Hand-outs: a local activity or an activity") has the figures.
# Usage: make build temporal-cli && scripts/measure-handout.sh [RUNS] BINDIR...   (RUNS: 3)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=3
if [[ "${1:-}" =~ ^[0-9]+$ ]]; then RUNS=$1; shift; fi
[ $# -gt 0 ] || set -- bin
W=$(mktemp -d)
SERVER_PID=""
WORKER_PID=""
cleanup() {
	[ -z "$WORKER_PID" ] || kill "$WORKER_PID" 2>/dev/null || true
	devserver_stop
	rm -rf "$W"
}
trap cleanup EXIT
. scripts/devserver.sh

tree() { # tree DELAY: the tree with every stub's delay DELAY
	echo "name: t"
	echo "intensity: {maxRestarts: 5000, period: 1m}"
	echo "children:"
	echo "  - name: g00"
	echo "    intensity: {maxRestarts: 5000, period: 1m}"
	echo "    update: {maxParallel: 5}"
	echo "    children:"
	for i in $(seq -w 0 99); do echo "      - {name: w$i, kind: stub, stub: {delay: $1}, observe: {interval: 1h}}"; done
}
tree 0s >"$W/before.yaml"
tree 1ms >"$W/after.yaml"

for bin in "$@"; do
	for run in $(seq 1 "$RUNS"); do
		rm -rf "$W/run" && mkdir -p "$W/run"
		devserver_start "$W/run" || { echo "measure-handout: the dev server did not start" >&2; exit 1; }
		a=127.0.0.1:$PORT
		"$bin/worker" --address "$a" --pool-size 10 --log-level error --metrics "" \
			--state-dir "$W/run/state" --log-dir "$W/run/logs" >"$W/run/worker.log" 2>&1 &
		WORKER_PID=$!
		"$bin/starter" --address "$a" apply -f "$W/before.yaml" --wait --timeout 5m >/dev/null 2>&1
		began=$(date +%s.%N)
		"$bin/starter" --address "$a" apply -f "$W/after.yaml" --wait --timeout 5m >/dev/null 2>&1
		ended=$(date +%s.%N)
		bin/temporal workflow show --address "$a" -w t/g00 -o json >"$W/run/g00.json"
		kill "$WORKER_PID" && wait "$WORKER_PID" 2>/dev/null || true
		WORKER_PID=""
		devserver_stop
		python3 - "$bin" "$run" "$began" "$ended" "$W/run/g00.json" <<'PY'
import datetime, json, statistics, sys
bin_, run, began, ended, path = sys.argv[1:]
ev = json.load(open(path))["events"]
at = lambda e: datetime.datetime.fromisoformat(e["eventTime"].replace("Z", "+00:00"))
started, ms = {}, []
for e in ev:
    if e["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_STARTED":
        started[e["eventId"]] = at(e)
    elif e["eventType"] == "EVENT_TYPE_WORKFLOW_TASK_COMPLETED":
        ms.append((at(e) - started[e["workflowTaskCompletedEventAttributes"]["startedEventId"]]).total_seconds() * 1000)
ms.sort()
print(f"{bin_} run {run}: update {float(ended) - float(began):.2f} s; g00: {len(ev)} events, {len(ms)} tasks, "
      f"task median {statistics.median(ms):.0f} ms, p90 {ms[int(0.9 * len(ms))]:.0f} ms, max {ms[-1]:.0f} ms")
PY
	done
done
