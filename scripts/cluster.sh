#!/usr/bin/env bash
# scripts/cluster.sh up [--foreground] [--tls] | down | status
#
# A real Temporal cluster on this machine: the Temporal server (frontend,
# history, matching and worker services in one process) built from its Go
# module, on the machine's PostgreSQL, with STEWARD_CLUSTER_SHARDS history
# shards, plus the Web UI server. What the dev server (one shard, SQLite) is
# not: see docs/cluster.md.
#
#   STEWARD_CLUSTER_PORT     frontend gRPC port (7233; at most 32757). The cluster uses the
#                            ports PORT..PORT+10: frontend, history, matching,
#                            worker, frontend HTTP, PostgreSQL, metrics, and
#                            the four membership ports. Two clusters whose
#                            ports are 11 or more apart do not collide.
#   STEWARD_CLUSTER_UI_PORT  the Web UI (8233); "off": no UI
#   STEWARD_CLUSTER_DIR      data, configs, logs (.data/cluster). A later up
#                            resumes on the same data.
#   STEWARD_CLUSTER_SHARDS   history shards (4); fixed when the data is created
#   STEWARD_CLUSTER_PG_USER  the user PostgreSQL runs as when this script runs
#                            as root (postgres; PostgreSQL refuses root)
#
# up: builds what is missing into bin/ (once), creates the data on the first
# run, starts PostgreSQL, the server and the UI, creates the `default`
# namespace and steward's search attributes, waits until it serves, prints the
# address and returns. With --foreground (make cluster) it then waits, and
# Ctrl-C takes the cluster down.
# down: stops the UI, the server and PostgreSQL (the data stays).
# status: what runs, and whether the frontend answers.
#
# --tls: mutual TLS on every port of the server (its gRPC frontend, its HTTP
# API, and between its own services): a client must present a certificate
# signed by the cluster's CA. scripts/mkcerts makes the CA and the server's
# and a client's certificates into $STEWARD_CLUSTER_DIR/tls once (kept
# across ups); the Web UI connects with the client's. The choice is kept:
# a later up without --tls turns TLS off again, and status and down follow
# whichever the last up chose. How workers and the starter connect: up
# prints it; docs/cluster.md.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

SERVER_VERSION=v1.29.1 # go.temporal.io/server: the server and its SQL tool
UI_VERSION=v2.42.1     # github.com/temporalio/ui-server/v2: the one the pinned CLI embeds

PORT="${STEWARD_CLUSTER_PORT:-7233}"
UI_PORT="${STEWARD_CLUSTER_UI_PORT:-8233}"
SHARDS="${STEWARD_CLUSTER_SHARDS:-4}"
DIR="${STEWARD_CLUSTER_DIR:-.data/cluster}"
PG_USER_WANTED="${STEWARD_CLUSTER_PG_USER:-postgres}"

BIN="$ROOT/bin"
TEMPORAL="$BIN/temporal"
SERVER_BIN="$BIN/temporal-server"
SQL_TOOL="$BIN/temporal-sql-tool"
UI_BIN="$BIN/temporal-ui-server"

die() { echo "cluster: $*" >&2; exit 1; }
say() { echo "cluster: $*"; }

# Temporal's SQL schema keeps membership ports (PORT+7..PORT+10) in a
# smallint: the server dies at start with a port above 32767.
[[ "$PORT" =~ ^[0-9]+$ ]] && ((PORT >= 1024 && PORT <= 32757)) ||
  die "STEWARD_CLUSTER_PORT=$PORT: want a port from 1024 to 32757 (the cluster uses PORT..PORT+10, and Temporal on SQL keeps membership ports in a smallint, at most 32767)"
[[ "$UI_PORT" == off || ( "$UI_PORT" =~ ^[0-9]+$ && UI_PORT -ge 1 && UI_PORT -le 65535 ) ]] ||
  die "STEWARD_CLUSTER_UI_PORT=$UI_PORT: want a port or \"off\""
[[ "$SHARDS" =~ ^[0-9]+$ ]] && ((SHARDS >= 1 && SHARDS <= 16384)) ||
  die "STEWARD_CLUSTER_SHARDS=$SHARDS: want a number from 1 to 16384"

