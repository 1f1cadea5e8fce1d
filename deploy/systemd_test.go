package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// unitPath is the worker's systemd unit (issue 50).
var unitPath = filepath.Join(root, "deploy", "systemd", "steward-worker.service")

// The unit says what keeps services alive across a restart of the worker
// (KillMode=process: under the default control-group, systemctl restart
// would kill every service the worker started), lets the worker make
// cgroups (Delegate), restarts it, waits for the network, and runs the
// worker from its configuration file.
func TestWorkerUnitKeepsServicesAcrossItsRestart(t *testing.T) {
	b, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	unit := string(b)
	for _, line := range []string{
		"ExecStart=/usr/bin/steward-worker --config /etc/steward/worker.yaml",
		"KillMode=process",
		"Delegate=yes",
		"Restart=always",
		"After=network-online.target",
		"Wants=network-online.target",
		"WantedBy=multi-user.target",
	} {
		require.Contains(t, strings.Split(unit, "\n"), line)
	}
}

// systemd-analyze verify takes the unit, in a root that has the host's
// system units and the worker where the unit names it; and it refuses a
// copy whose program is not there (the check can fail).
func TestWorkerUnitVerifies(t *testing.T) {
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Skip("no systemd-analyze on this machine")
	}
	units := "/usr/lib/systemd/system"
	if _, err := os.Stat(filepath.Join(units, "sysinit.target")); err != nil {
		t.Skip("no systemd units under " + units + " to verify against")
	}
	unit, err := os.ReadFile(unitPath)
	require.NoError(t, err)
	verify := func(text string) (string, error) {
		r := t.TempDir()
		require.NoError(t, os.MkdirAll(filepath.Join(r, "usr", "bin"), 0o755))
		require.NoError(t, os.MkdirAll(filepath.Join(r, "usr", "lib", "systemd"), 0o755))
		require.NoError(t, os.Symlink("usr/lib", filepath.Join(r, "lib")))
		out, err := exec.Command("cp", "-a", units, filepath.Join(r, "usr", "lib", "systemd")).CombinedOutput()
		require.NoError(t, err, string(out))
		require.NoError(t, os.WriteFile(filepath.Join(r, "usr", "bin", "steward-worker"), []byte("#!/bin/sh\n"), 0o755))
		path := filepath.Join(r, "usr", "lib", "systemd", "system", "steward-worker.service")
		require.NoError(t, os.WriteFile(path, []byte(text), 0o644))
		b, err := exec.Command(analyze, "verify", "--man=no", "--root="+r, path).CombinedOutput()
		return string(b), err
	}
	out, err := verify(string(unit))
	require.NoError(t, err, out)
	require.Empty(t, strings.TrimSpace(out), "verify warns of nothing")
	out, err = verify(strings.Replace(string(unit), "/usr/bin/steward-worker", "/usr/bin/steward-missing", 1))
	require.Error(t, err, "a unit whose program is not there does not verify: %s", out)
}
