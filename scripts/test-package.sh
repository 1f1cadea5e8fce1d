#!/usr/bin/env bash
# make test-package: install the .deb of `make dist` for real, check what it
# put where, and purge it (issue 50). It needs root and dpkg, on a machine
# of its own (CI's): it skips, saying why, where either is missing. systemd
# need not be PID 1 (the maintainer scripts then leave the unit alone).
set -euo pipefail
cd "$(dirname "$0")/.."
if ! command -v dpkg >/dev/null; then echo "test-package: skipped: no dpkg on this machine"; exit 0; fi
if [ "$(id -u)" != 0 ]; then echo "test-package: skipped: needs root (dpkg -i)"; exit 0; fi
if dpkg-query -W -f='${Status}' steward 2>/dev/null | grep -q "ok installed"; then
	echo "test-package: skipped: a steward package is installed here already; not touching it"; exit 0
fi
deb=$(ls -t dist/steward_*.deb | head -1)
fail() { echo "test-package: FAIL: $*" >&2; dpkg --purge steward >/dev/null 2>&1 || true; exit 1; }
echo "test-package: dpkg -i $deb"
dpkg -i "$deb"
for f in /usr/bin/steward /usr/bin/steward-worker; do [ -x "$f" ] || fail "$f not installed executable"; done
[ -f /lib/systemd/system/steward-worker.service ] || fail "no unit"
[ "$(stat -c %a /etc/steward/policy.yaml)" = 600 ] || fail "policy.yaml mode $(stat -c %a /etc/steward/policy.yaml)"
[ "$(stat -c %a /var/lib/steward)" = 700 ] || fail "/var/lib/steward mode $(stat -c %a /var/lib/steward)"
[ "$(stat -c %a /var/log/steward)" = 750 ] || fail "/var/log/steward mode $(stat -c %a /var/log/steward)"
# systemd sets a StateDirectory's and a LogsDirectory's mode at each start
# (0755 unless the unit says): the unit must keep the package's.
unit=$(systemctl cat steward-worker 2>/dev/null || cat /lib/systemd/system/steward-worker.service /usr/lib/systemd/system/steward-worker.service 2>/dev/null)
grep -qx 'StateDirectoryMode=0700' <<<"$unit" || fail "the unit does not keep /var/lib/steward at 0700 (StateDirectoryMode)"
grep -qx 'LogsDirectoryMode=0750' <<<"$unit" || fail "the unit does not keep /var/log/steward at 0750 (LogsDirectoryMode)"
/usr/bin/steward-worker --version >/dev/null || fail "steward-worker --version"
/usr/bin/steward version >/dev/null || fail "steward version"
dpkg-query -W -f='${Conffiles}\n' steward | grep -q /etc/steward/worker.yaml || fail "worker.yaml is not a conffile"
# An operator's edit survives a reinstall of the package (an upgrade's path).
echo "# edited by the operator" >> /etc/steward/worker.yaml
dpkg -i --force-confold "$deb" >/dev/null
grep -q "edited by the operator" /etc/steward/worker.yaml || fail "the operator's worker.yaml was overwritten"

