#!/bin/sh
# After an install or an upgrade: systemd learns the unit; an upgrade
# restarts the worker (KillMode=process: its services run on and the new
# worker adopts them). A first install enables the unit and leaves it to
# the operator to start, once /etc/steward/worker.yaml names the server.
set -e
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
	systemctl enable steward-worker.service >/dev/null 2>&1 || true
	systemctl try-restart steward-worker.service >/dev/null 2>&1 || true
fi
exit 0
