#!/bin/sh
# A purge (deb) removes what the worker wrote: its state and the logs.
set -e
if [ "$1" = purge ]; then
	rm -rf /var/lib/steward /var/log/steward
fi
if [ -d /run/systemd/system ]; then
	systemctl daemon-reload >/dev/null 2>&1 || true
fi
exit 0
