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
/usr/bin/steward-worker --version >/dev/null || fail "steward-worker --version"
/usr/bin/steward version >/dev/null || fail "steward version"
dpkg-query -W -f='${Conffiles}\n' steward | grep -q /etc/steward/worker.yaml || fail "worker.yaml is not a conffile"
# An operator's edit survives a reinstall of the package (an upgrade's path).
echo "# edited by the operator" >> /etc/steward/worker.yaml
dpkg -i --force-confold "$deb" >/dev/null
grep -q "edited by the operator" /etc/steward/worker.yaml || fail "the operator's worker.yaml was overwritten"
touch /var/lib/steward/record.json
echo "test-package: dpkg --purge steward"
dpkg --purge steward
for f in /usr/bin/steward /usr/bin/steward-worker /lib/systemd/system/steward-worker.service /etc/steward/worker.yaml /var/lib/steward /var/log/steward; do
	[ ! -e "$f" ] || fail "$f left after purge"
done
echo "test-package: ok: installed, checked, reinstalled over an edited conffile, purged clean"
