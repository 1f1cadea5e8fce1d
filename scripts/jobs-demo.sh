#!/usr/bin/env bash
# The output docs/jobs.md shows: a dev server of its own, a worker, a tree
# with a periodic job, a failing job with pauseOnFailure and a once job
# ordering a service; then `starter jobs`, `starter runs`, `starter run
# --wait` and a failed run's log, as an operator sees them.
# Usage: make build temporal-cli && scripts/jobs-demo.sh
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d)
SERVER_PID=""
WORKER_PID=""
cleanup() {
	[ -z "$WORKER_PID" ] || { kill "$WORKER_PID" 2>/dev/null; wait "$WORKER_PID" 2>/dev/null || true; }
	devserver_stop
	rm -rf "$W"
}
trap cleanup EXIT
. scripts/devserver.sh
devserver_start "$W" || { echo "jobs-demo: the dev server did not start" >&2; exit 1; }
A=127.0.0.1:$PORT
bin/worker --address "$A" --log-level error --metrics "" --state-dir "$W/state" --log-dir "$W/logs" >"$W/worker.log" 2>&1 &
WORKER_PID=$!
cat >"$W/shop.yaml" <<YAML
name: shop
children:
  - name: migrate
    kind: process
    process: {command: sh, args: ["-c", "echo migrating; sleep 1; echo done"]}
    job: {once: true}
  - name: web
    kind: process
    process: {command: sleep, args: ["3600"]}
    dependsOn: [migrate]
  - name: report
    kind: process
    process: {command: sh, args: ["-c", "date; echo report written"]}
    job: {every: 5s}
  - name: backup
    kind: process
    process: {command: sh, args: ["-c", "echo 'backup: /srv/backups is full' >&2; exit 3"]}
    retry: {maxAttempts: 1}
    job: {schedule: "* * * * *", pauseOnFailure: true}
YAML
s() { echo "\$ starter $*"; bin/starter --address "$A" "$@"; echo; }
s apply -f "$W/shop.yaml" --wait --timeout 2m || true
sleep 65 # a minute: backup's schedule comes due once
s status shop
s jobs
s runs shop/report --limit 3
s run shop/report --wait || true
s runs shop/backup
s logs shop/backup || true
# pauseOnFailure: the schedule pauses itself when it next looks (at its
# next due time at the latest)
for _ in $(seq 1 80); do
	bin/starter --address "$A" jobs shop/backup -o json | grep -q '"paused": true' && break
	sleep 1
done
s jobs shop/backup
s start shop/backup
sleep 2
s jobs shop/backup -o json
