package integration

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// lockedBuffer is a bytes.Buffer a process writes to while the test reads.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// status -w off a terminal prints the tree once, then a line per changed
// node, until interrupted (SIGINT: exit 0).
func TestStatusWatchPrintsALinePerChange(t *testing.T) {
	needServer(t)
	r := starter(t, "apply", "-f", writeSpec(t, `
name: it-watch
children:
  - {name: a, kind: stub}
  - {name: b, kind: stub}
`), "--wait")
	require.Equal(t, 0, r.code, r.stdout+r.stderr)
	t.Cleanup(func() { deleteTree(t, "it-watch") })

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, starterBin, "status", "it-watch", "-w", "--interval", "300ms")
	cmd.Env = append(os.Environ(), "TEMPORAL_ADDRESS="+address)
	var out, errb lockedBuffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	require.NoError(t, cmd.Start())
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()

	eventually(t, 30*time.Second, func() (bool, string) {
		return strings.Contains(out.String(), "it-watch/b"), out.String() + errb.String()
	})
	r = starter(t, "stop", "it-watch/a")
	require.Equal(t, 0, r.code, r.stderr)
	eventually(t, time.Minute, func() (bool, string) {
		return strings.Contains(out.String(), "it-watch/a: running -> stopped") ||
			strings.Contains(out.String(), "it-watch/a: stopping -> stopped"), out.String()
	})
	require.NotContains(t, out.String(), "it-watch/b: running ->", "an unchanged node prints no line")
	t.Logf("status -w printed:\n%s", out.String())

	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	select {
	case err := <-done:
		require.NoError(t, err, "interrupted, the watch exits 0: %s", errb.String())
	case <-time.After(30 * time.Second):
		t.Fatal("status -w did not stop on SIGINT")
	}
}
