//go:build linux

package process

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// trapService is a shell service that appends a line to file on each
// signal it traps (sh runs a trap between commands: within 0.1 s here).
func trapService(file, sig string, extra map[string]any) map[string]any {
	cfg := map[string]any{"command": "sh", "args": []string{"-c",
		`trap 'echo reloaded >> "` + file + `"' ` + sig + `; echo started >> "` + file + `"; while :; do sleep 0.1; done`},
		"startSeconds": "300ms"}
	for k, v := range extra {
		cfg[k] = v
	}
	return cfg
}

func waitLine(t *testing.T, file string, n int) {
	t.Helper()
	require.Eventually(t, func() bool {
		b, _ := os.ReadFile(file)
		return strings.Count(string(b), "reloaded") >= n
	}, 10*time.Second, 20*time.Millisecond)
}

// A reload by signal (HUP by default) and one by exec (with MAINPID)
// reach the service's handler; the service goes on, same pid.
func TestReloadBySignalAndByExec(t *testing.T) {
	t.Parallel()
	need(t, "sh")
	d, dir := newDriver(t, nil)
	file := filepath.Join(dir, "hup")
	r := req("tree/hup", trapService(file, "HUP", map[string]any{"reload": map[string]any{}}))
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id
	require.NoError(t, d.Reload(context.Background(), r))
	waitLine(t, file, 1)

	file2 := filepath.Join(dir, "usr1")
	r2 := req("tree/usr1", trapService(file2, "USR1", map[string]any{"reload": map[string]any{"exec": []string{"sh", "-c", `kill -USR1 "$MAINPID"`}}}))
	id2, err := d.Start(context.Background(), r2)
	require.NoError(t, err)
	r2.Instance = id2
	require.NoError(t, d.Reload(context.Background(), r2))
	waitLine(t, file2, 1)
	require.True(t, alive(pidOf(id)) && alive(pidOf(id2)), "reloaded, not restarted")
	require.Equal(t, 2, d.Running())
}

// A reload command that fails is a permanent failure with its output; a
// node without reload, or an instance that does not run, is refused.
func TestReloadFailures(t *testing.T) {
	t.Parallel()
	need(t, "sh", "sleep")
	d, _ := newDriver(t, nil)
	r := req("tree/bad", map[string]any{"command": "sleep", "args": []string{"60"}, "startSeconds": "100ms",
		"reload": map[string]any{"exec": []string{"sh", "-c", "echo config is broken; exit 3"}}})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id
	err = d.Reload(context.Background(), r)
	require.ErrorContains(t, err, "exit status 3")
	require.ErrorContains(t, err, "config is broken")

	none := req("tree/none", sleepCfg())
	require.ErrorContains(t, d.Reload(context.Background(), none), "no reload configured")
	gone := req("tree/gone", map[string]any{"command": "sleep", "reload": map[string]any{}})
	gone.Instance = "proc/1/1@tree/gone"
	require.ErrorContains(t, d.Reload(context.Background(), gone), "not running here")
}

// A notify service that frames its reload (RELOADING=1, then READY=1)
// is waited on until it is ready again.
func TestReloadWaitsForANotifyServicesFrame(t *testing.T) {
	t.Parallel()
	need(t, "sh", "systemd-notify")
	d, _ := newDriver(t, nil)
	r := req("tree/framed", map[string]any{"command": "sh", "args": []string{"-c",
		`trap 'systemd-notify RELOADING=1; sleep 0.5; systemd-notify --ready' HUP; systemd-notify --ready; while :; do sleep 0.1; done`},
		"notify": true, "reload": map[string]any{"signal": "HUP"}})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, d.Reload(ctx, r))
	require.GreaterOrEqual(t, time.Since(began), 500*time.Millisecond, "waited for READY=1 after RELOADING=1")
}
