# scripts/devserver.sh: sourced by the scripts that need a dev server of
# their own (test-package.sh, measure-sizing.sh, measure-config-start.sh).
# Run from the repository's root, with bin/temporal built.
#
#   free_port            a loopback port free a moment ago (20000-31999)
#   devserver_start DIR  a dev server on free ports, its database and log in
#                        DIR; sets PORT and SERVER_PID; returns once it
#                        answers (1 if it did not within 2 minutes)
#   devserver_stop       SIGTERM to it, up to 30 s, then SIGKILL

free_port() {
	local p
	while :; do
		p=$((20000 + RANDOM % 12000))
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return; }
	done
}

devserver_start() {
	PORT=$(free_port)
	setsid bin/temporal server start-dev --ip 127.0.0.1 --port "$PORT" --http-port "$(free_port)" --metrics-port "$(free_port)" \
		--ui-port "$(free_port)" --headless --log-level error --db-filename "$1/temporal.db" >"$1/server.log" 2>&1 &
	SERVER_PID=$!
	for _ in $(seq 1 240); do
		bin/temporal operator cluster health --address "127.0.0.1:$PORT" >/dev/null 2>&1 && return 0
		sleep 0.5
	done
	return 1
}

devserver_stop() {
	[ -n "${SERVER_PID:-}" ] || return 0
	kill -TERM "$SERVER_PID" 2>/dev/null || true
	for _ in $(seq 1 150); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.2; done
	kill -KILL "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}
