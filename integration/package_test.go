package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The .deb of make dist, unpacked into a temporary root: its worker, started
// as its unit starts it (ExecStart, --config), runs a tree; stopped with
// SIGTERM as systemd stops it under KillMode=process, it leaves its
// services running, and the next one adopts them (same instances, no
// restart). Issue 50: the package's promise that an upgrade restarts no
// service.
func TestPackagedWorkerStoppedAsSystemdDoesLeavesItsServicesToTheNext(t *testing.T) {
	needServer(t)
	dpkg, err := exec.LookPath("dpkg-deb")
	if err != nil {
		t.Skip("no dpkg-deb")
	}
	repo, err := filepath.Abs("..")
	require.NoError(t, err)
	out := t.TempDir()
	cmd := exec.Command("go", "run", ".", "-root", repo, "-bin", workDir, "-out", out, "-version", "1.2.3")
	cmd.Dir = filepath.Join(repo, "tools", "dist")
	b, err := cmd.CombinedOutput()
	require.NoError(t, err, string(b))
	debs, _ := filepath.Glob(filepath.Join(out, "*.deb"))
	require.Len(t, debs, 1)
	r := t.TempDir()
	b, err = exec.Command(dpkg, "-x", debs[0], r).CombinedOutput()
	require.NoError(t, err, string(b))

	// The unit's command, under the temporary root.
	unit, err := os.ReadFile(filepath.Join(r, "lib/systemd/system/steward-worker.service"))
	require.NoError(t, err)
	var execStart []string
	for _, l := range strings.Split(string(unit), "\n") {
		if rest, ok := strings.CutPrefix(l, "ExecStart="); ok {
			execStart = strings.Fields(rest)
		}
	}
	require.Equal(t, []string{"/usr/bin/steward-worker", "--config", "/etc/steward/worker.yaml"}, execStart)
	sleep, err := exec.LookPath("sleep")
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(r, "etc/steward/policy.yaml"), []byte("commands: ["+sleep+"]\n"), 0o600))
	port, err := freePort()
	require.NoError(t, err)
	config := filepath.Join(r, "etc/steward/worker.yaml")
	installed, err := os.ReadFile(config)
	require.NoError(t, err)
	// The installed file, its paths moved under the root and pointed at
	// the test's server: keys later in a YAML file may not repeat, so the
	// installed ones are replaced line by line.
	var lines []string
	for _, l := range strings.Split(string(installed), "\n") {
		key, _, _ := strings.Cut(l, ":")
		switch key {
		case "address":
			l = "address: " + address
		case "host":
			l = "host: it-pkg"
		case "state-dir", "log-dir", "policy":
			k, v, _ := strings.Cut(l, ": ")
			l = k + ": " + filepath.Join(r, v)
		case "metrics":
			l = "metrics: " + port
		}
		lines = append(lines, l)
	}
	require.NoError(t, os.WriteFile(config, []byte(strings.Join(lines, "\n")), 0o644))
	start := func(name string) *workerProc {
		logf, err := os.Create(filepath.Join(workDir, name+".log"))
		require.NoError(t, err)
		cmd := exec.Command(filepath.Join(r, execStart[0]), execStart[1], filepath.Join(r, execStart[2]))
		cmd.Stdout, cmd.Stderr = logf, logf
		require.NoError(t, cmd.Start())
		w := &workerProc{cmd: cmd, done: make(chan struct{}), log: logf}
		go func() { _ = cmd.Wait(); close(w.done) }()
		t.Cleanup(w.stop)
		return w
	}
	first := start("worker-pkg-1")
	r2 := starter(t, "apply", "-f", writeSpec(t, `
name: it-pkg
children:
  - {name: a, kind: process, process: {command: sleep, args: ["300"], host: it-pkg, startSeconds: 200ms}, observe: {interval: 1s}}
  - {name: b, kind: process, process: {command: sleep, args: ["301"], host: it-pkg, startSeconds: 200ms}, observe: {interval: 1s}}
`), "--wait", "--timeout", "2m")
	t.Cleanup(func() { deleteTree(t, "it-pkg") })
	require.Equal(t, 0, r2.code, r2.stdout+r2.stderr)
	a, b0 := status(t, "it-pkg/a"), status(t, "it-pkg/b")
	_, err = os.Stat(filepath.Join(r, "var/lib/steward/it-pkg"))
	require.NoError(t, err, "the state dir of the installed configuration")

	// systemctl stop under KillMode=process: SIGTERM to the worker alone.
	require.NoError(t, first.cmd.Process.Signal(syscall.SIGTERM))
	select {
	case <-first.done:
	case <-time.After(time.Minute):
		t.Fatal("the worker did not end on SIGTERM")
	}
	for _, st := range []string{a.Instance, b0.Instance} {
		require.True(t, alive(pidOf(t, st)), "the service outlives its worker's stop")
	}
	start("worker-pkg-2")
	eventually(t, time.Minute, func() (bool, string) {
		x, y := status(t, "it-pkg/a"), status(t, "it-pkg/b")
		return x.State == "running" && y.State == "running" && x.Instance == a.Instance && y.Instance == b0.Instance && x.Restarts == 0 && y.Restarts == 0,
			fmt.Sprintf("%s %s %d; %s %s %d", x.State, x.Instance, x.Restarts, y.State, y.Instance, y.Restarts)
	})
	logb, _ := os.ReadFile(filepath.Join(workDir, "worker-pkg-2.log"))
	require.Contains(t, string(logb), "recovered the services of this host", "the next worker adopted them")
}
