#!/bin/sh
# Before a removal (not an upgrade: deb "upgrade", rpm $1 >= 1): stop and
# disable the worker. Its services run on (KillMode=process): delete their
# trees first (steward delete NAME) to stop them.
set -e
case "$1" in
	remove|0)
		if [ -d /run/systemd/system ]; then
			systemctl stop steward-worker.service >/dev/null 2>&1 || true
			systemctl disable steward-worker.service >/dev/null 2>&1 || true
		fi
		;;
esac
exit 0
