#!/usr/bin/env bash
# Download Temporal's Go SDK dashboard (temporalio/dashboards, not vendored:
# see deploy/grafana/dashboards/README.md) next to steward's, and point it at
# the provisioned Prometheus data source (uid "prometheus").
set -euo pipefail
cd "$(dirname "$0")/.."

URL="${SDK_DASHBOARD_URL:-https://raw.githubusercontent.com/temporalio/dashboards/master/sdk/sdk-general.json}"
OUT=deploy/grafana/dashboards/temporal-sdk.json
TMP="$(mktemp)"
trap 'rm -f "$TMP"' EXIT

curl -fsSL "$URL" -o "$TMP"

if ! grep -q '"panels"' "$TMP"; then
  echo "fetch-sdk-dashboard: $URL does not look like a Grafana dashboard" >&2
  exit 1
fi

# Exported dashboards name their data source by a variable or an import
# placeholder; replace whichever this version uses with our uid.
for placeholder in '${DS_PROMETHEUS}' '${datasource}' '$datasource'; do
  if grep -qF "\"$placeholder\"" "$TMP"; then
    escaped="$(printf '%s' "$placeholder" | sed 's/[$]/\\$/g')"
    sed -i.bak "s/\"$escaped\"/\"prometheus\"/g" "$TMP"
  fi
done
rm -f "$TMP.bak"

chmod 644 "$TMP" # Grafana runs as its own user
mv "$TMP" "$OUT"
trap - EXIT
echo "wrote $OUT"
