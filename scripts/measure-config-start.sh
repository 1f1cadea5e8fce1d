#!/usr/bin/env bash
# Measures a worker's start to its first poll, configured by flags and by
# the same settings in a --config file (docs/production.md): a dev server,
# then RUNS starts of each, alternating, each timed from the process's
# start to the SDK's "Started Worker" line for the shared queue; prints the
# median and the spread of each.
# Usage: make build temporal-cli && scripts/measure-config-start.sh [RUNS]   (RUNS: 9)
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${1:-9}
W=$(mktemp -d)
SERVER_PID=""
cleanup() {
	devserver_stop
	rm -rf "$W"
}
trap cleanup EXIT
. scripts/devserver.sh
devserver_start "$W" || { echo "measure-config-start: the dev server did not start" >&2; exit 1; }
cat >"$W/worker.yaml" <<YAML
address: 127.0.0.1:$PORT
host: measure
state-dir: $W/state
log-dir: $W/logs
metrics: ""
log-level: info
YAML
chmod 600 "$W/worker.yaml" # the worker refuses a config others may write (umask 002)
flags=(--address "127.0.0.1:$PORT" --host measure --state-dir "$W/state" --log-dir "$W/logs" --metrics "" --log-level info)
# one start, timed: ms from the exec to the shared queue's "Started Worker"
once() {
	local log="$W/run.log" t0 t1 pid
	: >"$log"
	t0=$(date +%s%N)
	bin/worker "$@" >"$log" 2>&1 &
	pid=$!
	until grep -q '"Started Worker".*"TaskQueue":"steward"' "$log" 2>/dev/null; do
		kill -0 "$pid" 2>/dev/null || { cat "$log" >&2; exit 1; }
		sleep 0.002
	done
	t1=$(date +%s%N)
	kill -TERM "$pid"; wait "$pid" 2>/dev/null || true
	echo $(((t1 - t0) / 1000000))
}
once "${flags[@]}" >/dev/null # a warm-up: the server's first worker registers the search attributes
: >"$W/flags"; : >"$W/config"
for _ in $(seq 1 "$RUNS"); do
	once "${flags[@]}" >>"$W/flags"
	once --config "$W/worker.yaml" >>"$W/config"
done
stats() { sort -n "$1" | awk '{a[NR]=$1} END {printf "median %d ms (min %d, max %d, %d runs)", a[int((NR+1)/2)], a[1], a[NR], NR}'; }
echo "flags:    $(stats "$W/flags")"
echo "--config: $(stats "$W/config")"
