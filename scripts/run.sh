#!/usr/bin/env bash
# make run: the dev server (with the Web UI, persisted under .data/), one
# steward worker, and the demo tree. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

PORT="${STEWARD_PORT:-7233}"
UI_PORT="${STEWARD_UI_PORT:-8233}"
CONSOLE_PORT="${STEWARD_CONSOLE_PORT:-8090}"
ADDRESS="localhost:${PORT}"
SPEC="${STEWARD_SPEC:-examples/demo.yaml}"
DATA=.data
# The worker refuses a policy that another user may change, or that sits in
# a directory another user may write (a umask of 002 makes both).
mkdir -p "$DATA" && chmod 700 "$DATA"

port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
for p in "$PORT" "$UI_PORT" "$CONSOLE_PORT"; do
  if port_busy "$p"; then
    echo "port $p is in use: is a Temporal server already running? Stop it, or set STEWARD_PORT / STEWARD_UI_PORT / STEWARD_CONSOLE_PORT." >&2
    exit 1
  fi
done

pids=()
cleanup() {
  trap - INT TERM EXIT
  echo
  echo "Stopping worker and dev server..."
  for ((i=${#pids[@]}-1; i>=0; i--)); do
    kill -TERM "${pids[$i]}" 2>/dev/null || true
    wait "${pids[$i]}" 2>/dev/null || true
  done
  stop_services
  echo "Stopped. Workflow state is kept in $DATA/temporal.db; the next make run resumes it."
}

# Services outlive their worker (the next worker adopts them); make run
# stops the demo's when it ends, by the worker's records of them (pid and
# start time: never a reused pid). Their records stay: the next make run's
# worker finds them ended and starts them again at once.
stop_services() {
  local f rec pid ticks stat rest fields victims=()
  for f in "$DATA"/state/*/*.json; do
    [ -e "$f" ] || continue
    rec=$(<"$f")
    pid=$(sed -n 's/.*"pid":\([0-9]*\).*/\1/p' <<<"$rec")
    ticks=$(sed -n 's/.*"ticks":\([0-9]*\).*/\1/p' <<<"$rec")
    [ -n "$pid" ] && [ -r "/proc/$pid/stat" ] || continue
    stat=$(<"/proc/$pid/stat") || continue
    rest=${stat##*) }
    read -r -a fields <<<"$rest"
    [ "${fields[19]:-}" = "$ticks" ] || continue
    kill -TERM -- "-$pid" 2>/dev/null && victims+=("$pid")
  done
  [ ${#victims[@]} -gt 0 ] || return 0
  echo "Stopping the demo's services (${#victims[@]})..."
  for _ in $(seq 1 50); do
    local alive=0
    for pid in "${victims[@]}"; do kill -0 "$pid" 2>/dev/null && alive=1; done
    [ $alive = 0 ] && return 0
    sleep 0.1
  done
  for pid in "${victims[@]}"; do kill -KILL -- "-$pid" 2>/dev/null || true; done
}
trap cleanup EXIT
trap 'cleanup; exit 0' INT TERM

# With STEWARD_ENCRYPTION_KEY_FILE set, worker and starter encrypt every
# payload (they read the variable themselves), and the Web UI decodes them
# through a codec server on loopback.
CODEC_ARGS=()
if [ -n "${STEWARD_ENCRYPTION_KEY_FILE:-}" ]; then
  CODEC_PORT="${STEWARD_CODEC_PORT:-$((UI_PORT + 1))}"
  port_busy "$CODEC_PORT" && { echo "port $CODEC_PORT (the codec server) is in use: set STEWARD_CODEC_PORT." >&2; exit 1; }
  echo "Starting the codec server on 127.0.0.1:$CODEC_PORT (payloads encrypted with $STEWARD_ENCRYPTION_KEY_FILE)..."
  bin/starter codec-server --listen "127.0.0.1:$CODEC_PORT" \
    --ui-origin "http://localhost:$UI_PORT,http://127.0.0.1:$UI_PORT" >"$DATA/codec-server.log" 2>&1 &
  pids+=($!)
  CODEC_ARGS=(--ui-codec-endpoint "http://127.0.0.1:$CODEC_PORT")
fi

# The server settings measured in docs/design.md: faster dispatch, SQLite WAL (it
# survives a process crash, not a power cut), one task-queue partition; and
# timers fired within 100 ms of their time, not 1 s (a 100 ms backoff took
# 1.1 s; docs/benchmarks.md).
echo "Starting the Temporal dev server on $ADDRESS (Web UI on http://localhost:$UI_PORT)..."
bin/temporal server start-dev \
  --port "$PORT" --ui-port "$UI_PORT" \
  --db-filename "$DATA/temporal.db" \
  --log-level warn \
  --sqlite-pragma journal_mode=wal --sqlite-pragma synchronous=normal \
  --dynamic-config-value history.transferProcessorMaxPollRPS=1000 \
  --dynamic-config-value history.timerProcessorMaxPollRPS=1000 \
  --dynamic-config-value 'history.timerProcessorMaxTimeShift="100ms"' \
  --dynamic-config-value matching.numTaskqueueReadPartitions=1 \
  --dynamic-config-value matching.numTaskqueueWritePartitions=1 \
  --dynamic-config-value worker.schedulerNamespaceStartWorkflowRPS=200 \
  "${CODEC_ARGS[@]}" \
  >"$DATA/server.log" 2>&1 &
pids+=($!)

for i in $(seq 1 120); do
  if bin/temporal operator cluster health --address "$ADDRESS" >/dev/null 2>&1; then break; fi
  if ! kill -0 "${pids[-1]}" 2>/dev/null; then
    echo "The dev server exited; see $DATA/server.log:" >&2; tail -20 "$DATA/server.log" >&2; exit 1
  fi
  sleep 0.5
done

# The demo host's command policy (docs/security.md): of every command a
# spec may name, only the demo's own service runs here. It names this
# checkout's absolute path, so it is written at every run.
cat >"$DATA/policy.yaml" <<YAML
# The demo host's policy, written by scripts/run.sh: only the hello service
# (examples/hello, built into bin/hello) may run here, and the http worker
# hello-health may reach only it.
commands:
  - $PWD/bin/hello
urls:
  - http://127.0.0.1:18081/
YAML
chmod 600 "$DATA/policy.yaml"

echo "Starting the steward worker (logs: $DATA/worker.log; policy: $DATA/policy.yaml)..."
bin/worker --address "$ADDRESS" --log-dir "$DATA/logs" --state-dir "$DATA/state" --policy "$DATA/policy.yaml" >"$DATA/worker.log" 2>&1 &
pids+=($!)

echo "Applying $SPEC..."
bin/starter --address "$ADDRESS" apply -f "$SPEC" --wait --timeout 2m || true
echo
bin/starter --address "$ADDRESS" status || true

# The web console (docs/console.md), actions allowed with a token it makes.
bin/starter --address "$ADDRESS" console --listen "127.0.0.1:$CONSOLE_PORT" \
  --web-ui "http://localhost:$UI_PORT" --allow-actions >"$DATA/console.log" 2>&1 &
pids+=($!)
CONSOLE_TOKEN=""
for _ in $(seq 1 50); do
  CONSOLE_TOKEN="$(sed -n 's/^token: //p' "$DATA/console.log")"
  [ -n "$CONSOLE_TOKEN" ] && break
  sleep 0.2
done
root="$(sed -n 's/^name:[[:space:]]*\([^[:space:]#]*\).*/\1/p' "$SPEC" | head -1)"
cat <<TXT

steward is running. Web UI: http://localhost:$UI_PORT/namespaces/default/workflows
Console: http://127.0.0.1:$CONSOLE_PORT/ (actions need the token: $CONSOLE_TOKEN)

Try, in another terminal$( [ "$PORT" = 7233 ] || echo ", after: export TEMPORAL_ADDRESS=$ADDRESS"):
  bin/starter status                      # the tree, readable
  bin/starter status $root/shop/web -o json   # one worker, as JSON
  bin/starter stop $root/shop/web             # desired stopped
  bin/starter start $root/shop/web            # desired running
  bin/starter restart $root/shop/api          # a manual restart
  bin/starter reload $root/hello              # SIGHUP: same pid, "reloads" counted
  bin/starter top                             # CPU and memory of the process services
  curl -s http://127.0.0.1:18081/         # the hello service steward runs
  kill -9 \$(pgrep -f bin/hello)           # kill it, then: bin/starter status $root/hello
  bin/temporal workflow signal --workflow-id $root/shop/web --name desired --input '"stopped"'
  bin/temporal workflow query --workflow-id $root --name status
  bin/temporal workflow list --query "StewardState='running'"
  # a spec sent around the starter, refused by the host's policy (hello keeps running):
  bin/temporal workflow signal --workflow-id $root/hello --name spec \
    --input '{"spec":{"name":"hello","kind":"process","process":{"command":"/bin/sh","args":["-c","id"]}}}'
  bin/starter status $root/hello              # running, "restart refused: policy ..."

Logs: $DATA/server.log, $DATA/worker.log. Press Ctrl-C to stop everything.
TXT

# Wait until Ctrl-C or until the server or the worker exits.
while kill -0 "${pids[-3]}" 2>/dev/null && kill -0 "${pids[-2]}" 2>/dev/null; do
  sleep 1
done
echo "The dev server or the worker exited; see $DATA/*.log." >&2
exit 1
