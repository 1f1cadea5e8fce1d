#!/usr/bin/env bash
# Measures how long a restarted worker takes to adopt its host's services:
# from the new worker process's start to its "recovered" log line, five
# times, with three process services (docs/upgrading.md).
# Usage: make build temporal-cli && scripts/measure-adoption.sh
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
PORT=$(free_port)
S="bin/starter --address 127.0.0.1:$PORT"
(setsid bin/temporal server start-dev --ip 127.0.0.1 --port $PORT --http-port "$(free_port)" --metrics-port "$(free_port)" --headless --log-level error --db-filename $W/t.db >$W/server.log 2>&1 & echo $! > $W/server.pid)
until bin/temporal operator cluster health --address 127.0.0.1:$PORT >/dev/null 2>&1; do sleep 0.3; done
start_worker() { (setsid bin/worker --address 127.0.0.1:$PORT --log-dir $W/logs --state-dir $W/state --metrics "" --log-level info > $W/worker-$1.log 2>&1 & echo $! > $W/worker.pid); }
start_worker 0
cat > $W/t.yaml <<'Y'
name: up
children:
  - {name: a, kind: process, process: {command: sleep, args: ["300"], startSeconds: 100ms}}
  - {name: b, kind: process, process: {command: sleep, args: ["300"], startSeconds: 100ms}}
  - {name: c, kind: process, process: {command: sleep, args: ["300"], startSeconds: 100ms}}
Y
$S apply -f $W/t.yaml --wait >/dev/null
for i in 1 2 3 4 5; do
  kill -TERM $(cat $W/worker.pid); while kill -0 $(cat $W/worker.pid) 2>/dev/null; do sleep 0.05; done
  t0=$(date +%s.%N); start_worker $i
  until grep -q "recovered the services" $W/worker-$i.log 2>/dev/null; do sleep 0.02; done
  ts=$(grep "recovered the services" $W/worker-$i.log | python3 -c "import json,sys; print(json.loads(sys.stdin.readline())['ts'])")
  python3 -c "print('run $i: adopted %s s after the worker process started' % round($ts-$t0,3))"
  grep "recovered the services" $W/worker-$i.log | python3 -c "import json,sys; d=json.loads(sys.stdin.readline()); print('   adopted', d['adopted'], 'ended', d['endedMeanwhile'])"
done
$S status up | tail -3
$S delete up >/dev/null
kill -TERM $(cat $W/worker.pid); sleep 1; kill -TERM $(cat $W/server.pid); sleep 1
rm -rf $W