HISTORY_PORT=$((PORT + 1))
MATCHING_PORT=$((PORT + 2))
WORKER_PORT=$((PORT + 3))
HTTP_PORT=$((PORT + 4))
PG_PORT=$((PORT + 5))
METRICS_PORT=$((PORT + 6))
MEMBER_PORT=$((PORT + 7)) # frontend; history, matching, worker: +8, +9, +10
ADDRESS="127.0.0.1:$PORT"

mkdir -p "$DIR"
DIR="$(cd "$DIR" && pwd)"
PGDATA="$DIR/postgres"
# Out of the PostgreSQL user's reach, $DIR links to where the data is.
if [ -L "$PGDATA" ]; then PGDATA="$(readlink "$PGDATA")"; fi
SERVER_PID="$DIR/server.pid"
CERTS="$DIR/tls"
# TLS_ARGS: the temporal CLI's flags for this cluster (none without TLS).
TLS_ARGS=()
tls_on() { [ -f "$DIR/tls-on" ]; }
set_tls_args() {
  if tls_on; then
    TLS_ARGS=(--tls-cert-path "$CERTS/client.pem" --tls-key-path "$CERTS/client-key.pem"
      --tls-ca-path "$CERTS/ca.pem" --tls-server-name localhost)
  else
    TLS_ARGS=()
  fi
}
set_tls_args
UI_PID="$DIR/ui.pid"

# --- PostgreSQL -------------------------------------------------------------

# find_pg sets PG_BIN, the directory of pg_ctl and initdb, once. (Outside
# any trap: a command substitution in bash's INT trap handler ends with
# status 130, which set -e turns into an exit midway through down.)
PG_BIN=""
find_pg() {
  [ -z "$PG_BIN" ] || return 0
  local p
  if p="$(command -v pg_ctl 2>/dev/null)" && [ -n "$p" ]; then PG_BIN="${p%/*}"; return 0; fi
  p="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)"
  if [ -n "$p" ] && [ -x "$p/pg_ctl" ]; then PG_BIN="$p"; return 0; fi
  die "PostgreSQL not found (no pg_ctl on PATH or in /usr/lib/postgresql/*/bin). On Debian: apt-get install postgresql (the server package; postgresql-client alone is not enough)"
}

IS_ROOT=0
[ "$(id -u)" != 0 ] || IS_ROOT=1
PG_GID="$(id -g "$PG_USER_WANTED" 2>/dev/null || true)"

# as_pg runs a command as the PostgreSQL user: that user when we are root,
# ourselves otherwise.
as_pg() {
  if [ "$IS_ROOT" = 1 ]; then
    setpriv --reuid="$PG_USER_WANTED" --regid="$PG_GID" --init-groups -- "$@"
  else
    "$@"
  fi
}

pg_prepare_dir() {
  if [ "$(id -u)" != 0 ]; then
    mkdir -p "$PGDATA"
    return
  fi
  id "$PG_USER_WANTED" >/dev/null 2>&1 ||
    die "user $PG_USER_WANTED does not exist: PostgreSQL refuses to run as root (set STEWARD_CLUSTER_PG_USER to an unprivileged user)"
  if [ "$PGDATA" != "$DIR/postgres" ] || as_pg test -x "$DIR"; then
    [ -e "$PGDATA" ] || { mkdir -p "$PGDATA"; chown "$PG_USER_WANTED:" "$PGDATA"; }
    return
  fi
  # $DIR sits under a directory the PostgreSQL user cannot enter (/root, say):
  # its data goes to a place of its own, linked from $DIR.
  local own
  own="/var/lib/steward-cluster/$(printf %s "$DIR" | sha256sum | cut -c1-16)"
  mkdir -p "$own"
  chown "$PG_USER_WANTED:" "$own"
  chmod 700 "$own"
  ln -sfn "$own" "$PGDATA"
  say "$DIR is not reachable by $PG_USER_WANTED: PostgreSQL's data is in $own (linked as $PGDATA)"
  PGDATA="$own"
}

