package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// pidOf reads the pid from a process instance ("proc/<pid>/<start>@<wf>").
func pidOf(t *testing.T, instance string) int {
	t.Helper()
	parts := strings.Split(instance, "/")
	require.GreaterOrEqual(t, len(parts), 3, "instance %q", instance)
	pid, err := strconv.Atoi(parts[1])
	require.NoError(t, err, instance)
	return pid
}

func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// A zombie (state Z) has exited; only its parent has not reaped it yet.
	fields := strings.Fields(string(b))
	return len(fields) > 2 && fields[2] != "Z"
}

// A supervised process killed with -9 is restarted.
func TestProcessKilledIsRestarted(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-proc
children:
  - name: sleeper
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms}
    backoff: {initial: 100ms, max: 1s}
    observe: {interval: 2s}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-proc") })

	st := status(t, "it-proc/sleeper")
	first := pidOf(t, st.Instance)
	require.True(t, alive(first))

	// kill -9: the exit is pushed at once and the backoff restarts it.
	require.NoError(t, syscall.Kill(first, syscall.SIGKILL))
	killed := time.Now()
	eventually(t, time.Minute, func() (bool, string) {
		st = status(t, "it-proc/sleeper")
		return st.State == "running" && st.Restarts == 1, fmt.Sprintf("%+v", st)
	})
	t.Logf("kill -9 to running again: %s", time.Since(killed).Round(10*time.Millisecond))
	require.NotEqual(t, first, pidOf(t, st.Instance))
	require.Contains(t, st.Reason, "started")
}

// Services outlive their worker: after a kill -9 and after a SIGTERM of the
// host's worker, the next worker adopts the three running services (same
// PIDs, no restart, no start action); an adopted service that is killed is
// restarted at once (its end is watched); one killed while no worker serves
// the host is started again as soon as one returns. A dieWithWorker service
// dies with its worker, as before.
func TestProcessesOutliveTheirWorker(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-outlive
intensity: {maxRestarts: 100, period: 1m}
children:
  - {name: a, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms}, backoff: {initial: 100ms, max: 1s}}
  - {name: b, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms}, backoff: {initial: 100ms, max: 1s}}
  - {name: c, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms}, backoff: {initial: 100ms, max: 1s}}
  - {name: d, kind: process, process: {command: sleep, args: ["300"], startSeconds: 200ms, dieWithWorker: true}, backoff: {initial: 100ms, max: 1s}}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-outlive") })
	names := []string{"a", "b", "c"}
	pids := map[string]int{}
	for _, n := range names {
		pids[n] = pidOf(t, status(t, "it-outlive/"+n).Instance)
	}
	dieWith := pidOf(t, status(t, "it-outlive/d").Instance)

	same := func(when string) {
		t.Helper()
		for _, n := range names {
			st := status(t, "it-outlive/"+n)
			require.Equal(t, "running", st.State, "%s %s: %+v", when, n, st)
			require.Equal(t, pids[n], pidOf(t, st.Instance), "%s %s: the same process", when, n)
			require.Equal(t, 0, st.Restarts, "%s %s: not restarted", when, n)
			require.Equal(t, "start", st.LastAction.Name, "%s %s: no action since its start", when, n)
			require.True(t, alive(pids[n]), "%s %s", when, n)
		}
	}

	for i, stop := range []string{"kill -9", "SIGTERM"} {
		if stop == "kill -9" {
			mainWorker.kill()
		} else {
			mainWorker.stop()
		}
		for _, n := range names {
			require.True(t, alive(pids[n]), "%s of the worker: %s lives on", stop, n)
		}
		if i == 0 {
			eventually(t, 10*time.Second, func() (bool, string) { return !alive(dieWith), "dieWithWorker: d still runs" })
		}
		w, err := startWorker(fmt.Sprintf("worker-outlive-%d", i))
		require.NoError(t, err)
		mainWorker = w
		same("after " + stop)
	}
	// d died with the first worker: restarted once a worker was back.
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-outlive/d")
		return st.State == "running" && st.Restarts >= 1, fmt.Sprintf("%+v", st)
	})

	// An adopted service killed: its end is seen at once, and it restarts.
	require.NoError(t, syscall.Kill(pids["a"], syscall.SIGKILL))
	killed := time.Now()
	eventually(t, 30*time.Second, func() (bool, string) {
		st := status(t, "it-outlive/a")
		return st.State == "running" && st.Restarts == 1, fmt.Sprintf("%+v", st)
	})
	t.Logf("adopted service: kill -9 to running again: %s (backoff 100ms)", time.Since(killed).Round(10*time.Millisecond))

	// A service killed while no worker serves the host: started again as
	// soon as a worker of the host is back (not at the next observe, a
	// minute later).
	mainWorker.kill()
	require.NoError(t, syscall.Kill(pids["b"], syscall.SIGKILL))
	eventually(t, 10*time.Second, func() (bool, string) { return !alive(pids["b"]), "b still alive" })
	w, err := startWorker("worker-outlive-back")
	require.NoError(t, err)
	mainWorker = w
	back := time.Now()
	eventually(t, 30*time.Second, func() (bool, string) {
		st := status(t, "it-outlive/b")
		return st.State == "running" && st.Restarts == 1 && pidOf(t, st.Instance) != pids["b"], fmt.Sprintf("%+v", st)
	})
	t.Logf("service that ended while no worker served its host: running %s after the worker's return", time.Since(back).Round(10*time.Millisecond))
	for _, e := range journal(t, "it-outlive/b") {
		if e.State == "backoff" {
			require.Contains(t, e.Reason, "ended while no worker served this host")
		}
	}

	// The host rebooted: c's process is gone and its record is of the
	// previous boot (the host's boot ID in it is not this one's; the rest
	// of a reboot, the machine's restart, is not made here). The next
	// worker reports it as ended by the reboot and it is started again
	// at once; `starter hosts` shows when the host booted.
	mainWorker.kill()
	require.NoError(t, syscall.Kill(pids["c"], syscall.SIGKILL))
	eventually(t, 10*time.Second, func() (bool, string) { return !alive(pids["c"]), "c still alive" })
	files, err := filepath.Glob(filepath.Join(workDir, "state", "local", "*.json"))
	require.NoError(t, err)
	rewritten := 0
	for _, f := range files {
		b, err := os.ReadFile(f)
		require.NoError(t, err)
		var rec map[string]any
		require.NoError(t, json.Unmarshal(b, &rec))
		if rec["workflowId"] == "it-outlive/c" {
			require.NotEmpty(t, rec["boot"], "a record names its boot")
			rec["boot"] = "00000000-0000-0000-0000-000000000000"
			b, _ = json.Marshal(rec)
			require.NoError(t, os.WriteFile(f, b, 0o644))
			rewritten++
		}
	}
	require.Equal(t, 1, rewritten, "c's record in %v", files)
	w, err = startWorker("worker-outlive-rebooted")
	require.NoError(t, err)
	mainWorker = w
	back = time.Now()
	eventually(t, 30*time.Second, func() (bool, string) {
		st := status(t, "it-outlive/c")
		return st.State == "running" && st.Restarts == 1 && pidOf(t, st.Instance) != pids["c"], fmt.Sprintf("%+v", st)
	})
	t.Logf("service of a rebooted host: running %s after its worker's start", time.Since(back).Round(10*time.Millisecond))
	rebooted := false
	for _, e := range journal(t, "it-outlive/c") {
		rebooted = rebooted || strings.Contains(e.Reason, "host rebooted")
	}
	require.True(t, rebooted, "the journal says the host rebooted: %+v", journal(t, "it-outlive/c"))
	var hosts []struct {
		Name     string    `json:"name"`
		BootedAt time.Time `json:"bootedAt"`
	}
	eventually(t, 30*time.Second, func() (bool, string) {
		r := starter(t, "hosts", "-o", "json")
		hosts = nil
		if r.code != 0 || json.Unmarshal([]byte(r.stdout), &hosts) != nil {
			return false, r.stdout + r.stderr
		}
		for _, h := range hosts {
			if h.Name == "local" && !h.BootedAt.IsZero() {
				return true, ""
			}
		}
		return false, r.stdout
	})
}