# An upgrade with services running: the installed worker, started as its
# unit starts it, runs N services on a dev server; the next version of the
# package is installed over it and the worker restarted as the unit's
# try-restart does under KillMode=process (SIGTERM to the worker alone,
# then the new binary). Every service keeps its process (same instances,
# no restart), and the time from the SIGTERM to the new worker's adoption
# is printed (docs/production.md).
N=${STEWARD_PACKAGE_SERVICES:-100}
W=$(mktemp -d)
SERVER_PID="" WORKER_PID=""
cleanup() {
	[ -z "$WORKER_PID" ] || kill -TERM "$WORKER_PID" 2>/dev/null || true
	if [ -f "$W/instances" ]; then # services left by a failed run
		sed -n 's#.*proc/\([0-9]*\)/.*#\1#p' "$W/instances" | while read -r pid; do kill -KILL "$pid" 2>/dev/null || true; done
	fi
	devserver_stop
	rm -rf "$W"
}
trap cleanup EXIT
. scripts/devserver.sh
devserver_start "$W" || fail "the dev server did not start"
sed -i -e "s#^address:.*#address: 127.0.0.1:$PORT#" -e "s#^host:.*#host: pkg-upgrade#" -e 's#^metrics:.*#metrics: ""#' /etc/steward/worker.yaml
printf 'commands: [%s]\n' "$(command -v sleep)" >/etc/steward/policy.yaml
start_worker() {
	setsid /usr/bin/steward-worker --config /etc/steward/worker.yaml >"$W/worker-$1.log" 2>&1 &
	WORKER_PID=$!
}
start_worker 1
{
	echo "name: pkg-upgrade"
	echo "children:"
	for i in $(seq 1 "$N"); do
		echo "  - {name: s$i, kind: process, process: {command: sleep, args: [\"3600\"], host: pkg-upgrade, startSeconds: 100ms}}"
	done
} >"$W/tree.yaml"
S="/usr/bin/steward --address 127.0.0.1:$PORT"
$S apply -f "$W/tree.yaml" --wait --timeout 5m >/dev/null || fail "apply of $N services"
instances() { $S status pkg-upgrade -o json --usage=false | grep -o '"instance": "proc/[^"]*"' | sort; }
instances >"$W/instances"
[ "$(wc -l <"$W/instances")" = "$N" ] || fail "$(wc -l <"$W/instances") of $N services running before the upgrade"
version=$(dpkg-query -W -f='${Version}' steward)
(cd tools/dist && go run . -root "$PWD/../.." -bin "$PWD/../../bin" -out "$W/next" -version "$version.1") >/dev/null
dpkg -i --force-confold "$W"/next/steward_*.deb >/dev/null || fail "dpkg -i of the next version"
[ "$(dpkg-query -W -f='${Version}' steward)" = "$version.1" ] || fail "the next version is not installed"
began=$(date +%s%N)
kill -TERM "$WORKER_PID"
while kill -0 "$WORKER_PID" 2>/dev/null; do sleep 0.02; done
stopped=$(date +%s%N)
start_worker 2
until grep -q "recovered the services" "$W/worker-2.log" 2>/dev/null; do
	kill -0 "$WORKER_PID" 2>/dev/null || fail "the new worker exited: $(tail -5 "$W/worker-2.log")"
	sleep 0.02
done
adopted=$(date +%s%N)
grep "recovered the services" "$W/worker-2.log" | grep -q "\"adopted\":$N[,}]" || fail "not all $N adopted: $(grep 'recovered the services' "$W/worker-2.log")"
for _ in $(seq 1 120); do
	instances >"$W/after"
	cmp -s "$W/instances" "$W/after" && break
	sleep 0.5
done
cmp -s "$W/instances" "$W/after" || fail "services changed across the upgrade: $(diff "$W/instances" "$W/after" | head -5)"
restarted=$($S status pkg-upgrade -o json --usage=false | grep -o '"restarts": [0-9]*' | grep -vc '": 0$' || true)
[ "$restarted" = 0 ] || fail "$restarted services restarted across the upgrade"
echo "test-package: upgrade $version -> $version.1 with $N services: worker stopped in $(((stopped - began) / 1000000)) ms, the new one adopted all $N $(((adopted - stopped) / 1000000)) ms after its start; 0 restarted, the same $N processes"
$S delete pkg-upgrade >/dev/null || fail "delete"
for _ in $(seq 1 120); do # the tree's services stopped by their workflows
	left=0
	for pid in $(sed -n 's#.*proc/\([0-9]*\)/.*#\1#p' "$W/instances"); do kill -0 "$pid" 2>/dev/null && left=$((left + 1)); done
	[ "$left" = 0 ] && break
	sleep 0.5
done
kill -TERM "$WORKER_PID"; while kill -0 "$WORKER_PID" 2>/dev/null; do sleep 0.05; done; WORKER_PID=""
touch /var/lib/steward/record.json
echo "test-package: dpkg --purge steward"
dpkg --purge steward
for f in /usr/bin/steward /usr/bin/steward-worker /lib/systemd/system/steward-worker.service /etc/steward/worker.yaml /var/lib/steward /var/log/steward; do
	[ ! -e "$f" ] || fail "$f left after purge"
done
echo "test-package: ok: installed, checked, reinstalled over an edited conffile, purged clean"