pg_start() {
  find_pg
  local bindir="$PG_BIN"
  pg_prepare_dir
  if [ ! -s "$DIR/pg-password" ]; then
    (umask 077; head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n' >"$DIR/pg-password")
  fi
  if [ ! -f "$PGDATA/PG_VERSION" ]; then
    say "creating PostgreSQL's data in $PGDATA"
    local pw
    pw="$(mktemp)"
    cp "$DIR/pg-password" "$pw"
    [ "$(id -u)" = 0 ] && chown "$PG_USER_WANTED:" "$pw"
    as_pg "$bindir/initdb" -D "$PGDATA" -U temporal --pwfile="$pw" --auth=scram-sha-256 \
      -E UTF8 --locale=C.UTF-8 >"$DIR/initdb.log" 2>&1 || { rm -f "$pw"; cat "$DIR/initdb.log" >&2; die "initdb failed"; }
    rm -f "$pw"
  fi
  if as_pg "$bindir/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    return
  fi
  port_free "$PG_PORT" || die "port $PG_PORT (PostgreSQL: STEWARD_CLUSTER_PORT+5) is in use"
  # Loopback only; the socket in the data directory, not /var/run.
  as_pg "$bindir/pg_ctl" -D "$PGDATA" -l "$PGDATA/server.log" -w -t 60 start \
    -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -k $PGDATA -c max_connections=200" >/dev/null ||
    { tail -20 "$PGDATA/server.log" >&2; die "PostgreSQL did not start (log: $PGDATA/server.log)"; }
}

pg_stop() {
  [ -f "$PGDATA/PG_VERSION" ] || return 0
  find_pg
  local bindir="$PG_BIN"
  if as_pg "$bindir/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    as_pg "$bindir/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null && say "PostgreSQL stopped"
  fi
}

sql_tool() {
  "$SQL_TOOL" --plugin postgres12 --ep 127.0.0.1 -p "$PG_PORT" -u temporal \
    --pw "$(cat "$DIR/pg-password")" "$@"
}

# schema creates both databases once, then brings their schemas to the
# version this server wants (a no-op when they are there already).
schema() {
  local db name
  for db in temporal temporal_visibility; do
    name=temporal
    [ "$db" = temporal_visibility ] && name=visibility
    if [ ! -f "$DIR/schema-$db.done" ]; then
      sql_tool --db "$db" create-database >>"$DIR/schema.log" 2>&1 || true # there already after an interrupted up
      sql_tool --db "$db" setup-schema -v 0.0 >>"$DIR/schema.log" 2>&1 ||
        grep -q "already exists" "$DIR/schema.log" || die "setting up $db failed: see $DIR/schema.log"
      touch "$DIR/schema-$db.done"
    fi
    sql_tool --db "$db" update-schema --schema-name "postgresql/v12/$name" >>"$DIR/schema.log" 2>&1 ||
      die "updating the schema of $db failed: see $DIR/schema.log"
  done
}

# --- builds -----------------------------------------------------------------

# go_install PKG@VERSION DEST: go install into a scratch GOBIN, then move the
# binary to DEST (go install names it after its package).
go_install() {
  local tmp
  tmp="$(mktemp -d)"
  GOBIN="$tmp" go install "$1" || { rm -rf "$tmp"; return 1; }
  mv "$tmp"/* "$2"
  rm -rf "$tmp"
}

build() {
  mkdir -p "$BIN"
  if [ ! -x "$TEMPORAL" ]; then
    make -s temporal-cli
  fi
  local start=$SECONDS
  if [ ! -x "$SERVER_BIN" ] || [ ! -x "$SQL_TOOL" ]; then
    say "building the Temporal server $SERVER_VERSION and its SQL tool into bin/: once only, about 4 minutes on 2 cores..."
    go_install "go.temporal.io/server/cmd/server@$SERVER_VERSION" "$SERVER_BIN"
    go_install "go.temporal.io/server/cmd/tools/sql@$SERVER_VERSION" "$SQL_TOOL"
  fi
  if [ "$UI_PORT" != off ] && [ ! -x "$UI_BIN" ]; then
    say "building the Temporal Web UI server $UI_VERSION into bin/..."
    go_install "github.com/temporalio/ui-server/v2/cmd/server@$UI_VERSION" "$UI_BIN"
  fi
  if ((SECONDS - start > 1)); then say "built in $((SECONDS - start)) s"; fi
}

# --- the server and the UI ----------------------------------------------------

port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# running PIDFILE BINARY: the PID in PIDFILE is alive and runs BINARY.
running() {
  local pid
  [ -f "$1" ] || return 1
  pid="$(cat "$1")"
  [ -n "$pid" ] && [ "$(readlink "/proc/$pid/exe" 2>/dev/null)" = "$2" ]
}

# tls_yaml is the server's global.tls block (nothing without --tls): the
# same certificate for the frontend and between the server's services,
# client certificates required on both. frontend.client is what the
# server's own system worker dials the frontend with: without its
# rootCaFiles it would dial in plaintext, and without serverName it cannot
# check the certificate (it dials a membership address, not a host name).
tls_yaml() {
  tls_on || return 0
  echo "  tls:"
  tls_group internode
  tls_group frontend
}

# tls_group NAME: one group of global.tls, the same for both groups.
tls_group() {
  cat <<YAML
    $1:
      server:
        certFile: "$CERTS/server.pem"
        keyFile: "$CERTS/server-key.pem"
        requireClientAuth: true
        clientCaFiles: ["$CERTS/ca.pem"]
      client:
        serverName: localhost
        rootCaFiles: ["$CERTS/ca.pem"]
YAML
}

write_config() {
  mkdir -p "$DIR/config"
  if [ -f "$DIR/shards" ] && [ "$(cat "$DIR/shards")" != "$SHARDS" ]; then
    die "this cluster's data was created with $(cat "$DIR/shards") history shards; STEWARD_CLUSTER_SHARDS=$SHARDS cannot change that (take a new STEWARD_CLUSTER_DIR)"
  fi
  echo "$SHARDS" >"$DIR/shards"
  local pw
  pw="$(cat "$DIR/pg-password")"
  (umask 077; cat >"$DIR/config/development.yaml" <<YAML
# Written by scripts/cluster.sh at every up (edit the script, not this file).
log:
  stdout: true
  level: warn
persistence:
  defaultStore: postgres-default
  visibilityStore: postgres-visibility
  numHistoryShards: $SHARDS
  datastores:
    postgres-default:
      sql:
        pluginName: postgres12
        databaseName: temporal
        connectAddr: "127.0.0.1:$PG_PORT"
        connectProtocol: tcp
        user: temporal
        password: "$pw"
        maxConns: 20
        maxIdleConns: 20
        maxConnLifetime: 1h
    postgres-visibility:
      sql:
        pluginName: postgres12
        databaseName: temporal_visibility
        connectAddr: "127.0.0.1:$PG_PORT"
        connectProtocol: tcp
        user: temporal
        password: "$pw"
        maxConns: 10
        maxIdleConns: 10
        maxConnLifetime: 1h
global:
  membership:
    maxJoinDuration: 30s
    broadcastAddress: 127.0.0.1
$(tls_yaml)
  metrics:
    prometheus:
      framework: tally
      timerType: histogram
      listenAddress: "127.0.0.1:$METRICS_PORT"
services:
  frontend:
    rpc: {grpcPort: $PORT, membershipPort: $MEMBER_PORT, bindOnLocalHost: true, httpPort: $HTTP_PORT}
  history:
    rpc: {grpcPort: $HISTORY_PORT, membershipPort: $((MEMBER_PORT + 1)), bindOnLocalHost: true}
  matching:
    rpc: {grpcPort: $MATCHING_PORT, membershipPort: $((MEMBER_PORT + 2)), bindOnLocalHost: true}
  worker:
    rpc: {grpcPort: $WORKER_PORT, membershipPort: $((MEMBER_PORT + 3)), bindOnLocalHost: true}
clusterMetadata:
  enableGlobalNamespace: false
  failoverVersionIncrement: 10
  masterClusterName: active
  currentClusterName: active
  clusterInformation:
    active:
      enabled: true
      initialFailoverVersion: 1
      rpcName: frontend
      rpcAddress: "127.0.0.1:$PORT"
dcRedirectionPolicy:
  policy: noop
dynamicConfigClient:
  filepath: "$DIR/config/dynamicconfig.yaml"
  pollInterval: 10s
YAML
  )
  # The dispatch setting of docs/design.md's dev-server table (history reads its
  # queues 20 times a second by default). Kept across ups once written: edit it.
  [ -f "$DIR/config/dynamicconfig.yaml" ] || cat >"$DIR/config/dynamicconfig.yaml" <<'YAML'
history.transferProcessorMaxPollRPS:
  - value: 1000
history.timerProcessorMaxPollRPS:
  - value: 1000
# Jobs: the runs Schedules start per second in a namespace (30 by default:
# 100 jobs due at one second would start over 3.3 s; docs/jobs.md).
worker.schedulerNamespaceStartWorkflowRPS:
  - value: 200
# One partition per task queue, as the dev server of `make run` and the
# tests: each host's queue has one worker's pollers, and with the default
# of 4 partitions an action could wait past its host's unreachableAfter
# (10 s) on a partition no poller was on, and its worker went unknown with
# its host up (found by the soak against this cluster; docs/cluster.md).
matching.numTaskqueueReadPartitions:
  - value: 1
matching.numTaskqueueWritePartitions:
  - value: 1
YAML
  if [ "$UI_PORT" != off ]; then
    mkdir -p "$DIR/ui/config"
    cat >"$DIR/ui/config/development.yaml" <<YAML
temporalGrpcAddress: "127.0.0.1:$PORT"
host: 127.0.0.1
port: $UI_PORT
enableUi: true
defaultNamespace: default
cors:
  unsafeAllowAllOrigins: true
YAML
    if tls_on; then
      cat >>"$DIR/ui/config/development.yaml" <<YAML
tls:
  caFile: "$CERTS/ca.pem"
  certFile: "$CERTS/client.pem"
  keyFile: "$CERTS/client-key.pem"
  serverName: localhost
  enableHostVerification: true
YAML
    fi
  fi
}

start_server() {
  if running "$SERVER_PID" "$SERVER_BIN"; then
    say "the server runs already (PID $(cat "$SERVER_PID"))"
    return
  fi
  local p
  for p in "$PORT" "$HISTORY_PORT" "$MATCHING_PORT" "$WORKER_PORT" "$HTTP_PORT" "$METRICS_PORT" \
    "$MEMBER_PORT" $((MEMBER_PORT + 1)) $((MEMBER_PORT + 2)) $((MEMBER_PORT + 3)); do
    port_free "$p" || die "port $p is in use (the cluster uses STEWARD_CLUSTER_PORT=$PORT..$((PORT + 10))): is a Temporal server running there? Set STEWARD_CLUSTER_PORT."
  done
  # setsid: the server outlives this script (up returns) and a Ctrl-C in
  # the terminal reaches it only through down.
  setsid "$SERVER_BIN" --root "$DIR" --config config --env development --allow-no-auth start \
    </dev/null >>"$DIR/server.log" 2>&1 &
  echo $! >"$SERVER_PID"
}

start_ui() {
  [ "$UI_PORT" != off ] || return 0
  if running "$UI_PID" "$UI_BIN"; then return; fi
  port_free "$UI_PORT" || die "port $UI_PORT (the Web UI) is in use: set STEWARD_CLUSTER_UI_PORT (or off)"
  setsid "$UI_BIN" --root "$DIR/ui" --config config --env development start \
    </dev/null >>"$DIR/ui.log" 2>&1 &
  echo $! >"$UI_PID"
}

wait_healthy() {
  local i
  for i in $(seq 1 240); do
    if "$TEMPORAL" operator cluster health --address "$ADDRESS" "${TLS_ARGS[@]}" >/dev/null 2>&1; then return; fi
    running "$SERVER_PID" "$SERVER_BIN" || { tail -30 "$DIR/server.log" >&2; die "the server exited (log: $DIR/server.log)"; }
    sleep 0.5
  done
  die "the server did not answer within 2 minutes (log: $DIR/server.log)"
}

# namespace creates `default` and steward's search attributes (the worker
# registers them too, idempotently), then waits until a list in it works: a
# new namespace takes up to 10 s to reach every frontend's cache.
namespace() {
  if ! "$TEMPORAL" operator namespace describe --address "$ADDRESS" "${TLS_ARGS[@]}" -n default >/dev/null 2>&1; then
    "$TEMPORAL" operator namespace create --address "$ADDRESS" "${TLS_ARGS[@]}" -n default --retention 72h >/dev/null
  fi
  local i out sa
  for i in $(seq 1 120); do
    for sa in StewardPath StewardKind StewardState; do # one at a time: the CLI takes only the first of several
      out="$("$TEMPORAL" operator search-attribute create --address "$ADDRESS" "${TLS_ARGS[@]}" -n default \
        --name "$sa" --type Keyword 2>&1)" || true
    done
    if "$TEMPORAL" workflow list --address "$ADDRESS" "${TLS_ARGS[@]}" -n default --limit 1 \
      --query "StewardState='running'" >/dev/null 2>&1; then
      return
    fi
    sleep 0.5
  done
  die "the default namespace did not become usable: $out"
}

cmd_up() {
  local foreground="" arg
  for arg in "$@"; do
    case "$arg" in
    --foreground) foreground=--foreground ;;
    --tls) touch "$DIR/tls-on" ;;
    *) die "up: unknown option $arg (--foreground, --tls)" ;;
    esac
  done
  [[ " $* " == *" --tls "* ]] || rm -f "$DIR/tls-on"
  set_tls_args
  command -v go >/dev/null || die "go not found: the server is built from its Go module"
  command -v setpriv >/dev/null || [ "$(id -u)" != 0 ] || die "setpriv not found (Debian: util-linux)"
  local start=$SECONDS
  build
  pg_start
  schema
  if tls_on; then
    go run ./scripts/mkcerts -dir "$CERTS" || die "could not make the certificates (scripts/mkcerts)"
  fi
  write_config
  start_server
  start_ui
  wait_healthy
  namespace
  say "up in $((SECONDS - start)) s: $ADDRESS, $SHARDS history shards on PostgreSQL (127.0.0.1:$PG_PORT), data in $DIR"
  [ "$UI_PORT" = off ] || say "Web UI: http://127.0.0.1:$UI_PORT/namespaces/default/workflows"
  if tls_on; then
    say "mutual TLS: a client needs a certificate signed by $CERTS/ca.pem"
    say "use it: bin/worker --address $ADDRESS --tls-cert $CERTS/client.pem --tls-key $CERTS/client-key.pem --tls-ca $CERTS/ca.pem --tls-server-name localhost"
    say "        TEMPORAL_TLS_CLIENT_CERT_PATH=$CERTS/client.pem TEMPORAL_TLS_CLIENT_KEY_PATH=$CERTS/client-key.pem TEMPORAL_TLS_SERVER_CA_CERT_PATH=$CERTS/ca.pem TEMPORAL_TLS_SERVER_NAME=localhost bin/starter --address $ADDRESS apply -f examples/demo.yaml"
  else
    say "use it: bin/worker --address $ADDRESS; bin/starter --address $ADDRESS apply -f examples/demo.yaml"
  fi
  if [ "$foreground" = --foreground ]; then
    # The handler ignores further INT and TERM: a Ctrl-C reaches the whole
    # process group, and bash would otherwise end itself midway through the
    # down (seen: PostgreSQL left running).
    trap 'trap "" INT TERM; echo; cmd_down; exit 0' INT TERM
    find_pg
    say "Ctrl-C takes it down. Logs: $DIR/server.log"
    while running "$SERVER_PID" "$SERVER_BIN"; do sleep 1; done
    say "the server exited; see $DIR/server.log"
    cmd_down
    exit 1
  fi
}

# stop_pid PIDFILE BINARY NAME: SIGTERM, up to 30 s, then SIGKILL.
stop_pid() {
  if running "$1" "$2"; then
    local pid i
    pid="$(cat "$1")"
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 1 60); do
      running "$1" "$2" || break
      sleep 0.5
    done
    if running "$1" "$2"; then kill -KILL "$pid" 2>/dev/null || true; fi
    say "$3 stopped"
  fi
  rm -f "$1"
}

cmd_down() {
  stop_pid "$UI_PID" "$UI_BIN" "the Web UI"
  stop_pid "$SERVER_PID" "$SERVER_BIN" "the server"
  pg_stop
}

cmd_status() {
  local rc=0
  if running "$SERVER_PID" "$SERVER_BIN"; then
    say "server: PID $(cat "$SERVER_PID"), $ADDRESS"
    if "$TEMPORAL" operator cluster health --address "$ADDRESS" "${TLS_ARGS[@]}" >/dev/null 2>&1; then say "frontend: serving"; else say "frontend: not serving"; rc=1; fi
  else
    say "server: not running"; rc=1
  fi
  find_pg
  if [ -f "$PGDATA/PG_VERSION" ] && as_pg "$PG_BIN/pg_ctl" -D "$PGDATA" status >/dev/null 2>&1; then
    say "PostgreSQL: running on 127.0.0.1:$PG_PORT, data in $PGDATA"
  else
    say "PostgreSQL: not running"; rc=1
  fi
  if [ "$UI_PORT" != off ]; then
    if running "$UI_PID" "$UI_BIN"; then say "Web UI: http://127.0.0.1:$UI_PORT"; else say "Web UI: not running"; fi
  fi
  return $rc
}

case "${1:-}" in
up) shift; cmd_up "$@" ;;
down) cmd_down ;;
status) cmd_status ;;
*) echo "usage: $0 up [--foreground] [--tls] | down | status" >&2; exit 2 ;;
esac
