#!/usr/bin/env bash
# Measures what services cost the Temporal server (docs/production.md,
# "Sizing"): a dev server on SQLite, one worker, a tree of N stub services
# in groups of 100; the server's database bytes, server CPU seconds and
# history events per service at apply, and again per restart (a rollout
# restart of every service), then the server's CPU at rest.
# Usage: make build temporal-cli && [OBSERVE=1m] scripts/measure-sizing.sh [N]
# (N: 1000; OBSERVE: the stubs' observe interval, default 1h, so that the
# figures are of applies and restarts alone; the spec's default is 1m)
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-1000}
GROUP=100
OBSERVE=${OBSERVE:-1h}
W=$(mktemp -d)
SERVER_PID="" WORKER_PID=""
cleanup() {
	local rc=$?
	if [ "$rc" != 0 ]; then
		echo "measure-sizing: failed (exit $rc); the server's and the worker's logs:" >&2
		tail -20 "$W/server.log" "$W/worker.log" >&2 || true
	fi
	[ -z "$WORKER_PID" ] || { kill -TERM "$WORKER_PID" 2>/dev/null || true; }
	devserver_stop
	rm -rf "$W"
}
trap cleanup EXIT
. scripts/devserver.sh
devserver_start "$W" || exit 1
ADDR=127.0.0.1:$PORT
setsid bin/worker --address "$ADDR" --metrics "" --log-dir "$W/logs" --state-dir "$W/state" --log-level warn >"$W/worker.log" 2>&1 &
WORKER_PID=$!
S="bin/starter --address $ADDR"

db_bytes() { cat "$W"/temporal.db* 2>/dev/null | wc -c; }
cpu_s() { awk '{printf "%.2f", ($14 + $15) / 100}' "/proc/$SERVER_PID/stat"; } # utime + stime, clock ticks of 1/100 s
events() { # history events of every service's workflow: sum over a sample of 20
	local sum=0 i n
	for i in $(seq 1 20); do
		n=$(bin/temporal workflow show --address "$ADDR" -w "sizing/g$(((i - 1) % (N / GROUP) + 1))/s$i" -o json | grep -c '"eventId"' || true)
		sum=$((sum + n))
	done
	echo "scale=2; $sum / 20" | bc
}
sleep 3
{
	echo "name: sizing"
	echo "children:"
	for g in $(seq 1 $((N / GROUP))); do
		echo "  - name: g$g"
		echo "    children:"
		for i in $(seq 1 $GROUP); do echo "      - {name: s$i, kind: stub, observe: {interval: $OBSERVE}}"; done
	done
} >"$W/tree.yaml"

ca=$(cpu_s); sleep 60; cb=$(cpu_s) # the server alone, at rest
b0=$(db_bytes); c0=$(cpu_s)
$S apply -f "$W/tree.yaml" --wait --timeout 30m >/dev/null
sleep 5 # reports settle
b1=$(db_bytes); c1=$(cpu_s); e1=$(events)
$S rollout restart sizing --chunk 100 >/dev/null
sleep 5
b2=$(db_bytes); c2=$(cpu_s); e2=$(events)
sleep 60
c3=$(cpu_s)
sleep 120
c4=$(cpu_s)
echo "services: $N (stubs observed every $OBSERVE, groups of $GROUP), dev server on SQLite"
echo "apply:   $(((b1 - b0) / N)) database bytes, $(echo "scale=2; ($c1 - $c0) * 1000 / $N" | bc) server CPU ms, $e1 history events per service"
echo "restart: $(((b2 - b1) / N)) database bytes, $(echo "scale=2; ($c2 - $c1) * 1000 / $N" | bc) server CPU ms, $(echo "scale=2; $e2 - $e1" | bc) history events per service"
echo "at rest: server CPU $(echo "scale=2; ($c4 - $c3) * 100 / 120" | bc) % of a core (without services: $(echo "scale=2; ($cb - $ca) * 100 / 60" | bc) %)"
$S delete sizing >/dev/null