// An http worker follows a real HTTP service's health: when the service goes
// away, failed checks count it down and the backoff "restarts" it (with no
// start request configured, that is a new check cycle).
func TestHTTPWorkerFollowsHealth(t *testing.T) {
	needServer(t)
	healthy := atomic.Bool{}
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		if !healthy.Load() {
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	}))
	t.Cleanup(srv.Close)
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-http
children:
  - name: api
    kind: http
    http: {health: {url: %q, timeout: 500ms, failureThreshold: 2}}
    observe: {interval: 1s}
    backoff: {initial: 200ms, max: 1s}
`, srv.URL+"/health")), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-http") })
	require.Equal(t, "running", status(t, "it-http/api").State)
	healthy.Store(false)
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-http/api")
		return st.Restarts >= 1, fmt.Sprintf("%+v", st)
	})
	healthy.Store(true)
	eventually(t, time.Minute, func() (bool, string) {
		st := status(t, "it-http/api")
		return st.State == "running", fmt.Sprintf("%+v", st)
	})
}

// Stop a host's worker: the process there dies with it, the next action
// finds no worker to take it, the circuit opens (state unknown, not a
// failure); a worker for the host returns, a probe gets through, and the
// process is started again there.
func TestHostCircuitOpensAndCloses(t *testing.T) {
	needServer(t)
	h2, err := startWorker("worker-h2", "--host", "h2")
	require.NoError(t, err)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-circuit
children:
  - name: remote
    kind: process
    process: {command: sleep, args: ["300"], startSeconds: 200ms, host: h2, unreachableAfter: 1s}
    observe: {interval: 1s}
    backoff: {initial: 100ms, max: 1s}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	first := pidOf(t, status(t, "it-circuit/remote").Instance)

	h2.stop()
	require.True(t, alive(first), "the process outlives its worker")
	st := waitState(t, "it-circuit/remote", "unknown", time.Minute)
	require.Contains(t, st.Reason, "host h2 unreachable")
	require.Equal(t, 0, st.Restarts, "an unreachable host is not a failure")

	h2, err = startWorker("worker-h2b", "--host", "h2")
	require.NoError(t, err)
	t.Cleanup(h2.stop)
	t.Cleanup(func() { deleteTree(t, "it-circuit") }) // runs first: h2's worker stops the process
	eventually(t, time.Minute, func() (bool, string) {
		st = status(t, "it-circuit/remote")
		return st.State == "running" && st.Instance != "", fmt.Sprintf("%+v", st)
	})
	require.Equal(t, first, pidOf(t, st.Instance), "the probe that got through found it running: adopted")
	require.Equal(t, 0, st.Restarts)
}
