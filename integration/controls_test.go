package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// What the process services use, read from their host: in status (JSON
// and text), in `starter top` (sorted, one sample when not on a terminal)
// and in the host worker's metrics. A busy loop uses a core's worth, a
// sleep nothing.
func TestUsageOfProcessServices(t *testing.T) {
	needServer(t)
	w, err := startWorker("worker-usage", "--host", "it-usage", "--usage-interval", "1s")
	require.NoError(t, err)
	t.Cleanup(w.stop)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-usage
children:
  - name: busy
    kind: process
    process: {host: it-usage, command: sh, args: ["-c", "while :; do :; done"], startSeconds: 200ms}
  - name: idle
    kind: process
    process: {host: it-usage, command: sleep, args: ["300"], startSeconds: 200ms}
  - {name: s, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-usage") })

	var st workflows.Status
	eventually(t, time.Minute, func() (bool, string) {
		r := starter(t, "status", "it-usage", "-o", "json")
		if r.code != 0 {
			return false, r.stderr
		}
		st = workflows.Status{}
		if err := json.Unmarshal([]byte(r.stdout), &st); err != nil {
			return false, err.Error()
		}
		busy := st.Children[0].Usage
		return busy != nil && busy.CPUPercent > 30, r.stdout
	})
	busy, idle, stub := st.Children[0], st.Children[1], st.Children[2]
	require.Equal(t, "it-usage/busy", busy.Path)
	require.Positive(t, busy.Usage.MemoryBytes)
	require.Positive(t, busy.Usage.CPUSeconds)
	require.WithinDuration(t, time.Now(), busy.Usage.At, time.Minute)
	require.NotNil(t, idle.Usage, "a sleeping service has usage too")
	require.Less(t, idle.Usage.CPUPercent, 30.0)
	require.Nil(t, stub.Usage, "a stub has no process")

	r = starter(t, "status", "it-usage")
	require.Equal(t, 0, r.code, r.stderr)
	require.Regexp(t, `it-usage/busy .*\[cpu \d+\.\d%, mem \d+\.\dMi\]`, r.stdout)
	r = starter(t, "status", "it-usage", "-o", "json", "--usage=false")
	require.Equal(t, 0, r.code, r.stderr)
	require.NotContains(t, r.stdout, `"usage"`)

	r = starter(t, "top", "it-usage", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var rows []struct {
		Path        string  `json:"path"`
		CPUPercent  float64 `json:"cpuPercent"`
		MemoryBytes int64   `json:"memoryBytes"`
	}
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &rows), r.stdout)
	require.Len(t, rows, 2, "the two process services")
	require.Equal(t, "it-usage/busy", rows[0].Path, "sorted by CPU: %s", r.stdout)
	r = starter(t, "top", "--sort", "memory")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "PATH")
	require.Contains(t, r.stdout, "it-usage/idle")
	t.Logf("starter top --sort memory:\n%s", r.stdout)
	r = starter(t, "top", "--sort", "age")
	require.Equal(t, 2, r.code, "a bad sort is bad input")

	eventually(t, 30*time.Second, func() (bool, string) {
		resp, err := http.Get(w.metrics)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return strings.Contains(string(b), `steward_service_cpu_seconds_total{host="it-usage",path="it-usage/busy"}`) &&
			strings.Contains(string(b), `steward_service_memory_bytes{host="it-usage",path="it-usage/idle"}`), "no service usage in the metrics"
	})
}

// A service written for systemd runs unchanged: its start script's
// systemd-notify --ready makes it running, its STATUS= shows in status;
// one that stops feeding its watchdog is restarted, and the transition's
// reason says why.
func TestNotifyReadinessStatusAndWatchdog(t *testing.T) {
	needServer(t)
	if _, err := exec.LookPath("systemd-notify"); err != nil {
		t.Skip("systemd-notify not on PATH (Debian: apt-get install systemd)")
	}
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-notify
children:
  - name: api
    kind: process
    process:
      command: sh
      args: ["-c", "sleep 1; systemd-notify --ready --status='serving'; exec sleep 300"]
      notify: true
  - name: hang
    kind: process
    backoff: {initial: 100ms}
    process:
      command: sh
      args: ["-c", "systemd-notify --ready; systemd-notify WATCHDOG=1; exec sleep 300"]
      notify: true
      watchdog: 1s
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-notify") })

	r = starter(t, "status", "it-notify", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var st workflows.Status
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &st), r.stdout)
	require.Equal(t, "running", st.Children[0].State)
	require.Equal(t, "serving", st.Children[0].NotifyStatus)

	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-notify/hang")
		return st.Restarts >= 1, fmt.Sprintf("restarts %d, reason %q", st.Restarts, st.Reason)
	})
	r = starter(t, "history", "it-notify/hang", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "watchdog timeout: no WATCHDOG=1 for 1s")
}

