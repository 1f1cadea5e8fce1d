#!/usr/bin/env bash
# Where a workflow task's time goes, task by task (docs/benchmarks.md,
# "The workflow task's p99, task by task"): builds the worker and the bench
# against a copy of the pinned Temporal SDK patched to print each task it
# completes (scripts/taskbreakdown/patch.py), runs the bench's throughput
# step with it, and summarizes both sides: the raw entities' tasks
# (RawOnSignal) and steward's (WorkerWorkflow, by kind).
#
#   scripts/task-breakdown.sh [more bench flags, e.g. -worker-args "--payload-visit-concurrency 0"]
#
# Needs bin/temporal (make temporal-cli) and python3 (a diagnostic, not part
# of make run or make test). Writes under a temporary
# directory and prints its path; nothing in the checkout changes.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -x bin/temporal ] || { echo "task-breakdown: bin/temporal missing: make temporal-cli" >&2; exit 1; }
make -s build
work=$(mktemp -d /tmp/steward-taskbreakdown.XXXXXX)
sdk_version=$(go list -m -f '{{.Version}}' go.temporal.io/sdk)
sdk_dir=$(go list -m -f '{{.Dir}}' go.temporal.io/sdk)
cp -r "$sdk_dir" "$work/sdk" && chmod -R u+w "$work/sdk"
python3 scripts/taskbreakdown/patch.py "$work/sdk"
cp go.mod "$work/go.mod" && cp go.sum "$work/go.sum"
echo "replace go.temporal.io/sdk $sdk_version => $work/sdk" >> "$work/go.mod"
go build -modfile "$work/go.mod" -o "$work/worker" ./worker
go build -modfile "$work/go.mod" -o "$work/bench" ./bench
STEWARD_TASKLOG=1 "$work/bench" -temporal bin/temporal -worker "$work/worker" -starter bin/starter \
  -out "$work/results" -only throughput "$@" > "$work/bench.log" 2>&1 || { tail -20 "$work/bench.log" >&2; exit 1; }
python3 scripts/taskbreakdown/summarize.py "$work/bench.log"
echo "(log and result: $work)"
