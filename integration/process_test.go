package integration

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
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

// A supervised process killed with -9 is restarted; a killed worker takes
// its processes with it, and they come back when a worker runs again.
func TestProcessKilledIsRestartedAndDiesWithItsWorker(t *testing.T) {
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
	second := pidOf(t, st.Instance)
	require.NotEqual(t, first, second)
	require.Contains(t, st.Reason, "started")

	// The worker dies: so does its process (Pdeathsig).
	mainWorker.kill()
	eventually(t, 10*time.Second, func() (bool, string) { return !alive(second), fmt.Sprintf("pid %d still alive", second) })

	// A worker comes back: the observe finds the process gone and restarts it.
	w, err := startWorker("worker-3")
	require.NoError(t, err)
	mainWorker = w
	eventually(t, 2*time.Minute, func() (bool, string) {
		st = status(t, "it-proc/sleeper")
		return st.State == "running" && st.Instance != "" && pidOf(t, st.Instance) != second && alive(pidOf(t, st.Instance)), fmt.Sprintf("%+v", st)
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
    observe: {interval: 300ms}
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
	t.Cleanup(func() { deleteTree(t, "it-circuit") })
	first := pidOf(t, status(t, "it-circuit/remote").Instance)

	h2.stop()
	require.False(t, alive(first), "the process died with its worker")
	st := waitState(t, "it-circuit/remote", "unknown", time.Minute)
	require.Contains(t, st.Reason, "host h2 unreachable")
	require.Equal(t, 0, st.Restarts, "an unreachable host is not a failure")

	h2, err = startWorker("worker-h2b", "--host", "h2")
	require.NoError(t, err)
	t.Cleanup(h2.stop)
	eventually(t, time.Minute, func() (bool, string) {
		st = status(t, "it-circuit/remote")
		return st.State == "running" && st.Instance != "" && pidOf(t, st.Instance) != first, fmt.Sprintf("%+v", st)
	})
}