// Memory limits through the product: a hog under memoryMax is killed by
// the kernel and restarted, the transition's reason "out of memory
// (memoryMax 32Mi)"; one over restartOnMemory is restarted by steward,
// the reason naming both sizes.
func TestMemoryMaxAndRestartOnMemory(t *testing.T) {
	needServer(t)
	if os.Geteuid() != 0 {
		t.Skip("cgroups need a root worker")
	}
	w, err := startWorker("worker-memory", "--host", "it-memory", "--usage-interval", "1s")
	require.NoError(t, err)
	t.Cleanup(w.stop)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-memory
children:
  - name: hog
    kind: process
    backoff: {initial: 1s}
    process:
      host: it-memory
      command: sh
      args: ["-c", "sleep 0.5; head -c 300M /dev/zero | tail"]
      startSeconds: 200ms
      resources: {memoryMax: 32Mi, pidsMax: 50}
  - name: leak
    kind: process
    backoff: {initial: 1s}
    process:
      host: it-memory
      command: sh
      args: ["-c", "{ head -c 64M /dev/zero; sleep 300; } | tail"]
      startSeconds: 200ms
      restartOnMemory: 16Mi
`))
	// Not --wait: both services end by design, so the tree is at its
	// desired state only at moments when both happen to run, which a
	// loaded machine may never show before their supervisor gives up (the
	// flake: "0 of 2 at desired state; failed: it-memory (gave up ...)").
	// What the test checks is each end's reason, below.
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-memory") })
	for path, want := range map[string]string{
		"it-memory/hog":  "out of memory (memoryMax 32Mi)",
		"it-memory/leak": "over restartOnMemory 16Mi",
	} {
		eventually(t, time.Minute, func() (bool, string) {
			r := starter(t, "history", path, "-o", "json")
			return r.code == 0 && strings.Contains(r.stdout, want), r.stdout + r.stderr
		})
	}
}

// starter reload reaches the service's handler (a HUP trap that writes a
// file): the same process goes on, restarts unchanged, reloads counted,
// the reload its last action. A worker without a reload and a supervisor
// are refused (exit 2) with nothing sent; a rollout reloads a subtree.
func TestReloadReachesTheServicesHandler(t *testing.T) {
	needServer(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "reloads")
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-reload
children:
  - name: svc
    kind: process
    process:
      command: sh
      args: ["-c", "trap 'echo reloaded >> %s' HUP; while :; do sleep 0.1; done"]
      startSeconds: 300ms
      reload: {signal: HUP}
  - {name: plain, kind: stub}
`, file)), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-reload") })
	before := status(t, "it-reload/svc")

	r = starter(t, "reload", "it-reload/svc")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stdout, "it-reload/svc: reloaded (1 reloads")
	eventually(t, 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "reloaded") == 1, string(b)
	})
	after := status(t, "it-reload/svc")
	require.Equal(t, before.Instance, after.Instance, "the same process")
	require.True(t, alive(pidOf(t, after.Instance)))
	require.Equal(t, before.Restarts, after.Restarts)
	require.Equal(t, before.ManualRestarts, after.ManualRestarts)
	require.Equal(t, 1, after.Reloads)
	require.Equal(t, workflows.ActionStatus{Name: "reload", Status: "succeeded", Attempts: 1}, after.LastAction)

	r = starter(t, "reload", "it-reload/plain")
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "it-reload/plain has no reload configured")
	require.Zero(t, status(t, "it-reload/plain").RejectedSignals, "nothing was sent")
	r = starter(t, "reload", "it-reload")
	require.Equal(t, 2, r.code, r.stdout+r.stderr)
	require.Contains(t, r.stderr, "starter rollout reload it-reload")

	r = starter(t, "rollout", "reload", "it-reload", "-o", "json")
	require.Equal(t, 1, r.code, "the stub has no reload: %s %s", r.stdout, r.stderr)
	require.Contains(t, r.stdout, "no reload configured")
	eventually(t, 10*time.Second, func() (bool, string) {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "reloaded") == 2, string(b)
	})
	require.Equal(t, 2, status(t, "it-reload/svc").Reloads)
}
