package integration

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// A worker started with --config alone (the unit's way: issue 50) takes
// its connection, host, directories and metrics from the file and runs a
// tree; a file with an unknown key or a bad value exits 2 naming it,
// before it connects.
func TestWorkerFromAConfigFile(t *testing.T) {
	needServer(t)
	port, err := freePort()
	require.NoError(t, err)
	dir := t.TempDir()
	file := filepath.Join(dir, "worker.yaml")
	require.NoError(t, os.WriteFile(file, []byte(fmt.Sprintf(`# as /etc/steward/worker.yaml would be
address: %s
namespace: default
host: it-config
metrics: %s
state-dir: %s
log-dir: %s
log-level: warn
usage-interval: 2s
`, address, port, filepath.Join(workDir, "state"), filepath.Join(dir, "logs"))), 0o644))
	logf, err := os.Create(filepath.Join(workDir, "worker-config.log"))
	require.NoError(t, err)
	cmd := exec.Command(workerBin, "--config", file)
	cmd.Stdout, cmd.Stderr = logf, logf
	require.NoError(t, cmd.Start())
	w := &workerProc{cmd: cmd, done: make(chan struct{}), log: logf, metrics: "http://" + port + "/metrics"}
	go func() { _ = cmd.Wait(); close(w.done) }()
	t.Cleanup(w.stop)

	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-config
children:
  - {name: svc, kind: process, process: {command: sleep, args: ["300"], host: it-config, startSeconds: 200ms}}
`), "--wait", "--timeout", "2m")
	t.Cleanup(func() { deleteTree(t, "it-config") })
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	st := status(t, "it-config/svc")
	require.Equal(t, "running", st.State)
	require.Equal(t, "it-config", st.Host, "the host named by the file")
	_, err = os.Stat(filepath.Join(workDir, "state", "it-config"))
	require.NoError(t, err, "the state dir named by the file")
	require.Contains(t, metricsOf(t, w), "steward_", "metrics on the address named by the file")

	for text, want := range map[string]string{
		"adress: x\n":                    "adress: unknown key",
		"pool-size: many\n":              `pool-size: invalid value "many"`,
		"tls: {cert: /x}\n":              "TLS: a client certificate needs its key",
		"apiKey: {file: /nonexistent}\n": "API key: open /nonexistent",
	} {
		bad := filepath.Join(dir, "bad.yaml")
		require.NoError(t, os.WriteFile(bad, []byte("address: "+address+"\n"+text), 0o644))
		out, err := exec.Command(workerBin, "--config", bad).CombinedOutput()
		var ee *exec.ExitError
		require.ErrorAs(t, err, &ee, string(out))
		require.Equal(t, 2, ee.ExitCode(), string(out))
		require.Contains(t, string(out), want)
	}
}
