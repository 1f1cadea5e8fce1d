package process

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// flipServer answers 503 until ready is set, then 200, counting requests.
type flipServer struct {
	ready, hits atomic.Int32
	failFirst   int32 // answer 503 to this many requests, then 200
}

func (f *flipServer) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	n := f.hits.Add(1)
	if f.ready.Load() == 1 || (f.failFirst > 0 && n > f.failFirst) {
		return
	}
	w.WriteHeader(http.StatusServiceUnavailable)
}

// A start with a ready probe succeeds only once the probe passes, with the
// process still up.
func TestReadyProbe_StartWaitsForIt(t *testing.T) {
	d, _ := newDriver(t, nil)
	f := &flipServer{}
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := sleepCfg()
	cfg["ready"] = map[string]any{"http": srv.URL, "interval": "20ms"}
	done := make(chan error, 1)
	var id string
	go func() {
		var err error
		id, err = d.Start(context.Background(), req("ready", cfg))
		done <- err
	}()
	require.Eventually(t, func() bool { return f.hits.Load() >= 3 }, 10*time.Second, 10*time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("the start ended before the probe passed: %v", err)
	default:
	}
	f.ready.Store(1)
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the start did not end once the probe passed")
	}
	require.True(t, alive(pidOf(id)))
}

// A process that ends before its ready probe passes is a failed start; so
// is one whose probe never passes within its timeout (the process is
// killed).
func TestReadyProbe_ExitFirstOrTimeoutFailsTheStart(t *testing.T) {
	d, _ := newDriver(t, nil)
	srv := httptest.NewServer(&flipServer{})
	defer srv.Close()
	_, err := d.Start(context.Background(), req("exits", map[string]any{
		"command": "sh", "args": []string{"-c", "sleep 0.2; exit 4"},
		"ready": map[string]any{"http": srv.URL, "interval": "20ms"},
	}))
	require.ErrorContains(t, err, "before its readiness probe passed")
	_, err = d.Start(context.Background(), req("never", map[string]any{
		"command": "sleep", "args": []string{"60"},
		"ready": map[string]any{"tcp": "127.0.0.1:1", "interval": "20ms", "timeout": "300ms"},
	}))
	require.ErrorContains(t, err, "did not become ready (tcp 127.0.0.1:1)")
	require.Zero(t, d.Running(), "the process whose probe never passed is killed")
}

// failureThreshold health probe failures in a row end the process as a
// crash, pushed with its reason; one that passes in between resets the
// count.
func TestHealthProbe_ThresholdFailuresAreACrash(t *testing.T) {
	rec := newRecorder()
	d, _ := newDriver(t, rec)
	f := &flipServer{}
	f.ready.Store(1)
	srv := httptest.NewServer(f)
	defer srv.Close()
	cfg := sleepCfg()
	cfg["health"] = map[string]any{"http": srv.URL, "interval": "20ms", "failureThreshold": 2}
	id, err := d.Start(context.Background(), req("health", cfg))
	require.NoError(t, err)
	require.Eventually(t, func() bool { return f.hits.Load() >= 3 }, 10*time.Second, 10*time.Millisecond)
	require.True(t, alive(pidOf(id)), "healthy: left alone")
	f.ready.Store(0)
	select {
	case p := <-rec.ch:
		require.Equal(t, id, p.exit.Instance)
		require.False(t, p.exit.Normal)
		require.Contains(t, p.exit.Reason, "unhealthy: 2 health probes failed in a row (http "+srv.URL)
	case <-time.After(20 * time.Second):
		t.Fatal("no exit pushed")
	}
	require.False(t, alive(pidOf(id)))
}

// stopSignal is what a stop sends; successExitCodes decide what exit is
// normal.
func TestStopSignalAndSuccessExitCodes(t *testing.T) {
	rec := newRecorder()
	d, dir := newDriver(t, rec)
	id, err := d.Start(context.Background(), req("int", map[string]any{
		"command": "sh", "args": []string{"-c", `trap 'echo got-INT; exit 0' INT; echo up; while :; do sleep 0.05; done`},
		"startSeconds": "200ms", "stopSignal": "INT",
	}))
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	r := req("int", nil)
	r.Instance = id
	require.NoError(t, d.Stop(ctx, r))
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(LogPath(dir, "int"))
		return strings.Contains(string(b), "got-INT")
	}, 5*time.Second, 20*time.Millisecond, "the service got SIGINT")

	for _, tc := range []struct {
		codes  []any
		normal bool
	}{{[]any{0, 3}, true}, {nil, false}} {
		cfg := map[string]any{"command": "sh", "args": []string{"-c", "sleep 0.3; exit 3"}, "startSeconds": "100ms"}
		if tc.codes != nil {
			cfg["successExitCodes"] = tc.codes
		}
		_, err := d.Start(context.Background(), req("exit3", cfg))
		require.NoError(t, err)
		select {
		case p := <-rec.ch:
			require.Equal(t, tc.normal, p.exit.Normal, "codes %v: %s", tc.codes, p.exit.Reason)
		case <-time.After(10 * time.Second):
			t.Fatal("no exit pushed")
		}
	}
}

// An exec probe runs as the service's user, with the base of the worker's
// environment only: a probe a spec names may do no more on the host than
// its service, and never sees the worker's credentials (issue 47: "exec
// probes run as the worker's user (root) with arguments the sender chose").
func TestExecProbeRunsAsTheServiceWithTheBaseEnvironment(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the service runs as another user")
	}
	t.Setenv("STEWARD_PROBE_SECRET", "worker-only")
	d, _ := newDriver(t, nil)
	dir, err := os.MkdirTemp("", "probe-user-") // t.TempDir's parent is closed to nobody
	require.NoError(t, err)
	t.Cleanup(func() { os.RemoveAll(dir) })
	require.NoError(t, os.Chmod(dir, 0o777))
	out := dir + "/probe"
	cfg := sleepCfg()
	cfg["user"] = "nobody"
	cfg["ready"] = map[string]any{"exec": []string{"/bin/sh", "-c", "{ id -u; env; } > " + out}, "interval": "20ms"}
	_, err = d.Start(context.Background(), req("probe-user", cfg))
	require.NoError(t, err)
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	lines := strings.Split(string(b), "\n")
	require.Equal(t, "65534", lines[0], "the probe ran as nobody")
	require.NotContains(t, string(b), "STEWARD_PROBE_SECRET", "the worker's environment beyond the base reaches no probe")
}
