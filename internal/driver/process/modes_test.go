package process

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	"go.uber.org/zap/zaptest"
)

// Regression (attack review): a service's log was created 0644 and its
// record 0644, in directories made 0755, so every local user of the host
// read the services' output (tokens, connection strings) and records. The
// log is 0640 in a 0750 directory, the record 0600 in a 0700 one, and a
// log an older worker left 0644 is narrowed when it is opened again.
func TestLogsAndRecordsAreNotWorldReadable(t *testing.T) {
	need(t, "sleep")
	base := t.TempDir()
	logs, state := filepath.Join(base, "logs"), filepath.Join(base, "state")
	require.NoError(t, os.MkdirAll(logs, 0o755))
	old := LogPath(logs, "t/web")
	require.NoError(t, os.WriteFile(old, []byte("an older worker's output\n"), 0o644))
	d := New(logs, newRecorder(), zaptest.NewLogger(t))
	t.Cleanup(d.Close)
	d.StateDir = state
	r := req("t/web", map[string]any{"command": "sleep", "args": []string{"30"}})
	id, err := d.Start(context.Background(), r)
	require.NoError(t, err)
	r.Instance = id
	t.Cleanup(func() { _ = d.Stop(context.Background(), r) })

	mode := func(path string) os.FileMode {
		fi, err := os.Stat(path)
		require.NoError(t, err)
		return fi.Mode().Perm()
	}
	require.Equal(t, os.FileMode(0o640), mode(old), "the log")
	require.Equal(t, os.FileMode(0o700), mode(state), "the state directory")
	require.Equal(t, os.FileMode(0o600), mode(d.recordPath("t/web")), "the record")

	fresh := filepath.Join(base, "fresh")
	d2 := New(fresh, newRecorder(), zaptest.NewLogger(t))
	t.Cleanup(d2.Close)
	r2 := req("t/db", map[string]any{"command": "sleep", "args": []string{"30"}})
	id2, err := d2.Start(context.Background(), r2)
	require.NoError(t, err)
	r2.Instance = id2
	t.Cleanup(func() { _ = d2.Stop(context.Background(), r2) })
	require.Zero(t, mode(fresh)&0o007, "the log directory it makes: no other user's (0750)")
	require.Equal(t, os.FileMode(0o640), mode(LogPath(fresh, "t/db")))
}
