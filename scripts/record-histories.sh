#!/usr/bin/env bash
# Records replay fixtures: runs scripts/testdata/record.yaml on a dev server
# of its own (free ports), drives it through starts with retries, crashes,
# group restarts, a give-up and its cooldown, a manual restart, stop/start,
# a rollout, a child workflow terminated by hand, a re-applied spec and a
# delete, (scripts/testdata/record-ops.yaml) a supervisor through the
# operator's stop, start and restart, (record-window.yaml) a supervisor
# that starts more children than its start window, and (record-groups.yaml)
# a root of more groups than its window; it writes each workflow's history to
# workflows/testdata (STEWARD_RECORD_OUT: another directory).
# Usage: make build temporal-cli && scripts/record-histories.sh
set -euo pipefail
cd "$(dirname "$0")/.."
out=${STEWARD_RECORD_OUT:-workflows/testdata} # elsewhere, to record without replacing
work=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
port=$(free_port)
addr=127.0.0.1:$port
pids=()
cleanup() {
  for ((i=${#pids[@]}-1; i>=0; i--)); do kill -TERM "${pids[$i]}" 2>/dev/null || true; wait "${pids[$i]}" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
bin/temporal server start-dev --ip 127.0.0.1 --port "$port" --headless --log-level error \
  --db-filename "$work/t.db" --http-port "$(free_port)" --metrics-port "$(free_port)" \
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
  --dynamic-config-value history.timerProcessorMaxPollRPS=1000 >"$work/server.log" 2>&1 &
pids+=($!)
until bin/temporal operator cluster health --address "$addr" >/dev/null 2>&1; do sleep 0.3; done
bin/worker --address "$addr" --metrics "" --log-dir "$work/logs" >"$work/worker.log" 2>&1 &
pids+=($!)
s() { bin/starter --address "$addr" "$@"; }
t() { bin/temporal --address "$addr" "$@"; }
s apply -f scripts/testdata/record-ops.yaml --wait
s apply -f scripts/testdata/record-window.yaml --wait # the start window (supervisor version 6)
s apply -f scripts/testdata/record-groups.yaml --wait # groups hold their slots until their subtrees started (version 7)
s stop ops; sleep 3; s start ops; sleep 3; s restart ops; sleep 3
s stop ops/sub; sleep 2; s start ops/sub; sleep 2
s apply -f scripts/testdata/record.yaml
sleep 4
s restart rec/flaky
sleep 1
s stop rec/chain/x; sleep 2; s start rec/chain/x; sleep 2
s rollout restart rec/chain --chunk 1 || true
t workflow terminate -w rec/chain/x --reason "terminated by hand (recording)" >/dev/null
sleep 3
sed 's/delay: 1500ms/delay: 1s/' scripts/testdata/record.yaml >"$work/changed.yaml"
s apply -f "$work/changed.yaml"
sleep 20 # the group's crasher: group restarts, a give-up, its cooldown, escalation
s status || true
show() { t workflow show -w "$1" -o json >"$out/history-$2.json"; }
mkdir -p "$out"
show rec/group group
# The same two again, first recorded once workers' starts were reported by
# their start activities (activities.Reporter), beside the older recordings.
show rec/group reported-group
show rec/chain/y reported-y
show rec/group/crasher crasher
show rec/chain chain
show rec/chain/y y
show rollout:rec/chain rollout
show ops ops
show win window
show grp groups
show ops/sub ops-sub
s delete rec
sleep 5
show rec root
show rec/flaky flaky
echo "recorded: $(ls "$out" | tr '\n' ' ')"
