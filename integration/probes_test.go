package integration

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/steward-sh/steward/workflows"
)

// probeServer answers a probe: healthy(n) says whether request n (from 1)
// passes; it records when it first passed.
type probeServer struct {
	hits    atomic.Int64
	healthy func(n int64, since time.Duration) bool
	mu      sync.Mutex
	start   time.Time
	firstOK time.Time
}

func (p *probeServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := p.hits.Add(1)
	p.mu.Lock()
	if p.start.IsZero() {
		p.start = time.Now()
	}
	ok := p.healthy(n, time.Since(p.start))
	if ok && p.firstOK.IsZero() {
		p.firstOK = time.Now()
	}
	p.mu.Unlock()
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
}

func journal(t *testing.T, path string) []workflows.JournalEntry {
	t.Helper()
	r := starter(t, "history", path, "-n", "100", "-o", "json")
	require.Equal(t, 0, r.code, r.stderr)
	var entries []workflows.JournalEntry
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &entries), r.stdout)
	return entries
}

// A readiness probe that passes only after 3 s keeps the worker starting
// until then: running comes after the probe's first pass.
func TestReadinessProbeGatesRunning(t *testing.T) {
	needServer(t)
	p := &probeServer{healthy: func(_ int64, since time.Duration) bool { return since >= 3*time.Second }}
	srv := httptest.NewServer(p)
	defer srv.Close()
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-ready
children:
  - name: app
    kind: process
    process:
      command: sleep
      args: ["300"]
      ready: {http: "%s", interval: 200ms}
`, srv.URL)))
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-ready") })
	eventually(t, time.Minute, func() (bool, string) {
		st, err := tryStatus(t, "it-ready/app")
		return err == nil && st.State == "starting" && p.hits.Load() >= 2, fmt.Sprintf("%+v %v (hits %d)", st, err, p.hits.Load())
	})
	waitState(t, "it-ready/app", "running", time.Minute)
	p.mu.Lock()
	firstOK := p.firstOK
	p.mu.Unlock()
	require.False(t, firstOK.IsZero())
	var running time.Time
	for _, e := range journal(t, "it-ready/app") {
		if e.State == "running" {
			running = e.Time
			break
		}
	}
	t.Logf("probe first passed %s after its first request; running at +%s", firstOK.Sub(p.start).Round(time.Millisecond), running.Sub(firstOK).Round(time.Millisecond))
	require.False(t, running.Before(firstOK), "running (%s) only after the probe passed (%s)", running, firstOK)
}

// A health probe failing twice in a row, with failureThreshold 2, is one
// crash: one restart, and then the service is left alone.
func TestHealthProbeFailuresRestartOnce(t *testing.T) {
	needServer(t)
	p := &probeServer{healthy: func(n int64, _ time.Duration) bool { return n != 4 && n != 5 }}
	srv := httptest.NewServer(p)
	defer srv.Close()
	r := starter(t, "apply", "-f", writeSpec(t, fmt.Sprintf(`
name: it-health
children:
  - name: app
    kind: process
    backoff: {initial: 100ms}
    process:
      command: sleep
      args: ["300"]
      startSeconds: 200ms
      health: {http: "%s", interval: 200ms, failureThreshold: 2}
`, srv.URL)), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-health") })
	var st workflows.Status
	eventually(t, time.Minute, func() (bool, string) {
		st = status(t, "it-health/app")
		return st.State == "running" && st.Restarts == 1, fmt.Sprintf("%+v", st)
	})
	seen := p.hits.Load()
	eventually(t, time.Minute, func() (bool, string) {
		return p.hits.Load() >= seen+10, fmt.Sprintf("%d probes", p.hits.Load())
	})
	st = status(t, "it-health/app")
	require.Equal(t, 1, st.Restarts, "passing probes restart nothing: %+v", st)
	require.Equal(t, "running", st.State)
	var reasons []string
	for _, e := range journal(t, "it-health/app") {
		reasons = append(reasons, e.Reason)
	}
	require.Contains(t, strings.Join(reasons, "\n"), "unhealthy: 2 health probes failed in a row (http "+srv.URL)
}
